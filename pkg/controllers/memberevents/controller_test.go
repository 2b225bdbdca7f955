package memberevents

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/util/workqueue"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/queueworker"
)

// controllerMembers are fakeMembers with the rest of what the controller
// asks of the members.
type controllerMembers struct {
	*fakeMembers
	stream     membercluster.StreamOptions
	handler    membercluster.StreamHandler
	namespaces map[string]bool
}

func (c *controllerMembers) Federation() string    { return "fed" }
func (c *controllerMembers) FederationUID() string { return "fed-uid" }
func (c *controllerMembers) Stream(_ schema.GroupVersionResource, opts membercluster.StreamOptions, h membercluster.StreamHandler) {
	c.stream, c.handler = opts, h
}
func (c *controllerMembers) HasObjectsIn(_, ns string) bool { return c.namespaces[ns] }
func (c *controllerMembers) Usable(string) bool             { return true }
func (c *controllerMembers) CachesSynced(string) bool       { return true }

// newTestController is a controller over deploymentMembers, whose
// federated Deployment shop/web exists at the federation.
func newTestController(t *testing.T, types string) (*Controller, *controllerMembers, *kubefake.Clientset) {
	members := &controllerMembers{fakeMembers: deploymentMembers(), namespaces: map[string]bool{"shop": true}}
	scheme := metadatafake.NewTestScheme()
	require.NoError(t, metav1.AddMetaToScheme(scheme))
	fedWeb := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "federated-web-uid"}}
	fedEvents := kubefake.NewClientset()
	c, err := New(members, fedEvents.CoreV1(), metadatafake.NewSimpleMetadataClient(scheme, fedWeb), Options{Types: types, Timeout: time.Second})
	require.NoError(t, err)
	c.mirror = newMirror(testingclock.NewFakeClock(t0))
	return c, members, fedEvents
}

// drain works on a queue's keys until it is empty, as its workers would
// (keys that wait for a budget are left).
func drain[T comparable](t *testing.T, q workqueue.TypedRateLimitingInterface[T], sync func(context.Context, T) error) {
	t.Helper()
	for q.Len() > 0 {
		key, _ := q.Get()
		err := sync(context.Background(), key)
		q.Done(key)
		var wait queueworker.RetryAfter
		if err != nil && !errors.As(err, &wait) {
			t.Fatalf("%v: %v", key, err)
		}
	}
}

func eventWrites(fed *kubefake.Clientset) int {
	n := 0
	for _, a := range fed.Actions() {
		if a.GetResource().Resource == "events" && (a.GetVerb() == "create" || a.GetVerb() == "patch") {
			n++
		}
	}
	return n
}

func TestAPodsWarningsComeToTheFederatedDeployment(t *testing.T) {
	c, members, fed := newTestController(t, TypesWarning)
	assert.Equal(t, "type=Warning", members.stream.FieldSelector, "the members send only their warnings")
	pod := objectRef{APIVersion: "v1", Kind: "Pod", Name: "web-1", UID: "pod-uid"}
	for i := range 1000 {
		ev := warning(fmt.Sprintf("e%d", i), "FailedScheduling", "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.", 1, t0)
		ev.Involved = pod
		out, err := members.stream.Transform(ev)
		require.NoError(t, err)
		members.handler.Streamed("cluster2", out)
	}
	drain(t, c.resolveQueue, c.resolve)
	drain(t, c.flushQueue, c.flush)

	list, err := fed.CoreV1().Events("shop").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	ev := list.Items[0]
	assert.Equal(t, corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "federated-web-uid"}, ev.InvolvedObject,
		"on the federated Deployment, by its UID at the federation")
	assert.Equal(t, "cluster2: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.", ev.Message)
	assert.Equal(t, "FailedScheduling", ev.Reason)
	assert.Equal(t, corev1.EventTypeWarning, ev.Type)
	assert.EqualValues(t, 1000, ev.Count)
	assert.Equal(t, 1, eventWrites(fed), "one write for 1,000 warnings resolved before the first write")
	assert.Equal(t, 1, members.gets, "the pod is read once")
}

