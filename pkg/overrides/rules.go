// Package overrides parses, validates and applies the
// federation.kubernetes.io/overrides annotation: an ordered list of rules,
// each choosing member clusters (by name and/or by Cluster label selector)
// and changing the copy of the federated object sent to them, with JSON
// patch operations (RFC 6902) and shorthands for images, env, args, labels
// and annotations. Later rules win. It owns pure logic only: the admission
// plugin validates with it, the propagation controllers apply it to each
// cluster's copy before its hash.
package overrides

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterselector"
)

// Annotation is the key of the overrides annotation.
const Annotation = federationv1beta1.OverridesAnnotation

// Limits on what one annotation may ask, so that validating and applying
// it stays cheap for the federation apiserver (each rule is dry-applied at
// admission) and the controller manager (the rules are applied for each
// cluster on every sync). Beyond the annotation's own size (Kubernetes'
// 256 KiB for all of an object's annotations), each JSON patch operation
// costs work in the size of the object it is applied to, and a copy can
// double it: MaxRenderedBytes is the bound that matters (see apply.go).
const (
	// MaxRules is the most rules one annotation may hold: far more than
	// per-cluster (or per-region) differences need.
	MaxRules = 100
	// MaxPatchesPerRule is the most JSON patch operations of one rule.
	MaxPatchesPerRule = 20
	// MaxRenderedBytes is the most JSON a copy may have after any step of
	// a rule (the shorthands, each patch operation): 1 MiB, below etcd's
	// 1.5 MiB per object and the 3 MiB members take in a request, so a
	// copy a rule makes larger could not be written anyway. Checked after
	// each operation, so a rule that keeps doubling the object stops at
	// the first step past it.
	MaxRenderedBytes = 1 << 20
	// MaxWorkBytes bounds the JSON all of an object's rules render in one
	// go (one cluster's copy in the controller, the whole annotation at
	// admission): each step (a rule's shorthands, each patch operation)
	// counts the size of the copy it makes, the work of a step being in
	// that size. 4 MiB: 4 steps on a copy of the largest size, hundreds on
	// common ones (tens of KiB); measured at 140 ms of CPU per MiB
	// rendered on the worst shapes (many tiny maps), so about 0.6 s at
	// most per cluster and sync (16 MiB cost a hostile object 2 s of the
	// controller manager's CPU and 1.5 s of the member's per sync).
	MaxWorkBytes = 4 << 20
)

// Rule is one element of the annotation's JSON list.
type Rule struct {
	// Clusters chooses clusters by name; with ClusterSelector, a cluster
	// must satisfy both. Neither: every cluster.
	Clusters []string `json:"clusters,omitempty"`
	// ClusterSelector chooses clusters by their labels, in the format of
	// the cluster selector annotation (package clusterselector).
	ClusterSelector json.RawMessage `json:"clusterSelector,omitempty"`
	// Container limits Image, Env and Args to the pod template's container
	// (or init container) of that name; empty: every one.
	Container string `json:"container,omitempty"`
	// Image replaces parts of the containers' images.
	Image *Image `json:"image,omitempty"`
	// Env sets environment variables of the containers, replacing those of
	// the same name.
	Env []corev1.EnvVar `json:"env,omitempty"`
	// Args replaces the containers' args (an empty list removes them).
	Args *[]string `json:"args,omitempty"`
	// Labels and Annotations are merged into the copy's; null removes one.
	Labels      map[string]*string `json:"labels,omitempty"`
	Annotations map[string]*string `json:"annotations,omitempty"`
	// Patches are JSON patch operations, applied after the shorthands.
	Patches []Patch `json:"patches,omitempty"`

	// selector is ClusterSelector parsed; nil when there is none.
	selector labels.Selector
}

// Image says which parts of an image reference to replace; empty parts
// are kept.
type Image struct {
	// Registry is the host[:port] part ("registry.eu.example.com").
	Registry string `json:"registry,omitempty"`
	// Repository is the path after the registry ("team/app").
	Repository string `json:"repository,omitempty"`
	// Tag replaces the tag or digest; "sha256:…" is taken as a digest.
	Tag string `json:"tag,omitempty"`
}

// Chooses reports whether the rule applies to the cluster of that name
// and those labels.
func (r *Rule) Chooses(cluster string, clusterLabels map[string]string) bool {
	if r.Clusters != nil && !slices.Contains(r.Clusters, cluster) {
		return false
	}
	return r.selector == nil || r.selector.Matches(labels.Set(clusterLabels))
}

