package writer

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/plan"
	"github.com/federation-v1/federation/pkg/ownership"
)

// ourCopy is what we know of a member copy we wrote or saw in sync.
type ourCopy struct {
	// version of the copy our write left (see version).
	version string
	// resourceVersion of the copy our write left: its watch event is the
	// echo of that write.
	resourceVersion string
	// hash we applied.
	hash string
	// unseen: written by us, and no watch event of the copy has come since.
	unseen bool
	// uid of the copy, and adopted: it was the member's before we took it
	// over (ownership.go).
	uid     types.UID
	adopted bool
	// passed: the resourceVersions the copy went through during that write
	// before its end (an update of a copy we created is an apply, a patch
	// handing its fields over, and an apply). Their watch events come
	// late, after the write, and are echoes too, not changes by others.
	passed []string
}

// lastWrite is what plan.Judge is told of the copy.
func (o ourCopy) lastWrite() plan.LastWrite {
	return plan.LastWrite{Version: o.version, ResourceVersion: o.resourceVersion, Hash: o.hash, Unseen: o.unseen, Passed: o.passed}
}

// passedThrough reports whether rv is a version our last write left on
// its way to the end.
func (o ourCopy) passedThrough(rv string) bool {
	return rv != "" && slices.Contains(o.passed, rv)
}

// appliedCopies hold, per cluster and object key, the member copy our last
// write left, to notice changes made by others.
type appliedCopies struct {
	mu     sync.Mutex
	copies map[string]ourCopy
}

func newAppliedCopies() *appliedCopies {
	return &appliedCopies{copies: map[string]ourCopy{}}
}

// get returns what we know of the copy of objKey in cluster.
func (a *appliedCopies) get(cluster, objKey string) (ourCopy, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.copies[fedobject.CopyKey(cluster, objKey)]
	return c, ok
}

// remember records the member copy obj as ours; written says it is the
// answer to our write, which the member's watch has yet to bring, and
// passed the versions that write went through before obj.
func (a *appliedCopies) remember(cluster, objKey string, obj metav1.Object, written bool, passed ...string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.copies[fedobject.CopyKey(cluster, objKey)] = ourCopy{version: plan.Version(obj), resourceVersion: obj.GetResourceVersion(),
		hash: obj.GetAnnotations()[federationv1beta1.AppliedHashAnnotation], unseen: written,
		uid: obj.GetUID(), adopted: ownership.IsAdopted(obj), passed: passed}
}

// seen notes that the member's watch brought an event of the copy.
func (a *appliedCopies) seen(cluster, objKey string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := fedobject.CopyKey(cluster, objKey)
	if c, ok := a.copies[k]; ok && c.unseen {
		c.unseen = false
		a.copies[k] = c
	}
}

func (a *appliedCopies) forget(cluster, objKey string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.copies, fedobject.CopyKey(cluster, objKey))
}

// holdsOurWrite reports whether the member's cache holds the copy of objKey
// exactly as our last write left it, or as it was on that write's way
// (whose end the watch brings next).
func (w *Writer) holdsOurWrite(cluster, objKey string) bool {
	a, ok := w.applied.get(cluster, objKey)
	if !ok || a.resourceVersion == "" {
		return false
	}
	ns, name := fedobject.SplitKey(objKey)
	cur, exists := w.members.Get(cluster, w.typ.Resource, ns, name)
	return exists && (cur.GetResourceVersion() == a.resourceVersion || a.passedThrough(cur.GetResourceVersion()))
}
