package overrides

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Patch is one JSON patch operation (RFC 6902).
type Patch struct {
	Op   string
	Path string
	// From is the source of move and copy.
	From string
	// Value is the operand of add, replace and test, as given (null
	// included); nil when absent.
	Value json.RawMessage
}

// ops are the operations of RFC 6902.
var ops = []string{"add", "remove", "replace", "move", "copy", "test"}

// UnmarshalJSON reads an operation, refusing fields RFC 6902 does not have.
func (p *Patch) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	for k, v := range m {
		var s *string
		switch k {
		case "op":
			s = &p.Op
		case "path":
			s = &p.Path
		case "from":
			s = &p.From
		case "value":
			p.Value = v
			continue
		default:
			return fmt.Errorf("unknown field %q in a patch operation (op, path, from, value)", k)
		}
		if err := json.Unmarshal(v, s); err != nil {
			return fmt.Errorf("patch operation field %q: %w", k, err)
		}
	}
	return nil
}

// MarshalJSON writes the operation back as RFC 6902 has it.
func (p Patch) MarshalJSON() ([]byte, error) {
	m := map[string]any{"op": p.Op, "path": p.Path}
	if p.From != "" || p.Op == "move" || p.Op == "copy" {
		m["from"] = p.From
	}
	if p.Value != nil {
		m["value"] = p.Value
	}
	return json.Marshal(m)
}

// planned are the fields the replica planner sets on each cluster's copy
// (replicapreferences, HPA division): overrides may not change them.
var planned = [][]string{
	{"spec", "replicas"}, {"spec", "parallelism"}, {"spec", "completions"},
	{"spec", "minReplicas"}, {"spec", "maxReplicas"},
}

// check validates an operation without the object: a known op with its
// operands, and paths that stay out of what the federation owns.
func (p *Patch) check(fp *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !slices.Contains(ops, p.Op) {
		return append(errs, field.NotSupported(fp.Child("op"), p.Op, ops))
	}
	errs = append(errs, checkPath(p.Path, fp.Child("path"))...)
	switch p.Op {
	case "add", "replace", "test":
		if p.Value == nil {
			errs = append(errs, field.Required(fp.Child("value"), p.Op+" needs a value"))
		}
	case "move", "copy":
		errs = append(errs, checkPath(p.From, fp.Child("from"))...)
		if p.Op == "move" {
			// Moving takes the value away from where it was.
			errs = append(errs, checkWritable(p.From, fp.Child("from"))...)
		}
	}
	if p.Op != "test" {
		errs = append(errs, checkWritable(p.Path, fp.Child("path"))...)
	}
	return errs
}

// checkPath checks the syntax of a JSON pointer.
func checkPath(path string, fp *field.Path) field.ErrorList {
	if !strings.HasPrefix(path, "/") {
		return field.ErrorList{field.Invalid(fp, path, `a JSON pointer into the object, such as "/spec/template/spec/containers/0/image"`)}
	}
	return nil
}

// checkWritable refuses paths a rule may not change: the object's
// identity, its status, its metadata other than labels and annotations,
// the federation's own labels and annotations, and the planned replicas.
func checkWritable(path string, fp *field.Path) field.ErrorList {
	tokens := pointerTokens(path)
	if len(tokens) == 0 {
		return nil
	}
	switch tokens[0] {
	case "apiVersion", "kind":
		return field.ErrorList{field.Forbidden(fp, path+": the object's type cannot be overridden")}
	case "status":
		return field.ErrorList{field.Forbidden(fp, path+": status is the members' to write")}
	case "metadata":
		if len(tokens) < 2 || (tokens[1] != "labels" && tokens[1] != "annotations") {
			return field.ErrorList{field.Forbidden(fp, path+": of metadata only labels and annotations can be overridden (never name, namespace or uid)")}
		}
		if len(tokens) > 2 && reserved[tokens[2]] {
			return field.ErrorList{field.Forbidden(fp, path+": the federation's own: no rule may change it")}
		}
	}
	for _, p := range planned {
		if hasPrefix(tokens, p) {
			return field.ErrorList{field.Forbidden(fp, path+": "+strings.Join(p, ".")+" is planned by the replica preferences, not overridden")}
		}
	}
	return nil
}

// pointerTokens splits a JSON pointer into its unescaped tokens.
func pointerTokens(path string) []string {
	if path == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

func hasPrefix(tokens, prefix []string) bool {
	return len(tokens) >= len(prefix) && slices.Equal(tokens[:len(prefix)], prefix)
}

// apply applies the operation to the JSON document doc.
func (p *Patch) apply(doc []byte) ([]byte, error) {
	op, err := json.Marshal([]Patch{*p})
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(op)
	if err != nil {
		return nil, err
	}
	return patch.Apply(doc)
}
