package faults_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
)

// burstObjects is the Objects column of a case that only creates.
var burstObjects = fmt.Sprintf("%s ConfigMaps + %d Deployments", thousands(burstConfigMaps), burstDeployments)

// maxRetryInterval is the longest a client-go leader elector waits between
// two tries: --leader-elect-retry-period (2 s) stretched by its jitter
// (wait.JitterUntil with a factor of 1.2).
const maxRetryInterval = 2 * time.Second * 22 / 10

// leaderKilled: kill -9 of the leading controller manager after strikeAt
// writes. The standby takes the Lease once it has seen no renewal for the
// lease duration: it sees the last renewal up to one of its tries late and
// takes the lease at its next try, so within the lease duration plus two
// tries of the kill.
func leaderKilled(c *caseRun) {
	t := c.t
	c.res.Objects = burstObjects
	leader := c.plane.leadingControllerManager(t)
	lease, err := c.leaseHolder(context.Background())
	require.NoError(t, err)
	before := holder(lease)
	require.NotEmpty(t, before, "the Lease has a holder")
	duration := time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second

	burst := c.w.start(c.w.creates(burstConfigMaps, burstDeployments))
	require.NoError(t, c.w.waitAcked(burst, strikeAt))
	killed := time.Now()
	c.plane.kill(t, leader)
	// The dead leader renews no more: this is its last renewal.
	lease, err = c.leaseHolder(context.Background())
	require.NoError(t, err)
	require.NotNil(t, lease.Spec.RenewTime, "a held Lease has a renewTime")
	lastRenewal := lease.Spec.RenewTime.Time
	require.NoError(t, poll.UntilEvery(context.Background(), duration+time.Minute, 50*time.Millisecond, "another holder of the Lease", func(ctx context.Context) error {
		if lease, err = c.leaseHolder(ctx); err != nil {
			return err
		}
		if h := holder(lease); h == "" || h == before || lease.Spec.AcquireTime == nil {
			return fmt.Errorf("held by %q", h)
		}
		return nil
	}))
	c.recovered = time.Now()
	takeover := c.recovered.Sub(killed)
	c.res.note("the standby held the Lease %.1f s after the kill, %.1f s after the last renewal (lease duration %s)",
		takeover.Seconds(), lease.Spec.AcquireTime.Sub(lastRenewal).Seconds(), duration)
	assert.LessOrEqual(t, takeover, duration+2*maxRetryInterval, "the standby leads within the lease duration and two tries")
	require.NoError(t, burst.wait())

	// Back as the standby, so that the next cases have two.
	c.plane.start(t, leader)
	assert.NotEqual(t, leader, c.plane.leadingControllerManager(t), "the restarted one does not take the lead back")
}

// apiserverKilled: kill -9 of the apiserver the leading controller manager
// talks to (its watches break and must resume on the other one) after
// strikeAt writes; the writes go on through the other; it is started again
// after recoverAt.
func apiserverKilled(c *caseRun) {
	t := c.t
	c.res.Objects = burstObjects
	leader := c.plane.leadingControllerManager(t)
	burst := c.w.start(c.w.creates(burstConfigMaps, burstDeployments))
	require.NoError(t, c.w.waitAcked(burst, strikeAt))
	victim := c.plane.apiserverOf(t, leader)
	killed := time.Now()
	c.plane.kill(t, victim)
	require.NoError(t, c.w.waitAcked(burst, recoverAt), "the writes go on through the other apiserver")
	c.plane.start(t, victim)
	c.recovered = time.Now()
	c.res.note("%s (the leading controller manager's) down %.1f s", victim, c.recovered.Sub(killed).Seconds())
	require.NoError(t, burst.wait())
}

// etcdMemberKilled: kill -9 of the etcd leader after strikeAt writes (the
// others elect another and keep the quorum); it is started again after
// recoverAt and catches up.
func etcdMemberKilled(c *caseRun) {
	t := c.t
	c.res.Objects = burstObjects
	burst := c.w.start(c.w.creates(burstConfigMaps, burstDeployments))
	require.NoError(t, c.w.waitAcked(burst, strikeAt))
	victim := c.plane.etcdLeader(t)
	killed := time.Now()
	c.plane.kill(t, victim)
	require.NoError(t, c.w.waitAcked(burst, recoverAt), "the writes go on with two etcd members")
	c.plane.start(t, victim)
	c.recovered = time.Now()
	c.res.note("%s (the leader) down %.1f s", victim, c.recovered.Sub(killed).Seconds())
	require.NoError(t, burst.wait())
}

