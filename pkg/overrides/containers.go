package overrides

import (
	"encoding/json"
	"fmt"

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
	spec, err := r.containerSpec(obj, p)
	if err != nil {
		return err
	}
	env, verr := r.envValues()
	if verr != nil {
		return field.Invalid(p.Child("env"), nil, verr.Error())
	}
	for _, list := range []string{"initContainers", "containers"} {
		containers, _ := spec[list].([]any)
		for _, c := range containers {
			container, ok := c.(map[string]any)
			if !ok || (r.Container != "" && container["name"] != r.Container) {
				continue
			}
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
	return nil
}

// containerSpec returns the pod spec of obj that image, env and args
// change, or why they do not apply to obj (without changing it): no pod
// template, no container of the rule's name, more than MaxRenderedBytes
// added.
func (r *Rule) containerSpec(obj map[string]any, p *field.Path) (map[string]any, *field.Error) {
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
		return nil, field.Invalid(what, nil, "the object has no pod template: image, env and args change its containers")
	}
	env, err := r.envValues()
	if err != nil {
		return nil, field.Invalid(p.Child("env"), nil, err.Error())
	}
	if err := r.boundContainers(spec, env, p); err != nil {
		return nil, err
	}
	return spec, nil
}

// boundContainers refuses, before any work, image, env and args that would
// make the copy larger than MaxRenderedBytes by what they add to each
// container they change (an over-estimate: what they replace is not
// counted off), and a container of the rule's name that is not there.
func (r *Rule) boundContainers(spec map[string]any, env []map[string]any, p *field.Path) *field.Error {
	what := r.shorthandPath(p)
	each := 0
	if r.Image != nil {
		each += len(r.Image.Registry) + len(r.Image.Repository) + len(r.Image.Tag) + 2
	}
	if env != nil {
		b, err := json.Marshal(env)
		if err != nil {
			return field.InternalError(what, err)
		}
		each += len(b)
	}
	if r.Args != nil {
		b, err := json.Marshal(*r.Args)
		if err != nil {
			return field.InternalError(what, err)
		}
		each += len(b)
	}
	n := 0
	for _, list := range []string{"initContainers", "containers"} {
		containers, _ := spec[list].([]any)
		for _, c := range containers {
			if container, ok := c.(map[string]any); ok && (r.Container == "" || container["name"] == r.Container) {
				n++
			}
		}
	}
	if n == 0 && r.Container != "" {
		return field.NotFound(p.Child("container"), r.Container)
	}
	if n*each > MaxRenderedBytes {
		return field.Forbidden(what, fmt.Sprintf("set in %d containers they would add up to %d bytes of JSON to the copy, over the limit of %d bytes (1 MiB) an override may make it", n, n*each, MaxRenderedBytes))
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
