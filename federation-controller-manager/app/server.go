package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/cli/globalflag"

	// Registers the work queues' metrics (depth, latency) on /metrics.
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/cachetrim"
	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	fedscheme "github.com/federation-v1/federation/pkg/generated/clientset/versioned/scheme"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/tombstone"
	"github.com/federation-v1/federation/pkg/version"
)

// component names the controller manager in events and user agents.
const component = "federation-controller-manager"

// resync re-delivers every federated object this often, so that what a
// member or the DNS zone lost is repaired even without a change.
const resync = 5 * time.Minute

// NewCommand returns the federation-controller-manager command.
func NewCommand() *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   component,
		Short: "Runs the controllers of a Kubernetes cluster federation",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.Serving.complete(o.Kubeconfig); err != nil {
				return err
			}
			return Run(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	o.AddFlags(fs)
	globalflag.AddGlobalFlags(fs, component)
	version.AddFlag(cmd)
	return cmd
}

// Run serves /healthz, /metrics and /debug/pprof/ and runs the enabled
// controllers until ctx ends: at once with --leader-elect=false, else
// once this controller manager holds the leader lease. When ctx ends the
// controllers stop, and Run returns once they have (an error past
// --controller-shutdown-timeout).
func Run(ctx context.Context, o *Options) error {
	cfg, err := clientcmd.BuildConfigFromFlags(o.Master, o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the federation apiserver's kubeconfig: %w", err)
	}
	cfg.UserAgent = component
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if err := fedscheme.AddToScheme(scheme.Scheme); err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartStructuredLogging(3)
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kubeClient.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component})

	var checker *leaderelection.HealthzAdaptor
	if o.LeaderElection.LeaderElect {
		checker = leaderelection.NewLeaderHealthzAdaptor(leaderHealthzTolerance)
	}
	// Serving lasts until Run returns (a standby serves too); should it
	// fail, the controllers stop.
	runCtx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	serving, stopServing := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := serve(serving, o.Serving, checker); err != nil {
			fail(err)
		}
	}()
	defer func() { stopServing(); <-served }()

	run := func(ctx context.Context) error { return runControllers(ctx, o, cfg, kubeClient, recorder) }
	if o.LeaderElection.LeaderElect {
		lock, lockErr := newLeaderLock(o.LeaderElection, cfg, recorder)
		if lockErr != nil {
			return lockErr
		}
		err = leaderElectAndRun(runCtx, o.LeaderElection, lock, checker, run)
	} else {
		err = run(runCtx)
	}
	if cause := context.Cause(runCtx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// runControllers runs the enabled controllers until ctx ends or one
// fails, then stops them all and returns once they have returned.
func runControllers(ctx context.Context, o *Options, cfg *rest.Config, kubeClient kubernetes.Interface, recorder record.EventRecorder) error {
	logger := klog.FromContext(ctx)
	fedClient, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	fedDynamic, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	uid, err := federationUID(ctx, kubeClient)
	if err != nil {
		return fmt.Errorf("reading the federation's identity: %w", err)
	}
	logger.Info("Federation identity", "name", o.FederationName, "uid", uid)
	trimmed := kubeinformers.WithTransform(cachetrim.ManagedFields)
	cc := &ControllerContext{
		FederationUID:    uid,
		FederationConfig: cfg,
		Options:          o,
		FedClient:        fedClient,
		KubeClient:       kubeClient,
		FedInformers:     fedinformers.NewSharedInformerFactoryWithOptions(fedClient, 0, fedinformers.WithTransform(cachetrim.ManagedFields)),
		SystemInformers:  kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, 0, trimmed, kubeinformers.WithNamespace(federationv1beta1.SystemNamespace)),
		KubeInformers:    kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, resync, trimmed),
		TombstoneInformers: kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, 0, trimmed,
			kubeinformers.WithNamespace(tombstone.Namespace), kubeinformers.WithTweakListOptions(propagation.TombstoneSelector)),
		FedDynamic:       fedDynamic,
		DynamicInformers: trimmedDynamicInformers{dynamicinformer.NewDynamicSharedInformerFactory(fedDynamic, 0)},
		Recorder:         recorder,
	}
	runs := map[string]func(context.Context) error{}
	for name, init := range controllers {
		if !o.enabled(name) {
			logger.Info("Controller disabled", "controller", name)
			continue
		}
		run, err := init(ctx, cc)
		if err != nil {
			return fmt.Errorf("starting the %s controller: %w", name, err)
		}
		if run != nil {
			runs[name] = run
		}
	}
	if cc.Members != nil {
		runs["member-clusters"] = cc.Members.Run
	}
	// The informers stop after the controllers (defers run last first).
	defer cc.FedInformers.Shutdown()
	defer cc.SystemInformers.Shutdown()
	defer cc.KubeInformers.Shutdown()
	defer cc.TombstoneInformers.Shutdown()
	defer cc.DynamicInformers.Shutdown()
	cc.FedInformers.Start(ctx.Done())
	cc.SystemInformers.Start(ctx.Done())
	cc.KubeInformers.Start(ctx.Done())
	cc.TombstoneInformers.Start(ctx.Done())
	cc.DynamicInformers.Start(ctx.Done())
	return runAll(ctx, runs, o.ShutdownTimeout)
}

// trimmedDynamicInformers hands out informers that keep no managedFields
// (dynamicinformer's factory takes no transform option).
type trimmedDynamicInformers struct {
	dynamicinformer.DynamicSharedInformerFactory
}

func (f trimmedDynamicInformers) ForResource(gvr schema.GroupVersionResource) kubeinformers.GenericInformer {
	inf := f.DynamicSharedInformerFactory.ForResource(gvr)
	// Refused only once the informer runs: it was set when it was made.
	_ = inf.Informer().SetTransform(cachetrim.ManagedFields)
	return inf
}

// runAll runs every function until ctx ends or one fails, then cancels
// the others and waits for all of them, at most timeout.
func runAll(ctx context.Context, runs map[string]func(context.Context) error, timeout time.Duration) error {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		running = sets.New[string]()
		wg      sync.WaitGroup
	)
	failed := make(chan error, len(runs))
	for name, run := range runs {
		running.Insert(name)
		wg.Go(func() {
			err := run(ctx)
			mu.Lock()
			running.Delete(name)
			mu.Unlock()
			if err != nil && ctx.Err() == nil {
				failed <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-failed:
		logger.Error(err, "A controller failed: stopping the others")
	}
	cancel()
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	select {
	case <-stopped:
		logger.Info("Controllers stopped")
		return err
	case <-time.After(timeout):
		mu.Lock()
		defer mu.Unlock()
		return fmt.Errorf("controllers %v did not stop within --controller-shutdown-timeout=%s", sets.List(running), timeout)
	}
}
