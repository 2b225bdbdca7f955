package app

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	componentbaseconfig "k8s.io/component-base/config"

	// Registers leader_election_master_status on /metrics.
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// leaderHealthzTolerance is how long past its lease a leader that could
// not renew it is still healthy, as kube-controller-manager has it.
const leaderHealthzTolerance = 20 * time.Second

// defaultLeaderElection is kube-controller-manager's leader election, on
// a Lease of the controller manager's name in the federation's namespace.
func defaultLeaderElection() componentbaseconfig.LeaderElectionConfiguration {
	return componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect:       true,
		LeaseDuration:     metav1.Duration{Duration: 15 * time.Second},
		RenewDeadline:     metav1.Duration{Duration: 10 * time.Second},
		RetryPeriod:       metav1.Duration{Duration: 2 * time.Second},
		ResourceLock:      resourcelock.LeasesResourceLock,
		ResourceName:      component,
		ResourceNamespace: federationv1beta1.SystemNamespace,
	}
}

// validateLeaderElection checks the --leader-elect-* flags as client-go's
// elector will (it refuses the rest at run time, without naming flags).
func validateLeaderElection(c componentbaseconfig.LeaderElectionConfiguration) []error {
	if !c.LeaderElect {
		return nil
	}
	var errs []error
	lease, renew, retry := c.LeaseDuration.Duration, c.RenewDeadline.Duration, c.RetryPeriod.Duration
	for flag, d := range map[string]time.Duration{"lease-duration": lease, "renew-deadline": renew, "retry-period": retry} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("--leader-elect-%s=%s: must be positive", flag, d))
		}
	}
	if renew >= lease {
		errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline=%s: must be less than --leader-elect-lease-duration=%s", renew, lease))
	}
	if float64(renew) <= leaderelection.JitterFactor*float64(retry) {
		errs = append(errs, fmt.Errorf("--leader-elect-retry-period=%s: must be less than --leader-elect-renew-deadline=%s divided by %v",
			retry, renew, leaderelection.JitterFactor))
	}
	if c.ResourceLock != resourcelock.LeasesResourceLock {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-lock=%q: only %q is supported", c.ResourceLock, resourcelock.LeasesResourceLock))
	}
	if msgs := validation.IsDNS1123Subdomain(c.ResourceName); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-name=%q: not a Lease name: %s", c.ResourceName, msgs[0]))
	}
	if msgs := validation.IsDNS1123Label(c.ResourceNamespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-namespace=%q: not a namespace name: %s", c.ResourceNamespace, msgs[0]))
	}
	return errs
}

// exitLostLease ends this run of the process when the lease is lost, at
// once, as kube-controller-manager exits: nothing may write once another
// may lead. The process then starts afresh as a standby, by exec of
// itself (every write in flight, connection and cache goes with the old
// image), as kubelet or systemd would restart kube-controller-manager: a
// local federation (kubefed init --local) has no supervisor, and an
// apiserver away for the renew deadline must not leave it without its
// controller managers. Should the exec fail, the process exits 1.
var exitLostLease = func() {
	klog.Flush()
	self, err := os.Executable()
	if err == nil {
		klog.InfoS("Restarting as a standby after losing the lease", "executable", self)
		klog.Flush()
		err = syscall.Exec(self, os.Args, os.Environ())
	}
	klog.ErrorS(err, "Restarting after losing the lease failed: exiting")
	klog.FlushAndExit(klog.ExitFlushTimeout, 1)
}

// newLeaderLock is the Lease lock of this controller manager, whose
// identity is the host name and a UUID, as kube-controller-manager's.
func newLeaderLock(c componentbaseconfig.LeaderElectionConfiguration, cfg *rest.Config, recorder record.EventRecorder) (resourcelock.Interface, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("the leader election identity: %w", err)
	}
	// Unique, as two controller managers may run on one host.
	id := host + "_" + string(uuid.NewUUID())
	lock, err := resourcelock.NewFromKubeconfig(c.ResourceLock, c.ResourceNamespace, c.ResourceName,
		resourcelock.ResourceLockConfig{Identity: id, EventRecorder: recorder}, cfg, c.RenewDeadline.Duration)
	if err != nil {
		return nil, fmt.Errorf("the leader election lock: %w", err)
	}
	return lock, nil
}

