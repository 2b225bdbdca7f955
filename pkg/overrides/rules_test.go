package overrides

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var annotationPath = field.NewPath("metadata", "annotations").Key(Annotation)

func TestParseRefuses(t *testing.T) {
	cases := []struct {
		name, value, want string
	}{
		{"not JSON", `[{`, "metadata.annotations[federation.kubernetes.io/overrides]: Invalid value"},
		{"not a list", `{"clusters":["a"]}`, "not a JSON list of rules"},
		{"unknown rule field", `[{"cluster":["a"],"labels":{"a":"b"}}]`, `[0]: Invalid value: "{\"cluster\"`},
		{"unknown patch field", `[{"patches":[{"op":"add","path":"/data/a","value":"b","val":1}]}]`, `unknown field "val"`},
		{"bad op", `[{"labels":{"a":"b"}},{"patches":[{"op":"merge","path":"/data/a"}]}]`,
			`overrides][1].patches[0].op: Unsupported value: "merge"`},
		{"a value missing", `[{"patches":[{"op":"replace","path":"/data/a"}]}]`, "patches[0].value: Required value"},
		{"a path that is no pointer", `[{"patches":[{"op":"remove","path":"data.a"}]}]`, "patches[0].path: Invalid value"},
		{"the name", `[{"labels":{"a":"b"}},{"patches":[{"op":"replace","path":"/metadata/name","value":"x"}]}]`,
			"overrides][1].patches[0].path: Forbidden: /metadata/name"},
		{"the namespace", `[{"patches":[{"op":"replace","path":"/metadata/namespace","value":"x"}]}]`, "patches[0].path: Forbidden"},
		{"the uid", `[{"patches":[{"op":"remove","path":"/metadata/uid"}]}]`, "patches[0].path: Forbidden"},
		{"status", `[{"patches":[{"op":"add","path":"/status/x","value":1}]}]`, "status is the members' to write"},
		{"moving status away", `[{"patches":[{"op":"move","from":"/status/x","path":"/spec/x"}]}]`, "patches[0].from: Forbidden"},
		{"replicas", `[{"patches":[{"op":"replace","path":"/spec/replicas","value":5}]}]`,
			"patches[0].path: Forbidden: /spec/replicas: spec.replicas is planned by the replica preferences"},
		{"the federation's label", `[{"labels":{"federation.kubernetes.io/federation-name":null}}]`, "labels[federation.kubernetes.io/federation-name]: Forbidden"},
		{"the hash by patch", `[{"patches":[{"op":"remove","path":"/metadata/annotations/federation.kubernetes.io~1applied-hash"}]}]`, "the federation's own"},
		{"a bad label value", `[{"labels":{"a":"not a value"}}]`, `labels[a]: Invalid value: "not a value"`},
		{"a bad selector", `[{"clusterSelector":[{"key":"region","operator":"near","values":["eu"]}],"labels":{"a":"b"}}]`,
			`overrides][0].clusterSelector: Invalid value`},
		{"an empty cluster list", `[{"clusters":[],"labels":{"a":"b"}}]`, "clusters: Required value"},
		{"a bad cluster name", `[{"clusters":["Not_A_Name"],"labels":{"a":"b"}}]`, "clusters[0]: Invalid value"},
		{"nothing to change", `[{"clusters":["a"]}]`, "a rule changes something"},
		{"a container and nothing for it", `[{"container":"app","labels":{"a":"b"}}]`, "container: Invalid value"},
		{"an empty image", `[{"image":{}}]`, "image: Required value"},
		{"a bad tag", `[{"image":{"tag":"1.0 beta"}}]`, "image.tag: Invalid value"},
		{"an env var without a name", `[{"env":[{"value":"1"}]}]`, "env[0].name: Required value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := Parse(tc.value, annotationPath)
			require.NotEmpty(t, errs)
			assert.Contains(t, errs.ToAggregate().Error(), tc.want)
		})
	}
}

func TestParseAccepts(t *testing.T) {
	rules, errs := Parse(`[
		{"clusters":["c1"],"clusterSelector":[{"key":"region","operator":"in","values":["eu"]}],"container":"app",
		 "image":{"registry":"eu.example.com","tag":"1.2"},"env":[{"name":"A","value":"1"}],"args":[],
		 "labels":{"a":"b","c":null},"annotations":{"x/y":"z"},
		 "patches":[{"op":"test","path":"/status/x","value":null},{"op":"copy","from":"/spec/a","path":"/spec/b"}]},
		{"patches":[{"op":"add","path":"/metadata/labels/tier","value":"gold"}]}]`, annotationPath)
	require.Empty(t, errs)
	require.Len(t, rules, 2)
	assert.Equal(t, "null", string(rules[0].Patches[0].Value), "a null value is a value")
	assert.NotNil(t, rules[0].Args)
}

func TestChooses(t *testing.T) {
	rules, errs := Parse(`[
		{"labels":{"a":"every"}},
		{"clusters":["c1","c2"],"labels":{"a":"named"}},
		{"clusterSelector":[{"key":"region","operator":"==","values":["eu"]}],"labels":{"a":"eu"}},
		{"clusters":["c1"],"clusterSelector":[{"key":"region","operator":"==","values":["eu"]}],"labels":{"a":"both"}}]`, annotationPath)
	require.Empty(t, errs)
	eu, us := map[string]string{"region": "eu"}, map[string]string{"region": "us"}
	chosen := func(cluster string, l map[string]string) []bool {
		var out []bool
		for i := range rules {
			out = append(out, rules[i].Chooses(cluster, l))
		}
		return out
	}
	assert.Equal(t, []bool{true, true, true, true}, chosen("c1", eu))
	assert.Equal(t, []bool{true, true, false, false}, chosen("c2", us))
	assert.Equal(t, []bool{true, false, true, false}, chosen("c3", eu))
	assert.Equal(t, []bool{true, false, false, false}, chosen("c3", nil))
}

func TestForObject(t *testing.T) {
	rules, err := ForObject(nil)
	assert.NoError(t, err)
	assert.Nil(t, rules)
	_, err = ForObject(map[string]string{Annotation: `[{"patches":[{"op":"nope"}]}]`})
	assert.ErrorContains(t, err, "metadata.annotations[federation.kubernetes.io/overrides][0].patches[0].op")
}
