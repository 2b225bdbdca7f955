// Package app holds the federation-controller-manager command: its options,
// the registry of controllers, and the process that runs them.
package app

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/clusterhealth"
	"github.com/federation-v1/federation/pkg/controllers/clusterstatus"
	"github.com/federation-v1/federation/pkg/controllers/memberevents"
	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Options are the command-line options.
type Options struct {
	// Kubeconfig and Master locate the federation apiserver.
	Kubeconfig string
	Master     string
	// Controllers to run: "*" for all, "name" to add, "-name" to remove.
	Controllers []string
	// Serving serves /healthz, /metrics and /debug/pprof/ over HTTPS.
	Serving ServingOptions
	// Cluster tunes the cluster health controller.
	Cluster clusterstatus.Options
	// QPS and Burst limit the controller manager's calls to the federation
	// apiserver.
	QPS   float32
	Burst int
	// Propagation tunes the propagation controllers of the federated types.
	Propagation propagation.Options
	// FederationName is the federation's name, as in its DNS names, and
	// the value of the label on member copies of federated objects.
	FederationName string
	// DNS configures the service DNS controller; it runs only with a provider config.
	DNS DNSOptions
	// LeaderElection elects the one controller manager of several that runs
	// the controllers, with kube-controller-manager's flags and defaults.
	LeaderElection componentbaseconfig.LeaderElectionConfiguration
	// ShutdownTimeout bounds how long the controllers may take to stop.
	ShutdownTimeout time.Duration
	// AgentCerts configures the agents' client certificates.
	AgentCerts AgentCertsOptions
	// MemberEvents are the member events brought to the federated objects:
	// memberevents.TypesWarning or TypesAll.
	MemberEvents string
}

// DNSOptions say where the service DNS records go.
type DNSOptions struct {
	// Provider is the DNS provider: coredns.
	Provider string
	// ProviderConfig is a v1 coredns-provider.conf (etcd endpoints, zones).
	ProviderConfig string
	// ZoneName is the zone the names live in; default the config's first zone.
	ZoneName string
	// TTL of the records in seconds.
	TTL int64
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		Controllers:    []string{"*"},
		Serving:        newServingOptions(),
		FederationName: "federation",
		DNS:            DNSOptions{Provider: "coredns", TTL: 180},
		Cluster: clusterstatus.Options{
			Period:     10 * time.Second,
			Timeout:    5 * time.Second,
			Thresholds: clusterhealth.DefaultThresholds,
			Workers:    10,
		},
		QPS:             100,
		Burst:           200,
		LeaderElection:  defaultLeaderElection(),
		ShutdownTimeout: 30 * time.Second,
		AgentCerts:      AgentCertsOptions{Duration: 24 * time.Hour},
		MemberEvents:    memberevents.TypesWarning,
		Propagation: propagation.Options{
			// Per type: objects reconciled in parallel, and writes in flight
			// per member (enough to keep its client's QPS busy: make bench).
			Workers:       20,
			MemberTimeout: 10 * time.Second,
			DeletionWait:  2 * time.Minute,
			// v1's threshold for pods that cannot be scheduled.
			UnschedulableWindow:       time.Minute,
			NeverPropagatedNamespaces: append([]string(nil), federatedtypes.DefaultNeverPropagatedNamespaces...),
			DefaultConflictResolution: federationv1beta1.ConflictResolutionAbort,
			LocalSecretTypes:          append([]string(nil), federatedtypes.DefaultLocalSecretTypes...),
			UnheldReferenceRecheck:    time.Minute,
		},
	}
}