// leaderElectAndRun waits to hold the leader lease, then runs run until
// ctx ends; a standby does nothing else meanwhile. When ctx ends the
// leader keeps its lease while run stops, and releases it once run has
// returned, so that the next leader starts at once and never alongside
// it. A lost lease ends this run of the process (exitLostLease).
func leaderElectAndRun(ctx context.Context, c componentbaseconfig.LeaderElectionConfiguration, lock resourcelock.Interface,
	checker *leaderelection.HealthzAdaptor, run func(context.Context) error) error {
	logger := klog.FromContext(ctx)
	id, lease := lock.Identity(), c.ResourceNamespace+"/"+c.ResourceName

	// The election outlives ctx: it ends once nothing of ours runs.
	electing, stopElecting := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElecting()
	var leading atomic.Bool
	result := make(chan error, 1)
	// Declared first: OnStartedLeading watches it.
	var elector *leaderelection.LeaderElector
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   c.LeaseDuration.Duration,
		RenewDeadline:   c.RenewDeadline.Duration,
		RetryPeriod:     c.RetryPeriod.Duration,
		ReleaseOnCancel: true,
		WatchDog:        checker,
		Name:            c.ResourceName,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leadCtx context.Context) {
				leading.Store(true)
				defer func() {
					// Stopping, not a lost lease (then the elector ended
					// leadCtx and OnStoppedLeading exits): run has
					// returned, so the lease goes.
					if leadCtx.Err() == nil {
						stopElecting()
					}
				}()
				if ctx.Err() != nil {
					return
				}
				logger.Info("Leading: starting the controllers", "identity", id, "lease", lease)
				runCtx, cancel := context.WithCancel(leadCtx)
				defer cancel()
				defer context.AfterFunc(ctx, cancel)()
				go stopWhenRenewalsStop(electing, elector, c, lease)
				result <- run(runCtx)
			},
			OnStoppedLeading: func() {
				if electing.Err() != nil {
					logger.Info("Stopped leading", "identity", id, "lease", lease)
					return
				}
				logger.Error(nil, "Leader election lost: stopping at once so that a stale leader never writes", "identity", id, "lease", lease)
				exitLostLease()
			},
			OnNewLeader: func(holder string) {
				if holder != id {
					logger.Info("Another controller manager leads", "leader", holder, "lease", lease)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	if checker != nil {
		checker.SetLeaderElection(elector)
	}
	// A standby asked to stop stops waiting; a leader stops its
	// controllers first (OnStartedLeading).
	defer context.AfterFunc(ctx, func() {
		if !leading.Load() {
			stopElecting()
		}
	})()
	logger.Info("Waiting to lead: standby until this controller manager holds the lease", "identity", id, "lease", lease)
	elector.Run(electing)
	select {
	case err := <-result:
		return err
	default:
		return nil
	}
}

// stopWhenRenewalsStop ends the process once the leader could not renew its
// lease for the renew deadline, until ctx (the election) ends. client-go's
// elector stops leading then too, but first spends up to the renew
// deadline trying to release the lease, while others may take it over once
// the lease duration has passed.
func stopWhenRenewalsStop(ctx context.Context, elector *leaderelection.LeaderElector, c componentbaseconfig.LeaderElectionConfiguration, lease string) {
	// Check fails once the lease was last renewed longer ago than its
	// duration plus this (negative) tolerance: the renew deadline.
	tolerance := c.RenewDeadline.Duration - c.LeaseDuration.Duration
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := elector.Check(tolerance); err != nil {
			klog.FromContext(ctx).Error(err, "Leader election lost: the lease was not renewed within --leader-elect-renew-deadline; stopping at once so that a stale leader never writes",
				"lease", lease, "renewDeadline", c.RenewDeadline.Duration)
			exitLostLease()
		}
	}, 250*time.Millisecond)
}
