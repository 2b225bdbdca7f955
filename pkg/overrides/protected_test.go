package overrides

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"
)

// workload is a copy of a workload of that kind whose pod template is at
// prefix, running as the account "builder".
func workload(apiVersion, kind string, prefix []string) map[string]any {
	obj := map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{
			"name": "web", "namespace": "ns",
			"labels":      map[string]any{"app": "web", "federation.kubernetes.io/federation-name": "fed"},
			"annotations": map[string]any{"federation.kubernetes.io/object-uid": "u1", "note": "n"},
		},
	}
	cur := obj
	for _, f := range prefix {
		next := map[string]any{}
		cur[f] = next
		cur = next
	}
	cur["serviceAccountName"] = "builder"
	cur["containers"] = []any{map[string]any{"name": "app", "image": "nginx:1.27", "env": []any{map[string]any{"name": "A", "value": "0"}}}}
	return obj
}

func withMeta(obj map[string]any) map[string]any {
	obj["metadata"] = map[string]any{
		"name": "x", "namespace": "ns",
		"labels":      map[string]any{"app": "web", "federation.kubernetes.io/federation-name": "fed"},
		"annotations": map[string]any{"federation.kubernetes.io/object-uid": "u1", "note": "n"},
	}
	return obj
}

func tokenSecret() map[string]any {
	obj := withMeta(map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token"})
	obj["metadata"].(map[string]any)["annotations"].(map[string]any)["kubernetes.io/service-account.name"] = "builder"
	return obj
}

func service() map[string]any {
	return withMeta(map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{
		"ports": []any{map[string]any{"port": int64(80)}}, "clusterIPs": []any{"10.96.0.10"}}})
}

// statefulSetWithClaims is a StatefulSet copy with one claim template.
func statefulSetWithClaims() map[string]any {
	obj := workload("apps/v1", "StatefulSet", []string{"spec", "template", "spec"})
	obj["spec"].(map[string]any)["volumeClaimTemplates"] = []any{map[string]any{"metadata": map[string]any{"name": "data"},
		"spec": map[string]any{"storageClassName": "fast"}}}
	return obj
}

func hpa() map[string]any {
	return withMeta(map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "spec": map[string]any{
		"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
		"minReplicas":    int64(1), "maxReplicas": int64(3),
		"metrics": []any{map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu"}}}}})
}

func role() map[string]any {
	return withMeta(map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "rules": []any{
		map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": []any{"get"}}}})
}

func roleBinding() map[string]any {
	return withMeta(map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "app", "namespace": "ns"}}})
}

func claim() map[string]any {
	return withMeta(map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "spec": map[string]any{
		"accessModes":      []any{"ReadWriteOnce"},
		"storageClassName": "fast",
		"dataSource":       map[string]any{"kind": "PersistentVolumeClaim", "name": "golden"},
		"resources":        map[string]any{"requests": map[string]any{"storage": "1Gi"}}}})
}

func ingress() map[string]any {
	backend := func(name string) map[string]any {
		return map[string]any{"service": map[string]any{"name": name, "port": map[string]any{"number": int64(80)}}}
	}
	return withMeta(map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "spec": map[string]any{
		"defaultBackend": backend("fallback"),
		"rules": []any{map[string]any{"host": "a.example.com", "http": map[string]any{"paths": []any{
			map[string]any{"path": "/", "pathType": "Prefix", "backend": backend("web")}}}}}}})
}

type protectedCase struct {
	name  string
	obj   func() map[string]any
	rules string
	// field is the protected field the rules change; "" when they are
	// harmless.
	field string
}

