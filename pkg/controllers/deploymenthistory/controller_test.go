package deploymenthistory

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
)

type testController struct {
	*Controller
	t        *testing.T
	client   *fake.Clientset
	recorder *record.FakeRecorder
	deps     cache.Indexer
	rss      cache.Indexer
	// err is the last sync's; a failure unless expectErr.
	err       error
	expectErr bool
}

func newTestController(t *testing.T, objs ...runtime.Object) *testController {
	client := fake.NewClientset(objs...)
	// The apiserver gives every object a UID.
	client.PrependReactor("create", "replicasets", func(action k8stesting.Action) (bool, runtime.Object, error) {
		rs := action.(k8stesting.CreateAction).GetObject().(*appsv1.ReplicaSet)
		rs.UID = types.UID("uid-" + rs.Name)
		return false, nil, nil
	})
	factory := kubeinformers.NewSharedInformerFactory(client, 0)
	recorder := record.NewFakeRecorder(10)
	c, err := New(client, factory.Apps().V1().Deployments(), 0, recorder, 1)
	require.NoError(t, err)
	return &testController{Controller: c, t: t, client: client, recorder: recorder,
		deps: factory.Apps().V1().Deployments().Informer().GetIndexer(),
		rss:  c.localInformers.Apps().V1().ReplicaSets().Informer().GetIndexer()}
}

// syncFromServer fills the caches with what the fake apiserver holds and
// syncs web, returning the writes it made.
func (tc *testController) syncFromServer() []k8stesting.Action {
	tc.t.Helper()
	ctx := context.Background()
	deps, err := tc.client.AppsV1().Deployments("ns").List(ctx, metav1.ListOptions{})
	require.NoError(tc.t, err)
	rss, err := tc.client.AppsV1().ReplicaSets("ns").List(ctx, metav1.ListOptions{LabelSelector: federationv1beta1.LocalLabel + "=true"})
	require.NoError(tc.t, err)
	var items []any
	for i := range deps.Items {
		items = append(items, &deps.Items[i])
	}
	require.NoError(tc.t, tc.deps.Replace(items, ""))
	items = nil
	for i := range rss.Items {
		items = append(items, &rss.Items[i])
	}
	require.NoError(tc.t, tc.rss.Replace(items, ""))
	tc.client.ClearActions()
	tc.err = tc.sync(ctx, "ns/web")
	if !tc.expectErr {
		require.NoError(tc.t, tc.err)
	}
	var writes []k8stesting.Action
	for _, a := range tc.client.Actions() {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			writes = append(writes, a)
		}
	}
	return writes
}

func (tc *testController) deployment() *appsv1.Deployment {
	d, err := tc.client.AppsV1().Deployments("ns").Get(context.Background(), "web", metav1.GetOptions{})
	require.NoError(tc.t, err)
	return d
}

func (tc *testController) update(d *appsv1.Deployment) {
	_, err := tc.client.AppsV1().Deployments("ns").Update(context.Background(), d, metav1.UpdateOptions{})
	require.NoError(tc.t, err)
}

// history returns image → revision of the history ReplicaSets.
func (tc *testController) history() map[string]string {
	rss, err := tc.client.AppsV1().ReplicaSets("ns").List(context.Background(), metav1.ListOptions{})
	require.NoError(tc.t, err)
	out := map[string]string{}
	for _, rs := range rss.Items {
		out[rs.Spec.Template.Spec.Containers[0].Image] = rs.Annotations[deploymentutil.RevisionAnnotation]
	}
	return out
}

func verbs(actions []k8stesting.Action) []string {
	var out []string
	for _, a := range actions {
		v := a.GetVerb() + " " + a.GetResource().Resource
		if a.GetSubresource() != "" {
			v += "/" + a.GetSubresource()
		}
		out = append(out, v)
	}
	return out
}

