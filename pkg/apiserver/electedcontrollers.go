package apiserver

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	serviceaccountcontroller "k8s.io/kubernetes/pkg/controller/serviceaccount"

	// Registers leader_election_master_status on /metrics.
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/serviceaccounttoken"
)

// tokensWorkers fill legacy token Secrets: kube-controller-manager's
// --concurrent-serviceaccount-token-syncs default.
const tokensWorkers = 5

// controllersLease is the Lease, in the federation's namespace, with which
// the apiservers of one federation (kubefed init --ha runs two) elect the
// one that runs their own controllers.
const controllersLease = "federation-apiserver"

// The election's timings: kube-controller-manager's defaults.
const (
	controllersLeaseDuration = 15 * time.Second
	controllersRenewDeadline = 10 * time.Second
	controllersRetryPeriod   = 2 * time.Second
	// controllersStopTimeout bounds how long a stopping server waits for
	// its controllers to stop and its lease to be released.
	controllersStopTimeout = 20 * time.Second
)

// electedControllers are the controllers that run in the apiserver but
// must run in one apiserver of a federation at a time: only the holder of
// the Lease controllersLease runs them, as kube-controller-manager runs
// their Kubernetes counterparts for a cluster.
//
//   - Namespace deletion and ClusterRole aggregation are Kubernetes'
//     kube-controller-manager controllers, written for one running copy.
//   - The tokens controller fills legacy service-account token Secrets
//     and deletes them with their account: kube-controller-manager's,
//     written for one running copy.
//   - The keeper of default/kubernetes writes this server's serving port:
//     apiservers on different ports would each put back their own every
//     10 s, forever (kube-apiserver assumes its replicas share the port).
//
// The repair of the cluster-IP allocations is not among them: it runs in
// every apiserver, as in every kube-apiserver (addServiceIPRepairHook).
//
// Each term of leadership builds its controllers and informers afresh and
// stops them entirely before the lease is given up, so a standby holds no
// watch for them, and a lost lease leaves nothing running.
type electedControllers struct {
	// kubernetesService is default/kubernetes as this server writes it.
	kubernetesService *corev1.Service
	// identity is this server's in the Lease: its host name, serving
	// port and a UUID (apiservers sharing a port differ by the UUID).
	identity string
	// tokens signs legacy token Secrets' tokens; nil runs no tokens
	// controller.
	tokens *serviceaccounttoken.Tokens

	mu sync.Mutex
	// stop asks the election to end, a leader stopping its controllers and
	// releasing the lease first; nil before it started.
	stop context.CancelFunc
	// done is closed once the election has ended.
	done chan struct{}
}

// newElectedControllers prepares the election of a server serving on port.
func newElectedControllers(kubernetesService *corev1.Service, port int, tokens *serviceaccounttoken.Tokens) (*electedControllers, error) {
	host, err := os.Hostname()
	if err != nil {
		return nil, fmt.Errorf("the host name, for the identity in the Lease %s/%s: %w", federationv1beta1.SystemNamespace, controllersLease, err)
	}
	return &electedControllers{
		kubernetesService: kubernetesService,
		identity:          fmt.Sprintf("%s:%d_%s", host, port, uuid.NewUUID()),
		tokens:            tokens,
	}, nil
}

// addHooks starts the election once the server serves, and ends it when
// the server starts to shut down: a pre-shutdown hook runs while the
// server still takes requests, so the leader can still release its lease
// through its loopback client, and the next leader starts at its next
// try instead of after the lease duration.
func (e *electedControllers) addHooks(generic *genericapiserver.GenericAPIServer) error {
	if err := generic.AddPostStartHook("start-elected-controllers", func(ctx genericapiserver.PostStartHookContext) error {
		return e.start(ctx, ctx.LoopbackClientConfig)
	}); err != nil {
		return fmt.Errorf("adding the elected controllers' post-start hook: %w", err)
	}
	if err := generic.AddPreShutdownHook("stop-elected-controllers", e.stopAndWait); err != nil {
		return fmt.Errorf("adding the elected controllers' pre-shutdown hook: %w", err)
	}
	return nil
}

