package serviceaccounttoken

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// The conversions from the stores' internal objects to v1.
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/serviceaccount"
)

// Objects reads ServiceAccounts and Secrets straight from the server's
// storage, for the authenticator (which Kubernetes' validators call for
// every token) and for TokenRequests bound to a Secret. It reads the watch
// cache (resourceVersion 0), as kube-apiserver reads its informers: no
// request through the loopback client, no second copy of every Secret in
// memory. The authenticator is made before the storage, so the stores are
// bound once built (Bind); before that every lookup fails, and so does
// every service-account token (401).
//
// There are no pods or nodes at the federation: a token bound to one was
// never issued here, and GetPod and GetNode find none.
type Objects struct {
	mu       sync.RWMutex
	accounts rest.Getter
	secrets  rest.Getter
}

var _ serviceaccount.ServiceAccountTokenGetter = &Objects{}

// Bind gives Objects the storage of ServiceAccounts and Secrets.
func (o *Objects) Bind(accounts, secrets rest.Getter) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.accounts, o.secrets = accounts, secrets
}

func (o *Objects) stores() (accounts, secrets rest.Getter) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.accounts, o.secrets
}

// GetServiceAccount reads namespace/name.
func (o *Objects) GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	accounts, _ := o.stores()
	out := &corev1.ServiceAccount{}
	return out, read(ctx, accounts, "serviceaccounts", namespace, name, out)
}

// GetSecret reads namespace/name.
func (o *Objects) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	_, secrets := o.stores()
	out := &corev1.Secret{}
	return out, read(ctx, secrets, "secrets", namespace, name, out)
}

// GetPod finds none: the federation runs no pods.
func (o *Objects) GetPod(_ context.Context, _, name string) (*corev1.Pod, error) {
	return nil, apierrors.NewNotFound(corev1.Resource("pods"), name)
}

// GetNode finds none: the federation has no nodes.
func (o *Objects) GetNode(_ context.Context, name string) (*corev1.Node, error) {
	return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
}

// Secrets reads Secrets through the bound store, for TokenREST (bound
// tokens).
func (o *Objects) Secrets() rest.Getter { return boundSecrets{o} }

type boundSecrets struct{ o *Objects }

func (b boundSecrets) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	_, secrets := b.o.stores()
	if secrets == nil {
		return nil, apierrors.NewServiceUnavailable("the Secrets' storage is not ready")
	}
	return secrets.Get(ctx, name, options)
}

// read gets namespace/name from store into out, converted from the
// storage's internal version.
func read(ctx context.Context, store rest.Getter, resource, namespace, name string, out runtime.Object) error {
	if store == nil {
		return fmt.Errorf("the %s' storage is not ready", resource)
	}
	obj, err := store.Get(genericapirequest.WithNamespace(ctx, namespace), name, &metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	if err := legacyscheme.Scheme.Convert(obj, out, nil); err != nil {
		return fmt.Errorf("converting %s %s/%s: %w", resource, namespace, name, err)
	}
	return nil
}
