package kubefed

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/pkg/memberrbac"
)

// removeNamespaceRBAC deletes the federation's RBAC rights in the
// namespaces it created (the RoleBindings the propagation made there) and
// the ClusterRole they bind. The Roles and RoleBindings it propagated stay,
// as every copy does.
func removeNamespaceRBAC(ctx context.Context, member kubernetes.Interface, fed string) error {
	rbac := member.RbacV1()
	bindings, err := rbac.RoleBindings(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: memberrbac.AccessLabel + "=" + fed})
	if err != nil {
		return err
	}
	var errs []error
	for _, b := range bindings.Items {
		if b.Name != memberrbac.AccessName(fed) {
			continue
		}
		if err := rbac.RoleBindings(b.Namespace).Delete(ctx, b.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if err := rbac.ClusterRoles().Delete(ctx, memberrbac.AccessName(fed), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
