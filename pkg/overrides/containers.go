package overrides

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podSpecPaths are where the federated types keep their pod template's
// spec: workloads and Jobs, then CronJobs.
var podSpecPaths = [][]string{
	{"spec", "template", "spec"},
	{"spec", "jobTemplate", "spec", "template", "spec"},
}

// applyContainers applies the image, env and args shorthands to the
// containers and init containers of obj's pod template (to the one named
// by the rule's container, when it names one).
func (r *Rule) applyContainers(obj map[string]any, p *field.Path) *field.Error {
	var spec map[string]any
	for _, path := range podSpecPaths {
		if v, ok := nested(obj, path); ok {
			if spec, ok = v.(map[string]any); ok {
				break
			}
		}
	}
	what := r.shorthandPath(p)
	if spec == nil {
		return field.Invalid(what, nil, "the object has no pod template: image, env and args change its containers")
	}
	env, err := r.envValues()
	if err != nil {
		return field.Invalid(p.Child("env"), nil, err.Error())
	}
	found := false
	for _, list := range []string{"initContainers", "containers"} {
		containers, _ := spec[list].([]any)
		for _, c := range containers {
			container, ok := c.(map[string]any)
			if !ok || (r.Container != "" && container["name"] != r.Container) {
				continue
			}
			found = true
			if image, _ := container["image"].(string); r.Image != nil && image != "" {
				container["image"] = r.Image.rewrite(image)
			}
			if env != nil {
				container["env"] = setEnv(container["env"], env)
			}
			if r.Args != nil {
				if len(*r.Args) == 0 {
					delete(container, "args")
				} else {
					args := make([]any, len(*r.Args))
					for i, a := range *r.Args {
						args[i] = a
					}
					container["args"] = args
				}
			}
		}
	}
	if !found && r.Container != "" {
		return field.NotFound(p.Child("container"), r.Container)
	}
	return nil
}

// shorthandPath is the first container shorthand the rule has, to name
// in errors.
func (r *Rule) shorthandPath(p *field.Path) *field.Path {
	switch {
	case r.Image != nil:
		return p.Child("image")
	case r.Env != nil:
		return p.Child("env")
	}
	return p.Child("args")
}

// envValues are the rule's env vars as JSON objects.
func (r *Rule) envValues() ([]map[string]any, error) {
	if r.Env == nil {
		return nil, nil
	}
	out := make([]map[string]any, 0, len(r.Env))
	for i := range r.Env {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&r.Env[i])
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// setEnv returns the container's env with vars set: one of the same name
// is replaced where it is, others are appended.
func setEnv(current any, vars []map[string]any) []any {
	list, _ := current.([]any)
	out := append([]any(nil), list...)
	for _, v := range vars {
		v = runtime.DeepCopyJSON(v) // each container its own
		replaced := false
		for i, e := range out {
			if m, ok := e.(map[string]any); ok && m["name"] == v["name"] {
				out[i], replaced = v, true
				break
			}
		}
		if !replaced {
			out = append(out, v)
		}
	}
	return out
}
