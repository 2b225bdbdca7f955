package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/spf13/pflag"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/healthz"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/component-base/metrics/legacyregistry"
	controllermanager "k8s.io/controller-manager/app"
	netutils "k8s.io/utils/net"
)

// defaultSecurePort serves /healthz, /metrics and /debug/pprof/ unless
// --secure-port says otherwise.
const defaultSecurePort = 10266

// ServingOptions are how the controller manager serves its health, metrics
// and profiles: over HTTPS, with the callers authenticated and authorized
// by the federation apiserver (TokenReview, SubjectAccessReview), as
// kube-controller-manager does. /healthz, /readyz and /livez are open to
// anyone, for probes; /metrics needs `get` on that path (the
// system:monitoring group has it), /debug/pprof/ too.
type ServingOptions struct {
	SecureServing  *genericoptions.SecureServingOptions
	Authentication *genericoptions.DelegatingAuthenticationOptions
	Authorization  *genericoptions.DelegatingAuthorizationOptions
}

func newServingOptions() ServingOptions {
	o := ServingOptions{
		SecureServing:  genericoptions.NewSecureServingOptions(),
		Authentication: genericoptions.NewDelegatingAuthenticationOptions(),
		Authorization:  genericoptions.NewDelegatingAuthorizationOptions(),
	}
	o.SecureServing.BindAddress = netutils.ParseIPSloppy("127.0.0.1")
	o.SecureServing.BindPort = defaultSecurePort
	o.SecureServing.ServerCert.PairName = component
	// The federation apiserver publishes no extension-apiserver-authentication
	// ConfigMap: client certificates are checked against --client-ca-file.
	o.Authentication.SkipInClusterLookup = true
	return o
}

func (o ServingOptions) addFlags(fs *pflag.FlagSet) {
	o.SecureServing.AddFlags(fs)
	o.Authentication.AddFlags(fs)
	o.Authorization.AddFlags(fs)
}

func (o ServingOptions) validate() []error {
	errs := o.SecureServing.Validate()
	errs = append(errs, o.Authentication.Validate()...)
	return append(errs, o.Authorization.Validate()...)
}

// complete asks the federation apiserver of --kubeconfig about callers
// unless other kubeconfigs are given, and makes a self-signed serving
// certificate (in --cert-dir, or in memory) unless one is given.
func (o ServingOptions) complete(kubeconfig string) error {
	if o.Authentication.RemoteKubeConfigFile == "" {
		o.Authentication.RemoteKubeConfigFile = kubeconfig
	}
	if o.Authorization.RemoteKubeConfigFile == "" {
		o.Authorization.RemoteKubeConfigFile = kubeconfig
	}
	return o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, nil)
}

// serve serves /healthz, /metrics and /debug/pprof/ until ctx ends; it
// returns early only on error. /healthz and /livez fail when leader is
// not nil and this controller manager leads on a lease it could not renew
// (client-go's leader election health check).
func serve(ctx context.Context, o ServingOptions, leader *leaderelection.HealthzAdaptor) error {
	var serving *genericapiserver.SecureServingInfo
	if err := o.SecureServing.ApplyTo(&serving); err != nil {
		return fmt.Errorf("configuring HTTPS serving: %w", err)
	}
	if serving == nil { // --secure-port=0
		<-ctx.Done()
		return nil
	}
	var authn genericapiserver.AuthenticationInfo
	if err := o.Authentication.ApplyTo(&authn, serving, nil); err != nil {
		return fmt.Errorf("configuring delegated authentication: %w", err)
	}
	var authz genericapiserver.AuthorizationInfo
	if err := o.Authorization.ApplyTo(&authz); err != nil {
		return fmt.Errorf("configuring delegated authorization: %w", err)
	}
	mux := http.NewServeMux()
	checks := []healthz.HealthChecker{healthz.PingHealthz}
	if leader != nil {
		checks = append(checks, leader)
	}
	healthz.InstallHandler(mux, checks...)
	healthz.InstallLivezHandler(mux, checks...)
	healthz.InstallReadyzHandler(mux, healthz.PingHealthz)
	mux.Handle("/metrics", legacyregistry.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	handler := controllermanager.BuildHandlerChain(mux, &authz, &authn)
	_, stopped, err := serving.Serve(handler, 5*time.Second, ctx.Done())
	if err != nil {
		return fmt.Errorf("serving on %s: %w", serving.Listener.Addr(), err)
	}
	<-stopped
	return nil
}
