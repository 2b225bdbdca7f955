package writer

import (
	"context"
	"fmt"
	"reflect"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/federation-v1/federation/pkg/controllers/propagation/writer/internal/queues"
	"github.com/federation-v1/federation/pkg/membercluster"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// The federation writes Roles and RoleBindings in a member only in the
// namespaces it created there (package memberrbac): such a namespace is
// marked with memberrbac.CreatedByLabel as it is created, and the
// federation's RBAC rights there come from a RoleBinding it makes in it,
// when it first writes a Role or RoleBinding there, and makes again when a
// write is refused because it is gone.

var roleBindings = rbacv1.SchemeGroupVersion.WithResource("rolebindings")

// applyWithAccess applies a copy; for Roles and RoleBindings, it first
// makes sure the federation is bound to its rights in the copy's
// namespace, and when the member refuses the write (403) makes sure again
// (the binding may have been deleted there) and tries once more.
func (w *Writer) applyWithAccess(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, hash string) (*queues.Event, error) {
	if !w.typ.RBAC {
		return w.applyCopy(ctx, cluster, fed, desired, hash)
	}
	ns := fed.GetNamespace()
	if err := w.ensureNamespaceAccess(ctx, cluster, ns, false); err != nil {
		return nil, err
	}
	ev, err := w.applyCopy(ctx, cluster, fed, desired, hash)
	if !apierrors.IsForbidden(err) {
		return ev, err
	}
	if aerr := w.ensureNamespaceAccess(ctx, cluster, ns, true); aerr != nil {
		return nil, fmt.Errorf("%w; binding the federation's rights in namespace %s of cluster %s: %v", err, ns, cluster, aerr)
	}
	return w.applyCopy(ctx, cluster, fed, desired, hash)
}

// ensureNamespaceAccess creates, or puts back as it should be, the
// RoleBinding of the federation's RBAC rights in namespace ns of cluster:
// only where the federation created the namespace (elsewhere the member's
// policy refuses it, and the write that follows says why). Once known to
// be there, it is read again only when asked (again).
func (w *Writer) ensureNamespaceAccess(ctx context.Context, cluster, ns string, again bool) error {
	known := cluster + "/" + ns
	if _, ok := w.namespaceAccess.Load(known); ok && !again {
		return nil
	}
	fedName := w.members.Federation()
	memberNS, ok := w.members.Get(cluster, membercluster.NamespacesResource, "", ns)
	if !ok || memberNS.GetLabels()[memberrbac.CreatedByLabel] != fedName {
		return nil
	}
	client, err := w.members.Client(cluster)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, w.opts.MemberTimeout)
	defer cancel()
	res := client.Resource(roleBindings).Namespace(ns)
	want := memberrbac.AccessRoleBinding(fedName, ns)
	cur, err := res.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	default:
		var have rbacv1.RoleBinding
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cur.Object, &have); err != nil {
			return err
		}
		if have.RoleRef == want.RoleRef && reflect.DeepEqual(have.Subjects, want.Subjects) {
			w.namespaceAccess.Store(known, true)
			return nil
		}
		// A binding's roleRef cannot change: it is made again.
		if err := res.Delete(ctx, want.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: ptr.To(cur.GetUID())}}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(want)
	if err != nil {
		return err
	}
	_, err = res.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{FieldManager: FieldManager})
	w.countWrite(cluster, "create", err)
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	klog.FromContext(ctx).V(2).Info("Bound the federation's RBAC rights in a namespace it created", "cluster", cluster, "namespace", ns)
	w.namespaceAccess.Store(known, true)
	return nil
}