// Parse parses the annotation's value and checks each rule on its own
// (what can be told without the object). Errors are under path, the
// annotation's own: path.Index(1).Child("patches").Index(0).Child("path").
func Parse(value string, path *field.Path) ([]Rule, field.ErrorList) {
	var raw []json.RawMessage
	if err := decodeStrict([]byte(value), &raw); err != nil {
		return nil, field.ErrorList{field.Invalid(path, value, "not a JSON list of rules: "+err.Error())}
	}
	if len(raw) > MaxRules {
		return nil, field.ErrorList{field.TooMany(path, len(raw), MaxRules)}
	}
	rules := make([]Rule, len(raw))
	var errs field.ErrorList
	for i, r := range raw {
		p := path.Index(i)
		if err := decodeStrict(r, &rules[i]); err != nil {
			errs = append(errs, field.Invalid(p, string(r), "not a rule: "+err.Error()))
			continue
		}
		errs = append(errs, rules[i].check(p)...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return rules, nil
}

// ForObject returns the rules in an object's annotations, none without the
// annotation, and an error naming the rule and field when they are invalid.
func ForObject(annotations map[string]string) ([]Rule, error) {
	value, ok := annotations[Annotation]
	if !ok {
		return nil, nil
	}
	rules, errs := Parse(value, field.NewPath("metadata", "annotations").Key(Annotation))
	return rules, errs.ToAggregate()
}

// decodeStrict decodes one JSON value, refusing unknown fields and
// anything after it.
func decodeStrict(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}

// check validates a rule on its own, and parses its selector.
func (r *Rule) check(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.Clusters != nil && len(r.Clusters) == 0 {
		errs = append(errs, field.Required(p.Child("clusters"), "name at least one cluster, or leave clusters out for every cluster"))
	}
	for i, c := range r.Clusters {
		for _, msg := range validation.IsDNS1123Subdomain(c) {
			errs = append(errs, field.Invalid(p.Child("clusters").Index(i), c, msg))
		}
	}
	if len(r.ClusterSelector) > 0 {
		sel, err := clusterselector.Parse(string(r.ClusterSelector))
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("clusterSelector"), string(r.ClusterSelector), err.Error()))
		}
		r.selector = sel
	}
	if r.Image == nil && r.Env == nil && r.Args == nil && r.Labels == nil && r.Annotations == nil && r.Patches == nil {
		errs = append(errs, field.Required(p, "a rule changes something: image, env, args, labels, annotations or patches"))
	}
	if r.Container != "" && r.Image == nil && r.Env == nil && r.Args == nil {
		errs = append(errs, field.Invalid(p.Child("container"), r.Container, "container limits image, env and args, and the rule has none of them"))
	}
	if r.Image != nil {
		errs = append(errs, r.Image.check(p.Child("image"))...)
	}
	errs = append(errs, checkEnv(r.Env, p.Child("env"))...)
	errs = append(errs, checkMetadata(r.Labels, p.Child("labels"), true)...)
	errs = append(errs, checkMetadata(r.Annotations, p.Child("annotations"), false)...)
	if len(r.Patches) > MaxPatchesPerRule {
		errs = append(errs, field.TooMany(p.Child("patches"), len(r.Patches), MaxPatchesPerRule))
	}
	for i := range r.Patches {
		errs = append(errs, r.Patches[i].check(p.Child("patches").Index(i))...)
	}
	return errs
}

func checkEnv(env []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		if e.Name == "" {
			errs = append(errs, field.Required(p.Index(i).Child("name"), ""))
		}
		if e.Value != "" && e.ValueFrom != nil {
			errs = append(errs, field.Invalid(p.Index(i), e.Name, "value and valueFrom exclude each other"))
		}
	}
	return errs
}

// reserved are the labels and annotations the federation writes on every
// copy; no rule may change them.
var reserved = map[string]bool{
	federationv1beta1.FederationLabel:       true,
	federationv1beta1.FederationUIDLabel:    true,
	federationv1beta1.AppliedHashAnnotation: true,
	federationv1beta1.ObjectUIDAnnotation:   true,
	federationv1beta1.AdoptedAnnotation:     true,
}

func checkMetadata(m map[string]*string, p *field.Path, isLabel bool) field.ErrorList {
	var errs field.ErrorList
	for k, v := range m {
		if reserved[k] {
			errs = append(errs, field.Forbidden(p.Key(k), "the federation's own: no rule may change it"))
			continue
		}
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p.Key(k), k, msg))
		}
		if isLabel && v != nil {
			for _, msg := range validation.IsValidLabelValue(*v) {
				errs = append(errs, field.Invalid(p.Key(k), *v, msg))
			}
		}
	}
	return errs
}
