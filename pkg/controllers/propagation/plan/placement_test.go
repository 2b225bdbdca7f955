package plan

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterselector"
)

func clusters(labels ...map[string]string) []*federationv1beta1.Cluster {
	var out []*federationv1beta1.Cluster
	for i, l := range labels {
		out = append(out, &federationv1beta1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "c" + string(rune('1'+i)), Labels: l}})
	}
	return out
}

func TestPlacement(t *testing.T) {
	three := clusters(map[string]string{"cluster": "1", "tier": "5"}, map[string]string{"cluster": "2", "tier": "7"}, map[string]string{"cluster": "3"})
	for _, tt := range []struct {
		name      string
		selector  string
		namespace func(string) bool
		want      []string
		wantErr   bool
	}{
		{name: "no selector: every cluster", want: []string{"c1", "c2", "c3"}},
		{name: "==", selector: `[{"key":"cluster","operator":"==","values":["1"]}]`, want: []string{"c1"}},
		{name: "=", selector: `[{"key":"cluster","operator":"=","values":["2"]}]`, want: []string{"c2"}},
		{name: "!=", selector: `[{"key":"cluster","operator":"!=","values":["1"]}]`, want: []string{"c2", "c3"}},
		{name: "in", selector: `[{"key":"cluster","operator":"in","values":["1","3"]}]`, want: []string{"c1", "c3"}},
		{name: "NotIn", selector: `[{"key":"cluster","operator":"NotIn","values":["1","3"]}]`, want: []string{"c2"}},
		{name: "exists", selector: `[{"key":"tier","operator":"exists"}]`, want: []string{"c1", "c2"}},
		{name: "!", selector: `[{"key":"tier","operator":"!"}]`, want: []string{"c3"}},
		{name: "gt", selector: `[{"key":"tier","operator":"gt","values":["6"]}]`, want: []string{"c2"}},
		{name: "Lt", selector: `[{"key":"tier","operator":"Lt","values":["6"]}]`, want: []string{"c1"}},
		{name: "ANDed", selector: `[{"key":"tier","operator":"Exists"},{"key":"cluster","operator":"In","values":["2","3"]}]`, want: []string{"c2"}},
		{name: "no match", selector: `[{"key":"cluster","operator":"==","values":["9"]}]`, want: nil},
		{name: "only where the namespace is", namespace: func(c string) bool { return c != "c2" }, want: []string{"c1", "c3"}},
		{name: "bad selector", selector: `[{"key":"cluster","operator":"~"}]`, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			annotations := map[string]string{}
			if tt.selector != "" {
				annotations[clusterselector.Annotation] = tt.selector
			}
			placed, err := Placement(annotations, three, tt.namespace)
			if tt.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			var got []string
			for c := range placed {
				got = append(got, c)
			}
			sort.Strings(got)
			assert.Equal(t, tt.want, got)
			for _, c := range three {
				if tt.namespace == nil {
					assert.Equal(t, placed[c.Name], Selected(annotations, c), c.Name)
				}
			}
		})
	}
}