func TestSyncKeepsTheHistoryAndRollsBack(t *testing.T) {
	tc := newTestController(t, deployment("a"))

	writes := tc.syncFromServer()
	assert.Equal(t, []string{"create replicasets", "update deployments/status"}, verbs(writes))
	assert.Equal(t, map[string]string{"a": "1"}, tc.history())
	assert.Equal(t, "1", tc.deployment().Annotations[deploymentutil.RevisionAnnotation])
	assert.Empty(t, tc.syncFromServer(), "at rest nothing is written")

	d := tc.deployment()
	d.Spec.Template.Spec.Containers[0].Image = "b"
	tc.update(d)
	writes = tc.syncFromServer()
	assert.Equal(t, []string{"create replicasets", "update deployments/status", "update replicasets"}, verbs(writes), "new revision, old one scaled to 0")
	assert.Equal(t, map[string]string{"a": "1", "b": "2"}, tc.history())
	assert.Equal(t, "2", tc.deployment().Annotations[deploymentutil.RevisionAnnotation])

	// The rollback subresource's request: back to the previous revision.
	d = tc.deployment()
	d.Annotations[appsv1.DeprecatedRollbackTo] = "0"
	tc.update(d)
	writes = tc.syncFromServer()
	assert.Equal(t, []string{"update deployments"}, verbs(writes))
	d = tc.deployment()
	assert.Equal(t, "a", d.Spec.Template.Spec.Containers[0].Image)
	assert.NotContains(t, d.Annotations, appsv1.DeprecatedRollbackTo)
	assert.Equal(t, `Normal DeploymentRollback Rolled back deployment "web" to revision 1`, <-tc.recorder.Events)

	tc.syncFromServer()
	assert.Equal(t, map[string]string{"a": "3", "b": "2"}, tc.history(), "the old ReplicaSet comes back as revision 3")
	assert.Equal(t, "3", tc.deployment().Annotations[deploymentutil.RevisionAnnotation])

	// Status, once the members observed the Deployment.
	d = tc.deployment()
	d.Generation, d.Status = 4, appsv1.DeploymentStatus{ObservedGeneration: 4, Replicas: 3, UpdatedReplicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}
	tc.update(d)
	writes = tc.syncFromServer()
	assert.Equal(t, []string{"update replicasets/status"}, verbs(writes), "the old one's status is already 0")
	current := writes[0].(k8stesting.UpdateAction).GetObject().(*appsv1.ReplicaSet)
	assert.Equal(t, "a", current.Spec.Template.Spec.Containers[0].Image)
	assert.EqualValues(t, 3, current.Status.ReadyReplicas)

	// The Deployment goes: so does its history.
	require.NoError(t, tc.client.AppsV1().Deployments("ns").Delete(context.Background(), "web", metav1.DeleteOptions{}))
	writes = tc.syncFromServer()
	assert.Equal(t, []string{"delete replicasets", "delete replicasets"}, verbs(writes))
	assert.Empty(t, tc.history())
}

func TestSyncLeavesOtherReplicaSetsAlone(t *testing.T) {
	d := deployment("a")
	rs := newReplicaSet(context.Background(), d, 1)
	rs.UID = "user-rs"
	delete(rs.Labels, federationv1beta1.LocalLabel)
	rs.OwnerReferences = nil
	tc := newTestController(t, d, rs)
	writes := tc.syncFromServer()
	assert.Equal(t, []string{"create replicasets"}, verbs(writes), "the name is taken: nothing else is written")
	assert.Equal(t, "Warning RevisionHistoryNameTaken ReplicaSet "+rs.Name+
		" exists and is not this Deployment's: the revision history is not kept until it is renamed or deleted", <-tc.recorder.Events)

	require.NoError(t, tc.client.AppsV1().Deployments("ns").Delete(context.Background(), "web", metav1.DeleteOptions{}))
	assert.Empty(t, tc.syncFromServer(), "a federated ReplicaSet is never deleted")
}

func TestAPausedDeploymentGetsNoRevisionNorRollback(t *testing.T) {
	tc := newTestController(t, deployment("a"))
	tc.syncFromServer()
	d := tc.deployment()
	d.Spec.Paused = true
	d.Spec.Template.Spec.Containers[0].Image = "b"
	tc.update(d)
	assert.Empty(t, tc.syncFromServer())
	assert.Equal(t, map[string]string{"a": "1"}, tc.history())

	d = tc.deployment()
	d.Spec.Template.Spec.Containers[0].Image = "a"
	d.Annotations[appsv1.DeprecatedRollbackTo] = "0"
	tc.update(d)
	assert.Empty(t, tc.syncFromServer(), "the rollback waits")
	d.Spec.Paused = false
	tc.update(d)
	assert.Equal(t, []string{"update deployments"}, verbs(tc.syncFromServer()))
	assert.Equal(t, `Warning DeploymentRollbackRevisionNotFound Unable to find last revision.`, <-tc.recorder.Events)
}

func TestAConflictIsLookedAtAgainWithoutAnError(t *testing.T) {
	tc := newTestController(t, deployment("a"))
	tc.client.PrependReactor("update", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("modified"))
	})
	tc.expectErr = true
	tc.syncFromServer() // fills the caches
	require.True(t, apierrors.IsConflict(tc.err), "%v", tc.err)
	require.NoError(t, tc.syncOrRetry(context.Background(), "ns/web"))
	require.NoError(t, poll.Until(context.Background(), 5*time.Second, "ns/web back in the queue", func(context.Context) error {
		if tc.queue.Len() != 1 {
			return fmt.Errorf("queue length %d", tc.queue.Len())
		}
		return nil
	}))
	assert.Zero(t, tc.queue.NumRequeues("ns/web"), "no error backoff")
}
