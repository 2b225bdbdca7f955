package apiserver

import (
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/controller/clusterroleaggregation"
)

// newRoleAggregation makes Kubernetes' cluster role aggregation controller
// for this server, on the informers of factory (the caller starts them):
// admin, edit and view get their rules from the roles labelled to
// aggregate into them (Kubernetes' own and
// system:federation:aggregate-to-view), as kube-controller-manager does for
// a cluster. It runs here because no kube-controller-manager runs against
// the federation, and the federation's controller manager must not be
// able to write roles. Only the apiserver leading the apiservers'
// controllers runs it (electedControllers).
func newRoleAggregation(client kubernetes.Interface, factory informers.SharedInformerFactory) *clusterroleaggregation.ClusterRoleAggregationController {
	return clusterroleaggregation.NewClusterRoleAggregation(factory.Rbac().V1().ClusterRoles(), client.RbacV1())
}
