package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
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
	"k8s.io/component-base/metrics/legacyregistry"

	// Registers the work queues' metrics (depth, latency) on /metrics.
	_ "k8s.io/component-base/metrics/prometheus/restclient"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	fedscheme "github.com/federation-v1/federation/pkg/generated/clientset/versioned/scheme"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/membercluster"
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
			return Run(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	o.AddFlags(fs)
	globalflag.AddGlobalFlags(fs, component)
	return cmd
}

// Run starts the enabled controllers and serves /healthz and /metrics until ctx ends.
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

	cc := &ControllerContext{
		Options:          o,
		FedClient:        fedClient,
		KubeClient:       kubeClient,
		FedInformers:     fedinformers.NewSharedInformerFactory(fedClient, 0),
		SystemInformers:  kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, 0, kubeinformers.WithNamespace(membercluster.SecretNamespace)),
		KubeInformers:    kubeinformers.NewSharedInformerFactory(kubeClient, resync),
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
	cc.DynamicInformers.Start(ctx.Done())
	defer cc.FedInformers.Shutdown()
	defer cc.SystemInformers.Shutdown()
	defer cc.KubeInformers.Shutdown()
	defer cc.DynamicInformers.Shutdown()

	errs := make(chan error, len(runs)+1)
	for _, run := range runs {
		go func() { errs <- run(ctx) }()
	}
	if o.Address != "" {
		go func() { errs <- serveHealth(ctx, o.Address) }()
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}

// serveHealth serves /healthz, /metrics and the profiles of /debug/pprof/
// over HTTP until ctx ends.
func serveHealth(ctx context.Context, addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving /healthz and /metrics on %s: %w", addr, err)
	}
	return nil
}
