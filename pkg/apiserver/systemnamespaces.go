package apiserver

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// systemNamespaces exist in every federation, as kube-apiserver keeps them:
// "default", kubectl's default namespace and the home of events about
// cluster-scoped objects (Clusters); kube-system, kube-public and
// kube-node-lease, where charts and tools (argocd cluster add) put their
// objects, local to the federation and never propagated
// (federatedtypes.DefaultNeverPropagatedNamespaces); and the federation's
// own namespace for member credentials.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease, federationv1beta1.SystemNamespace}

// systemNamespacesHook creates the system namespaces, and keeps re-creating
// them every minute should one be deleted, like kube-apiserver's system
// namespaces controller.
func systemNamespacesHook(ctx genericapiserver.PostStartHookContext) error {
	client, err := kubernetes.NewForConfig(ctx.LoopbackClientConfig)
	if err != nil {
		return err
	}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		// Retry quickly at start-up, when the storage may still be warming up.
		_ = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
			return ensureNamespaces(ctx, client) == nil, nil
		})
	}, time.Minute)
	return nil
}

func ensureNamespaces(ctx context.Context, client kubernetes.Interface) error {
	for _, name := range systemNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			klog.FromContext(ctx).Error(err, "Creating a system namespace", "namespace", name)
			return err
		}
	}
	return nil
}
