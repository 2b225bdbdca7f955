package federatedtypes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestPodMarksNarrowWhatACopySelects(t *testing.T) {
	const l = "federation.kubernetes.io/federation-name: fed"
	for _, tt := range []struct {
		name, typ, manifest, want string
	}{
		{"a Service's selector", "services", "spec: {selector: {app: web}}", "spec: {selector: {app: web, " + l + "}}"},
		{"a Service without selector selects nothing", "services", "spec: {ports: [{port: 80}]}", "spec: {ports: [{port: 80}]}"},
		{"a Deployment's pods and selector", "deployments", "spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}}}",
			"spec: {selector: {matchLabels: {app: web, " + l + "}}, template: {metadata: {labels: {app: web, " + l + "}}}}"},
		{"an empty NetworkPolicy selector selects every pod", "networkpolicies", "spec: {podSelector: {}}", "spec: {podSelector: {matchLabels: {" + l + "}}}"},
		{"a PodDisruptionBudget with expressions", "poddisruptionbudgets", "spec: {selector: {matchExpressions: [{key: app, operator: Exists}]}}",
			"spec: {selector: {matchExpressions: [{key: app, operator: Exists}], matchLabels: {" + l + "}}}"},
		{"a PodDisruptionBudget without selector selects nothing", "poddisruptionbudgets", "spec: {minAvailable: 1}", "spec: {minAvailable: 1}"},
		{"a Job without manualSelector has no selector", "jobs", "spec: {template: {spec: {}}}", "spec: {template: {metadata: {labels: {" + l + "}}, spec: {}}}"},
		{"a CronJob's pods", "cronjobs", "spec: {jobTemplate: {spec: {template: {spec: {}}}}}", "spec: {jobTemplate: {spec: {template: {metadata: {labels: {" + l + "}}, spec: {}}}}}"},
		{"a StatefulSet's claims", "statefulsets", "spec: {selector: {}, template: {}, volumeClaimTemplates: [{metadata: {name: data}}]}",
			"spec: {selector: {matchLabels: {" + l + "}}, template: {metadata: {labels: {" + l + "}}}, volumeClaimTemplates: [{metadata: {name: data, labels: {federation.kubernetes.io/claim-of: fed}}}]}"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obj, want := decode(t, tt.manifest), decode(t, tt.want)
			ByName(tt.typ).Pods.Mark(obj, "fed")
			assert.Equal(t, want.Object, obj.Object)
		})
	}
}

func TestFixedMarksComeOffWhereTheMemberHasNone(t *testing.T) {
	sts := ByName("statefulsets").Pods
	member := decode(t, "spec: {selector: {matchLabels: {app: db}}, template: {metadata: {labels: {app: db}}}, volumeClaimTemplates: [{metadata: {name: data}}]}")
	sent := member.DeepCopy()
	sts.Mark(sent, "fed")
	require.True(t, sts.MissesFixed(member, sent), "an adopted StatefulSet's selector cannot take the mark")
	assert.True(t, sts.HasFixed(sent))
	assert.False(t, sts.MissesFixed(sent, sent))
	sts.Unmark(sent)
	assert.False(t, sts.HasFixed(sent))
	labels, _, _ := unstructured.NestedStringMap(sent.Object, "spec", "template", "metadata", "labels")
	assert.Equal(t, map[string]string{"app": "db", "federation.kubernetes.io/federation-name": "fed"}, labels,
		"a workload's pod template may change: its pods stay marked")
	selector, _, _ := unstructured.NestedStringMap(sent.Object, "spec", "selector", "matchLabels")
	assert.Equal(t, map[string]string{"app": "db"}, selector)
	assert.False(t, ByName("networkpolicies").Pods.HasFixed(sent), "selectors that may change are never taken off")
	var none *PodMarks
	assert.False(t, none.HasFixed(sent))
}

func decode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	require.NoError(t, yaml.Unmarshal([]byte(manifest), &obj.Object))
	return obj
}

func TestWhatCopiesNameIsWatched(t *testing.T) {
	for name, want := range map[string][]string{
		"deployments":              {"serviceaccounts", "secrets", "configmaps", "persistentvolumeclaims"},
		"cronjobs":                 {"serviceaccounts", "secrets", "configmaps", "persistentvolumeclaims"},
		"horizontalpodautoscalers": {"deployments", "replicasets", "statefulsets"},
		"rolebindings":             {"roles"},
		"ingresses":                {"secrets", "services"},
		"configmaps":               nil,
	} {
		var got []string
		for _, r := range ReferencedResources(ByName(name)) {
			got = append(got, r.Resource)
		}
		assert.Equal(t, want, got, name)
	}
}