// workloadCases are the ways of changing the account of a workload's pod
// template at prefix (a JSON pointer), and harmless rules.
func workloadCases(apiVersion, kind string, prefix []string) []protectedCase {
	obj := func() map[string]any { return workload(apiVersion, kind, prefix) }
	spec := "/" + strings.Join(prefix, "/")
	template := strings.TrimSuffix(spec, "/spec")
	name := strings.Join(prefix, ".") + ".serviceAccountName"
	alias := strings.Join(prefix, ".") + ".serviceAccount"
	otherTemplate := `{"spec":{"serviceAccountName":"admin","containers":[{"name":"app","image":"nginx:1.27"}]}}`
	sameTemplate := `{"spec":{"serviceAccountName":"builder","containers":[{"name":"app","image":"nginx:1.28"}]}}`
	cases := []protectedCase{
		{name: "replace", field: name, rules: `[{"patches":[{"op":"replace","path":"` + spec + `/serviceAccountName","value":"admin"}]}]`},
		{name: "remove", field: name, rules: `[{"patches":[{"op":"remove","path":"` + spec + `/serviceAccountName"}]}]`},
		{name: "add the alias", field: alias, rules: `[{"patches":[{"op":"add","path":"` + spec + `/serviceAccount","value":"admin"}]}]`},
		{name: "replace the template", field: name, rules: `[{"patches":[{"op":"replace","path":"` + template + `","value":` + otherTemplate + `}]}]`},
		{name: "remove the pod spec", field: name, rules: `[{"patches":[{"op":"remove","path":"` + spec + `"}]}]`},
		{name: "copy into it", field: name, rules: `[{"patches":[{"op":"copy","from":"/metadata/labels/app","path":"` + spec + `/serviceAccountName"}]}]`},
		{name: "move into it", field: alias, rules: `[{"patches":[{"op":"move","from":"/metadata/annotations/note","path":"` + spec + `/serviceAccount"}]}]`},
		{name: "a later patch of the same rule", field: name, rules: `[{"image":{"tag":"1.28"},"patches":[
			{"op":"test","path":"` + spec + `/serviceAccountName","value":"builder"},
			{"op":"replace","path":"` + spec + `/serviceAccountName","value":"admin"}]}]`},
		{name: "a second rule", field: name, rules: `[{"labels":{"a":"b"}},{"clusters":["c1"],"patches":[{"op":"replace","path":"` + spec + `/serviceAccountName","value":"admin"}]}]`},
		{name: "a ResourceClaim added", field: strings.Join(prefix, ".") + ".resourceClaims",
			rules: `[{"patches":[{"op":"add","path":"` + spec + `/resourceClaims","value":[{"name":"gpu","resourceClaimName":"theirs"}]}]}]`},
		{name: "a PodGroup", field: strings.Join(prefix, ".") + ".schedulingGroup",
			rules: `[{"patches":[{"op":"add","path":"` + spec + `/schedulingGroup","value":{"podGroupName":"theirs"}}]}]`},
		{name: "an ephemeral volume picking volumes", field: strings.Join(prefix, ".") + ".volumes[*].ephemeral.volumeClaimTemplate.spec.selector",
			rules: `[{"patches":[{"op":"add","path":"` + spec + `/volumes","value":[{"name":"v","ephemeral":{"volumeClaimTemplate":{"spec":{"selector":{"matchLabels":{"team":"b"}}}}}}]}]}]`},
		{name: "an ephemeral volume of a storage class: harmless",
			rules: `[{"patches":[{"op":"add","path":"` + spec + `/volumes","value":[{"name":"v","ephemeral":{"volumeClaimTemplate":{"spec":{"storageClassName":"fast"}}}}]}]}]`},
		{name: "image, env, args: harmless", rules: `[{"image":{"tag":"1.28"},"env":[{"name":"A","value":"1"}],"args":["--v=2"]}]`},
		{name: "the image by patch: harmless", rules: `[{"patches":[{"op":"replace","path":"` + spec + `/containers/0/image","value":"nginx:1.28"}]}]`},
		{name: "the template replaced, the account kept: harmless", rules: `[{"patches":[{"op":"replace","path":"` + template + `","value":` + sameTemplate + `}]}]`},
		{name: "changed and changed back: harmless", rules: `[{"patches":[{"op":"replace","path":"` + spec + `/serviceAccountName","value":"admin"},
			{"op":"replace","path":"` + spec + `/serviceAccountName","value":"builder"}]}]`},
	}
	for i := range cases {
		cases[i].name = kind + ": " + cases[i].name
		cases[i].obj = obj
	}
	return cases
}

