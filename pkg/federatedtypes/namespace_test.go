package federatedtypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestNamespaceDefaults(t *testing.T) {
	baseline := map[string]string{
		"pod-security.kubernetes.io/enforce": "baseline",
		"pod-security.kubernetes.io/warn":    "baseline",
		"pod-security.kubernetes.io/audit":   "baseline",
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for _, m := range []map[string]string{baseline, extra} {
			for k, v := range m {
				out[k] = v
			}
		}
		return out
	}
	for _, tt := range []struct {
		name         string
		labels, want map[string]string
	}{
		{"no labels", nil, baseline},
		{"other labels are kept", map[string]string{"team": "a"}, with(map[string]string{"team": "a"})},
		{"its own enforce level is kept, alone", map[string]string{"pod-security.kubernetes.io/enforce": "privileged"},
			map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}},
		{"any Pod Security label is a choice", map[string]string{"pod-security.kubernetes.io/warn": "restricted", "team": "a"},
			map[string]string{"pod-security.kubernetes.io/warn": "restricted", "team": "a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace"}}
			ns.SetName("ns")
			ns.SetLabels(tt.labels)
			Namespaces.Defaults(ns)
			assert.Equal(t, tt.want, ns.GetLabels())
			again := ns.DeepCopy()
			Namespaces.Defaults(again)
			assert.Equal(t, ns, again, "defaulting twice changes nothing")
		})
	}
	assert.Equal(t, baseline, PodSecurityDefaults)
	for _, ty := range All[1:] {
		assert.Nil(t, ty.Defaults, "%s: only namespaces have defaults", ty.Name)
	}
}
