package queues

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"

	"github.com/federation-v1/federation/pkg/poll"
)

// recorder is a member that records the writes made to it and answers
// with the error set for a hash.
type recorder struct {
	mu       sync.Mutex
	writes   []string // "cluster/objKey action hash"
	dones    []Done
	failed   []string
	failWith map[string]error // by hash
	unwanted map[string]bool  // by hash
	// during runs inside Write, while the task is running.
	during func(cluster string, t Task)
}

func newRecorder() *recorder {
	return &recorder{failWith: map[string]error{}, unwanted: map[string]bool{}}
}

func (r *recorder) handlers() Handlers {
	return Handlers{
		Wanted: func(_ string, t Task) bool {
			r.mu.Lock()
			defer r.mu.Unlock()
			return !r.unwanted[t.Hash]
		},
		Write: func(_ context.Context, cluster string, t Task) (*Event, error) {
			r.mu.Lock()
			r.writes = append(r.writes, fmt.Sprintf("%s/%s %d %s", cluster, t.Fed.GetName(), t.Action, t.Hash))
			err, during := r.failWith[t.Hash], r.during
			r.mu.Unlock()
			if during != nil {
				during(cluster, t)
			}
			if err != nil {
				return nil, err
			}
			return &Event{Reason: "Written", Verb: "wrote"}, nil
		},
		Done: func(d Done) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.dones = append(r.dones, d)
		},
		Failed: func(cluster string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.failed = append(r.failed, cluster)
		},
	}
}

func (r *recorder) lastDone(t *testing.T) Done {
	r.mu.Lock()
	defer r.mu.Unlock()
	require.NotEmpty(t, r.dones)
	return r.dones[len(r.dones)-1]
}

func newQueues(r *recorder, workers int) *Queues {
	return New("test", "Writing a test object", workers, func() workqueue.TypedRateLimiter[string] {
		return workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond)
	}, r.handlers())
}

func obj(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetName(name)
	return u
}

func apply(cluster, name, hash string) ClusterTask {
	return ClusterTask{Cluster: cluster, Task: Task{Action: Apply, Fed: obj(name), Desired: obj(name), Hash: hash}}
}

func TestAnObjectIsToldOnceAllItsCopiesAreWritten(t *testing.T) {
	r := newRecorder()
	q := newQueues(r, 1)
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h1"), apply("c2", "a", "h1")})
	assert.Equal(t, []string{"c1", "c2"}, q.Clusters())
	assert.True(t, q.Has("ns/a", "c1"))

	assert.Empty(t, q.Drain(context.Background(), "c1"))
	d := r.lastDone(t)
	assert.False(t, d.Settled, "c2 is still pending")
	assert.Nil(t, d.Events)
	inFlight, failures := q.State("ns/a", false)
	assert.True(t, inFlight)
	assert.Empty(t, failures)

	assert.Empty(t, q.Drain(context.Background(), "c2"))
	d = r.lastDone(t)
	assert.True(t, d.Settled)
	assert.True(t, d.AllWritten)
	assert.Equal(t, "a", d.Obj.GetName())
	require.Len(t, d.Events, 2)
	assert.ElementsMatch(t, []string{"c1", "c2"}, []string{d.Events[0].Cluster, d.Events[1].Cluster})
	assert.True(t, q.Idle())
	assert.False(t, q.Has("ns/a", "c1"))
}

func TestANewerTaskReplacesOneThatHasNotRun(t *testing.T) {
	r := newRecorder()
	q := newQueues(r, 1)
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h1")})
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h2")})
	assert.Equal(t, 1, q.Len("c1"), "one queue entry per copy")

	assert.Empty(t, q.Drain(context.Background(), "c1"))
	assert.Equal(t, []string{"c1/a 0 h2"}, r.writes, "only the newer write is made")
}

func TestTheSameTaskAgainKeepsItsPlaceAndTakesTheNewerObject(t *testing.T) {
	r := newRecorder()
	q := newQueues(r, 1)
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h1")})
	newer := apply("c1", "a2", "h1")
	q.Dispatch("ns/a", []ClusterTask{newer})
	assert.Equal(t, 1, q.Len("c1"))

	assert.Empty(t, q.Drain(context.Background(), "c1"))
	assert.Equal(t, []string{"c1/a2 0 h1"}, r.writes)
}

