package federatedtypes

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// PodMarks says where a type's copies make or select pods in a member.
// The pods (and a StatefulSet's claims) a copy makes carry a mark of the
// federation, and every selector of a copy also asks for that mark: a
// copy then reaches only what the federation's own copies made, never a
// member's own pods (a Service would expose them, a NetworkPolicy open
// them, a PodDisruptionBudget pin them, a ReplicaSet adopt and delete
// them). The federated object itself stays as written.
type PodMarks struct {
	// Templates are the paths of pod templates (objects with metadata).
	Templates [][]string
	// Selectors are the paths of LabelSelectors, narrowed where present.
	Selectors [][]string
	// MapSelector is the path of a plain label map (a Service's),
	// narrowed when it selects anything.
	MapSelector []string
	// Claims marks spec.volumeClaimTemplates with ClaimLabel.
	Claims bool
	// FixedSelectors says the selectors and claim templates cannot change
	// once the object exists (apps/v1, Jobs); FixedTemplates the same of
	// the pod templates (Jobs). A member copy made without those marks
	// (adopted, or older than them) is sent without them (Unmark).
	FixedSelectors, FixedTemplates bool
}

// ClaimLabel marks the claims a member's StatefulSet controller makes
// from a federated StatefulSet's templates; its value is the federation's
// name.
const ClaimLabel = "federation.kubernetes.io/claim-of"

var (
	podLabel   = federationv1beta1.FederationLabel
	matchLabel = []string{"matchLabels"}
	labelsPath = []string{"metadata", "labels"}
)

// Mark adds the federation's marks to a copy about to be sent.
func (p *PodMarks) Mark(obj *unstructured.Unstructured, federation string) {
	for _, t := range p.Templates {
		if present(obj, t) {
			_ = unstructured.SetNestedField(obj.Object, federation, join(t, labelsPath, podLabel)...)
		}
	}
	for _, s := range p.Selectors {
		if present(obj, s) {
			_ = unstructured.SetNestedField(obj.Object, federation, join(s, matchLabel, podLabel)...)
		}
	}
	if p.MapSelector != nil {
		if m, _, _ := unstructured.NestedMap(obj.Object, p.MapSelector...); len(m) > 0 {
			_ = unstructured.SetNestedField(obj.Object, federation, join(p.MapSelector, nil, podLabel)...)
		}
	}
	if p.Claims {
		eachClaimTemplate(obj, func(claim map[string]any) {
			_ = unstructured.SetNestedField(claim, federation, join(labelsPath, nil, ClaimLabel)...)
		})
	}
}

// Unmark takes off a copy the marks that cannot be added to an object
// that exists without them, and the maps that leaves empty.
func (p *PodMarks) Unmark(obj *unstructured.Unstructured) {
	if p.FixedTemplates {
		for _, t := range p.Templates {
			removeLabel(obj.Object, join(t, labelsPath, podLabel))
		}
	}
	if !p.FixedSelectors {
		return
	}
	for _, s := range p.Selectors {
		removeLabel(obj.Object, join(s, matchLabel, podLabel))
	}
	if p.Claims {
		eachClaimTemplate(obj, func(claim map[string]any) { removeLabel(claim, join(labelsPath, nil, ClaimLabel)) })
	}
}

// HasFixed reports whether a copy carries any mark Unmark would take off.
func (p *PodMarks) HasFixed(obj *unstructured.Unstructured) bool {
	return p != nil && len(p.fixedMarks(obj)) > 0
}

// MissesFixed reports whether a member's copy lacks a fixed mark that
// desired carries (one that cannot be added to it): desired is then sent
// without them.
func (p *PodMarks) MissesFixed(member, desired *unstructured.Unstructured) bool {
	if p == nil {
		return false
	}
	has := p.fixedMarks(member)
	for where, v := range p.fixedMarks(desired) {
		if has[where] != v {
			return true
		}
	}
	return false
}

// fixedMarks are the fixed marks obj carries, by where they are.
func (p *PodMarks) fixedMarks(obj *unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	add := func(where string, in map[string]any, path []string) {
		if v, found, _ := unstructured.NestedString(in, path...); found {
			out[where] = v
		}
	}
	if p.FixedTemplates {
		for _, t := range p.Templates {
			path := join(t, labelsPath, podLabel)
			add(strings.Join(path, "/"), obj.Object, path)
		}
	}
	if !p.FixedSelectors {
		return out
	}
	for _, s := range p.Selectors {
		path := join(s, matchLabel, podLabel)
		add(strings.Join(path, "/"), obj.Object, path)
	}
	if p.Claims {
		i := 0
		eachClaimTemplate(obj, func(claim map[string]any) {
			add(fmt.Sprintf("claim/%d", i), claim, join(labelsPath, nil, ClaimLabel))
			i++
		})
	}
	return out
}

func present(obj *unstructured.Unstructured, path []string) bool {
	v, found, _ := unstructured.NestedFieldNoCopy(obj.Object, path...)
	_, isMap := v.(map[string]any)
	return found && isMap
}

// eachClaimTemplate calls f with each of a StatefulSet's claim templates.
func eachClaimTemplate(obj *unstructured.Unstructured, f func(map[string]any)) {
	templates, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "volumeClaimTemplates")
	list, _ := templates.([]any)
	for _, t := range list {
		if claim, ok := t.(map[string]any); ok {
			f(claim)
		}
	}
}

// removeLabel removes the field at path and the maps that leaves empty
// (labels, metadata, matchLabels).
func removeLabel(obj map[string]any, path []string) {
	unstructured.RemoveNestedField(obj, path...)
	for p := path[:len(path)-1]; len(p) > 1; p = p[:len(p)-1] {
		m, found, _ := unstructured.NestedMap(obj, p...)
		if !found || len(m) > 0 || (p[len(p)-1] != "labels" && p[len(p)-1] != "metadata" && p[len(p)-1] != "matchLabels") {
			return
		}
		unstructured.RemoveNestedField(obj, p...)
	}
}

func join(a, b []string, last string) []string {
	out := make([]string, 0, len(a)+len(b)+1)
	return append(append(append(out, a...), b...), last)
}