func protectedCases() []protectedCase {
	podSpec := []string{"spec", "template", "spec"}
	var cases []protectedCase
	for _, w := range []struct{ apiVersion, kind string }{
		{"apps/v1", "Deployment"}, {"apps/v1", "ReplicaSet"}, {"apps/v1", "DaemonSet"}, {"apps/v1", "StatefulSet"},
		{"extensions/v1beta1", "Deployment"}, {"batch/v1", "Job"},
	} {
		cases = append(cases, workloadCases(w.apiVersion, w.kind, podSpec)...)
	}
	cases = append(cases, workloadCases("batch/v1", "CronJob", []string{"spec", "jobTemplate", "spec", "template", "spec"})...)

	const saName = "metadata.annotations[kubernetes.io/service-account.name]"
	saPointer := "/metadata/annotations/kubernetes.io~1service-account.name"
	cases = append(cases, []protectedCase{
		{name: "Secret: the type", obj: tokenSecret, field: "type", rules: `[{"patches":[{"op":"replace","path":"/type","value":"Opaque"}]}]`},
		{name: "Secret: the type copied", obj: tokenSecret, field: "type", rules: `[{"patches":[{"op":"copy","from":"/metadata/annotations/note","path":"/type"}]}]`},
		{name: "Secret: the account by patch", obj: tokenSecret, field: saName, rules: `[{"patches":[{"op":"replace","path":"` + saPointer + `","value":"admin"}]}]`},
		{name: "Secret: the account by the shorthand", obj: tokenSecret, field: saName, rules: `[{"annotations":{"kubernetes.io/service-account.name":"admin"}}]`},
		{name: "Secret: the account removed by the shorthand", obj: tokenSecret, field: saName, rules: `[{"annotations":{"kubernetes.io/service-account.name":null}}]`},
		{name: "Secret: the account added to an Opaque Secret", field: saName,
			obj: func() map[string]any {
				return withMeta(map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque"})
			},
			rules: `[{"annotations":{"kubernetes.io/service-account.name":"admin"}}]`},
		{name: "Secret: the annotations replaced", obj: tokenSecret, field: saName,
			rules: `[{"patches":[{"op":"replace","path":"/metadata/annotations","value":{"federation.kubernetes.io/object-uid":"u1","kubernetes.io/service-account.name":"admin"}}]}]`},
		{name: "Secret: the account moved into", obj: tokenSecret, field: saName, rules: `[{"patches":[{"op":"move","from":"/metadata/annotations/note","path":"` + saPointer + `"}]}]`},
		{name: "Secret: the uid", obj: tokenSecret, field: "metadata.annotations[kubernetes.io/service-account.uid]", rules: `[{"annotations":{"kubernetes.io/service-account.uid":"x"}}]`},
		{name: "Secret: data and another annotation: harmless", obj: tokenSecret, rules: `[{"annotations":{"note":"m"},"patches":[{"op":"add","path":"/data","value":{"ca.crt":"eA=="}}]}]`},

		{name: "Service: externalIPs added", obj: service, field: "spec.externalIPs", rules: `[{"patches":[{"op":"add","path":"/spec/externalIPs","value":["8.8.8.8"]}]}]`},
		{name: "Service: the spec replaced", obj: service, field: "spec.externalIPs", rules: `[{"patches":[{"op":"replace","path":"/spec","value":{"ports":[{"port":80}],"externalIPs":["8.8.8.8"]}}]}]`},
		{name: "Service: externalIPs copied", obj: service, field: "spec.externalIPs", rules: `[{"patches":[{"op":"copy","from":"/spec/clusterIPs","path":"/spec/externalIPs"}]}]`},
		{name: "Service: a port: harmless", obj: service, rules: `[{"patches":[{"op":"replace","path":"/spec/ports/0/port","value":8080}]}]`},

		{name: "HPA: the target's name", obj: hpa, field: "spec.scaleTargetRef", rules: `[{"patches":[{"op":"replace","path":"/spec/scaleTargetRef/name","value":"theirs"}]}]`},
		{name: "HPA: the target replaced", obj: hpa, field: "spec.scaleTargetRef",
			rules: `[{"patches":[{"op":"replace","path":"/spec/scaleTargetRef","value":{"apiVersion":"apps/v1","kind":"StatefulSet","name":"web"}}]}]`},
		{name: "HPA: the target's name copied", obj: hpa, field: "spec.scaleTargetRef", rules: `[{"patches":[{"op":"copy","from":"/metadata/annotations/note","path":"/spec/scaleTargetRef/name"}]}]`},
		{name: "HPA: the metrics: harmless", obj: hpa, rules: `[{"patches":[{"op":"replace","path":"/spec/metrics/0/resource/name","value":"memory"}]}]`},

		{name: "Role: a rule added", obj: role, field: "rules", rules: `[{"patches":[{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["*"]}}]}]`},
		{name: "Role: verbs changed", obj: role, field: "rules", rules: `[{"patches":[{"op":"replace","path":"/rules/0/verbs","value":["*"]}]}]`},
		{name: "Role: a rule copied", obj: role, field: "rules", rules: `[{"patches":[{"op":"copy","from":"/rules/0","path":"/rules/-"}]}]`},
		{name: "Role: a label: harmless", obj: role, rules: `[{"labels":{"tier":"gold"}}]`},

		{name: "RoleBinding: the role", obj: roleBinding, field: "roleRef",
			rules: `[{"patches":[{"op":"replace","path":"/roleRef","value":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"admin"}}]}]`},
		{name: "RoleBinding: a subject added", obj: roleBinding, field: "subjects",
			rules: `[{"patches":[{"op":"add","path":"/subjects/-","value":{"kind":"Group","name":"system:unauthenticated","apiGroup":"rbac.authorization.k8s.io"}}]}]`},
		{name: "RoleBinding: a subject's name moved into", obj: roleBinding, field: "subjects",
			rules: `[{"patches":[{"op":"move","from":"/metadata/annotations/note","path":"/subjects/0/name"}]}]`},
		{name: "RoleBinding: an annotation: harmless", obj: roleBinding, rules: `[{"annotations":{"note":"m"}}]`},

		{name: "PersistentVolumeClaim: a volume bound", obj: claim, field: "spec.volumeName", rules: `[{"patches":[{"op":"add","path":"/spec/volumeName","value":"pv-1"}]}]`},
		{name: "PersistentVolumeClaim: the data source", obj: claim, field: "spec.dataSource",
			rules: `[{"patches":[{"op":"replace","path":"/spec/dataSource","value":{"apiGroup":"snapshot.storage.k8s.io","kind":"VolumeSnapshot","name":"s"}}]}]`},
		{name: "PersistentVolumeClaim: the data source removed", obj: claim, field: "spec.dataSource", rules: `[{"patches":[{"op":"remove","path":"/spec/dataSource"}]}]`},
		{name: "PersistentVolumeClaim: a populator", obj: claim, field: "spec.dataSourceRef",
			rules: `[{"patches":[{"op":"add","path":"/spec/dataSourceRef","value":{"apiGroup":"hello.example.com","kind":"Hello","name":"h"}}]}]`},
		{name: "PersistentVolumeClaim: the spec replaced", obj: claim, field: "spec.volumeName",
			rules: `[{"patches":[{"op":"replace","path":"/spec","value":{"volumeName":"pv-1","dataSource":{"kind":"PersistentVolumeClaim","name":"golden"}}}]}]`},
		{name: "PersistentVolumeClaim: volumes picked by label", obj: claim, field: "spec.selector",
			rules: `[{"patches":[{"op":"add","path":"/spec/selector","value":{"matchLabels":{"team":"b"}}}]}]`},
		{name: "StatefulSet: a claim template picking volumes", obj: statefulSetWithClaims, field: "spec.volumeClaimTemplates[*].spec.selector",
			rules: `[{"patches":[{"op":"add","path":"/spec/volumeClaimTemplates/0/spec/selector","value":{"matchLabels":{"team":"b"}}}]}]`},
		{name: "Service: an ExternalName", obj: service, field: "spec.externalName",
			rules: `[{"patches":[{"op":"add","path":"/spec/externalName","value":"payments.team-b.svc"}]}]`},
		{name: "PersistentVolumeClaim: the storage class: harmless", obj: claim, rules: `[{"patches":[{"op":"replace","path":"/spec/storageClassName","value":"slow"}]}]`},

		{name: "Ingress: a default resource backend", obj: ingress, field: "spec.defaultBackend.resource",
			rules: `[{"patches":[{"op":"replace","path":"/spec/defaultBackend","value":{"resource":{"apiGroup":"k8s.example.com","kind":"StorageBucket","name":"b"}}}]}]`},
		{name: "Ingress: a path's resource backend", obj: ingress, field: "spec.rules[*].http.paths[*].backend.resource",
			rules: `[{"patches":[{"op":"replace","path":"/spec/rules/0/http/paths/0/backend","value":{"resource":{"kind":"Secret","name":"s"}}}]}]`},
		{name: "Ingress: a path added with a resource backend", obj: ingress, field: "spec.rules[*].http.paths[*].backend.resource",
			rules: `[{"patches":[{"op":"add","path":"/spec/rules/-","value":{"http":{"paths":[{"path":"/b","pathType":"Prefix","backend":{"resource":{"kind":"Secret","name":"s"}}}]}}}]}]`},
		{name: "Ingress: the host: harmless", obj: ingress, rules: `[{"patches":[{"op":"replace","path":"/spec/rules/0/host","value":"b.example.com"}]}]`},
		{name: "Ingress: a path added with a service backend: harmless", obj: ingress,
			rules: `[{"patches":[{"op":"add","path":"/spec/rules/0/http/paths/-","value":{"path":"/api","pathType":"Prefix","backend":{"service":{"name":"api","port":{"number":80}}}}}]}]`},
	}...)
	return cases
}

func TestProtectedFields(t *testing.T) {
	for _, tc := range protectedCases() {
		t.Run(tc.name, func(t *testing.T) {
			rules := mustParse(t, tc.rules)
			obj := tc.obj()
			_, _, err := Apply(rules, "c1", nil, obj, annotationPath)
			errs := Check(rules, obj, annotationPath)
			if tc.field == "" {
				assert.NoError(t, err, "the controller applies it")
				assert.Empty(t, errs, "admission takes it")
				return
			}
			rule := len(rules) - 1
			want := fmt.Sprintf("metadata.annotations[federation.kubernetes.io/overrides][%d]: Forbidden: an override may not change %s: "+
				"it is checked at the federation on the object itself (set it there)", rule, tc.field)
			require.Error(t, err, "the controller refuses it")
			assert.Equal(t, want, err.Error())
			require.Len(t, errs, 1, "admission refuses it")
			assert.Equal(t, want, errs[0].Error())
		})
	}
}

// Every group and kind of the table has a case refused and a harmless one.
func TestProtectedTableCovered(t *testing.T) {
	refused, allowed := map[string]bool{}, map[string]bool{}
	for _, tc := range protectedCases() {
		obj := tc.obj()
		gk := fmt.Sprint(obj["apiVersion"], " ", obj["kind"])
		require.NotEmpty(t, protectedFields(obj), gk)
		if tc.field == "" {
			allowed[gk] = true
		} else {
			refused[gk] = true
		}
	}
	assert.Equal(t, refused, allowed)
	assert.Len(t, refused, len(protected)+1, "each kind of the table (and extensions' Deployment)")
	assert.Empty(t, protectedFields(map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}))
}