func TestAFailedWriteIsReportedAndKeptUntilItSucceeds(t *testing.T) {
	r := newRecorder()
	r.failWith["h1"] = errors.New("member says no")
	q := newQueues(r, 1)
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h1")})

	errs := q.Drain(context.Background(), "c1")
	require.Len(t, errs, 1)
	assert.Equal(t, []string{"c1"}, r.failed)
	d := r.lastDone(t)
	assert.True(t, d.Settled, "a failed write settles the object")
	assert.False(t, d.AllWritten)
	inFlight, failures := q.State("ns/a", false)
	assert.False(t, inFlight)
	assert.Equal(t, []string{"member says no"}, failures)
	assert.True(t, q.Has("ns/a", "c1"), "the failed task stays for its retry")

	// The same task again waits out its backoff: not queued a second time.
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h1")})
	assert.Equal(t, 0, q.Len("c1"))

	// A different one is queued, and its success clears the failure.
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h2")})
	assert.Equal(t, 1, q.Len("c1"))
	assert.Empty(t, q.Drain(context.Background(), "c1"))
	d = r.lastDone(t)
	assert.True(t, d.HadFailure)
	assert.True(t, d.AllWritten)
	_, failures = q.State("ns/a", false)
	assert.Empty(t, failures)
	assert.True(t, q.Idle())
}

func TestATaskNoLongerWantedIsDroppedUnwritten(t *testing.T) {
	r := newRecorder()
	r.unwanted["h1"] = true
	q := newQueues(r, 1)
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h1")})
	assert.Empty(t, q.Drain(context.Background(), "c1"))
	assert.Empty(t, r.writes)
	assert.True(t, r.lastDone(t).AllWritten)
	assert.True(t, q.Idle())
}

func TestDeletionDropsWritesButKeepsReleases(t *testing.T) {
	r := newRecorder()
	q := newQueues(r, 1)
	a := obj("a")
	q.Dispatch("ns/a", []ClusterTask{
		apply("c1", "a", "h1"),
		{Cluster: "c2", Task: Task{Action: Delete, Fed: a}},
		{Cluster: "c3", Task: Task{Action: Orphan, Fed: a}},
	})
	q.DropWrites("ns/a")
	assert.False(t, q.Has("ns/a", "c1"), "the apply is dropped")
	assert.True(t, q.Has("ns/a", "c2"))

	for _, c := range []string{"c1", "c2", "c3"} {
		assert.Empty(t, q.Drain(context.Background(), c))
	}
	assert.ElementsMatch(t, []string{"c2/a 2 ", "c3/a 3 "}, r.writes, "the dropped apply is never written")
	assert.False(t, q.Released("ns/a", "c1"))
	assert.True(t, q.Released("ns/a", "c2"))
	assert.True(t, q.Released("ns/a", "c3"))

	q.Forget("ns/a")
	assert.False(t, q.Released("ns/a", "c2"), "a forgotten object's releases go with it")
}

func TestAReleaseThatFailsIsNotReleased(t *testing.T) {
	r := newRecorder()
	r.failWith["d"] = errors.New("timeout")
	q := newQueues(r, 1)
	q.Dispatch("ns/a", []ClusterTask{{Cluster: "c1", Task: Task{Action: Delete, Fed: obj("a"), Hash: "d"}}})
	require.Len(t, q.Drain(context.Background(), "c1"), 1)
	assert.False(t, q.Released("ns/a", "c1"))
}

// A delete dropped because its cluster went away let nothing go: when the
// cluster is back within the deletion's wait, its copy must still be deleted.
func TestAReleaseNotWantedIsNotReleased(t *testing.T) {
	r := newRecorder()
	r.unwanted["d"] = true
	q := newQueues(r, 1)
	q.Dispatch("ns/a", []ClusterTask{{Cluster: "c1", Task: Task{Action: Delete, Fed: obj("a"), Hash: "d"}}})
	assert.Empty(t, q.Drain(context.Background(), "c1"))
	assert.Empty(t, r.writes)
	assert.False(t, q.Released("ns/a", "c1"))
	assert.True(t, q.Idle(), "the task is dropped, to be dispatched again")
}

