package guard

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/record"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func toldCount(g *groupsTold) int {
	n := 0
	g.told.Range(func(any, any) bool { n++; return true })
	return n
}

// A copy's refusal is news once per object and group; what is kept goes
// with the copy's refusal.
func TestGroupsToldOncePerCopyObjectAndGroup(t *testing.T) {
	var g groupsTold
	assert.True(t, g.tell("c1/ns/a", "uid-1", "other.example.com"))
	assert.False(t, g.tell("c1/ns/a", "uid-1", "other.example.com"), "unchanged")
	assert.True(t, g.tell("c2/ns/a", "uid-1", "other.example.com"), "another cluster")
	assert.True(t, g.tell("c1/ns/b", "uid-2", "other.example.com"), "another object")
	assert.True(t, g.tell("c1/ns/a", "uid-3", "other.example.com"), "the object made again")
	assert.True(t, g.tell("c1/ns/a", "uid-3", "else.example.com"), "another group (its CRD changed)")
	assert.Equal(t, 3, toldCount(&g), "one entry per copy")

	g.forget(func(k string) bool { return k == "c1/ns/a" })
	assert.Equal(t, 2, toldCount(&g))
	assert.True(t, g.tell("c1/ns/a", "uid-3", "else.example.com"), "told again once forgotten")
}

// The copies told are forgotten with their object, their cluster, or a
// write of theirs that ends otherwise: memory follows the refused copies.
func TestGroupNotGrantedIsForgottenWithItsCopy(t *testing.T) {
	typ := &federatedtypes.Type{Kind: "Gizmo", Namespaced: true,
		Resource: schema.GroupVersionResource{Group: "other.example.com", Version: "v1", Resource: "gizmos"}}
	recorder := record.NewFakeRecorder(100)
	g := New(typ, dynamicfake.NewSimpleDynamicClient(runtime.NewScheme()), testmembers.New([]string{"c1", "c2"}), recorder, Config{MemberTimeout: time.Second})
	refused := apierrors.NewForbidden(typ.Resource.GroupResource(), "a", errors.New(
		`User "u" cannot create resource "gizmos" in API group "other.example.com" in the namespace "ns"`))
	obj := func(name string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{}
		o.SetNamespace("ns")
		o.SetName(name)
		o.SetUID(types.UID("uid-" + name))
		return o
	}
	for _, c := range []string{"c1", "c2"} {
		for _, name := range []string{"a", "b"} {
			for range 3 {
				var e *ErrGroupNotGranted
				require.ErrorAs(t, g.GroupNotGranted(c, obj(name), refused), &e)
			}
		}
	}
	assert.Len(t, recorder.Events, 4, "once per copy")
	assert.Equal(t, 4, toldCount(&g.groupsTold))

	other := errors.New("timeout")
	assert.Same(t, other, g.GroupNotGranted("c1", obj("a"), other), "another end is the member's own")
	assert.NoError(t, g.GroupNotGranted("c1", obj("b"), nil))
	assert.Equal(t, 2, toldCount(&g.groupsTold))
	g.ForgetClusters(func(c string) bool { return c != "c2" })
	assert.Equal(t, 0, toldCount(&g.groupsTold))
	_ = g.GroupNotGranted("c1", obj("a"), refused)
	g.Forget("ns/a")
	assert.Equal(t, 0, toldCount(&g.groupsTold))
}
