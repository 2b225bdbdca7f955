package memberevents

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/queueworker"
)

var (
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	jobsGVR        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

// fakeMembers are one member's caches (by UID) and the objects a GET
// finds there (by resource and name).
type fakeMembers struct {
	cached map[types.UID]cachedObject
	live   map[string]*metav1.PartialObjectMetadata
	gets   int
	// fail, when set, is every GET's error.
	fail error
}

type cachedObject struct {
	gvr schema.GroupVersionResource
	obj metav1.Object
}

func (f *fakeMembers) ByUID(_ string, uid types.UID) (schema.GroupVersionResource, metav1.Object, bool) {
	c, ok := f.cached[uid]
	return c.gvr, c.obj, ok
}

func (f *fakeMembers) GetMetadata(_ context.Context, cluster string, gvr schema.GroupVersionResource, ns, name string) (*metav1.PartialObjectMetadata, error) {
	f.gets++
	if f.fail != nil {
		return nil, f.fail
	}
	if o, ok := f.live[gvr.Resource+"/"+ns+"/"+name]; ok {
		return o, nil
	}
	return nil, fmt.Errorf("cluster %s: %w", cluster, apierrors.NewNotFound(gvr.GroupResource(), name))
}

// meta is an object's metadata: labelled by federation "fed" (UID
// "fed-uid") when ours, controlled by owner when given.
func meta(name string, uid types.UID, ours bool, owner *metav1.OwnerReference) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: uid}}
	if ours {
		o.Labels = map[string]string{federationv1beta1.FederationLabel: "fed", federationv1beta1.FederationUIDLabel: "fed-uid"}
		o.Annotations = map[string]string{federationv1beta1.ObjectUIDAnnotation: "federated-" + string(uid)}
	}
	if owner != nil {
		o.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return o
}

func controlledBy(apiVersion, kind, name string, uid types.UID) *metav1.OwnerReference {
	yes := true
	return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes}
}

// deploymentMembers: a Deployment copy web (cached), its ReplicaSet
// (cached: it carries the template's label, and is controlled), and pods
// to read: web-1 of that ReplicaSet, mine-1 of the member's own ReplicaSet
// mine.
func deploymentMembers() *fakeMembers {
	rs := meta("web-7d9c", "rs-uid", true, controlledBy("apps/v1", "Deployment", "web", "web-uid"))
	return &fakeMembers{
		cached: map[types.UID]cachedObject{
			"web-uid": {deploymentsGVR, meta("web", "web-uid", true, nil)},
			"rs-uid":  {schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}, rs},
		},
		live: map[string]*metav1.PartialObjectMetadata{
			"pods/shop/web-1":       meta("web-1", "pod-uid", true, controlledBy("apps/v1", "ReplicaSet", "web-7d9c", "rs-uid")),
			"pods/shop/mine-1":      meta("mine-1", "mine-pod", false, controlledBy("apps/v1", "ReplicaSet", "mine", "mine-rs")),
			"replicasets/shop/mine": meta("mine", "mine-rs", false, controlledBy("apps/v1", "Deployment", "mine", "mine-dep")),
		},
	}
}

func TestOwnersAreFollowedUpToACopy(t *testing.T) {
	members := deploymentMembers()
	r := newResolver(members, "fed", "fed-uid", time.Second)
	ctx := context.Background()

	got, err := r.resolve(ctx, "c1", "shop", objectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "web-uid"})
	require.NoError(t, err)
	assert.Equal(t, copyRef{Resource: deploymentsGVR, APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", ObjectUID: "federated-web-uid"}, got,
		"an event about the copy itself")
	assert.Zero(t, members.gets, "the copy is in the caches")

	pod := objectRef{APIVersion: "v1", Kind: "Pod", Name: "web-1", UID: "pod-uid"}
	got, err = r.resolve(ctx, "c1", "shop", pod)
	require.NoError(t, err)
	assert.Equal(t, "web", got.Name, "Pod → ReplicaSet → Deployment")
	assert.Equal(t, "Deployment", got.Kind, "the kind the owner reference names")
	assert.Equal(t, 1, members.gets, "the pod is read; its ReplicaSet is in the caches")
	_, err = r.resolve(ctx, "c1", "shop", pod)
	require.NoError(t, err)
	assert.Equal(t, 1, members.gets, "what was read is remembered by UID")

	_, err = r.resolve(ctx, "c1", "shop", objectRef{APIVersion: "v1", Kind: "Pod", Name: "mine-1", UID: "mine-pod"})
	assert.ErrorIs(t, err, errNotOurs, "a member's own Deployment's pod")
	_, err = r.resolve(ctx, "c1", "shop", objectRef{APIVersion: "v1", Kind: "Pod", Name: "web-1", UID: "another-uid"})
	assert.ErrorIs(t, err, errNotOurs, "a pod of that name, but not the one the event is about")
	_, err = r.resolve(ctx, "c1", "shop", objectRef{APIVersion: "v1", Kind: "Pod", Name: "gone", UID: "gone-uid"})
	assert.ErrorIs(t, err, errNotOurs, "gone")
	before := members.gets
	_, err = r.resolve(ctx, "c1", "shop", objectRef{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "cm-uid"})
	assert.ErrorIs(t, err, errNotOurs, "a kind copies do not make, not in the caches")
	_, err = r.resolve(ctx, "c1", "other", objectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "web-uid"})
	assert.ErrorIs(t, err, errNotOurs, "an event in another namespace than the object's")
	assert.Equal(t, before, members.gets, "neither is read")
}

func TestAnotherFederationsCopyIsNotOurs(t *testing.T) {
	theirs := meta("batch", "job-uid", true, nil)
	theirs.Labels[federationv1beta1.FederationUIDLabel] = "another-federation"
	members := &fakeMembers{cached: map[types.UID]cachedObject{"job-uid": {jobsGVR, theirs}}}
	_, err := newResolver(members, "fed", "fed-uid", time.Second).resolve(context.Background(), "c1", "shop",
		objectRef{APIVersion: "batch/v1", Kind: "Job", Name: "batch", UID: "job-uid"})
	assert.ErrorIs(t, err, errNotOurs)
}

func TestReadsOfAMemberHaveABudget(t *testing.T) {
	members := &fakeMembers{live: map[string]*metav1.PartialObjectMetadata{}}
	r := newResolver(members, "fed", "fed-uid", time.Second)
	var wait error
	for i := range ownerGetsBurst + 5 {
		_, err := r.resolve(context.Background(), "c1", "shop", objectRef{APIVersion: "v1", Kind: "Pod", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprintf("u%d", i))})
		if !errors.Is(err, errNotOurs) {
			wait = err
			break
		}
	}
	assert.Equal(t, ownerGetsBurst, members.gets, "a burst of reads, then a wait")
	var retry queueworker.RetryAfter
	require.ErrorAs(t, wait, &retry, "the queue waits for the budget instead of backing off")
	assert.Positive(t, retry.RetryAfter())
	assert.Contains(t, wait.Error(), "cluster c1")
	_, err := r.resolve(context.Background(), "c2", "shop", objectRef{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "u"})
	assert.ErrorIs(t, err, errNotOurs, "another member has its own budget")
}
