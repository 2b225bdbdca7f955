package app

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/capacity"
	"github.com/federation-v1/federation/pkg/controllers/agentcerts"
	"github.com/federation-v1/federation/pkg/controllers/clusterstatus"
	"github.com/federation-v1/federation/pkg/controllers/customresources"
	"github.com/federation-v1/federation/pkg/controllers/deploymenthistory"
	"github.com/federation-v1/federation/pkg/controllers/dnspublisher"
	"github.com/federation-v1/federation/pkg/controllers/federationquota"
	"github.com/federation-v1/federation/pkg/controllers/memberevents"
	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/controllers/servicedns"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/poll"
)

// ControllerContext is what every controller is built from.
type ControllerContext struct {
	Options *Options
	// FedClient and KubeClient talk to the federation apiserver.
	FedClient  versioned.Interface
	KubeClient kubernetes.Interface
	// FedInformers watch the federation group; SystemInformers watch the
	// federation-system namespace (member credentials).
	FedInformers    fedinformers.SharedInformerFactory
	SystemInformers kubeinformers.SharedInformerFactory
	// KubeInformers watch the federated Kubernetes objects in every namespace.
	KubeInformers kubeinformers.SharedInformerFactory
	// TombstoneInformers watch the tombstones of deleted federated objects
	// (ConfigMaps in federation-system, propagation.TombstoneSelector).
	TombstoneInformers kubeinformers.SharedInformerFactory
	Recorder           record.EventRecorder
	// FedDynamic and DynamicInformers reach every federated type.
	FedDynamic       dynamic.Interface
	DynamicInformers dynamicinformer.DynamicSharedInformerFactory
	// FederationConfig is the controller manager's own configuration for
	// the federation apiserver: agent members are reached through it.
	FederationConfig *rest.Config
	// FederationUID is the federation's identity (federationUID), read
	// once at start.
	FederationUID string
	// Members owns the member clusters' clients and caches; made by the
	// first propagation controller, run once by the controller manager.
	Members *membercluster.Manager
	// Capacity estimates what members can schedule of divided workloads;
	// made with the first such controller.
	Capacity *capacity.Estimator
	// CustomResources starts the custom resources' controllers; made by
	// the first of it and the CRDs' controller, whose deletions wait for it.
	CustomResources *customresources.Controller
}

// capacity returns the capacity estimator, making it (and the watch of the
// members' pending pods of federated workloads) the first time.
func (cc *ControllerContext) capacity(members *membercluster.Manager) *capacity.Estimator {
	if cc.Capacity == nil {
		cc.Capacity = capacity.New(cc.Options.Propagation.UnschedulableWindow, func(cluster, ns, name string) bool {
			_, ok := members.Get(cluster, membercluster.PodsResource, ns, name)
			return ok
		})
		members.Watch(membercluster.PodsResource, cc.Capacity)
	}
	return cc.Capacity
}

// members returns the member manager, making it the first time.
func (cc *ControllerContext) members() (*membercluster.Manager, error) {
	if cc.Members == nil {
		m, err := membercluster.NewManager(cc.Options.FederationName, cc.FederationUID, cc.FedInformers.Federation().V1beta1().Clusters(),
			cc.SystemInformers.Core().V1().Secrets())
		if err != nil {
			return nil, err
		}
		m.ReachAgentsThrough(cc.FederationConfig)
		cc.Members = m
	}
	return cc.Members, nil
}

// federationUID reads the federation's identity: the UID of its
// federation-system namespace, which the apiserver creates on its first
// start (it is waited for) and which lives as long as the federation's
// data. Member copies carry it, so that two federations of one name
// joined to the same member do not take each other's copies for their own.
func federationUID(ctx context.Context, client kubernetes.Interface) (string, error) {
	var uid string
	err := poll.Until(ctx, 5*time.Minute, "namespace "+federationv1beta1.SystemNamespace+" at the federation apiserver", func(ctx context.Context) error {
		ns, err := client.CoreV1().Namespaces().Get(ctx, federationv1beta1.SystemNamespace, metav1.GetOptions{})
		if err != nil {
			return err
		}
		uid = string(ns.UID)
		return nil
	})
	return uid, err
}

