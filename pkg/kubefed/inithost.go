package kubefed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/federation-v1/federation/pkg/hostplane"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/version"
)

// hostInitOptions are init's flags of a control plane in a host cluster;
// the ones both kinds of plane have are in initOptions.
type hostInitOptions struct {
	namespace          string
	image              string
	serviceType        string
	etcdPersistence    bool
	etcdCapacity       string
	etcdStorageClass   string
	apiserverOverrides string
	managerOverrides   string
	valuesFile         string
	waitTimeout        time.Duration
}

// defaultServicePort is the apiserver Service's port in a host cluster.
const defaultServicePort = 443

// addressTimeout bounds the wait for a Service's external address.
const addressTimeout = 5 * time.Minute

// hostOnlyFlags and localOnlyFlags belong to one kind of plane only.
var (
	hostOnlyFlags = []string{"federation-system-namespace", "image", "api-server-service-type", "etcd-persistent-storage",
		"etcd-pv-capacity", "etcd-pv-storage-class", "apiserver-arg-overrides", "controllermanager-arg-overrides", "values", "wait-timeout"}
	localOnlyFlags = []string{"data-dir", "dns-port", "dns-provider-config", "ha"}
)

func (h *hostInitOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&h.namespace, "federation-system-namespace", "federation-system", "namespace of the control plane in the host cluster")
	f.StringVar(&h.image, "image", "localhost/federation:"+version.Get().GitVersion, "image of the control plane's pods (REPOSITORY:TAG; `make image` builds it)")
	f.StringVar(&h.serviceType, "api-server-service-type", string(corev1.ServiceTypeLoadBalancer), "type of the apiserver's (and federation-dns') Service: LoadBalancer or NodePort")
	f.BoolVar(&h.etcdPersistence, "etcd-persistent-storage", true, "keep etcd's data on a PersistentVolumeClaim (false: an emptyDir, lost with the pod)")
	f.StringVar(&h.etcdCapacity, "etcd-pv-capacity", "10Gi", "size of etcd's PersistentVolumeClaim")
	f.StringVar(&h.etcdStorageClass, "etcd-pv-storage-class", "", "StorageClass of etcd's PersistentVolumeClaim (default: the cluster's default class)")
	f.StringVar(&h.apiserverOverrides, "apiserver-arg-overrides", "", `more federation-apiserver flags, "--flag1=value1,--flag2=value2"; they override kubefed's`)
	f.StringVar(&h.managerOverrides, "controllermanager-arg-overrides", "", `more federation-controller-manager flags, "--flag1=value1,--flag2=value2"; they override kubefed's`)
	f.StringVar(&h.valuesFile, "values", "", "YAML file of more values of the chart (deploy/charts/federation); the values the flags set win over the file's")
	f.DurationVar(&h.waitTimeout, "wait-timeout", 5*time.Minute, "how long to wait for the control plane to answer /readyz (0: do not wait)")
}

// validateHost checks the flags of a plane in a host cluster and builds
// the plane's options.
func (o *initOptions) validateHost() (*hostplane.Options, error) {
	var errs []error
	for _, f := range localOnlyFlags {
		if o.flags.Changed(f) {
			errs = append(errs, fmt.Errorf("--%s is for --local: a plane in a host cluster has no such setting", f))
		}
	}
	if o.dnsProvider != "" && o.dnsProvider != "coredns" {
		errs = append(errs, fmt.Errorf("--dns-provider %q: only coredns is supported", o.dnsProvider))
	} else if (o.dnsProvider == "") != (o.dnsZoneName == "") {
		errs = append(errs, errors.New("--dns-provider=coredns and --dns-zone-name go together, e.g. --dns-provider=coredns --dns-zone-name=example.com."))
	}
	port := defaultServicePort
	if o.flags.Changed("api-server-port") {
		port = o.port
	}
	p := &hostplane.Options{
		Name: o.name, Namespace: o.host.namespace, Image: o.host.image,
		ServiceType: corev1.ServiceType(o.host.serviceType), AdvertiseAddress: o.advertiseAddress, ServicePort: port,
		EtcdPersistence: o.host.etcdPersistence, EtcdCapacity: o.host.etcdCapacity, EtcdStorageClass: o.host.etcdStorageClass,
		EtcdServers: o.etcdServers, DNSZone: o.dnsZoneName,
	}
	if err := p.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.advertiseAddress != "" && p.ServiceType != corev1.ServiceTypeNodePort {
		errs = append(errs, errors.New("--api-server-advertise-address is the nodes' address of a NodePort Service: add --api-server-service-type=NodePort"))
	}
	if o.host.waitTimeout < 0 {
		errs = append(errs, fmt.Errorf("--wait-timeout %s: want 0 (do not wait) or more", o.host.waitTimeout))
	}
	var err error
	if p.APIServerArgs, err = hostplane.ParseArgOverrides("--apiserver-arg-overrides", o.host.apiserverOverrides); err != nil {
		errs = append(errs, err)
	}
	if p.ControllerManagerArgs, err = hostplane.ParseArgOverrides("--controllermanager-arg-overrides", o.host.managerOverrides); err != nil {
		errs = append(errs, err)
	}
	if o.host.valuesFile != "" {
		v, err := chartutil.ReadValuesFile(o.host.valuesFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("--values: %w", err))
		}
		p.File = v
	}
	return p, errors.Join(errs...)
}