// AddFlags adds the options' flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig of the federation apiserver (its current context is used)")
	fs.StringVar(&o.Master, "master", o.Master, "address of the federation apiserver; overrides the kubeconfig's")
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf(
		"controllers to run: '*' runs all, 'foo' adds foo, '-foo' removes foo; a CRD's custom resources are named by the CRD, '<plural>.<group>' (customresources covers all of them). All: %v", sets.List(sets.KeySet(controllers))))
	o.Serving.addFlags(fs)
	fs.DurationVar(&o.Cluster.Period, "cluster-monitor-period", o.Cluster.Period, "how often each member cluster's health is probed")
	fs.DurationVar(&o.Cluster.Timeout, "cluster-probe-timeout", o.Cluster.Timeout, "how long one health probe may take")
	fs.IntVar(&o.Cluster.Thresholds.Failure, "cluster-failure-threshold", o.Cluster.Thresholds.Failure, "consecutive failed probes before a Ready cluster is marked NotReady or Offline")
	fs.IntVar(&o.Cluster.Thresholds.Success, "cluster-success-threshold", o.Cluster.Thresholds.Success, "consecutive good probes before a cluster is marked Ready again")
	fs.IntVar(&o.Cluster.Workers, "concurrent-cluster-syncs", o.Cluster.Workers, "clusters probed in parallel")
	fs.Float32Var(&o.QPS, "federation-api-qps", o.QPS, "queries per second to the federation apiserver")
	fs.IntVar(&o.Burst, "federation-api-burst", o.Burst, "burst of queries to the federation apiserver")
	fs.IntVar(&o.Propagation.Workers, "concurrent-object-syncs", o.Propagation.Workers, "federated objects of one type reconciled in parallel, and member writes of that type in flight per member cluster")
	fs.DurationVar(&o.Propagation.MemberTimeout, "member-timeout", o.Propagation.MemberTimeout, "timeout of every call to a member cluster")
	fs.DurationVar(&o.Propagation.DeletionWait, "deletion-wait", o.Propagation.DeletionWait, "how long a deletion waits for a selected cluster that is not Ready before giving up on its copy")
	fs.DurationVar(&o.Propagation.UnschedulableWindow, "unschedulable-pod-window", o.Propagation.UnschedulableWindow, "how long pods of a federated Deployment, ReplicaSet or Job may stay unschedulable in a member before its capacity there is lowered and the surplus re-planned onto other clusters (the estimate holds for 5 times this)")
	fs.StringSliceVar(&o.Propagation.NeverPropagatedNamespaces, "never-propagated-namespaces", o.Propagation.NeverPropagatedNamespaces, "namespaces whose objects, and the federated Namespaces of those names, are never propagated to member clusters, with a NotPropagated event; federation-system, the federation's own, is always one of them (silently)")
	fs.StringVar(&o.Propagation.DefaultConflictResolution, "default-conflict-resolution", o.Propagation.DefaultConflictResolution, "what to do with a member object of a federated object's name that this federation did not create, unless the federated object's "+federationv1beta1.ConflictResolutionAnnotation+" annotation says: abort (leave it, report the conflict) or adopt (take it over, as Federation v1 did)")
	fs.StringSliceVar(&o.Propagation.LocalSecretTypes, "local-secret-types", o.Propagation.LocalSecretTypes, "types of the Secrets that stay at the federation and are never propagated, as those labelled "+federationv1beta1.LocalLabel+"=true (the default keeps Helm v3's release records out of the members); empty for none")
	fs.DurationVar(&o.Propagation.UnheldReferenceRecheck, "optional-reference-recheck", o.Propagation.UnheldReferenceRecheck, "how often the member objects that copies in sync may use and the federation does not hold there (optional references: optional: true, an Ingress's backend Services, an ExternalName's Service; the claims a StatefulSet's next pods would use) are looked for: a copy using one the member made meanwhile is removed from it. A round is one metadata LIST per member, namespace and resource (at most 100 per type a round, namespaces in turn); 0 never")
	fs.StringVar(&o.FederationName, "federation-name", o.FederationName, "name of the federation, as in its DNS names (SERVICE.NAMESPACE.FEDERATION.svc.ZONE) and in the "+federationv1beta1.FederationLabel+" label on member copies")
	fs.StringVar(&o.DNS.Provider, "dns-provider", o.DNS.Provider, "DNS provider of the service DNS records: coredns")
	fs.StringVar(&o.DNS.ProviderConfig, "dns-provider-config", o.DNS.ProviderConfig, "coredns-provider.conf (v1 format: etcd-endpoints, zones, coredns-endpoints); without it the service-dns controller does not run")
	fs.StringVar(&o.DNS.ZoneName, "dns-zone-name", o.DNS.ZoneName, "DNS zone of the federation, e.g. example.com. (default: the provider config's first zone)")
	fs.Int64Var(&o.DNS.TTL, "dns-ttl", o.DNS.TTL, "TTL in seconds of the service DNS records")
	fs.StringVar(&o.MemberEvents, "member-events", o.MemberEvents, "the member clusters' events about federated objects' copies (and what they own: ReplicaSets, Pods) that the "+memberevents.Name+" controller brings to the federated objects: "+memberevents.TypesWarning+" or "+memberevents.TypesAll+" (Normal ones too)")
	o.AgentCerts.addFlags(fs)
	componentbaseoptions.BindLeaderElectionFlags(&o.LeaderElection, fs)
	fs.DurationVar(&o.ShutdownTimeout, "controller-shutdown-timeout", o.ShutdownTimeout, "how long the controllers may take to stop on SIGTERM or SIGINT (or when one fails) before the controller manager exits with an error")
}

