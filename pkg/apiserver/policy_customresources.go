package apiserver

import (
	"context"
	"slices"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/controllers/managerrbac"
)

// customResourcesRole is the controller manager's role on CRDs and on the
// custom resources of their groups, which the server keeps listing the
// groups of the CRDs there are (crdGroups), so that the controller
// manager never holds rights on every resource.
const customResourcesRole = managerrbac.CustomResourcesRole

// customResourcesBinding binds the controller manager to its role, which
// the bootstrap policy keeps as it keeps the others.
func customResourcesBinding() rbacv1.ClusterRoleBinding {
	b := rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: customResourcesRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: customResourcesRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: federationv1beta1.ControllerManagerUser}},
	}
	withBootstrapMetadata(&b.ObjectMeta)
	return b
}

// customResourcesRoleWriter writes the role for the latest groups it was
// given, in the background, until ctx ends; a failed write is tried again.
type customResourcesRoleWriter struct {
	client kubernetes.Interface
	groups chan []string
}

func newCustomResourcesRoleWriter(client kubernetes.Interface) *customResourcesRoleWriter {
	return &customResourcesRoleWriter{client: client, groups: make(chan []string, 1)}
}

// want asks for the role of groups, replacing a request not yet written.
func (w *customResourcesRoleWriter) want(groups []string) {
	select {
	case <-w.groups:
	default:
	}
	w.groups <- groups
}

func (w *customResourcesRoleWriter) run(ctx context.Context) {
	var groups []string
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case groups = <-w.groups:
		case <-retry.C:
		}
		if err := w.write(ctx, groups); err != nil {
			klog.FromContext(ctx).Error(err, "Writing the controller manager's role on custom resources; trying again")
			retry.Reset(time.Second)
		}
	}
}

func (w *customResourcesRoleWriter) write(ctx context.Context, groups []string) error {
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: customResourcesRole}, Rules: managerrbac.CustomResourcesRules(groups)}
	withBootstrapMetadata(&role.ObjectMeta)
	roles := w.client.RbacV1().ClusterRoles()
	current, err := roles.Get(ctx, role.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = roles.Create(ctx, role, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if slices.EqualFunc(current.Rules, role.Rules, func(a, b rbacv1.PolicyRule) bool {
		return slices.Equal(a.Verbs, b.Verbs) && slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources)
	}) {
		return nil
	}
	current.Rules = role.Rules
	_, err = roles.Update(ctx, current, metav1.UpdateOptions{})
	return err
}
