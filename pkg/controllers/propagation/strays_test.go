package propagation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// listingMembers lists the fake members' cached copies, and knows the
// federation's UID.
type listingMembers struct {
	*testmembers.Members
	uid string
}

func (m listingMembers) FederationUID() string { return m.uid }

func (m listingMembers) List(cluster string, _ schema.GroupVersionResource, ns string, sel labels.Selector) []*unstructured.Unstructured {
	m.Mu.Lock()
	defer m.Mu.Unlock()
	var out []*unstructured.Unstructured
	for _, o := range m.Cache[cluster] {
		if (ns == "" || o.GetNamespace() == ns) && sel.Matches(labels.Set(o.GetLabels())) {
			out = append(out, o)
		}
	}
	return out
}

func (m listingMembers) ListMetadata(cluster string, gvr schema.GroupVersionResource, ns string, sel labels.Selector) []metav1.Object {
	var out []metav1.Object
	for _, o := range m.List(cluster, gvr, ns, sel) {
		out = append(out, o)
	}
	return out
}

// memberCopy is a ConfigMap in a member labelled with federation fed and
// the given UID label ("" for none).
func memberCopy(name, uid string) *unstructured.Unstructured {
	o := configMapObj(name)
	l := map[string]string{federationv1beta1.FederationLabel: "fed"}
	if uid != "" {
		l[federationv1beta1.FederationUIDLabel] = uid
	}
	o.SetLabels(l)
	o.SetUID(types.UID("uid-" + name))
	return o
}

func strayNames(objs []metav1.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestStraysAreOurCopiesWithoutAFederatedObject(t *testing.T) {
	fm := testmembers.New([]string{"c1", "c2"}, "down")
	members := listingMembers{Members: fm, uid: "our-uid"}
	tc := newTestController(t, federatedtypes.ByName("configmaps"), fm, configMapObj("kept"))
	tc.Controller.members = members
	tc.w = tc.newWriter()
	tc.r = tc.newReleaser()

	fm.Put("c1", memberCopy("kept", "our-uid"))         // its federated object exists
	fm.Put("c1", memberCopy("after-backup", "our-uid")) // a stray
	fm.Put("c1", memberCopy("old-copy", ""))            // a stray written before the UID label
	fm.Put("c1", memberCopy("theirs", "other-uid"))     // another federation's of our name
	owned := memberCopy("owned", "our-uid")             // made by a member Deployment, say
	owned.SetOwnerReferences([]metav1.OwnerReference{{Name: "d", UID: "d", Controller: ptr.To(true)}})
	fm.Put("c1", owned)
	fm.Put("c2", memberCopy("after-backup", "our-uid"))
	fm.Put("down", memberCopy("after-backup", "our-uid")) // not usable: not counted

	strays := tc.r.Strays()
	assert.ElementsMatch(t, []string{"after-backup", "old-copy"}, strayNames(strays["c1"]))
	assert.ElementsMatch(t, []string{"after-backup"}, strayNames(strays["c2"]))
	assert.NotContains(t, strays, "down")

	fm.Unsynced = []string{"c2"}
	assert.NotContains(t, tc.r.Strays(), "c2", "an unsynced cache proves nothing")
}