// start runs the election in the background until stopAndWait or ctx ends.
func (e *electedControllers) start(ctx context.Context, loopback *rest.Config) error {
	// Its requests time out at half the renew deadline.
	lock, err := resourcelock.NewFromKubeconfig(resourcelock.LeasesResourceLock, federationv1beta1.SystemNamespace, controllersLease,
		resourcelock.ResourceLockConfig{Identity: e.identity}, loopback, controllersRenewDeadline)
	if err != nil {
		return fmt.Errorf("the lock of the Lease %s/%s: %w", federationv1beta1.SystemNamespace, controllersLease, err)
	}
	// The election outlives ctx, which ends when the server no longer
	// takes requests: stopAndWait ends it before.
	electing, stop := context.WithCancel(context.WithoutCancel(ctx))
	context.AfterFunc(ctx, stop)
	e.mu.Lock()
	e.stop, e.done = stop, make(chan struct{})
	e.mu.Unlock()
	go func() {
		defer close(e.done)
		e.elect(electing, lock, loopback)
	}()
	return nil
}

// stopAndWait ends the election: a leader stops its controllers, waits
// for them, then releases the lease.
func (e *electedControllers) stopAndWait() error {
	e.mu.Lock()
	stop, done := e.stop, e.done
	e.mu.Unlock()
	if stop == nil {
		return nil
	}
	stop()
	select {
	case <-done:
		return nil
	case <-time.After(controllersStopTimeout):
		return fmt.Errorf("the apiserver's elected controllers did not stop and release the Lease %s/%s within %s",
			federationv1beta1.SystemNamespace, controllersLease, controllersStopTimeout)
	}
}

// elect campaigns for the lease until ctx ends, and runs the controllers
// while it holds it. A lost lease stops them, before another may take
// over, and this server campaigns again as a standby.
func (e *electedControllers) elect(ctx context.Context, lock resourcelock.Interface, loopback *rest.Config) {
	logger := klog.FromContext(ctx).WithValues("lease", federationv1beta1.SystemNamespace+"/"+controllersLease, "identity", e.identity)
	logger.Info("Waiting to lead the apiservers' controllers (namespace deletion, ClusterRole aggregation, default/kubernetes)")
	waitForLeaseNamespace(ctx, loopback)
	for ctx.Err() == nil {
		if err := e.term(ctx, logger, lock, loopback); err != nil {
			// The configuration is constant: this cannot happen.
			logger.Error(err, "Configuring the election of the apiservers' controllers")
			return
		}
		if ctx.Err() == nil {
			logger.Info("Lost the lease of the apiservers' controllers: they stopped; standing by")
		}
	}
	logger.Info("Stopped the election of the apiservers' controllers")
}

// waitForLeaseNamespace waits until the Lease's namespace exists. A new
// federation's comes with the hook create-system-namespaces, which runs
// beside this one: a campaign before it would fail and wait a retry
// period, and default/kubernetes, which the leader keeps, with it.
func waitForLeaseNamespace(ctx context.Context, loopback *rest.Config) {
	client, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		return
	}
	_ = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, federationv1beta1.SystemNamespace, metav1.GetOptions{})
		return err == nil, nil
	})
}

