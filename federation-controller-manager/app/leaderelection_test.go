package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/utils/ptr"

	"github.com/federation-v1/federation/pkg/poll"
)

func TestLeaderElectionFlagsAreKubeControllerManagers(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	for flag, want := range map[string]string{
		"leader-elect": "true", "leader-elect-lease-duration": "15s", "leader-elect-renew-deadline": "10s",
		"leader-elect-retry-period": "2s", "leader-elect-resource-lock": "leases",
		"leader-elect-resource-name": "federation-controller-manager", "leader-elect-resource-namespace": "federation-system",
		"controller-shutdown-timeout": "30s",
	} {
		f := fs.Lookup(flag)
		if assert.NotNil(t, f, flag) {
			assert.Equal(t, want, f.DefValue, flag)
		}
	}
	require.NoError(t, fs.Parse([]string{"--leader-elect=false", "--leader-elect-lease-duration=30s", "--leader-elect-resource-name=other"}))
	assert.False(t, o.LeaderElection.LeaderElect)
	assert.Equal(t, 30*time.Second, o.LeaderElection.LeaseDuration.Duration)
	assert.Equal(t, "other", o.LeaderElection.ResourceName)
}

func TestLeaderElectionFlagsAreValidated(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(*componentbaseconfig.LeaderElectionConfiguration)
		want   []string
	}{
		"renew deadline not below the lease duration": {
			change: func(c *componentbaseconfig.LeaderElectionConfiguration) { c.RenewDeadline.Duration = 15 * time.Second },
			want:   []string{"--leader-elect-renew-deadline=15s: must be less than --leader-elect-lease-duration=15s"},
		},
		"retry period too long for the renew deadline": {
			change: func(c *componentbaseconfig.LeaderElectionConfiguration) { c.RetryPeriod.Duration = 9 * time.Second },
			want:   []string{"--leader-elect-retry-period=9s: must be less than --leader-elect-renew-deadline=10s divided by 1.2"},
		},
		"durations not positive": {
			change: func(c *componentbaseconfig.LeaderElectionConfiguration) {
				c.LeaseDuration.Duration, c.RenewDeadline.Duration, c.RetryPeriod.Duration = 0, -time.Second, 0
			},
			want: []string{"--leader-elect-lease-duration=0s: must be positive", "--leader-elect-renew-deadline=-1s: must be positive",
				"--leader-elect-retry-period=0s: must be positive"},
		},
		"another lock": {
			change: func(c *componentbaseconfig.LeaderElectionConfiguration) { c.ResourceLock = "endpoints" },
			want:   []string{`--leader-elect-resource-lock="endpoints": only "leases" is supported`},
		},
		"bad names": {
			change: func(c *componentbaseconfig.LeaderElectionConfiguration) {
				c.ResourceName, c.ResourceNamespace = "Not_A_Name", ""
			},
			want: []string{`--leader-elect-resource-name="Not_A_Name": not a Lease name`, `--leader-elect-resource-namespace="": not a namespace name`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := NewOptions()
			o.Kubeconfig = "x"
			require.NoError(t, o.Validate(), "the defaults are valid")
			tc.change(&o.LeaderElection)
			err := o.Validate()
			for _, want := range tc.want {
				assert.ErrorContains(t, err, want)
			}
			o.LeaderElection.LeaderElect = false
			assert.NoError(t, o.Validate(), "not checked with --leader-elect=false")
		})
	}
	o := NewOptions()
	o.Kubeconfig = "x"
	o.ShutdownTimeout = 0
	assert.ErrorContains(t, o.Validate(), "--controller-shutdown-timeout 0s: must be positive")
}

// fastElection is a leader election quick enough for unit tests.
func fastElection() componentbaseconfig.LeaderElectionConfiguration {
	c := defaultLeaderElection()
	c.LeaseDuration.Duration, c.RenewDeadline.Duration, c.RetryPeriod.Duration = 2*time.Second, 1500*time.Millisecond, 200*time.Millisecond
	return c
}

