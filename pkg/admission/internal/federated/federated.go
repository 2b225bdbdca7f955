// Package federated serves the federation's admission plugins: whether an
// object would reach the members at all (Propagated), and the Namespaces
// and ServiceAccounts at the federation that a propagated object may name
// (Lookup). A name that resolves to nothing at the federation resolves, in
// each member, to whatever that cluster has of its own under that name.
package federated

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Propagated reports whether obj, of resource gr in namespace ns, would be
// propagated with the defaults: not in (or, for a Namespace, not) a
// never-propagated namespace, not labelled local, and not a token Secret
// or a Secret of a type of federatedtypes.DefaultLocalSecretTypes. federatedtypes.Local
// knows the Secret types of external objects only; admission sees internal
// ones. The controller manager's --local-secret-types may keep more
// Secrets at the federation: the apiserver does not know it, so it checks
// them as if they were propagated.
func Propagated(gr schema.GroupResource, ns string, obj metav1.Object) bool {
	if federatedtypes.NeverPropagated(gr, ns, obj.GetName()) || federatedtypes.Local(obj) {
		return false
	}
	if s, ok := obj.(*api.Secret); ok && federatedtypes.LocalSecretType(string(s.Type), federatedtypes.DefaultLocalSecretTypes) {
		return false
	}
	return true
}

// Lookup finds Namespaces and ServiceAccounts at the federation: in the
// informer caches, else by a live read, as Kubernetes' ServiceAccount
// plugin does, so that what was created a moment ago (one `kubectl apply`
// of a namespace, its service account and a Deployment) is found. Embedded
// in a plugin, it takes the informers and client from the generic plugin
// initializer.
type Lookup struct {
	namespaces      corev1listers.NamespaceLister
	serviceAccounts corev1listers.ServiceAccountLister
	client          kubernetes.Interface
}

// SetExternalKubeInformerFactory implements initializer.WantsExternalKubeInformerFactory.
func (l *Lookup) SetExternalKubeInformerFactory(f informers.SharedInformerFactory) {
	l.namespaces = f.Core().V1().Namespaces().Lister()
	l.serviceAccounts = f.Core().V1().ServiceAccounts().Lister()
}

// SetExternalKubeClientSet implements initializer.WantsExternalKubeClientSet.
func (l *Lookup) SetExternalKubeClientSet(c kubernetes.Interface) {
	l.client = c
}

// ValidateInitialization implements admission.InitializationValidator.
func (l *Lookup) ValidateInitialization() error {
	if l.namespaces == nil || l.serviceAccounts == nil || l.client == nil {
		return fmt.Errorf("missing the informers or the client to look up namespaces and service accounts")
	}
	return nil
}

// Namespace returns the Namespace name, or nil if there is none.
func (l *Lookup) Namespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	if l.namespaces == nil {
		return nil, fmt.Errorf("no namespace lister")
	}
	return get(func() (*corev1.Namespace, error) { return l.namespaces.Get(name) },
		func() (*corev1.Namespace, error) {
			return l.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		})
}

// ServiceAccount returns the ServiceAccount ns/name, or nil if there is none.
func (l *Lookup) ServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	if l.serviceAccounts == nil {
		return nil, fmt.Errorf("no service account lister")
	}
	return get(func() (*corev1.ServiceAccount, error) { return l.serviceAccounts.ServiceAccounts(ns).Get(name) },
		func() (*corev1.ServiceAccount, error) {
			return l.client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		})
}

// get reads from the cache, then live when the cache has nothing; not
// found is (nil, nil).
func get[T any](cached, live func() (*T, error)) (*T, error) {
	obj, err := cached()
	if apierrors.IsNotFound(err) {
		obj, err = live()
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return obj, err
}
