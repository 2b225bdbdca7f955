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
	w := newWork()
	for i := range rules {
		if !rules[i].Chooses(cluster, clusterLabels) {
			continue
		}
		next, err := rules[i].render(out, path.Index(i), w)
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
// the earlier rules). A rule that, after the rules before it, does what no
// rule may do (Forbidden: a protected field, a copy too large) is refused
// even if it applies alone: a cluster chosen by all of them would get it.
// All of it renders within one MaxWorkBytes; past a limit (that, or
// MaxRenderedBytes), the rules after are not checked.
func Check(rules []Rule, obj map[string]any, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	cur := obj
	w := newWork()
	for i := range rules {
		next, err := rules[i].render(cur, path.Index(i), w)
		if err == nil {
			cur = next
			continue
		}
		if w.aborted || err.Type == field.ErrorTypeForbidden {
			errs = append(errs, err)
		} else if _, alone := rules[i].render(obj, path.Index(i), w); alone != nil {
			errs = append(errs, err)
		}
		if w.aborted {
			// (The rules after it are not rendered: the work stays bounded.)
			break
		}
	}
	return errs
}

// work is what rendering has left of MaxWorkBytes, and whether a limit
// stopped it.
type work struct {
	left    int
	aborted bool
}

func newWork() *work { return &work{left: MaxWorkBytes} }

// step takes the n bytes a step rendered, and refuses it under fp when
// they are over a limit: what it made, or what all steps made.
func (w *work) step(fp *field.Path, what string, n int) *field.Error {
	w.left -= n
	switch {
	case n > MaxRenderedBytes:
		w.aborted = true
		return field.Forbidden(fp, fmt.Sprintf("%s the copy %d bytes of JSON, over the limit of %d bytes (1 MiB) an override may make it", what, n, MaxRenderedBytes))
	case w.left < 0:
		w.aborted = true
		return field.Forbidden(fp, fmt.Sprintf("the overrides render over %d bytes (%d MiB) of JSON in all, "+
			"the limit for one object (each rule and patch renders the whole copy): use fewer rules or patches", MaxWorkBytes, MaxWorkBytes>>20))
	}
	return nil
}

// apply is render within a budget of its own.
func (r *Rule) apply(obj map[string]any, p *field.Path) (map[string]any, *field.Error) {
	return r.render(obj, p, newWork())
}

// render returns a copy of obj with the rule applied: shorthands first,
// then the patches. The error is under p. The copy may not grow past
// MaxRenderedBytes at any step, each step spends its size of w, and the
// rule as a whole may not change obj's protected fields (protected.go).
func (r *Rule) render(obj map[string]any, p *field.Path, w *work) (map[string]any, *field.Error) {
	// (Patches make new objects: obj is copied only for the shorthands,
	// once they are known to apply and to stay in the limits, so that a
	// rule that fails costs little.)
	out := obj
	containers := r.Image != nil || r.Env != nil || r.Args != nil
	shorthands := containers || len(r.Labels) > 0 || len(r.Annotations) > 0
	if containers {
		if _, err := r.containerSpec(obj, p); err != nil {
			return nil, err
		}
	}
	if shorthands {
		out = runtime.DeepCopyJSON(obj)
	}
	if containers {
		if err := r.applyContainers(out, p); err != nil {
			return nil, err
		}
	}
	setMetadata(out, "labels", r.Labels)
	setMetadata(out, "annotations", r.Annotations)
	var doc []byte
	if shorthands || len(r.Patches) > 0 {
		var err error
		if doc, err = json.Marshal(out); err != nil {
			return nil, field.InternalError(p, err)
		}
		what := "its labels, annotations, image, env and args make"
		if !shorthands {
			what = "the object as it reaches the rule makes"
		}
		if err := w.step(p, what, len(doc)); err != nil {
			return nil, err
		}
	}
	for i := range r.Patches {
		fp := p.Child("patches").Index(i)
		op := &r.Patches[i]
		patched, err := op.apply(doc)
		if err != nil {
			return nil, field.Invalid(fp.Child("path"), op.Path, fmt.Sprintf("%s does not apply: %v", op.Op, err))
		}
		// (Before reading it: the work stays in the limits.)
		if err := w.step(fp.Child("path"), op.Path+": "+op.Op+" makes", len(patched)); err != nil {
			return nil, err
		}
		next, err := decodeObject(patched)
		if err != nil {
			return nil, field.Invalid(fp.Child("path"), op.Path, fmt.Sprintf("%s does not apply: %v", op.Op, err))
		}
		if what := unchanged(out, next); what != "" {
			return nil, field.Forbidden(fp.Child("path"), op.Path+": "+what)
		}
		out, doc = next, patched
	}
	if err := protectedChanged(obj, out, p); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeObject reads a JSON object as unstructured objects have it.
func decodeObject(doc []byte) (map[string]any, error) {
	var out map[string]any
	// (util/json keeps whole numbers int64, as unstructured objects have them.)
	if err := utiljson.Unmarshal(doc, &out); err != nil {
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