func leaseLock(t *testing.T, client *fake.Clientset, id string) resourcelock.Interface {
	c := fastElection()
	l, err := resourcelock.New(c.ResourceLock, c.ResourceNamespace, c.ResourceName, client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id})
	require.NoError(t, err)
	return l
}

func holder(t *testing.T, client *fake.Clientset) string {
	c := fastElection()
	l, err := client.CoordinationV1().Leases(c.ResourceNamespace).Get(context.Background(), c.ResourceName, metav1.GetOptions{})
	require.NoError(t, err)
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// candidate runs leaderElectAndRun with a run function that tells when it
// starts and, when it stops, who held the lease meanwhile.
type candidate struct {
	cancel   context.CancelFunc
	started  chan struct{}
	holders  chan string // the lease's holder while run was stopping
	returned chan error
}

// sameStore returns a client of client's objects that records its own
// actions.
func sameStore(client *fake.Clientset) *fake.Clientset {
	other := &fake.Clientset{}
	other.AddReactor("*", "*", clienttesting.ObjectReaction(client.Tracker()))
	return other
}

// startCandidate runs a candidate whose lock uses lockClient, a client of
// client's objects (client itself when nil).
func startCandidate(t *testing.T, client *fake.Clientset, id string, lockClient ...*fake.Clientset) *candidate {
	locks := client
	if len(lockClient) > 0 {
		locks = lockClient[0]
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{cancel: cancel, started: make(chan struct{}), holders: make(chan string, 1), returned: make(chan error, 1)}
	t.Cleanup(cancel)
	run := func(ctx context.Context) error {
		close(c.started)
		<-ctx.Done()
		l, err := client.CoordinationV1().Leases(fastElection().ResourceNamespace).Get(context.Background(), fastElection().ResourceName, metav1.GetOptions{})
		if err != nil {
			c.holders <- err.Error()
		} else {
			c.holders <- ptr.Deref(l.Spec.HolderIdentity, "")
		}
		return nil
	}
	go func() { c.returned <- leaderElectAndRun(ctx, fastElection(), leaseLock(t, locks, id), nil, run) }()
	return c
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestOneLeadsAndHandsOverOnStop: of two candidates one runs; asked to
// stop, it stops its controllers while still holding the lease, releases
// it, and the other leads well before the lease would have expired.
func TestOneLeadsAndHandsOverOnStop(t *testing.T) {
	client := fake.NewClientset()
	a := startCandidate(t, client, "a")
	<-a.started
	bClient := sameStore(client)
	b := startCandidate(t, client, "b", bClient)
	// b tries for the lease meanwhile, and must not start.
	require.NoError(t, poll.Until(context.Background(), 5*time.Second, "b to try for the lease 3 times", func(context.Context) error {
		if n := len(bClient.Actions()); n < 3 {
			return fmt.Errorf("%d tries", n)
		}
		return nil
	}))
	assert.False(t, isClosed(b.started), "the standby runs nothing")
	assert.Equal(t, "a", holder(t, client))

	stopped := time.Now()
	a.cancel()
	assert.Equal(t, "a", <-a.holders, "the lease is held while the controllers stop")
	require.NoError(t, <-a.returned)
	select {
	case <-b.started:
	case <-time.After(fastElection().LeaseDuration.Duration):
		t.Fatal("b did not lead within the lease duration of a's release")
	}
	t.Logf("b leads %s after a was asked to stop", time.Since(stopped))
	assert.Equal(t, "b", holder(t, client))

	b.cancel()
	require.NoError(t, <-b.returned)
	assert.Equal(t, "", holder(t, client), "released on stop")
}

// TestAStandbyAskedToStopReturns: a standby never runs and returns nil when
// asked to stop.
func TestAStandbyAskedToStopReturns(t *testing.T) {
	client := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: fastElection().ResourceName, Namespace: fastElection().ResourceNamespace},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("other"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &metav1.MicroTime{Time: time.Now()}, RenewTime: &metav1.MicroTime{Time: time.Now()}},
	})
	s := startCandidate(t, client, "standby")
	require.NoError(t, poll.Until(context.Background(), 5*time.Second, "the standby to read the lease", func(context.Context) error {
		if len(client.Actions()) < 2 {
			return errors.New("not yet")
		}
		return nil
	}))
	s.cancel()
	select {
	case err := <-s.returned:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the standby did not return")
	}
	assert.False(t, isClosed(s.started))
	assert.Equal(t, "other", holder(t, client))
}

