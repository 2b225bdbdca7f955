package guard

import (
	"context"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Some names a copy in sync uses are not held by the federation in the
// member, and nothing the federation watches tells when the member makes
// an object of such a name, its own or another team's (our caches hold
// only our copies):
//
//   - an optional reference (optional: true, an Ingress's backend Service,
//     a ServiceAccount's Secrets, an ExternalName's Service) does not hold a
//     copy back while the object is absent;
//   - a StatefulSet's pods use the claims TEMPLATE-STATEFULSET-ORDINAL,
//     which the member's StatefulSet controller makes as it scales, unless
//     one of that name is there already.
//
// So those names are remembered per copy (ReferencesCached), and
// CheckUnheld looks for them every Options.UnheldReferenceRecheck with one
// metadata LIST per member, namespace and resource of the member's objects
// there that are not the federation's: the cost of a round grows with the
// namespaces, never with how many names a tenant makes its copies give. A
// copy naming one found there is sent to the write path, which removes it
// (releaseIfNotOurs).

// maxUnheldLists bounds the LISTs of one round (all members); namespaces
// beyond it are looked at in the next rounds, in turn.
const maxUnheldLists = 100

// copyAt is one copy: a federated object's key in one cluster.
type copyAt struct{ cluster, key string }

// unheldNames are what a copy in sync uses that the member may make:
// optional references not held, and a StatefulSet's claim prefixes.
type unheldNames struct {
	refs          []federatedtypes.Reference
	claimPrefixes []string
}

// unheldReferences are the unheld names of copies in sync, and the copies
// found naming another's object.
type unheldReferences struct {
	mu      sync.Mutex
	copies  map[copyAt]unheldNames
	foreign map[copyAt]bool
	// next is where the next round starts in the sorted LISTs.
	next int
}

func newUnheldReferences() *unheldReferences {
	return &unheldReferences{copies: map[copyAt]unheldNames{}, foreign: map[copyAt]bool{}}
}

// set records a copy's unheld names (none forgets it).
func (u *unheldReferences) set(at copyAt, names unheldNames) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(names.refs) == 0 && len(names.claimPrefixes) == 0 {
		delete(u.copies, at)
		return
	}
	u.copies[at] = names
}

// isForeign reports whether a copy was found naming another's object.
func (u *unheldReferences) isForeign(at copyAt) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.foreign[at]
}

// checked ends what CheckUnheld found of a copy: the write path read its
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
	for at := range u.copies {
		if at.key == key || (key == "" && !keepCluster(at.cluster)) {
			delete(u.copies, at)
			delete(u.foreign, at)
		}
	}
}

func (u *unheldReferences) markForeign(at copyAt) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, known := u.copies[at]; known {
		u.foreign[at] = true
	}
}

// memberList is one LIST of a round: a member's objects of a resource in
// a namespace that are not the federation's (by its UID label, or for a
// StatefulSet's claims by ClaimLabel).
type memberList struct {
	cluster, namespace string
	resource           schema.GroupVersionResource
	claims             bool
}

func (l memberList) String() string {
	s := l.cluster + "/" + l.namespace + "/" + l.resource.String()
	if l.claims {
		s += "/claims"
	}
	return s
}

// wanted are, per name found in a LIST, the copies that use it; and the
// claim prefixes of StatefulSet copies.
type wanted struct {
	names    map[string][]copyAt
	prefixes map[string][]copyAt
}

// round returns this round's LISTs (at most budget, the next ones in turn)
// and what each looks for, from the copies not already found foreign.
func (u *unheldReferences) round(budget int) ([]memberList, map[memberList]*wanted) {
	u.mu.Lock()
	defer u.mu.Unlock()
	all := map[memberList]*wanted{}
	want := func(l memberList) *wanted {
		if all[l] == nil {
			all[l] = &wanted{names: map[string][]copyAt{}, prefixes: map[string][]copyAt{}}
		}
		return all[l]
	}
	for at, names := range u.copies {
		if u.foreign[at] {
			continue
		}
		ns, _ := fedobject.SplitKey(at.key)
		for _, r := range names.refs {
			wn := want(memberList{cluster: at.cluster, namespace: ns, resource: r.Resource})
			wn.names[r.Name] = append(wn.names[r.Name], at)
		}
		for _, p := range names.claimPrefixes {
			wn := want(memberList{cluster: at.cluster, namespace: ns, resource: federatedtypes.ClaimsResource, claims: true})
			wn.prefixes[p] = append(wn.prefixes[p], at)
		}
	}
	lists := make([]memberList, 0, len(all))
	for l := range all {
		lists = append(lists, l)
	}
	slices.SortFunc(lists, func(a, b memberList) int { return strings.Compare(a.String(), b.String()) })
	if len(lists) <= budget {
		return lists, all
	}
	start := u.next % len(lists)
	u.next = start + budget
	turn := make([]memberList, 0, budget)
	for i := range budget {
		turn = append(turn, lists[(start+i)%len(lists)])
	}
	return turn, all
}

// CheckUnheld runs one round: its LISTs; the copies naming an object found
// there (that is not ours) are marked foreign, and the keys of their
// federated objects returned, to be reconciled again.
func (g *Guard) CheckUnheld(ctx context.Context) (found []string) {
	lists, wants := g.unheld.round(maxUnheldLists)
	// Not ours: without our UID (which another federation of our name does
	// not have either), or, while it is not known, without our name; our
	// copies from before the UID label are told apart by isOurs below.
	others := federationv1beta1.FederationLabel + "!=" + g.members.Federation()
	if uid := g.members.FederationUID(); uid != "" {
		others = federationv1beta1.FederationUIDLabel + "!=" + uid
	}
	for _, l := range lists {
		selector := others
		if l.claims {
			selector = g.notFromOurTemplates()
		}
		items, err := g.listLive(ctx, l.cluster, l.resource, l.namespace, selector)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Listing what copies may name", "cluster", l.cluster, "resource", l.resource.Resource, "namespace", l.namespace, "err", err)
			continue
		}
		wl := wants[l]
		for i := range items {
			obj := &items[i]
			if g.isOurs(obj) {
				continue
			}
			users := wl.names[obj.Name]
			for p, copies := range wl.prefixes {
				if isClaimOf(obj.Name, []string{p}) {
					users = append(users, copies...)
				}
			}
			for _, at := range users {
				g.unheld.markForeign(at)
				found = append(found, at.key)
			}
		}
	}
	return found
}
