package app

import (
	"context"

	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/federation-v1/federation/pkg/controllers/cluster"
	"github.com/federation-v1/federation/pkg/controllers/servicedns"
	"github.com/federation-v1/federation/pkg/generated/clientset/versioned"
	fedinformers "github.com/federation-v1/federation/pkg/generated/informers/externalversions"
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
	Recorder      record.EventRecorder
}

// initFunc builds a controller and returns the function that runs it, or a
// nil function when the controller is not configured to run.
type initFunc func(ctx context.Context, cc *ControllerContext) (run func(ctx context.Context) error, err error)

// controllers by name; each package exports its Name.
var controllers = map[string]initFunc{
	cluster.Name: func(_ context.Context, cc *ControllerContext) (func(context.Context) error, error) {
		c, err := cluster.New(cc.FedClient, cc.FedInformers.Federation().V1beta1().Clusters(),
			cc.SystemInformers.Core().V1().Secrets(), cc.Recorder, cc.Options.Cluster)
		if err != nil {
			return nil, err
		}
		return c.Run, nil
	},
	servicedns.Name: startServiceDNS,
}