// The member whose kube-apiserver goes away in memberAPIServerStopped, how
// long, and how long a not-Ready member holds a deletion (the controller
// manager's --deletion-wait default).
const (
	awayMember   = "cluster3"
	awayFor      = 60 * time.Second
	deletionWait = 2 * time.Minute
)

// memberAPIServerStopped: a member's kube-apiserver stopped during the
// burst, once it holds the copies of the first 200 ConfigMaps and 5
// Deployments; the burst ends and those objects are deleted while it is
// away, which the federation soon sees (not Ready): the deletions of its
// copies wait for it. It is started again after awayFor, half of
// --deletion-wait: the objects created meanwhile must reach it and the
// deleted ones' copies there must go.
func memberAPIServerStopped(c *caseRun) {
	t := c.t
	const deletedConfigMaps, deletedDeployments = 200, 5
	c.res.Objects = fmt.Sprintf("%s; %d + %d deleted while %s is away", burstObjects, deletedConfigMaps, deletedDeployments, awayMember)
	burst := c.w.start(c.w.creates(burstConfigMaps, burstDeployments))
	require.NoError(t, c.w.waitAcked(burst, strikeAt))
	require.NoError(t, c.waitCopies(awayMember, deletedConfigMaps, deletedDeployments))
	t.Logf("stopping the kube-apiserver of %s", awayMember)
	require.NoError(t, c.env.StopAPIServer(awayMember))
	stopped := time.Now()
	require.NoError(t, burst.wait())
	require.NoError(t, c.w.run(c.w.deletes(0, deletedConfigMaps, 0, deletedDeployments)))
	require.NoError(t, c.waitClusterReady(awayMember, false, time.Minute), "the federation notices")
	notReady := time.Since(stopped)
	// The fault is defined by its length: hold it, the federation noticed.
	if rest := awayFor - time.Since(stopped); rest > 0 {
		<-time.After(rest)
	}
	t.Logf("starting the kube-apiserver of %s", awayMember)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, c.env.StartAPIServer(ctx, awayMember))
	c.recovered = time.Now()
	down := c.recovered.Sub(stopped)
	c.res.note("%s down %.1f s (not Ready at the federation after %.1f s), within --deletion-wait (%s)", awayMember, down.Seconds(), notReady.Seconds(), deletionWait)
	require.Less(t, down, deletionWait, "the case is about a member back within --deletion-wait")
}

// waitCopies waits until cluster holds the copies of the first
// configMaps ConfigMaps and deployments Deployments of the case.
func (c *caseRun) waitCopies(cluster string, configMaps, deployments int) error {
	client := c.verifier.members[cluster]
	what := fmt.Sprintf("%s to hold the copies of %s..%s and %s..%s", cluster,
		configMapName(0), configMapName(configMaps-1), deploymentName(0), deploymentName(deployments-1))
	return poll.UntilEvery(context.Background(), time.Minute, 200*time.Millisecond, what, func(ctx context.Context) error {
		held, err := c.verifier.memberState(ctx, client, c.w.ns)
		if err != nil {
			return err
		}
		for i := range configMaps {
			if _, ok := held.ConfigMaps[configMapName(i)]; !ok {
				return fmt.Errorf("no %s yet", configMapName(i))
			}
		}
		for i := range deployments {
			if _, ok := held.Deployments[deploymentName(i)]; !ok {
				return fmt.Errorf("no %s yet", deploymentName(i))
			}
		}
		return nil
	})
}

// stoppedFor is how long controllerManagersStopped keeps them away.
const stoppedFor = 60 * time.Second

