// Package tombstone is the record of a federated object's deletion: the
// federation apiserver writes one as it deletes the object (which then goes
// at once), and the controller manager deletes the object's member copies
// from it, then the tombstone. A tombstone is a ConfigMap in the
// federation's own namespace (never propagated; only admins and the
// controller manager read it), labelled federation.kubernetes.io/tombstone
// with the object's resource.group, named from the object's UID, and holding
// only what deleting the copies needs: never the object's data.
package tombstone

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Namespace holds the tombstones.
const Namespace = federationv1beta1.SystemNamespace

// Label marks a tombstone; its value is LabelValue of the object's resource.
const Label = federationv1beta1.TombstoneLabel

// The keys of a tombstone's data.
const (
	keyGroup       = "group"
	keyResource    = "resource"
	keyNamespace   = "namespace"
	keyName        = "name"
	keyUID         = "uid"
	keyDeleted     = "deletionTimestamp"
	keyAnnotations = "annotations"
	keyLabels      = "labels"
	keySecretType  = "type"
	keyScaleTarget = "scaleTargetRef"
)

// deletionAnnotations are the object's annotations that decide what its
// deletion does in members: which clusters were selected, and whether
// adopted copies go too.
var deletionAnnotations = []string{federationv1beta1.ClusterSelectorAnnotation, federationv1beta1.DeleteAdoptedAnnotation}

// deletionLabels are the object's labels kept: whether it stayed at the
// federation (it has no copies then).
var deletionLabels = []string{federationv1beta1.LocalLabel}

// Record is what a tombstone says of a deleted federated object.
type Record struct {
	// Resource is the object's canonical resource (apps deployments, also
	// for one deleted through extensions/v1beta1).
	Resource schema.GroupResource
	// Namespace ("" for cluster-scoped), Name and UID of the object.
	Namespace, Name string
	UID             types.UID
	// Deleted is when the object was deleted.
	Deleted time.Time
	// Annotations and Labels are those of the object that decide what its
	// deletion does (deletionAnnotations, deletionLabels).
	Annotations, Labels map[string]string
	// SecretType is a Secret's type (whether it stayed at the federation
	// depends on it); never its data.
	SecretType string
	// ScaleTarget is what an HorizontalPodAutoscaler scaled: its target
	// gets its replica counts back.
	ScaleTarget *ScaleTarget
}

// ScaleTarget names the target of an HorizontalPodAutoscaler.
type ScaleTarget struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// New returns the record of obj, of resource gr, deleted at deleted: its
// identity and the annotations and labels that decide its deletion.
func New(gr schema.GroupResource, obj metav1.Object, deleted time.Time) Record {
	return Record{
		Resource:    gr,
		Namespace:   obj.GetNamespace(),
		Name:        obj.GetName(),
		UID:         obj.GetUID(),
		Deleted:     deleted.UTC().Truncate(time.Second),
		Annotations: only(obj.GetAnnotations(), deletionAnnotations),
		Labels:      only(obj.GetLabels(), deletionLabels),
	}
}

func only(in map[string]string, keys []string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := in[k]; ok {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Name is the name of the tombstone of the object with uid.
func Name(uid types.UID) string {
	return "tombstone-" + string(uid)
}

// LabelValue is the Label value of the tombstones of resource gr:
// "configmaps", "deployments.apps". A custom resource's name and group can
// be longer than a label value may be (63 characters): its value is then
// the start of the name and a hash of the whole, still one per resource.
func LabelValue(gr schema.GroupResource) string {
	v := gr.String()
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	prefix := strings.TrimRight(v[:min(len(v), 22)], "-_.")
	return prefix + "-" + hex.EncodeToString(sum[:20])
}

// Meta is the tombstone's metadata: name, namespace and label.
func (r Record) Meta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      Name(r.UID),
		Namespace: Namespace,
		Labels:    map[string]string{Label: LabelValue(r.Resource)},
	}
}

// Data is the tombstone's data.
func (r Record) Data() map[string]string {
	data := map[string]string{
		keyGroup:     r.Resource.Group,
		keyResource:  r.Resource.Resource,
		keyNamespace: r.Namespace,
		keyName:      r.Name,
		keyUID:       string(r.UID),
		keyDeleted:   r.Deleted.UTC().Format(time.RFC3339),
	}
	if len(r.Annotations) > 0 {
		b, _ := json.Marshal(r.Annotations)
		data[keyAnnotations] = string(b)
	}
	if len(r.Labels) > 0 {
		b, _ := json.Marshal(r.Labels)
		data[keyLabels] = string(b)
	}
	if r.SecretType != "" {
		data[keySecretType] = r.SecretType
	}
	if r.ScaleTarget != nil {
		b, _ := json.Marshal(r.ScaleTarget)
		data[keyScaleTarget] = string(b)
	}
	return data
}

// Parse reads the record of a tombstone from its data; the error names the
// key that is missing or does not parse.
func Parse(data map[string]string) (Record, error) {
	r := Record{
		Resource:   schema.GroupResource{Group: data[keyGroup], Resource: data[keyResource]},
		Namespace:  data[keyNamespace],
		Name:       data[keyName],
		UID:        types.UID(data[keyUID]),
		SecretType: data[keySecretType],
	}
	for key, v := range map[string]string{keyResource: r.Resource.Resource, keyName: r.Name, keyUID: string(r.UID), keyDeleted: data[keyDeleted]} {
		if v == "" {
			return Record{}, fmt.Errorf("data.%s is missing", key)
		}
	}
	deleted, err := time.Parse(time.RFC3339, data[keyDeleted])
	if err != nil {
		return Record{}, fmt.Errorf("data.%s: %w", keyDeleted, err)
	}
	r.Deleted = deleted
	for key, into := range map[string]*map[string]string{keyAnnotations: &r.Annotations, keyLabels: &r.Labels} {
		if s := data[key]; s != "" {
			if err := json.Unmarshal([]byte(s), into); err != nil {
				return Record{}, fmt.Errorf("data.%s: %w", key, err)
			}
		}
	}
	if s := data[keyScaleTarget]; s != "" {
		r.ScaleTarget = &ScaleTarget{}
		if err := json.Unmarshal([]byte(s), r.ScaleTarget); err != nil {
			return Record{}, fmt.Errorf("data.%s: %w", keyScaleTarget, err)
		}
	}
	return r, nil
}

// ObjectKey is the namespace/name key of the deleted object, as the
// controllers' queues name it.
func (r Record) ObjectKey() string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}
