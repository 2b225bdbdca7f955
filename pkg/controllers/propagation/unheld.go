package propagation

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// An optional reference (optional: true, an Ingress's backend Service, a
// ServiceAccount's Secrets, an ExternalName's Service) does not hold a copy
// back while the object is absent. But the member may make an object of
// that name at any time, its own or another team's, and our member caches,
// which hold only the federation's copies, never tell: the copy in sync
// would then act through it. So the optional references our caches do not
// hold as ours are remembered per copy (compare, referencesCached), and
// checkUnheld reads them live every Options.UnheldReferenceRecheck, a
// bounded number per round; a copy naming one that turned out another's
// is sent to the write path, which removes it (releaseIfNotOurs).

// maxUnheldReads bounds the live reads of one round (all members): a
// federation with more unheld references checks them over several rounds.
const maxUnheldReads = 200

// copyAt is one copy: a federated object's key in one cluster.
type copyAt struct{ cluster, key string }

// unheldReferences are the optional references of copies in sync that our
// caches do not hold as ours, and the copies found naming another's.
type unheldReferences struct {
	mu      sync.Mutex
	refs    map[copyAt][]federatedtypes.Reference
	foreign map[copyAt]bool
}

func newUnheldReferences() *unheldReferences {
	return &unheldReferences{refs: map[copyAt][]federatedtypes.Reference{}, foreign: map[copyAt]bool{}}
}

// set records a copy's unheld optional references (none forgets it).
func (u *unheldReferences) set(at copyAt, refs []federatedtypes.Reference) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(refs) == 0 {
		delete(u.refs, at)
		return
	}
	u.refs[at] = refs
}

// isForeign reports whether a copy was found naming another's object.
func (u *unheldReferences) isForeign(at copyAt) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.foreign[at]
}

// checked ends what checkUnheld found of a copy: the write path read its
// references live again.
func (u *unheldReferences) checked(at copyAt) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.foreign, at)
}

// forget drops what is known of a federated object's copies, or (key "")
// of the copies in clusters not kept.
func (u *unheldReferences) forget(key string, keepCluster func(string) bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for at := range u.refs {
		if at.key == key || (key == "" && !keepCluster(at.cluster)) {
			delete(u.refs, at)
			delete(u.foreign, at)
		}
	}
}

// snapshot copies the unheld references, for a round of reads.
func (u *unheldReferences) snapshot() map[copyAt][]federatedtypes.Reference {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make(map[copyAt][]federatedtypes.Reference, len(u.refs))
	for at, refs := range u.refs {
		if !u.foreign[at] {
			out[at] = refs
		}
	}
	return out
}

func (u *unheldReferences) markForeign(at copyAt) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, known := u.refs[at]; known {
		u.foreign[at] = true
	}
}

// checkUnheld reads live, at most maxUnheldReads, the unheld optional
// references, and enqueues the copies naming one that is another's.
// (Map order differs per round, so that a long list is covered in turn.)
func (c *Controller) checkUnheld(ctx context.Context) {
	reads := 0
	for at, refs := range c.unheld.snapshot() {
		ns, _ := splitKey(at.key)
		for _, r := range refs {
			if cur, ok := c.members.Get(at.cluster, r.Resource, ns, r.Name); ok && c.isOurs(cur) {
				continue
			}
			if reads == maxUnheldReads {
				return
			}
			reads++
			live, err := c.readMember(ctx, at.cluster, r.Resource, ns, r.Name)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				klog.FromContext(ctx).V(2).Info("Reading an optional reference", "cluster", at.cluster, "resource", r.Resource.Resource, "name", ns+"/"+r.Name, "err", err)
				continue
			}
			if !c.isOurs(live) {
				c.unheld.markForeign(at)
				c.queue.Add(at.key)
				break
			}
		}
	}
}
