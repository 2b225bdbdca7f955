package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// withHash is a member copy of generation with these annotations and status.
func withHash(cluster string, generation int64, annotations map[string]string, status map[string]any) federatedtypes.Member {
	o := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	o.SetName("x")
	o.SetNamespace("ns")
	o.SetGeneration(generation)
	o.SetAnnotations(annotations)
	return federatedtypes.Member{Cluster: cluster, Object: o}
}

func TestRolled(t *testing.T) {
	cur := map[string]string{federationv1beta1.AppliedHashAnnotation: "h"}
	old := map[string]string{federationv1beta1.AppliedHashAnnotation: "old"}
	observed := func(g int64) map[string]any { return map[string]any{"observedGeneration": g} }
	placed := map[string]bool{"c1": true, "c2": true}
	for _, tt := range []struct {
		name    string
		members []federatedtypes.Member
		want    bool
	}{
		{"every member holds and observed it", []federatedtypes.Member{withHash("c1", 2, cur, observed(2)), withHash("c2", 5, cur, observed(5))}, true},
		{"a member has not observed it yet", []federatedtypes.Member{withHash("c1", 2, cur, observed(2)), withHash("c2", 5, cur, observed(4))}, false},
		{"a member holds an older object", []federatedtypes.Member{withHash("c1", 2, cur, observed(2)), withHash("c2", 5, old, observed(5))}, false},
		{"a member has no copy", []federatedtypes.Member{withHash("c1", 2, cur, observed(2))}, false},
		{"copies where not placed do not count", []federatedtypes.Member{withHash("c1", 2, cur, observed(2)), withHash("c9", 1, cur, observed(1))}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Rolled(placed, tt.members, map[string]string{"c1": "h", "c2": "h", "c9": "h"}))
		})
	}
}