// lostLease replaces exitLostLease for a test and reports its call.
func lostLease(t *testing.T) chan struct{} {
	exited := make(chan struct{})
	var once sync.Once
	old := exitLostLease
	exitLostLease = func() { once.Do(func() { close(exited) }) }
	t.Cleanup(func() { exitLostLease = old })
	return exited
}

// returnsAfterExit waits for a candidate that exitLostLease did not end (a
// test's does not) to return, so that nothing of it runs after the test.
func returnsAfterExit(t *testing.T, c *candidate) {
	select {
	case <-c.returned:
	case <-time.After(10 * time.Second):
		t.Fatal("the candidate did not return after its exit")
	}
}

// TestALeaseTakenOverEndsTheProcess: when another holds the lease, the
// former leader exits.
func TestALeaseTakenOverEndsTheProcess(t *testing.T) {
	exited := lostLease(t)
	client := fake.NewClientset()
	// As the apiserver does, an update of a lease changed since it was read
	// is refused (the fake tracker does not check resource versions).
	var stolen atomic.Bool
	client.PrependReactor("update", "leases", func(action clienttesting.Action) (bool, runtime.Object, error) {
		l := action.(clienttesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if stolen.Load() && ptr.Deref(l.Spec.HolderIdentity, "") != "thief" {
			return true, nil, apierrors.NewConflict(coordinationv1.Resource("leases"), l.Name, errors.New("changed"))
		}
		return false, nil, nil
	})
	a := startCandidate(t, client, "a")
	<-a.started
	c := fastElection()
	l, err := client.CoordinationV1().Leases(c.ResourceNamespace).Get(context.Background(), c.ResourceName, metav1.GetOptions{})
	require.NoError(t, err)
	l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.LeaseDurationSeconds = ptr.To("thief"), &metav1.MicroTime{Time: time.Now()}, ptr.To[int32](3600)
	stolen.Store(true)
	_, err = client.CoordinationV1().Leases(c.ResourceNamespace).Update(context.Background(), l, metav1.UpdateOptions{})
	require.NoError(t, err)
	select {
	case <-exited:
	case <-time.After(c.LeaseDuration.Duration + c.RenewDeadline.Duration):
		t.Fatal("the former leader did not exit")
	}
	returnsAfterExit(t, a)
	assert.Equal(t, "thief", holder(t, client), "a lost lease is not released")
}

// TestAnUnrenewableLeaseEndsTheProcessWithinTheRenewDeadline: when the
// apiserver stops answering, the leader exits once the renew deadline has
// passed, before others may take the lease over, even though client-go's
// elector is stuck in a request.
func TestAnUnrenewableLeaseEndsTheProcessWithinTheRenewDeadline(t *testing.T) {
	exited := lostLease(t)
	client := fake.NewClientset()
	var hanging atomic.Bool
	release := make(chan struct{})
	var once sync.Once
	answer := func() { once.Do(func() { close(release) }) }
	t.Cleanup(answer)
	client.PrependReactor("*", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		if !hanging.Load() {
			return false, nil, nil
		}
		<-release
		return true, nil, errors.New("gone")
	})
	a := startCandidate(t, client, "a")
	<-a.started
	hanging.Store(true)
	hung := time.Now()
	c := fastElection()
	select {
	case <-exited:
		assert.Less(t, time.Since(hung), c.LeaseDuration.Duration, "exited before the lease could be taken over")
	case <-time.After(2 * c.LeaseDuration.Duration):
		t.Fatal("the leader did not exit")
	}
	answer()
	returnsAfterExit(t, a)
}