// runHost creates (or brings back in line) the control plane in the host
// cluster, printing v1's steps.
func (o *initOptions) runHost(ctx context.Context, out io.Writer) error {
	chart, err := hostplane.EmbeddedChart()
	if err != nil {
		return err
	}
	if o.dryRun {
		return o.dryRunHost(ctx, out, chart)
	}
	cfg, err := o.restConfigFor(o.hostClusterContext)
	if err != nil {
		return err
	}
	host, err := hostplane.NewHost(cfg, o.plane.Namespace)
	if err != nil {
		return err
	}
	if err := reachable(ctx, host.Kube, "host cluster "+o.hostClusterContext, cfg.Host); err != nil {
		return err
	}
	caps, err := hostplane.Capabilities(host.Kube.Discovery())
	if err != nil {
		return fmt.Errorf("reading the host cluster's APIs: %w", err)
	}
	render := func(addrs hostplane.Addresses) ([]*unstructured.Unstructured, hostplane.Layout, error) {
		values, err := chart.Coalesce(o.plane.Values(addrs))
		if err != nil {
			return nil, hostplane.Layout{}, err
		}
		objs, err := chart.Render(o.name, o.plane.Namespace, values, caps)
		return objs, hostplane.NewLayout(o.name, o.plane.Namespace, values), err
	}
	// Rendered first without the Services' addresses, to have the Services.
	objs, layout, err := render(hostplane.Addresses{})
	if err != nil {
		return err
	}
	if err := host.RefuseOthers(ctx, o.name, objs); err != nil {
		return err
	}
	if err := step(out, "Creating a namespace "+o.plane.Namespace+" for federation system components", func() error {
		return host.EnsureNamespace(ctx)
	}); err != nil {
		return err
	}
	var addrs hostplane.Addresses
	if err := step(out, "Creating federation control plane service", func() error {
		services := named(objs, "Service", layout.APIServerService(), layout.DNSService())
		if err := host.Apply(ctx, services); err != nil {
			return err
		}
		if addrs.APIServer, err = host.WaitAddress(ctx, layout.APIServerService(), o.advertiseAddress, addressTimeout); err != nil {
			return err
		}
		if o.plane.DNSZone != "" {
			addrs.DNS, err = host.WaitAddress(ctx, layout.DNSService(), o.advertiseAddress, addressTimeout)
		}
		return err
	}); err != nil {
		return err
	}
	if objs, layout, err = render(addrs); err != nil {
		return err
	}
	var creds *hostplane.Credentials
	workloads, others := splitWorkloads(objs)
	if err := step(out, "Creating federation control plane objects (credentials, persistent volume claim)", func() error {
		var reissued error
		if creds, reissued, err = o.credentials(ctx, host, layout); err != nil {
			return err
		}
		if reissued != nil {
			fmt.Fprintf(out, " (certificates reissued: %v; clients with certificates of the old CA need new ones)", reissued)
		}
		if err := host.ApplySecret(ctx, o.name, o.plane.CredentialsSecret(), creds.Data); err != nil {
			return err
		}
		return host.Apply(ctx, others)
	}); err != nil {
		return err
	}
	if err := step(out, "Creating federation component deployments", func() error {
		return host.Apply(ctx, workloads)
	}); err != nil {
		return err
	}
	server := "https://" + addrs.APIServer
	admin := creds.AdminKubeconfig(o.name, server)
	if err := step(out, "Updating kubeconfig", func() error {
		return addContext(o.pathOptions(), o.name, admin)
	}); err != nil {
		return err
	}
	if o.host.waitTimeout == 0 {
		fmt.Fprintf(out, "Federation API server will be running at: %s (not waited for: --wait-timeout=0)\n", server)
		return nil
	}
	fmt.Fprint(out, "Waiting for federation control plane to come up")
	if err := waitReady(ctx, admin, o.name, o.host.waitTimeout, out); err != nil {
		fmt.Fprintln(out, " failed")
		return fmt.Errorf("%w\nsee `kubectl --context=%s -n %s get pods`", err, o.hostClusterContext, o.plane.Namespace)
	}
	fmt.Fprintln(out, " done")
	if addrs.DNS != "" {
		fmt.Fprintf(out, "Federation DNS server for %s is answering at: %s\n", o.plane.DNSZone, addrs.DNS)
	}
	fmt.Fprintf(out, "Federation API server is running at: %s\n", server)
	return nil
}