// Validate returns every problem of the options at once.
func (o *Options) Validate() error {
	var errs []error
	if o.Kubeconfig == "" && o.Master == "" {
		errs = append(errs, errors.New("--kubeconfig or --master is required to reach the federation apiserver"))
	}
	for _, c := range o.Controllers {
		name := c
		if len(c) > 0 && c[0] == '-' {
			name = c[1:]
		}
		if crd, bad := customResourceController(name); crd {
			if bad != "" {
				errs = append(errs, fmt.Errorf("--controllers: %q is no custom resource's <plural>.<group>: %s", name, bad))
			}
			continue
		}
		if _, ok := controllers[name]; !ok && name != "*" {
			errs = append(errs, fmt.Errorf("--controllers: unknown controller %q (known: %v)", name, sets.List(sets.KeySet(controllers))))
		}
	}
	errs = append(errs, o.Serving.validate()...)
	if o.Cluster.Period <= 0 || o.Cluster.Timeout <= 0 {
		errs = append(errs, errors.New("--cluster-monitor-period and --cluster-probe-timeout must be positive"))
	}
	if o.Cluster.Thresholds.Failure < 1 || o.Cluster.Thresholds.Success < 1 {
		errs = append(errs, errors.New("--cluster-failure-threshold and --cluster-success-threshold must be at least 1"))
	}
	if o.Propagation.UnschedulableWindow <= 0 {
		errs = append(errs, errors.New("--unschedulable-pod-window must be positive"))
	}
	for _, ns := range o.Propagation.NeverPropagatedNamespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("--never-propagated-namespaces: %q is not a namespace name: %s", ns, msgs[0]))
		}
	}
	for _, t := range o.Propagation.LocalSecretTypes {
		if t == "" {
			errs = append(errs, errors.New("--local-secret-types: a Secret type must not be empty"))
		}
	}
	if o.Propagation.Workers < 1 || o.Propagation.MemberTimeout <= 0 || o.Propagation.DeletionWait < 0 || o.Propagation.UnheldReferenceRecheck < 0 {
		errs = append(errs, errors.New("--concurrent-object-syncs must be at least 1, --member-timeout positive, --deletion-wait and --optional-reference-recheck not negative"))
	}
	if r := o.Propagation.DefaultConflictResolution; r != federationv1beta1.ConflictResolutionAbort && r != federationv1beta1.ConflictResolutionAdopt {
		errs = append(errs, fmt.Errorf("--default-conflict-resolution %q: must be %s or %s", r, federationv1beta1.ConflictResolutionAbort, federationv1beta1.ConflictResolutionAdopt))
	}
	if len(validation.IsValidLabelValue(o.FederationName)) > 0 || o.FederationName == "" {
		errs = append(errs, fmt.Errorf("--federation-name %q must be a valid label value", o.FederationName))
	}
	if o.DNS.ProviderConfig != "" && o.DNS.Provider != "coredns" {
		errs = append(errs, fmt.Errorf("--dns-provider %q: only coredns is supported", o.DNS.Provider))
	}
	if o.DNS.TTL < 1 {
		errs = append(errs, fmt.Errorf("--dns-ttl %d: must be at least 1 second", o.DNS.TTL))
	}
	if o.Cluster.Workers < 1 {
		errs = append(errs, errors.New("--concurrent-cluster-syncs must be at least 1"))
	}
	if o.MemberEvents != memberevents.TypesWarning && o.MemberEvents != memberevents.TypesAll {
		errs = append(errs, fmt.Errorf("--member-events %q: want %s or %s", o.MemberEvents, memberevents.TypesWarning, memberevents.TypesAll))
	}
	errs = append(errs, o.AgentCerts.validate()...)
	errs = append(errs, validateLeaderElection(o.LeaderElection)...)
	if o.ShutdownTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--controller-shutdown-timeout %s: must be positive", o.ShutdownTimeout))
	}
	return errors.Join(errs...)
}

// enabled reports whether the controller name runs under --controllers.
func (o *Options) enabled(name string) bool {
	on := false
	for _, c := range o.Controllers {
		switch c {
		case "*":
			on = true
		case name:
			return true
		case "-" + name:
			return false
		}
	}
	return on
}