// controllerManagersStopped: both controller managers stopped (SIGTERM)
// after strikeAt writes; while they are away the burst ends and objects
// are updated and deleted; after stoppedFor they are started again.
func controllerManagersStopped(c *caseRun) {
	t := c.t
	const updatedConfigMaps, updatedDeployments = 200, 10
	const deletedConfigMaps, deletedDeployments = 100, 5
	c.res.Objects = fmt.Sprintf("%s; %d + %d updated, %d + %d deleted while stopped", burstObjects,
		updatedConfigMaps, updatedDeployments, deletedConfigMaps, deletedDeployments)
	managers := c.plane.instances(t, processplane.ControllerManager)
	burst := c.w.start(c.w.creates(burstConfigMaps, burstDeployments))
	require.NoError(t, c.w.waitAcked(burst, strikeAt))
	for _, m := range managers {
		c.plane.stop(t, m)
	}
	stopped := time.Now()
	require.NoError(t, burst.wait())
	require.NoError(t, c.w.run(c.w.updates(0, updatedConfigMaps, 0, updatedDeployments)))
	require.NoError(t, c.w.run(c.w.deletes(burstConfigMaps-deletedConfigMaps, burstConfigMaps, burstDeployments-deletedDeployments, burstDeployments)))
	changed := time.Since(stopped)
	// The fault is defined by its length: hold it, the changes are made.
	if rest := stoppedFor - changed; rest > 0 {
		<-time.After(rest)
	}
	for _, m := range managers {
		c.plane.start(t, m)
	}
	c.recovered = time.Now()
	c.res.note("stopped %.1f s; the changes took %.1f s of it", c.recovered.Sub(stopped).Seconds(), changed.Seconds())
}

// apiserversRestarted: the burst's namespace deleted, and both apiservers
// restarted (stopped, then started) once the deletion is under way: the
// namespace terminating and tombstones of its objects pending, their
// copies being deleted. The namespace and every copy in every member must
// go.
func apiserversRestarted(c *caseRun) {
	t := c.t
	c.res.Objects = burstObjects + ", then their namespace deleted"
	require.NoError(t, c.w.run(c.w.creates(burstConfigMaps, burstDeployments)))
	require.NoError(t, c.w.run([]op{c.w.deleteNamespace()}))
	c.gone = true
	require.NoError(t, poll.UntilEvery(context.Background(), time.Minute, 50*time.Millisecond, "the deletion of "+c.w.ns+" under way", func(ctx context.Context) error {
		ns, err := c.reads.CoreV1().Namespaces().Get(ctx, c.w.ns, metav1.GetOptions{})
		if err != nil {
			return poll.Abort(fmt.Errorf("namespace %s: %w (gone before the restart)", c.w.ns, err))
		}
		if ns.DeletionTimestamp == nil {
			return fmt.Errorf("not terminating yet")
		}
		tombstones, err := c.reads.CoreV1().ConfigMaps(federationv1beta1.SystemNamespace).List(ctx,
			metav1.ListOptions{LabelSelector: federationv1beta1.TombstoneLabel, Limit: 1})
		if err != nil {
			return err
		}
		if len(tombstones.Items) == 0 {
			return fmt.Errorf("terminating, no tombstone yet")
		}
		return nil
	}))
	apiservers := c.plane.instances(t, processplane.APIServer)
	stopped := time.Now()
	for _, a := range apiservers {
		c.plane.stop(t, a)
	}
	for _, a := range apiservers {
		c.plane.start(t, a)
	}
	away := time.Since(stopped)
	// A leader that could not renew its Lease for the renew deadline stops
	// at once, so that it never writes as a stale leader, and starts afresh
	// as a standby by itself: nothing here restarts a controller manager.
	for _, m := range c.plane.instances(t, processplane.ControllerManager) {
		require.True(t, c.plane.plane().Alive(m), "%s must outlive the apiservers' absence", m)
		log, err := os.ReadFile(c.plane.plane().Processes[m].Log)
		require.NoError(t, err)
		if n := strings.Count(string(log), "Restarting as a standby after losing the lease"); n > 0 {
			c.res.note("%s lost the Lease while no apiserver answered and restarted itself as a standby (%d times so far)", m, n)
		}
	}
	c.recovered = time.Now()
	c.res.note("the apiservers were away %.1f s", away.Seconds())
}
