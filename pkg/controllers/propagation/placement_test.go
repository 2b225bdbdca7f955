package propagation

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterselector"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/federatedtypes"
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
			placed, err := plan.Placement(annotations, three, tt.namespace)
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
					assert.Equal(t, placed[c.Name], plan.Selected(annotations, c), c.Name)
				}
			}
		})
	}
}

func TestNamespaceInLooksUpWhatTheCacheMisses(t *testing.T) {
	for _, tt := range []struct {
		name            string
		cached          bool
		memberNamespace string // "" absent, "there" or "terminating"
		nsSelector      map[string]string
		want            bool
		wantActions     []string
	}{
		{name: "labelled: from the cache", cached: true, want: true},
		{name: "our label taken off: there", memberNamespace: "there", want: true, wantActions: []string{"get"}},
		{name: "absent", want: false, wantActions: []string{"get"}},
		{name: "terminating", memberNamespace: "terminating", want: false, wantActions: []string{"get"}},
		{name: "the member's own, not selected at the federation", memberNamespace: "there", nsSelector: selectCluster("2"), want: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members := newFakeMembers([]string{"c1"})
			members.usable[0].Labels = map[string]string{"cluster": "1"}
			if tt.memberNamespace != "" {
				addMemberNamespace(t, members, "c1", tt.memberNamespace == "terminating")
			}
			tc := newTestController(t, federatedtypes.ByName("configmaps"), members)
			tc.addFederatedNamespace(t, tt.nsSelector)
			if tt.cached {
				tc.withNamespaceCache("c1/ns")
			} else {
				tc.withNamespaceCache()
			}
			assert.Equal(t, tt.want, tc.namespaceIn(t.Context(), "c1", "ns"))
			assert.Equal(t, tt.wantActions, members.memberActions("c1"))
		})
	}
}
