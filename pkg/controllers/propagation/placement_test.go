package propagation

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

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
			members := testmembers.New([]string{"c1"})
			members.Ready[0].Labels = map[string]string{"cluster": "1"}
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
			assert.Equal(t, tt.wantActions, members.Actions("c1"))
		})
	}
}
