package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/cli/globalflag"

	// Registers the work queues' metrics (depth, latency) on /metrics.
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	fedscheme "github.com/federation-v1/federation/pkg/generated/clientset/versioned/scheme"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/membercluster"
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

// Run starts the enabled controllers and serves /healthz, /metrics and
// /debug/pprof/ until ctx ends.
func Run(ctx context.Context, o *Options) error {
	logger := klog.FromContext(ctx)
	cfg, err := clientcmd.BuildConfigFromFlags(o.Master, o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the federation apiserver's kubeconfig: %w", err)
	}
	cfg.UserAgent = component
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	fedClient, err := versioned.NewForConfig(cfg)
	if err != nil {
		return err
	}
	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	fedDynamic, err := dynamic.NewForConfig(cfg)
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

	uid, err := federationUID(ctx, kubeClient)
	if err != nil {
		return fmt.Errorf("reading the federation's identity: %w", err)
	}
	logger.Info("Federation identity", "name", o.FederationName, "uid", uid)
	cc := &ControllerContext{
		FederationUID:   uid,
		Options:         o,
		FedClient:       fedClient,
		KubeClient:      kubeClient,
		FedInformers:    fedinformers.NewSharedInformerFactory(fedClient, 0),
		SystemInformers: kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, 0, kubeinformers.WithNamespace(membercluster.SecretNamespace)),
		KubeInformers:   kubeinformers.NewSharedInformerFactory(kubeClient, resync),
		TombstoneInformers: kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, 0,
			kubeinformers.WithNamespace(tombstone.Namespace), kubeinformers.WithTweakListOptions(propagation.TombstoneSelector)),
		FedDynamic:       fedDynamic,
		DynamicInformers: dynamicinformer.NewDynamicSharedInformerFactory(fedDynamic, 0),
		Recorder:         broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: component}),
	}
	var runs []func(context.Context) error
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
			runs = append(runs, run)
		}
	}
	if cc.Members != nil {
		runs = append(runs, cc.Members.Run)
	}
	cc.FedInformers.Start(ctx.Done())
	cc.SystemInformers.Start(ctx.Done())
	cc.KubeInformers.Start(ctx.Done())
	cc.TombstoneInformers.Start(ctx.Done())
	cc.DynamicInformers.Start(ctx.Done())
	defer cc.FedInformers.Shutdown()
	defer cc.SystemInformers.Shutdown()
	defer cc.KubeInformers.Shutdown()
	defer cc.TombstoneInformers.Shutdown()
	defer cc.DynamicInformers.Shutdown()

	errs := make(chan error, len(runs)+1)
	for _, run := range runs {
		go func() { errs <- run(ctx) }()
	}
	go func() { errs <- serve(ctx, o.Serving) }()
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}
