package overrides

import (
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Apply returns obj (the JSON object of a cluster's copy, left unchanged)
// with the rules that choose the cluster applied in order, and the indexes
// of those rules. An error names the rule and field that failed, under
// path (Apply's caller says whose rules they are).
func Apply(rules []Rule, cluster string, clusterLabels map[string]string, obj map[string]any, path *field.Path) (map[string]any, []int, error) {
	out := obj
	var applied []int
	for i := range rules {
		if !rules[i].Chooses(cluster, clusterLabels) {
			continue
		}
		next, err := rules[i].apply(out, path.Index(i))
		if err != nil {
			return nil, nil, err
		}
		out, applied = next, append(applied, i)
	}
	return out, applied, nil
}

// Check dry-applies every rule, whatever clusters it chooses, to obj (the
// federated object itself), for admission: each rule must apply after the
// rules before it, or else to obj alone (a cluster need not be chosen by
// the earlier rules).
func Check(rules []Rule, obj map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	cur := obj
	for i := range rules {
		next, err := rules[i].apply(cur, path.Index(i))
		if err != nil {
			if _, alone := rules[i].apply(obj, path.Index(i)); alone != nil {
				errs = append(errs, err)
			}
			continue
		}
		cur = next
	}
	return errs
}

// apply returns a copy of obj with the rule applied: shorthands first, then
// the patches. The error is under p.
func (r *Rule) apply(obj map[string]any, p *field.Path) (map[string]any, *field.Error) {
	out := runtime.DeepCopyJSON(obj)
	if r.Image != nil || r.Env != nil || r.Args != nil {
		if err := r.applyContainers(out, p); err != nil {
			return nil, err
		}
	}
	setMetadata(out, "labels", r.Labels)
	setMetadata(out, "annotations", r.Annotations)
	for i := range r.Patches {
		fp := p.Child("patches").Index(i)
		next, err := r.Patches[i].applyTo(out)
		if err != nil {
			return nil, field.Invalid(fp.Child("path"), r.Patches[i].Path, fmt.Sprintf("%s does not apply: %v", r.Patches[i].Op, err))
		}
		if what := unchanged(out, next); what != "" {
			return nil, field.Forbidden(fp.Child("path"), r.Patches[i].Path+": "+what)
		}
		out = next
	}
	return out, nil
}

// applyTo applies the operation to a JSON object.
func (p *Patch) applyTo(obj map[string]any) (map[string]any, error) {
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	patched, err := p.apply(doc)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	// (util/json keeps whole numbers int64, as unstructured objects have them.)
	if err := utiljson.Unmarshal(patched, &out); err != nil {
		return nil, err
	}
	if out == nil {
		return nil, fmt.Errorf("the result is not an object")
	}
	return out, nil
}

// unchanged says what a patch changed of what the federation owns (see
// checkWritable: a patch of an ancestor, "/spec" or "/metadata/labels",
// reaches them too), "" when nothing.
func unchanged(before, after map[string]any) string {
	for _, f := range []string{"apiVersion", "kind", "status"} {
		if !reflect.DeepEqual(before[f], after[f]) {
			return f + " cannot be overridden"
		}
	}
	bm, _ := before["metadata"].(map[string]any)
	am, _ := after["metadata"].(map[string]any)
	for f := range union(bm, am) {
		if f != "labels" && f != "annotations" && !reflect.DeepEqual(bm[f], am[f]) {
			return "of metadata only labels and annotations can be overridden (it changes metadata." + f + ")"
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		bl, _ := bm[f].(map[string]any)
		al, _ := am[f].(map[string]any)
		for k := range reserved {
			if !reflect.DeepEqual(bl[k], al[k]) {
				return "it changes metadata." + f + "[" + k + "], the federation's own"
			}
		}
	}
	for _, path := range planned {
		b, _ := nested(before, path)
		a, _ := nested(after, path)
		if !reflect.DeepEqual(a, b) {
			return "it changes " + path[0] + "." + path[1] + ", which the replica preferences plan"
		}
	}
	return ""
}

func union(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// nested reads a value at path.
func nested(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, f := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[f]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// setMetadata merges values into metadata.<field>; nil removes a key.
func setMetadata(obj map[string]any, f string, values map[string]*string) {
	if len(values) == 0 {
		return
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	m, _ := meta[f].(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	for k, v := range values {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = *v
		}
	}
	if len(m) == 0 {
		delete(meta, f)
		return
	}
	meta[f] = m
}