// doubling is n rules each copying the pod template into its own labels,
// doubling the object each time.
func doubling(n int) string {
	rules := make([]string, n)
	for i := range rules {
		rules[i] = fmt.Sprintf(`{"patches":[{"op":"copy","from":"/spec/template","path":"/spec/template/metadata/labels/x%d"}]}`, i)
	}
	return "[" + strings.Join(rules, ",") + "]"
}

func TestDoublingStopsAtTheLimit(t *testing.T) {
	start := time.Now()
	obj := deployment()
	obj["spec"].(map[string]any)["template"].(map[string]any)["metadata"] = map[string]any{"labels": map[string]any{"app": "web"}}
	rules := mustParse(t, doubling(30))

	// Rule by rule, as the controller does: each rule that applies stays
	// within the limit, and one fails on it.
	cur := obj
	failed := -1
	for i := range rules {
		next, err := rules[i].apply(cur, annotationPath.Index(i))
		if err != nil {
			failed = i
			assert.Contains(t, err.Error(), fmt.Sprintf("metadata.annotations[federation.kubernetes.io/overrides][%d].patches[0].path: Forbidden: "+
				"/spec/template/metadata/labels/x%d: copy makes the copy ", i, i))
			assert.Contains(t, err.Error(), "bytes of JSON, over the limit of 1048576 bytes (1 MiB) an override may make it")
			break
		}
		b, jerr := json.Marshal(next)
		require.NoError(t, jerr)
		assert.LessOrEqual(t, len(b), MaxRenderedBytes, "rule %d", i)
		cur = next
	}
	require.Greater(t, failed, 0, "the attack stops at a rule")
	assert.Less(t, failed, 30)

	_, _, err := Apply(rules, "c1", nil, obj, annotationPath)
	assert.ErrorContains(t, err, "over the limit of 1048576 bytes")
	errs := Check(rules, obj, annotationPath)
	require.NotEmpty(t, errs)
	assert.Contains(t, errs[0].Error(), "over the limit of 1048576 bytes")
	// Without the limit, 30 doublings would be 2^30 times the object: the
	// test would not finish. With it, a few seconds at most even on a
	// loaded machine with -race.
	assert.Less(t, time.Since(start), 20*time.Second)
}

