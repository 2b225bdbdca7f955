package sync

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/serviceingresses"
)

// Annotations the controllers read or write.
const (
	// HashAnnotation on a member copy holds the hash of what the federation
	// last applied to it.
	HashAnnotation = "federation.kubernetes.io/applied-hash"
	// ServiceIngressesAnnotation lists a federated Service's load-balancer
	// addresses per cluster; it belongs to the federation and never travels.
	ServiceIngressesAnnotation = serviceingresses.Annotation
)

// notTravelling are annotations of the federated object kept from members.
var notTravelling = map[string]bool{ServiceIngressesAnnotation: true, HashAnnotation: true, PlanAnnotation: true}

// Desired returns what is applied to members for fed: name, namespace,
// labels (with the federation's label), annotations (with the hash) and the
// adapter's fields; and the hash of it without the hash annotation.
func Desired(a *Adapter, fed *unstructured.Unstructured, federation string) (*unstructured.Unstructured, string, error) {
	src := fed.DeepCopy()
	if a.Prune != nil {
		a.Prune(src)
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(a.Resource.GroupVersion().String())
	out.SetKind(a.Kind)
	out.SetName(fed.GetName())
	if a.Namespaced {
		out.SetNamespace(fed.GetNamespace())
	}
	labels := map[string]string{}
	for k, v := range fed.GetLabels() {
		labels[k] = v
	}
	labels[membercluster.FederationLabel] = federation
	out.SetLabels(labels)
	annotations := map[string]string{}
	for k, v := range fed.GetAnnotations() {
		if !notTravelling[k] {
			annotations[k] = v
		}
	}
	if len(annotations) > 0 {
		out.SetAnnotations(annotations)
	}
	for _, f := range a.Fields {
		if v, ok := src.Object[f]; ok && v != nil {
			out.Object[f] = v
		}
	}
	if a.Replicas != nil {
		// The pods carry the label too, so that members' unschedulable pods
		// of federated workloads can be watched without watching all pods.
		if _, ok := out.Object["spec"].(map[string]any); ok {
			if err := unstructured.SetNestedField(out.Object, federation, "spec", "template", "metadata", "labels", membercluster.FederationLabel); err != nil {
				return nil, "", err
			}
		}
	}
	hash, err := hashOf(out)
	if err != nil {
		return nil, "", err
	}
	annotations[HashAnnotation] = hash
	out.SetAnnotations(annotations)
	return out, hash, nil
}

// hashOf hashes the object's JSON (map keys are sorted by encoding/json).
func hashOf(u *unstructured.Unstructured) (string, error) {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16]), nil
}
