package kubefed

import (
	"context"
	"fmt"
	"io"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// getFunc is a typed client's Get.
type getFunc[T any] func(context.Context, string, metav1.GetOptions) (T, error)

// refreshMemberAccess brings the member objects join creates, but the
// namespace, the account and its token, to a, printing a line for each it
// changes (with dryRun: would change), and returns how many those are. The
// policy comes first, as in join: it bounds the rights that follow.
func refreshMemberAccess(ctx context.Context, out io.Writer, member kubernetes.Interface, a *memberAccess, dryRun bool) (int, error) {
	policies := member.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	policyBindings := member.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	roles, bindings := member.RbacV1().ClusterRoles(), member.RbacV1().ClusterRoleBindings()
	steps := []func() (string, error){
		func() (string, error) {
			return refreshObject(ctx, "ValidatingAdmissionPolicy", a.Policy.Name, policies.Get, policies.Patch, a.Policy, policyChanges, dryRun)
		},
		func() (string, error) {
			return refreshObject(ctx, "ValidatingAdmissionPolicyBinding", a.PolicyBinding.Name, policyBindings.Get, policyBindings.Patch, a.PolicyBinding, policyBindingChanges, dryRun)
		},
		func() (string, error) {
			return refreshObject(ctx, "ClusterRole", a.Role.Name, roles.Get, roles.Patch, a.Role, roleChanges, dryRun)
		},
		func() (string, error) {
			return refreshObject(ctx, "ClusterRole", a.NamespaceRBAC.Name, roles.Get, roles.Patch, a.NamespaceRBAC, roleChanges, dryRun)
		},
		func() (string, error) {
			return refreshObject(ctx, "ClusterRoleBinding", a.Binding.Name, bindings.Get, bindings.Patch, a.Binding, bindingChanges, dryRun)
		},
		func() (string, error) {
			return refreshObject(ctx, "ClusterRole", a.ProxyRole.Name, roles.Get, roles.Patch, a.ProxyRole, roleChanges, dryRun)
		},
		func() (string, error) {
			return refreshObject(ctx, "ClusterRoleBinding", a.ProxyBinding.Name, bindings.Get, bindings.Patch, a.ProxyBinding, bindingChanges, dryRun)
		},
	}
	changed := 0
	for _, step := range steps {
		line, err := step()
		if err != nil {
			return changed, err
		}
		if line != "" {
			fmt.Fprintln(out, line)
			changed++
		}
	}
	return changed, nil
}

// refreshObject brings the member object kind/name to desired with a
// server-side apply, made only if a dry run of it says the object would
// change (changes, of the current object, nil when absent, and the one
// the apply would leave), and returns the line that says what changed:
// empty when nothing did.
func refreshObject[T any](ctx context.Context, kind, name string, get getFunc[T], patch patchFunc[T], desired any,
	changes func(cur, next T) []string, dryRun bool) (string, error) {
	cur, err := get(ctx, name, metav1.GetOptions{})
	found := err == nil
	if apierrors.IsNotFound(err) {
		var absent T
		cur = absent
	} else if err != nil {
		return "", fmt.Errorf("reading %s %s in the member: %w", kind, name, err)
	}
	next, err := applyObject(ctx, patch, name, desired, true)
	if err != nil {
		return "", fmt.Errorf("applying %s %s in the member (dry run): %w", kind, name, err)
	}
	what := changes(cur, next)
	if found && len(what) == 0 {
		return "", nil
	}
	verb := map[bool]string{true: "updated", false: "created"}[found]
	if dryRun {
		verb = "would be " + verb
	} else if _, err := applyObject(ctx, patch, name, desired, false); err != nil {
		return "", fmt.Errorf("applying %s %s in the member: %w", kind, name, err)
	}
	line := kind + " " + name + " " + verb
	if len(what) > 0 {
		line += ": " + strings.Join(what, "; ")
	}
	return line, nil
}