func TestATaskReplacedWhileRunningRunsNext(t *testing.T) {
	r := newRecorder()
	q := newQueues(r, 1)
	var sawWriting bool
	r.during = func(cluster string, tk Task) {
		if tk.Hash != "h1" {
			return
		}
		// A member event of the copy while it is written, then a newer
		// version of the object.
		sawWriting = q.Writing(cluster, "ns/a")
		q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h2")})
		// The status is written meanwhile.
		inFlight, _ := q.State("ns/a", true)
		assert.True(t, inFlight)
	}
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h1")})
	assert.False(t, q.Writing("c1", "ns/a"), "not running yet")

	assert.Empty(t, q.Drain(context.Background(), "c1"))
	assert.True(t, sawWriting)
	assert.Equal(t, []string{"c1/a 0 h1", "c1/a 0 h2"}, r.writes, "the newer task runs after the running one")
	require.Len(t, r.dones, 2)
	assert.True(t, r.dones[0].EventWhileRunning)
	assert.False(t, r.dones[0].Settled, "the newer task is pending")
	assert.True(t, r.dones[1].Settled)
	assert.True(t, r.dones[1].StatusBehind, "the status was written while the copies were")
	assert.Len(t, r.dones[1].Events, 2)
	assert.True(t, q.Idle())
}

func TestClustersThatLeftAreForgotten(t *testing.T) {
	r := newRecorder()
	q := newQueues(r, 1)
	q.Dispatch("ns/a", []ClusterTask{apply("c1", "a", "h1"), apply("c2", "a", "h1")})
	q.ForgetClusters(func(cluster string) bool { return cluster == "c1" })
	assert.Equal(t, []string{"c1"}, q.Clusters())
	assert.False(t, q.Has("ns/a", "c2"))
	assert.Equal(t, 0, q.Len("c2"))
	assert.Empty(t, q.Drain(context.Background(), "c2"))
	assert.Empty(t, q.Drain(context.Background(), "c1"))
	assert.Equal(t, []string{"c1/a 0 h1"}, r.writes)
	assert.True(t, q.Idle())
}

// The workers started by Run write every copy once, each cluster with its
// own workers, a failing cluster is retried with its backoff, and every
// write is told once.
func TestRunWritesEveryCopyOnce(t *testing.T) {
	r := newRecorder()
	var mu sync.Mutex
	attempts := map[string]int{}
	r.during = func(cluster string, tk Task) {
		mu.Lock()
		defer mu.Unlock()
		attempts[cluster+"/"+tk.Fed.GetName()]++
	}
	h := r.handlers()
	write := h.Write
	h.Write = func(ctx context.Context, cluster string, tk Task) (*Event, error) {
		ev, err := write(ctx, cluster, tk)
		mu.Lock()
		defer mu.Unlock()
		if cluster == "c3" && attempts[cluster+"/"+tk.Fed.GetName()] == 1 {
			return nil, errors.New("first attempt fails")
		}
		return ev, err
	}
	q := New("test", "Writing a test object", 4, func() workqueue.TypedRateLimiter[string] {
		return workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond)
	}, h)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q.Run(ctx)

	const objects = 200
	for i := range objects {
		name := fmt.Sprintf("o%d", i)
		q.Dispatch("ns/"+name, []ClusterTask{apply("c1", name, "h"), apply("c2", name, "h"), apply("c3", name, "h")})
	}
	require.NoError(t, poll.Until(ctx, 30*time.Second, "every copy written", func(context.Context) error {
		if !q.Idle() {
			return errors.New("tasks pending")
		}
		return nil
	}))
	mu.Lock()
	defer mu.Unlock()
	assert.Len(t, attempts, 3*objects)
	for copyKey, n := range attempts {
		want := 1
		if copyKey[:2] == "c3" {
			want = 2
		}
		assert.Equal(t, want, n, copyKey)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	told, allWritten := map[string]int{}, map[string]int{}
	for _, d := range r.dones {
		told[d.ObjKey] += len(d.Events)
		if d.AllWritten {
			allWritten[d.ObjKey]++
		}
	}
	require.Len(t, told, objects)
	for objKey, n := range told {
		// c3's failure settles the object with c1's and c2's writes told;
		// its retry tells the third.
		assert.Equal(t, 3, n, objKey)
		assert.Equal(t, 1, allWritten[objKey], objKey)
	}
}
