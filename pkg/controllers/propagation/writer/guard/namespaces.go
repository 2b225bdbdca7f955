package guard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// The federation writes a namespaced object into a member only where that
// tenant's ownership reaches: in a member namespace the federation created
// (memberrbac.CreatedByLabel) or one an admin adopted explicitly
// (memberrbac.AdoptedByLabel: kubefed join's --adopt-namespaces, or a
// federated Namespace adopted with the adoption permission). Anywhere else
// the namespace is someone else's, and so is everything in it: nothing is
// created, adopted, updated, or deleted there. This is the one check every
// member write of a namespaced object passes (writeMember); the member's
// admission policy enforces the same rule on the federation's identity.

// ReasonNamespaceNotOurs: a federated object's namespace in a member is
// not one the federation created or an admin adopted; nothing of it is
// written there.
const ReasonNamespaceNotOurs = "NamespaceNotOwnedInCluster"

// namespaceVerdictTTL bounds how long a live read of a member namespace
// that is not in our label-filtered cache (the member's default, adopted
// at join) answers for it.
const namespaceVerdictTTL = 30 * time.Second

// namespaceVerdict is what a live read found of a member namespace.
type namespaceVerdict struct {
	ours bool
	at   time.Time
}

// namespaceVerdicts remembers live reads of member namespaces, by
// cluster/namespace.
type namespaceVerdicts struct{ m sync.Map }

func (v *namespaceVerdicts) get(cluster, ns string, now time.Time) (bool, bool) {
	got, ok := v.m.Load(cluster + "/" + ns)
	if !ok || now.Sub(got.(namespaceVerdict).at) > namespaceVerdictTTL {
		return false, false
	}
	return got.(namespaceVerdict).ours, true
}

func (v *namespaceVerdicts) set(cluster, ns string, ours bool, now time.Time) {
	v.m.Store(cluster+"/"+ns, namespaceVerdict{ours: ours, at: now})
}

// forget drops what was read of a namespace, when a member event of it
// comes (NamespaceChanged).
func (v *namespaceVerdicts) forget(cluster, ns string) { v.m.Delete(cluster + "/" + ns) }

// OwnsNamespace reports whether a member namespace's labels say the
// federation fed created it or an admin adopted it for fed.
func OwnsNamespace(labels map[string]string, fed string) bool {
	return fed != "" && (labels[memberrbac.CreatedByLabel] == fed || labels[memberrbac.AdoptedByLabel(fed)] == memberrbac.Adopted)
}

// errNamespaceNotOurs keeps a copy from being written where its namespace
// is not the federation's; it names the namespace, the cluster and how to
// make it the federation's.
type errNamespaceNotOurs struct{ namespace, cluster, fed string }

func (e *errNamespaceNotOurs) Error() string {
	return fmt.Sprintf("namespace %s in cluster %s was neither created by federation %s nor adopted for it: nothing is written in it "+
		"(an admin adopts it with kubefed join --adopt-namespaces=%s, or by annotating the federated Namespace %s=%s)",
		e.namespace, e.cluster, e.fed, e.namespace, "federation.kubernetes.io/conflict-resolution", "adopt")
}

// MayWriteIn returns nil when the federation may write fed's copy in its
// namespace of cluster, and errNamespaceNotOurs when it may not (told once
// in a ReasonNamespaceNotOurs event on fed). Cluster-scoped objects may
// always be written (their own ownership rules apply).
func (g *Guard) MayWriteIn(ctx context.Context, cluster string, fed *unstructured.Unstructured) error {
	err := g.mayWriteIn(ctx, cluster, fed.GetNamespace())
	var notOurs *errNamespaceNotOurs
	if errors.As(err, &notOurs) {
		g.notWritten(cluster, fed, ReasonNamespaceNotOurs, err)
	}
	return err
}

// mayWriteIn is MayWriteIn for namespace ns.
func (g *Guard) mayWriteIn(ctx context.Context, cluster, ns string) error {
	if ns == "" {
		return nil
	}
	fed := g.members.Federation()
	if cached, ok := g.members.Get(cluster, membercluster.NamespacesResource, "", ns); ok && OwnsNamespace(cached.GetLabels(), fed) {
		return nil
	}
	now := time.Now()
	ours, known := g.namespaceOwners.get(cluster, ns, now)
	if !known {
		var err error
		if ours, err = g.readNamespaceOwner(ctx, cluster, ns); err != nil {
			return err
		}
		g.namespaceOwners.set(cluster, ns, ours, now)
	}
	if !ours {
		return &errNamespaceNotOurs{namespace: ns, cluster: cluster, fed: fed}
	}
	return nil
}

// readNamespaceOwner reads a member namespace that our cache does not
// show as ours.
func (g *Guard) readNamespaceOwner(ctx context.Context, cluster, ns string) (bool, error) {
	live, err := g.readMember(ctx, cluster, membercluster.NamespacesResource, "", ns)
	if apierrors.IsNotFound(err) {
		// Not there yet (its Namespace is being written), or gone: the
		// write is tried again, and nothing is remembered.
		return false, fmt.Errorf("namespace %s is not in cluster %s yet", ns, cluster)
	}
	if err != nil {
		return false, fmt.Errorf("reading namespace %s in cluster %s: %w", ns, cluster, err)
	}
	return OwnsNamespace(live.GetLabels(), g.members.Federation()), nil
}

// notWritten tells, once per reason, object, cluster and cause, that the
// object's copy is not written in the member, and why.
func (g *Guard) notWritten(cluster string, fed *unstructured.Unstructured, reason string, err error) {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	// Told again when the object is another or the cause changed.
	said := string(fed.GetUID()) + "\x00" + err.Error()
	if before, told := g.notWrittenTold.Swap(reason+"/"+fedobject.CopyKey(cluster, objKey), said); told && before == said {
		return
	}
	g.recorder.Eventf(fed, corev1.EventTypeWarning, reason, "%s not written in cluster %s: %v", g.objs.What(objKey), cluster, err)
}

// readMember reads one object from a member, live, within the member
// timeout.
func (g *Guard) readMember(ctx context.Context, cluster string, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(ctx, g.opts.MemberTimeout)
	defer cancel()
	return g.members.GetLive(ctx, cluster, gvr, ns, name)
}