// credentials are the plane's: those of an earlier init when they still
// fit the layout and this kubeconfig holds their admin (re-running init
// changes nothing), else new ones, keeping the encryption key; reissued
// says why an earlier Secret's were replaced.
func (o *initOptions) credentials(ctx context.Context, host *hostplane.Host, layout hostplane.Layout) (creds *hostplane.Credentials, reissued, err error) {
	existing, err := host.SecretData(ctx, o.plane.CredentialsSecret())
	if err != nil || existing == nil {
		creds, err = hostplane.IssueCredentials(layout, nil)
		return creds, nil, err
	}
	// A federation made before service-account tokens gets its key
	// without a new CA; reissued credentials keep the key, so tokens
	// already handed out stay valid.
	if err := hostplane.EnsureServiceAccountKey(existing); err != nil {
		return nil, nil, err
	}
	if reissued = hostplane.Reusable(existing, layout); reissued == nil {
		cfg, err := o.pathOptions().GetStartingConfig()
		if err != nil {
			return nil, nil, fmt.Errorf("reading kubeconfig: %w", err)
		}
		user := cfg.AuthInfos[o.name]
		if user == nil || hostplane.SignedBy(user.ClientCertificateData, existing[hostplane.KeyCA]) != nil {
			return nil, nil, fmt.Errorf("federation %q already runs in namespace %s of %s, and this kubeconfig has no admin credentials of it (user %q with a certificate of its CA): run init where it was created, or `kubefed delete %s --host-cluster-context=%s` first",
				o.name, o.plane.Namespace, o.hostClusterContext, o.name, o.name, o.hostClusterContext)
		}
		return &hostplane.Credentials{Data: existing, AdminCert: user.ClientCertificateData, AdminKey: user.ClientKeyData}, nil, nil
	}
	creds, err = hostplane.IssueCredentials(layout, existing)
	return creds, reissued, err
}

// waitReady polls the federation's /readyz through its new context,
// printing a dot a try.
func waitReady(ctx context.Context, admin *clientcmdapi.Config, name string, timeout time.Duration, out io.Writer) error {
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*admin, name, nil, nil).ClientConfig()
	if err != nil {
		return err
	}
	cfg.Timeout = 5 * time.Second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return poll.UntilEvery(ctx, timeout, 2*time.Second, "federation "+name+" at "+cfg.Host+" to be ready", func(ctx context.Context) error {
		fmt.Fprint(out, ".")
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}

// named are the objects of kind among objs with one of names.
func named(objs []*unstructured.Unstructured, kind string, names ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, obj := range objs {
		for _, n := range names {
			if obj.GetKind() == kind && obj.GetName() == n {
				out = append(out, obj)
			}
		}
	}
	return out
}

// workloadKinds run the pods; they come last, once what they mount exists.
var workloadKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "Job": true}

func splitWorkloads(objs []*unstructured.Unstructured) (workloads, others []*unstructured.Unstructured) {
	for _, obj := range objs {
		if workloadKinds[obj.GetKind()] {
			workloads = append(workloads, obj)
		} else {
			others = append(others, obj)
		}
	}
	return workloads, others
}

// dryRunHost prints every object init would create, as YAML, the
// credentials redacted; it creates nothing and reads at most the host's
// discovery (for the chart's .Capabilities).
func (o *initOptions) dryRunHost(ctx context.Context, out io.Writer, chart *hostplane.Chart) error {
	caps, capsErr := o.hostCapabilities()
	values, err := chart.Coalesce(o.plane.Values(hostplane.Addresses{}))
	if err != nil {
		return err
	}
	objs, err := chart.Render(o.name, o.plane.Namespace, values, caps)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "# kubefed init %s --host-cluster-context=%s --dry-run: nothing was created.\n", o.name, o.hostClusterContext)
	fmt.Fprintf(out, "# The credentials are issued at init, with the Services' external addresses in the\n# apiserver's certificate; init then adds the kubeconfig context %q.\n", o.name)
	if capsErr != nil {
		fmt.Fprintf(out, "# The host's APIs were not read (%v): rendered for Helm's default capabilities.\n", capsErr)
	}
	redacted := map[string]any{}
	for _, k := range hostplane.SecretKeys {
		redacted[k] = "<issued by kubefed init>"
	}
	secret := map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": o.plane.CredentialsSecret(), "namespace": o.plane.Namespace,
			"labels": map[string]any{hostplane.LabelName: hostplane.AppName, hostplane.LabelInstance: o.name}},
		"stringData": redacted,
	}
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": o.plane.Namespace}}
	docs := []map[string]any{ns, secret}
	for _, obj := range objs {
		docs = append(docs, obj.Object)
	}
	for _, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "---\n%s", b)
	}
	return nil
}

// hostCapabilities reads the host's APIs for a dry run; nil on failure.
func (o *initOptions) hostCapabilities() (*chartutil.Capabilities, error) {
	cfg, err := o.restConfigFor(o.hostClusterContext)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = preflightTimeout
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return hostplane.Capabilities(client.Discovery())
}

// hostFlagsWithLocal names the host-only flags given with --local.
func (o *initOptions) hostFlagsWithLocal() error {
	var given []string
	for _, f := range hostOnlyFlags {
		if o.flags.Changed(f) {
			given = append(given, "--"+f)
		}
	}
	if len(given) == 0 {
		return nil
	}
	return fmt.Errorf("%s: only for a plane in a host cluster (--host-cluster-context), not --local", strings.Join(given, ", "))
}
