package apiserver

import (
	"fmt"

	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"
)

// startRoleAggregation runs Kubernetes' cluster role aggregation
// controller against this server: admin, edit and view get their rules
// from the roles labelled to aggregate into them (Kubernetes' own and
// system:federation:aggregate-to-view), as kube-controller-manager does
// for a cluster. It runs here because no kube-controller-manager runs
// against the federation, and the federation's controller manager must
// not be able to write roles.
func startRoleAggregation(ctx genericapiserver.PostStartHookContext, factory informers.SharedInformerFactory) error {
	client, err := kubernetes.NewForConfig(ctx.LoopbackClientConfig)
	if err != nil {
		return fmt.Errorf("creating the role aggregation controller's client: %w", err)
	}
	controller := clusterroleaggregation.NewClusterRoleAggregation(factory.Rbac().V1().ClusterRoles(), client.RbacV1())
	factory.Start(ctx.Done())
	go controller.Run(ctx, 1)
	return nil
}
