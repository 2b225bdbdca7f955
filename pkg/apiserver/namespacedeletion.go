package apiserver

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
)

// namespaceDeletionWorkers is how many namespaces are emptied at once.
const namespaceDeletionWorkers = 2

// newNamespaceDeletion makes Kubernetes' namespace controller for this
// server, on the informers of factory (the caller starts them): when a
// namespace is deleted, it deletes everything in it and then removes the
// "kubernetes" finalizer, so the namespace goes away as in a Kubernetes
// cluster (without it, a deleted namespace stays Terminating). Propagating
// the deletion to member clusters is the controller manager's job, with a
// finalizer of its own. Only the apiserver leading the apiservers'
// controllers runs it (electedControllers).
func newNamespaceDeletion(ctx context.Context, loopback *rest.Config, factory informers.SharedInformerFactory) (*namespacecontroller.NamespaceController, error) {
	config := rest.CopyConfig(loopback)
	// Listing extensions/v1beta1 resources draws deprecation warnings that
	// mean nothing to the controller.
	config.WarningHandler = rest.NoWarnings{}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("creating the namespace controller's client: %w", err)
	}
	metadataClient, err := metadata.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("creating the namespace controller's metadata client: %w", err)
	}
	return namespacecontroller.NewNamespaceController(ctx, client, metadataClient,
		client.Discovery().ServerPreferredNamespacedResources,
		factory.Core().V1().Namespaces(), 5*time.Minute, corev1.FinalizerKubernetes), nil
}
