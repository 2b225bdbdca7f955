package federationannotations

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/overrides"
)

// validateOverrides checks the overrides annotation of obj, an object of
// resource gr: each rule on its own, then every rule dry-applied to the
// object as its members get it. On an update (old is not nil) rules that
// did not apply to the old object either, with the same annotation, are
// not this request's doing and do not refuse it: the controller manager's
// own writes (a replica plan, a finalizer) are never refused for them.
func validateOverrides(gr schema.GroupResource, obj, old runtime.Object, annotations, oldAnnotations map[string]string) field.ErrorList {
	value, ok := annotations[overrides.Annotation]
	if !ok {
		return nil
	}
	path := field.NewPath("metadata", "annotations").Key(overrides.Annotation)
	rules, errs := overrides.Parse(value, path)
	if len(errs) > 0 {
		return errs
	}
	t := federatedType(gr)
	if t == nil {
		// Not propagated: nothing to apply the rules to.
		return nil
	}
	content, ok := asCopy(t, obj)
	if !ok {
		return nil
	}
	errs = overrides.Check(rules, content, path)
	if len(errs) == 0 || old == nil || oldAnnotations[overrides.Annotation] != value {
		return errs
	}
	if before, ok := asCopy(t, old); ok && len(overrides.Check(rules, before, path)) > 0 {
		return nil
	}
	return errs
}

// federatedType is the federated type of resource gr, served under its
// own group or an older one (extensions), or nil.
func federatedType(gr schema.GroupResource) *federatedtypes.Type {
	for _, t := range federatedtypes.All {
		if t.Resource.Resource != gr.Resource {
			continue
		}
		if slices.ContainsFunc(t.ServedVersions(), func(gv schema.GroupVersion) bool { return gv.Group == gr.Group }) {
			return t
		}
	}
	return nil
}

// asCopy is obj as the propagation controllers start a member's copy
// from: in the type's version, only its name, namespace, labels,
// annotations and the fields that travel, pruned by the type. Labels and
// annotations are there even when empty, as on every copy (which carries
// the federation's).
func asCopy(t *federatedtypes.Type, obj runtime.Object) (map[string]any, bool) {
	var content map[string]any
	if u, ok := obj.(*unstructured.Unstructured); ok {
		content = u.DeepCopy().UnstructuredContent()
	} else {
		external, err := legacyscheme.Scheme.ConvertToVersion(obj.DeepCopyObject(), t.Resource.GroupVersion())
		if err != nil {
			return nil, false
		}
		if content, err = runtime.DefaultUnstructuredConverter.ToUnstructured(external); err != nil {
			return nil, false
		}
	}
	src := &unstructured.Unstructured{Object: content}
	if t.Prune != nil {
		t.Prune(src)
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(t.Resource.GroupVersion().String())
	out.SetKind(t.Kind)
	out.SetName(src.GetName())
	out.SetNamespace(src.GetNamespace())
	meta := out.Object["metadata"].(map[string]any)
	meta["labels"] = stringMap(src.GetLabels())
	meta["annotations"] = stringMap(src.GetAnnotations())
	for _, f := range t.Fields {
		if v, ok := src.Object[f]; ok && v != nil {
			out.Object[f] = v
		}
	}
	return out.Object, true
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