func TestWhatIsNotTheFederationsStaysInTheMember(t *testing.T) {
	c, members, fed := newTestController(t, TypesWarning)
	stream := func(ev *memberEvent) { members.handler.Streamed("cluster1", ev) }
	deployment := objectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "web-uid"}

	inSystem := warning("a", "X", "m", 1, t0)
	inSystem.Namespace, inSystem.InvolvedNamespace, inSystem.Involved = "kube-system", "kube-system", deployment
	stream(inSystem)
	elsewhere := warning("b", "X", "m", 1, t0)
	elsewhere.InvolvedNamespace, elsewhere.Involved = "other", deployment
	stream(elsewhere)
	node := warning("c", "X", "m", 1, t0)
	node.InvolvedNamespace, node.Involved = "", objectRef{APIVersion: "v1", Kind: "Node", Name: "n1", UID: "n1"}
	stream(node)
	noCopies := warning("d", "X", "m", 1, t0)
	noCopies.Namespace, noCopies.InvolvedNamespace, noCopies.Involved = "team", "team", deployment
	stream(noCopies)
	assert.Zero(t, c.resolveQueue.Len(), "left at once: a never-propagated namespace, an object of another namespace, a node, a namespace without copies")

	mine := warning("e", "X", "m", 1, t0)
	mine.Involved = objectRef{APIVersion: "v1", Kind: "Pod", Name: "mine-1", UID: "mine-pod"}
	stream(mine)
	drain(t, c.resolveQueue, c.resolve)
	gets := members.gets
	mine.Count = 2
	stream(mine)
	assert.Zero(t, c.resolveQueue.Len(), "a member's own pod, remembered as not ours")
	assert.Equal(t, gets, members.gets)

	noFederated := warning("f", "X", "m", 1, t0)
	noFederated.Involved = objectRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "old", UID: "old-uid"}
	members.cached["old-uid"] = cachedObject{deploymentsGVR, meta("old", "old-uid", true, nil)}
	stream(noFederated)
	drain(t, c.resolveQueue, c.resolve)
	drain(t, c.flushQueue, c.flush)
	assert.Zero(t, eventWrites(fed), "nothing written: a copy whose federated object is gone")
}

func TestNormalEventsComeOnlyWhenAsked(t *testing.T) {
	_, members, _ := newTestController(t, TypesAll)
	assert.Empty(t, members.stream.FieldSelector)
	_, err := New(members, kubefake.NewClientset().CoreV1(), nil, Options{Types: "Normal"})
	assert.ErrorContains(t, err, "want Warning or All")
}

func TestWritesGoOnFromWhatTheFederationHolds(t *testing.T) {
	existing := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web.0123"}, Count: 50,
		Source: corev1.EventSource{Component: Component, Host: "cluster2"}, Type: "Warning", Reason: "BackOff",
		InvolvedObject: web, FirstTimestamp: metav1.NewTime(t0)}
	fed := kubefake.NewClientset(existing)
	w := &eventWriter{events: fed.CoreV1(), timeout: time.Second}
	ev := existing.DeepCopy()
	ev.Count, ev.FirstTimestamp, ev.LastTimestamp, ev.Message = 3, metav1.NewTime(t0.Add(time.Hour)), metav1.NewTime(t0.Add(time.Hour)), "cluster2: back-off"
	count, err := w.write(context.Background(), ev, true)
	require.NoError(t, err)
	assert.EqualValues(t, 50, count, "the larger count of an event written before a restart")
	got, err := fed.CoreV1().Events("shop").Get(context.Background(), "web.0123", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, t0, got.FirstTimestamp.UTC(), "first seen stays")
	assert.Equal(t, "cluster2: back-off", got.Message)

	other := ev.DeepCopy()
	other.Reason = "SomethingElse"
	_, err = w.write(context.Background(), other, true)
	assert.ErrorContains(t, err, "says something else", "an event of that name that is not this one is left")

	require.NoError(t, fed.CoreV1().Events("shop").Delete(context.Background(), "web.0123", metav1.DeleteOptions{}))
	fed.ClearActions()
	ev.Count = 60
	count, err = w.write(context.Background(), ev, false)
	require.NoError(t, err)
	assert.EqualValues(t, 60, count, "gone with the event TTL: made again")
	var verbs []string
	for _, a := range fed.Actions() {
		verbs = append(verbs, a.GetVerb())
	}
	assert.Equal(t, []string{"patch", "create"}, verbs)
}

func TestAMemberThatDoesNotAnswerIsRetriedABoundedNumberOfTimes(t *testing.T) {
	c, members, _ := newTestController(t, TypesWarning)
	members.fail = errors.New("the member did not answer in time")
	ev := warning("e9", "FailedScheduling", "no nodes", 1, t0)
	ev.Involved = objectRef{APIVersion: "v1", Kind: "Pod", Name: "web-9", UID: "pod-9"}
	members.handler.Streamed("cluster1", ev)
	key := pendingKey{Cluster: "cluster1", UID: "e9"}
	for range maxRetries {
		err := c.resolve(context.Background(), key)
		require.Error(t, err)
		assert.ErrorContains(t, err, "cluster cluster1: finding the owner of Pod web-9", "the error names the cluster and the object")
		c.resolveQueue.AddRateLimited(key)
	}
	assert.NoError(t, c.resolve(context.Background(), key), "left after %d tries", maxRetries)
	assert.Empty(t, c.pending)
	c.resolveQueue.ShutDown()
}