// term campaigns once and, having won, leads until ctx ends or the lease
// is lost. It returns once this term's controllers have stopped and the
// lease, when it still held it, was released.
func (e *electedControllers) term(ctx context.Context, logger klog.Logger, lock resourcelock.Interface, loopback *rest.Config) error {
	// The term outlives ctx: a leader asked to stop ends it only once its
	// controllers have stopped, as the elector releases the lease then.
	term, end := context.WithCancel(context.WithoutCancel(ctx))
	defer end()
	var mu sync.Mutex
	led := false
	// Closed once this term's controllers have stopped.
	stopped := make(chan struct{})
	var elector *leaderelection.LeaderElector
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   controllersLeaseDuration,
		RenewDeadline:   controllersRenewDeadline,
		RetryPeriod:     controllersRetryPeriod,
		ReleaseOnCancel: true,
		Name:            controllersLease,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) {
				defer close(stopped)
				defer end()
				mu.Lock()
				led = true
				mu.Unlock()
				if ctx.Err() != nil {
					return
				}
				logger.Info("Leading the apiservers' controllers: starting them")
				run, cancel := context.WithCancel(leading)
				defer cancel()
				// Asked to stop: the controllers go first, then the lease.
				defer context.AfterFunc(ctx, cancel)()
				go stopWhenRenewalsStop(run, cancel, elector, logger)
				runElected(run, loopback, e.kubernetesService, e.tokens)
				logger.Info("The apiservers' controllers stopped")
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(holder string) {
				if holder != e.identity {
					logger.Info("Another apiserver leads the apiservers' controllers", "leader", holder)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	// A standby asked to stop stops campaigning at once.
	defer context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !led {
			end()
		}
	})()
	elector.Run(term)
	mu.Lock()
	wasLeader := led
	mu.Unlock()
	if wasLeader {
		<-stopped
	}
	return nil
}

// stopWhenRenewalsStop stops a leader's controllers (cancel) once it could
// not renew its lease for the renew deadline, until ctx ends: before
// another apiserver may take the lease over. client-go's elector stops
// leading then too, but only after it spent up to another renew deadline
// trying to release the lease.
func stopWhenRenewalsStop(ctx context.Context, cancel context.CancelFunc, elector *leaderelection.LeaderElector, logger klog.Logger) {
	// Check fails once the lease was last renewed longer ago than its
	// duration plus this (negative) tolerance: the renew deadline.
	tolerance := controllersRenewDeadline - controllersLeaseDuration
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := elector.Check(tolerance); err != nil {
			logger.Error(err, "The lease of the apiservers' controllers was not renewed within the renew deadline: stopping them", "renewDeadline", controllersRenewDeadline)
			cancel()
		}
	}, 250*time.Millisecond)
}

// runElected runs the elected controllers until ctx ends, and returns once
// every one of them and their informers have stopped.
func runElected(ctx context.Context, loopback *rest.Config, kubernetesService *corev1.Service, tokens *serviceaccounttoken.Tokens) {
	logger := klog.FromContext(ctx)
	client, err := kubernetes.NewForConfig(loopback)
	if err != nil {
		logger.Error(err, "Creating the client of the apiservers' controllers")
		<-ctx.Done()
		return
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	namespaces, err := newNamespaceDeletion(ctx, loopback, factory)
	if err != nil {
		logger.Error(err, "Creating the namespace deletion controller")
	}
	roles := newRoleAggregation(client, factory)
	var tokenSecrets *serviceaccountcontroller.TokensController
	if tokens != nil {
		tokenSecrets, err = serviceaccountcontroller.NewTokensController(logger, factory.Core().V1().ServiceAccounts(), factory.Core().V1().Secrets(), client,
			serviceaccountcontroller.TokensControllerOptions{TokenGenerator: tokens.LegacyGenerator(), RootCA: tokens.RootCA()})
		if err != nil {
			logger.Error(err, "Creating the service-account tokens controller")
		}
	}
	factory.Start(ctx.Done())
	var wg sync.WaitGroup
	if namespaces != nil {
		wg.Go(func() { namespaces.Run(ctx, namespaceDeletionWorkers) })
	}
	wg.Go(func() { roles.Run(ctx, 1) })
	if tokenSecrets != nil {
		wg.Go(func() { tokenSecrets.Run(ctx, tokensWorkers) })
	}
	wg.Go(func() { keepKubernetesService(ctx, client, kubernetesService) })
	wg.Wait()
	factory.Shutdown()
}