func TestLimits(t *testing.T) {
	_, errs := Parse(doubling(MaxRules+1), annotationPath)
	require.Len(t, errs, 1)
	assert.Equal(t, "metadata.annotations[federation.kubernetes.io/overrides]: Too many: 101: must have at most 100 items", errs[0].Error())

	patches := make([]string, MaxPatchesPerRule+1)
	for i := range patches {
		patches[i] = `{"op":"add","path":"/metadata/labels/a","value":"b"}`
	}
	_, errs = Parse(`[{"labels":{"a":"b"}},{"patches":[`+strings.Join(patches, ",")+`]}]`, annotationPath)
	require.Len(t, errs, 1)
	assert.Equal(t, "metadata.annotations[federation.kubernetes.io/overrides][1].patches: Too many: 21: must have at most 20 items", errs[0].Error())
	_, errs = Parse(`[{"patches":[`+strings.Join(patches[1:], ",")+`]}]`, annotationPath)
	assert.Empty(t, errs, "the limit itself is fine")

	// The shorthands: an env var large enough, set in many containers.
	obj := deployment()
	spec := obj["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	var containers []any
	for i := 0; i < 200; i++ {
		containers = append(containers, map[string]any{"name": fmt.Sprint("c", i), "image": "nginx"})
	}
	spec["containers"] = containers
	big := strings.Repeat("x", 8<<10)
	rules := mustParse(t, `[{"env":[{"name":"BIG","value":"`+big+`"}]}]`)
	_, _, err := Apply(rules, "c1", nil, obj, annotationPath)
	assert.ErrorContains(t, err, "metadata.annotations[federation.kubernetes.io/overrides][0].env: Forbidden: set in 201 containers they would add up to ")
	rules = mustParse(t, `[{"container":"c1","env":[{"name":"BIG","value":"`+big+`"}]}]`)
	_, _, err = Apply(rules, "c1", nil, obj, annotationPath)
	assert.NoError(t, err, "in one container it is fine")

	// Labels that make an object already near the limit too large.
	obj = deployment()
	obj["metadata"].(map[string]any)["annotations"].(map[string]any)["large"] = strings.Repeat("y", MaxRenderedBytes-2000)
	rules = mustParse(t, `[{"labels":{"a":"`+strings.Repeat("z", 60)+`"}},{"annotations":{"b":"`+strings.Repeat("z", 4000)+`"}}]`)
	_, _, err = Apply(rules, "c1", nil, runtime.DeepCopyJSON(obj), annotationPath)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "metadata.annotations[federation.kubernetes.io/overrides][1]: Forbidden: its labels, annotations, image, env and args make the copy ")

	// Many small steps on a large object: within the rendered size, over
	// the work all of them may do.
	obj = deployment()
	obj["metadata"].(map[string]any)["annotations"].(map[string]any)["large"] = strings.Repeat("y", 400<<10)
	var many []string
	for i := 0; i < 60; i++ {
		many = append(many, fmt.Sprintf(`{"patches":[{"op":"add","path":"/metadata/labels/l%d","value":"v"}]}`, i))
	}
	rules = mustParse(t, "["+strings.Join(many, ",")+"]")
	_, _, err = Apply(rules[:4], "c1", nil, obj, annotationPath)
	assert.NoError(t, err, "4 rules of 2 steps (the rule's start, its patch) of 400 KiB are 3.2 MiB")
	_, _, err = Apply(rules, "c1", nil, obj, annotationPath)
	want := "]: Forbidden: the overrides render over 4194304 bytes (4 MiB) of JSON in all, the limit for one object (each rule and patch renders the whole copy): use fewer rules or patches"
	require.Error(t, err)
	assert.Contains(t, err.Error(), "metadata.annotations[federation.kubernetes.io/overrides][5]")
	assert.Contains(t, err.Error(), want)
	errs = Check(rules, obj, annotationPath)
	require.Len(t, errs, 1, "the rules after are not rendered")
	assert.Equal(t, err.Error(), errs[0].Error())
}
