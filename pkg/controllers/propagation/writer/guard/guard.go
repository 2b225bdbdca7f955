package guard

import (
	"context"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/record"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/guard/repairbudget"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/ownership"
)

// Config tunes a guard.
type Config struct {
	// MemberTimeout bounds every read of a member.
	MemberTimeout time.Duration
	// DefaultConflictResolution is what is done with a member's own object
	// of a federated object's name when the federated object does not say:
	// "abort" (or "") leaves it, "adopt" takes it over.
	DefaultConflictResolution string
}

// Members is what the guard reads of the member clusters: their caches of
// our copies, and live reads; it gets no client, so never writes to them.
type Members interface {
	Federation() string
	FederationUID() string
	Get(cluster string, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool)
	// GetLive reads one object from a member.
	GetLive(ctx context.Context, cluster string, gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error)
	ListLive(ctx context.Context, cluster string, gvr schema.GroupVersionResource, namespace, selector string) ([]metav1.PartialObjectMetadata, error)
}

// Guard decides whether the member writes of one federated type may go.
type Guard struct {
	typ *federatedtypes.Type
	// fed reads the federation (whether it holds what a copy names); objs
	// name the type's objects in messages.
	fed      dynamic.Interface
	objs     fedobject.Objects
	members  Members
	recorder record.EventRecorder
	opts     Config
	// namespaceOwners remember live reads of member namespaces that are
	// not in our cache (namespaces.go); notWrittenTold holds, by reason,
	// cluster and object key, the objects told not to be written for
	// their namespace or what they name (notWritten).
	namespaceOwners namespaceVerdicts
	notWrittenTold  sync.Map
	// unheld are the names copies in sync use that the member may make
	// (unheld.go).
	unheld *unheldReferences
	// conflicts holds, by cluster and object key (copyKey), the UID of a
	// member object of that name found not to be ours, whose conflict was
	// told (ownership.go).
	conflicts sync.Map
	// repairs budget the repairs of each copy, refusedWrites space out the
	// writes members refuse (repairs.go).
	repairs       *repairbudget.Budget
	refusedWrites *repairbudget.Refused
	// groupsTold are the copies refused for their custom resource group,
	// told once each (groups.go).
	groupsTold groupsTold
}

// New makes the guard of one type.
func New(t *federatedtypes.Type, fed dynamic.Interface, members Members, recorder record.EventRecorder, cfg Config) *Guard {
	return &Guard{typ: t, fed: fed, objs: fedobject.Objects{Type: t, Client: fed}, members: members, recorder: recorder, opts: cfg,
		unheld: newUnheldReferences(), repairs: repairbudget.New(), refusedWrites: repairbudget.NewRefused()}
}

// Forget drops what is known of an object that is gone: its conflicts,
// refusals, repairs, groups told and unheld names.
func (g *Guard) Forget(objKey string) {
	ofObject := func(k string) bool { return strings.HasSuffix(k, "/"+objKey) }
	for _, told := range []*sync.Map{&g.conflicts, &g.notWrittenTold} {
		told.Range(func(k, _ any) bool {
			if ofObject(k.(string)) {
				told.Delete(k)
			}
			return true
		})
	}
	g.repairs.Forget(ofObject)
	g.refusedWrites.Forget(ofObject)
	g.groupsTold.forget(ofObject)
	g.unheld.forget(objKey, nil)
}

// ForgetClusters drops what is known of the clusters not joined.
func (g *Guard) ForgetClusters(joined func(cluster string) bool) {
	g.unheld.forget("", joined)
	g.groupsTold.forget(func(k string) bool {
		cluster, _, _ := strings.Cut(k, "/")
		return !joined(cluster)
	})
}

// NamespaceChanged forgets what was read live of a member namespace, when
// a member event of it comes.
func (g *Guard) NamespaceChanged(cluster, ns string) { g.namespaceOwners.forget(cluster, ns) }

// isOurs reports whether a member object is this federation's.
func (g *Guard) isOurs(obj metav1.Object) bool {
	return ownership.IsUs(obj, g.members.Federation(), g.members.FederationUID())
}
