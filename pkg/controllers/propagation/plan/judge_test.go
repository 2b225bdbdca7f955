package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func TestJudge(t *testing.T) {
	desired := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	desired.SetLabels(map[string]string{"l": "v"})
	copyAt := func(rv, hash string) *unstructured.Unstructured {
		c := desired.DeepCopy()
		c.SetResourceVersion(rv)
		c.SetAnnotations(map[string]string{federationv1beta1.AppliedHashAnnotation: hash})
		return c
	}
	wrote := func(rv, hash string, unseen bool, passed ...string) LastWrite {
		return LastWrite{Version: "rv" + rv, ResourceVersion: rv, Hash: hash, Unseen: unseen, Passed: passed}
	}
	for _, tt := range []struct {
		name string
		o    Observed
		want Verdict
	}{
		{"not placed, absent", Observed{}, Verdict{InSync: true}},
		{"not placed, there", Observed{Cur: copyAt("1", "h")}, Verdict{}},
		{"absent, never written", Observed{Placed: true, Hash: "h"}, Verdict{NotCached: true}},
		{"absent, our unseen write of it", Observed{Placed: true, Hash: "h", Known: true, Last: wrote("1", "h", true)}, Verdict{InSync: true}},
		{"absent, our unseen write of another", Observed{Placed: true, Hash: "h2", Known: true, Last: wrote("1", "h", true)}, Verdict{NotCached: true}},
		{"absent, written and seen (deleted there)", Observed{Placed: true, Hash: "h", Known: true, Last: wrote("1", "h", false)}, Verdict{NotCached: true}},
		{"as our write left it", Observed{Placed: true, Cur: copyAt("1", "h"), Hash: "h", Desired: desired, Known: true, Last: wrote("1", "h", false)}, Verdict{InSync: true}},
		{"changed there since", Observed{Placed: true, Cur: copyAt("2", "h"), Hash: "h", Desired: desired, Known: true, Last: wrote("1", "h", false)}, Verdict{}},
		{"on our write's way", Observed{Placed: true, Cur: copyAt("2", "h"), Hash: "h", Desired: desired, Known: true, Last: wrote("3", "h", true, "2")}, Verdict{InSync: true}},
		{"another hash", Observed{Placed: true, Cur: copyAt("1", "h"), Hash: "h2", Desired: desired, Known: true, Last: wrote("1", "h", false)}, Verdict{}},
		{"in sync, unknown to the writer", Observed{Placed: true, Cur: copyAt("1", "h"), Hash: "h", Desired: desired}, Verdict{InSync: true, Remember: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Judge(tt.o))
		})
	}
}

func TestBasisChangesWithTheCopyAndWithOurWrites(t *testing.T) {
	cur := &unstructured.Unstructured{Object: map[string]any{}}
	cur.SetResourceVersion("1")
	last := LastWrite{ResourceVersion: "1", Hash: "h"}
	b := Basis(cur, last, true)
	assert.Equal(t, b, Basis(cur.DeepCopy(), last, true))
	moved := cur.DeepCopy()
	moved.SetResourceVersion("2")
	assert.NotEqual(t, b, Basis(moved, last, true), "the member changed it")
	assert.NotEqual(t, b, Basis(cur, LastWrite{ResourceVersion: "2", Hash: "h"}, true), "our write ended meanwhile")
	assert.NotEqual(t, b, Basis(nil, last, true), "gone from the cache")
	assert.NotEqual(t, b, Basis(cur, last, false), "forgotten")
}
