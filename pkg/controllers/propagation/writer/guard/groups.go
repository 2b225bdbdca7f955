package guard

import (
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/membercluster"
)

// A custom resource of an API group a member was not joined for
// (`kubefed join --custom-resource-groups`) is refused there by the
// member's authorizer, every write and every read of it, until the
// member's admin grants the group (`kubefed join --refresh`). That is told
// once per object and cluster, as ReasonGroupNotGranted naming the group
// and the fix, and is the copy's failure in the Propagated condition;
// the copy's writes are spaced out as every refused write is
// (SpaceOutRefused), and its failed-write events are not recorded.

// ReasonGroupNotGranted: a member was not joined for the API group of a
// custom resource; the federation may not write it there.
const ReasonGroupNotGranted = "GroupNotGrantedInCluster"

// ErrGroupNotGranted is a copy the member's authorizer refused because the
// federation's account there has no rights on the type's API group; it
// wraps the member's answer (a 403).
type ErrGroupNotGranted struct {
	What, Cluster, Group string
	Err                  error
}

// Error is the copy's failure in the Propagated condition, short: the
// condition holds the failures of every cluster.
func (e *ErrGroupNotGranted) Error() string {
	return fmt.Sprintf("%s: cluster %s was not joined for API group %s; `kubefed join %s --refresh --add-custom-resource-groups=%s` grants it",
		ReasonGroupNotGranted, e.Cluster, e.Group, e.Cluster, e.Group)
}

// event is the message of the copy's event.
func (e *ErrGroupNotGranted) event() string {
	return fmt.Sprintf("%s is not propagated to cluster %s: the cluster was not joined for API group %s, so the federation may not write it there; "+
		"its admin grants it with `kubefed join %s --refresh --add-custom-resource-groups=%s`",
		e.What, e.Cluster, e.Group, e.Cluster, e.Group)
}

func (e *ErrGroupNotGranted) Unwrap() error { return e.Err }

// NotGrantedGroup returns the API group of typ that err says the member's
// authorizer refused, and whether it is one: a custom resource's group
// (one --custom-resource-groups may name), not a group of Kubernetes
// itself, whose rights join gives or never gives, nor another type's.
func NotGrantedGroup(typ *federatedtypes.Type, err error) (string, bool) {
	u, ok := membercluster.AsUnauthorized(err)
	if !ok || u.Group != typ.Resource.Group || u.Resource != typ.Resource.Resource || !customGroup(u.Group) {
		return "", false
	}
	return u.Group, true
}

// customGroup reports whether an API group may be a custom resource's that
// join grants: a DNS name that is not Kubernetes' own.
func customGroup(g string) bool {
	return strings.Contains(g, ".") && g != "k8s.io" && !strings.HasSuffix(g, ".k8s.io") &&
		g != "kubernetes.io" && !strings.HasSuffix(g, ".kubernetes.io")
}

// groupsTold holds, by copy (fedobject.CopyKey), the object UID and group
// whose ReasonGroupNotGranted event was recorded: one entry per copy
// refused so, dropped when its write ends otherwise, its object goes or
// its cluster leaves.
type groupsTold struct{ told sync.Map }

// tell reports whether the copy's refusal of group for the object uid is
// news, remembering it.
func (t *groupsTold) tell(copyKey, uid, group string) bool {
	said := uid + "\x00" + group
	before, told := t.told.Swap(copyKey, said)
	return !told || before != said
}

func (t *groupsTold) forget(match func(copyKey string) bool) {
	t.told.Range(func(k, _ any) bool {
		if match(k.(string)) {
			t.told.Delete(k)
		}
		return true
	})
}

// GroupNotGranted returns the end of a write of fed's copy in cluster: err
// as an *ErrGroupNotGranted when the member refused the type's custom
// resource group, its event recorded once per object and cluster while so;
// else err, and the copy's refusal is forgotten (told again if it comes
// back).
func (g *Guard) GroupNotGranted(cluster string, fed *unstructured.Unstructured, err error) error {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	k := fedobject.CopyKey(cluster, objKey)
	group, ok := NotGrantedGroup(g.typ, err)
	if !ok {
		g.groupsTold.told.Delete(k)
		return err
	}
	e := &ErrGroupNotGranted{What: g.objs.What(objKey), Cluster: cluster, Group: group, Err: err}
	if g.groupsTold.tell(k, string(fed.GetUID()), group) {
		g.recorder.Event(fed, corev1.EventTypeWarning, ReasonGroupNotGranted, e.event())
	}
	return e
}