// initFunc builds a controller and returns the function that runs it, or a
// nil function when the controller is not configured to run.
type initFunc func(ctx context.Context, cc *ControllerContext) (run func(ctx context.Context) error, err error)

// controllers are every controller by name (each package exports its
// Name): the one list of them.
var controllers = registry()

func registry() map[string]initFunc {
	out := map[string]initFunc{
		clusterstatus.Name: func(_ context.Context, cc *ControllerContext) (func(context.Context) error, error) {
			c, err := clusterstatus.New(cc.FedClient, cc.FedInformers.Federation().V1beta1().Clusters(),
				cc.SystemInformers.Core().V1().Secrets(), cc.Recorder, cc.Options.Cluster)
			if err != nil {
				return nil, err
			}
			c.ReachAgentsThrough(cc.FederationConfig)
			return c.Run, nil
		},
		servicedns.Name: startServiceDNS,
		// Federation agents' client certificates (issue 36): approval of
		// their requests, signing with the agents CA.
		agentcerts.Name: startAgentCerts,
		// The DNS zone and server kubefed join reads (federation-system/federation-dns).
		dnspublisher.Name: startDNSPublisher,
		// Deployments' revision history at the federation (kubectl rollout
		// history/undo, the rollback subresource, Helm's --wait).
		deploymenthistory.Name: func(_ context.Context, cc *ControllerContext) (func(context.Context) error, error) {
			c, err := deploymenthistory.New(cc.KubeClient, cc.KubeInformers.Apps().V1().Deployments(), resync, cc.Recorder, 4)
			if err != nil {
				return nil, err
			}
			return c.Run, nil
		},
		// The federation's own object counts in ResourceQuotas' status.
		federationquota.Name: startQuotaUsage,
		// CRDs are propagated as one more type; the custom resources of
		// each CRD by a propagation controller that customresources.Name
		// starts at run time, named in --controllers by the CRD's name,
		// <plural>.<group>.
		customresources.CRDsName: startCRDs,
		customresources.Name:     startCustomResources,
		// The members' Warning events about copies, on the federated objects.
		memberevents.Name: startMemberEvents,
	}
	// One propagation controller per federated type.
	for _, a := range federatedtypes.All {
		out[a.Name] = propagationInit(a)
	}
	return out
}

// startMemberEvents runs the controller that brings the members' events
// about copies (and what they own) to the federated objects.
func startMemberEvents(_ context.Context, cc *ControllerContext) (func(context.Context) error, error) {
	members, err := cc.members()
	if err != nil {
		return nil, err
	}
	fedMetadata, err := metadata.NewForConfig(cc.FederationConfig)
	if err != nil {
		return nil, err
	}
	c, err := memberevents.New(members, cc.KubeClient.CoreV1(), fedMetadata, memberevents.Options{
		Types:                     cc.Options.MemberEvents,
		Timeout:                   cc.Options.Propagation.MemberTimeout,
		NeverPropagatedNamespaces: cc.Options.Propagation.NeverPropagatedNamespaces,
	})
	if err != nil {
		return nil, err
	}
	return c.Run, nil
}

// propagationInit makes the init function of the propagation controller of one type.
func propagationInit(a *federatedtypes.Type) initFunc {
	return func(_ context.Context, cc *ControllerContext) (func(context.Context) error, error) {
		members, err := cc.members()
		if err != nil {
			return nil, err
		}
		c, err := propagation.New(a, cc.FedDynamic, cc.DynamicInformers.ForResource(a.Resource), members, cc.Recorder, cc.Options.Propagation)
		if err != nil {
			return nil, err
		}
		if err := c.WatchTombstones(cc.TombstoneInformers.Core().V1().ConfigMaps()); err != nil {
			return nil, err
		}
		if a.Replicas != nil {
			c.SetCapacity(cc.capacity(members))
		}
		return c.Run, nil
	}
}
