package hostplane

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// FieldManager owns, in server-side apply, every field kubefed sets: a
// second init applies the same fields again, and takes back any that were
// changed by hand.
const FieldManager = "kubefed"

// Labels every chart object carries; instance is the federation's name.
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelComponent = "app.kubernetes.io/component"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// AppName is the chart's app.kubernetes.io/name.
	AppName = "federation"
)

// Host is the host cluster, in the namespace of the control plane.
type Host struct {
	Kube      kubernetes.Interface
	Dynamic   dynamic.Interface
	Mapper    meta.ResettableRESTMapper
	Namespace string
}

// NewHost returns the clients of the host cluster at cfg.
func NewHost(cfg *rest.Config, namespace string) (*Host, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery()))
	return &Host{Kube: kube, Dynamic: dyn, Mapper: mapper, Namespace: namespace}, nil
}

// EnsureNamespace creates the namespace, or leaves it as it is.
func (h *Host) EnsureNamespace(ctx context.Context) error {
	_, err := h.Kube.CoreV1().Namespaces().Apply(ctx, corev1ac.Namespace(h.Namespace), metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("namespace %s: %w", h.Namespace, err)
	}
	return nil
}

// resource is where obj's kind is served, with obj's namespace set to the
// plane's when the kind is namespaced.
func (h *Host) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := h.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		h.Mapper.Reset() // a CRD installed since the discovery was read
		m, err = h.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: the cluster does not serve it: %w", gvk.Kind, obj.GetName(), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		return h.Dynamic.Resource(m.Resource), nil
	}
	obj.SetNamespace(h.Namespace)
	return h.Dynamic.Resource(m.Resource).Namespace(h.Namespace), nil
}

// Apply applies objs server-side, in order.
func (h *Host) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		r, err := h.resource(obj)
		if err != nil {
			return err
		}
		if _, err := r.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", obj.GetKind(), h.Namespace, obj.GetName(), err)
		}
	}
	return nil
}

// Existing names ("Kind/name") those of objs that exist already.
func (h *Host) Existing(ctx context.Context, objs []*unstructured.Unstructured) ([]string, error) {
	var found []string
	for _, obj := range objs {
		r, err := h.resource(obj.DeepCopy())
		if err != nil {
			return nil, err
		}
		_, err = r.Get(ctx, obj.GetName(), metav1.GetOptions{})
		switch {
		case err == nil:
			found = append(found, obj.GetKind()+"/"+obj.GetName())
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading %s %s/%s: %w", obj.GetKind(), h.Namespace, obj.GetName(), err)
		}
	}
	return found, nil
}

// Remove deletes obj, which Apply applied; its dependents (a
// Deployment's pods) go in the background. It is gone already: nil.
func (h *Host) Remove(ctx context.Context, obj *unstructured.Unstructured) error {
	r, err := h.resource(obj.DeepCopy())
	if err != nil {
		return err
	}
	background := metav1.DeletePropagationBackground
	err = r.Delete(ctx, obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting %s %s/%s: %w", obj.GetKind(), h.Namespace, obj.GetName(), err)
	}
	return nil
}

// ApplySecret applies the credentials Secret of federation name.
func (h *Host) ApplySecret(ctx context.Context, name, secret string, data map[string][]byte) error {
	s := corev1ac.Secret(secret, h.Namespace).
		WithLabels(map[string]string{LabelName: AppName, LabelInstance: name, LabelComponent: "credentials", LabelManagedBy: FieldManager}).
		WithType(corev1.SecretTypeOpaque).WithData(data)
	if _, err := h.Kube.CoreV1().Secrets(h.Namespace).Apply(ctx, s, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
		return fmt.Errorf("applying Secret %s/%s: %w", h.Namespace, secret, err)
	}
	return nil
}

// SecretData is the data of Secret name, nil when there is none.
func (h *Host) SecretData(ctx context.Context, name string) (map[string][]byte, error) {
	s, err := h.Kube.CoreV1().Secrets(h.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Secret %s/%s: %w", h.Namespace, name, err)
	}
	return s.Data, nil
}

// RefuseOthers fails, naming them, when objects of the kinds in objs in
// the namespace belong to another federation than name: one namespace
// holds one federation.
func (h *Host) RefuseOthers(ctx context.Context, name string, objs []*unstructured.Unstructured) error {
	selector := fmt.Sprintf("%s=%s,%s,%s!=%s", LabelName, AppName, LabelInstance, LabelInstance, name)
	seen := map[schema.GroupVersionKind]bool{}
	var found []string
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if seen[gvk] {
			continue
		}
		seen[gvk] = true
		r, err := h.resource(obj.DeepCopy())
		if err != nil {
			return err
		}
		list, err := r.List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return fmt.Errorf("listing %s in %s: %w", gvk.Kind, h.Namespace, err)
		}
		for _, o := range list.Items {
			found = append(found, fmt.Sprintf("%s/%s (federation %s)", gvk.Kind, o.GetName(), o.GetLabels()[LabelInstance]))
		}
	}
	if len(found) == 0 {
		return nil
	}
	sort.Strings(found)
	return fmt.Errorf("namespace %s holds another federation's objects: %s; use another --federation-system-namespace, or `kubefed delete` that federation",
		h.Namespace, strings.Join(found, ", "))
}
