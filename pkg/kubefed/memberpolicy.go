package kubefed

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/memberrbac"
)

// protectedNamespaces are the member's own namespaces, and the one join
// keeps the federation's credentials in: the federation never writes there
// (it never propagates into them, and its controllers write nothing else
// in a member), so its identity is refused there outright.
var protectedNamespaces = []string{"kube-system", "kube-public", "kube-node-lease", federationv1beta1.SystemNamespace}

// newMemberPolicy is the ValidatingAdmissionPolicy, and its binding, that
// join installs in a member so that the member need not trust the
// federation: the federation's account (username) may not write in
// protectedNamespaces, nor in a namespace it neither created nor was
// adopted in, nor ask for pods beyond Pod Security baseline
// (podSecurityValidations; withPodSecurity adds restricted). Both are
// named after the federation, so that two federations joined to one member
// keep theirs.
func newMemberPolicy(fed, username string, meta metav1.ObjectMeta) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	refused := refusedBy(fed, meta.Name)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"),
		ObjectMeta: meta,
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete},
						// Subresources too: pods/ephemeralcontainers adds containers.
						Rule: admissionregistrationv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*/*"}},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "federation-identity",
				Expression: "request.userInfo.username == " + strconv.Quote(username),
			}},
			Variables: append([]admissionregistrationv1.Variable{{Name: "protected", Expression: celList(protectedNamespaces)}}, podVariables...),
			Validations: []admissionregistrationv1.Validation{
				{
					// Empty request fields are absent, hence has(). A Namespace's
					// own writes name it in request.name.
					Expression: "!(has(request.namespace) && request.namespace in variables.protected) && " +
						"!(request.resource.resource == 'namespaces' && has(request.name) && request.name in variables.protected)",
					Message: refused("write to namespaces " + strings.Join(protectedNamespaces, ", ")),
					MessageExpression: strconv.Quote(fmt.Sprintf("federation %q may not write to namespace ", fed)) +
						" + (has(request.namespace) ? request.namespace : request.name) + " + strconv.Quote(" in this cluster (policy "+meta.Name+")"),
				},
				namespaceValidation(fed, meta.Name),
			},
		},
	}
	policy.Spec.Validations = append(policy.Spec.Validations, podSecurityValidations(refused)...)
	policy.Spec.Validations = append(policy.Spec.Validations, rbacValidations(fed, memberrbac.DefaultBindableClusterRoles)...)
	for i := range policy.Spec.Validations {
		policy.Spec.Validations[i].Reason = ptr.To(metav1.StatusReasonForbidden)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding"),
		ObjectMeta: *meta.DeepCopy(),
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        meta.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding
}

// refusedBy is the message of policy's refusal of what federation fed may not do.
func refusedBy(fed, policy string) func(what string) string {
	return func(what string) string {
		return fmt.Sprintf("federation %q may not %s in this cluster (policy %s)", fed, what, policy)
	}
}

// namespaceValidation is the policy's half of the rule the propagation
// keeps too: the federation writes into a member namespace only if it
// created it (memberrbac.CreatedByLabel) or an admin adopted it for it
// (memberrbac.AdoptedByLabel), so that a tenant's objects never reach a
// namespace another team owns there. Left out: the protected namespaces
// (refused already, whatever their labels), Namespaces themselves (their
// marks have rules of their own; a Namespace's request.namespace is its
// own name, and its namespaceObject null), events (which the federation
// reports anywhere), Roles and RoleBindings (written only where it
// created the namespace: rbacValidations), and the release of its own
// copies (deleting them, or taking its label off).
func namespaceValidation(fed, policy string) admissionregistrationv1.Validation {
	name := strconv.Quote(fed)
	marked := func(label string) string {
		l := strconv.Quote(label)
		return fmt.Sprintf("(%s in namespaceObject.metadata.labels && namespaceObject.metadata.labels[%s] == %s)", l, l, name)
	}
	// Its own copies, found ours by their label, it may still delete or
	// let go (take its label off) where the namespace is no longer its own:
	// a federated namespace orphaned in a member while the deletion of its
	// objects is under way.
	fedLabel := strconv.Quote(federationv1beta1.FederationLabel)
	ours := func(obj string) string {
		return fmt.Sprintf("(%s != null && has(%s.metadata.labels) && %s in %s.metadata.labels && %s.metadata.labels[%s] == %s)", obj, obj, fedLabel, obj, obj, fedLabel, name)
	}
	released := fmt.Sprintf("(request.operation == 'DELETE' && %s) || (request.operation == 'UPDATE' && %s && !(has(object.metadata.labels) && %s in object.metadata.labels))",
		ours("oldObject"), ours("oldObject"), fedLabel)
	adopted := strconv.Quote(memberrbac.AdoptedByLabel(fed))
	adoptedMark := fmt.Sprintf("(%s in namespaceObject.metadata.labels && namespaceObject.metadata.labels[%s] == %s)", adopted, adopted, strconv.Quote(memberrbac.Adopted))
	return admissionregistrationv1.Validation{
		Expression: "!has(request.namespace) || request.namespace == '' || request.namespace in variables.protected || " +
			"(request.resource.group == '' && request.resource.resource in ['namespaces', 'events']) || " +
			"(request.resource.group == 'events.k8s.io' && request.resource.resource == 'events') || " +
			"(request.resource.group == 'rbac.authorization.k8s.io' && request.resource.resource in ['roles', 'rolebindings']) || " +
			released + " || " +
			"(namespaceObject != null && has(namespaceObject.metadata.labels) && (" + marked(memberrbac.CreatedByLabel) + " || " + adoptedMark + "))",
		Message: fmt.Sprintf("federation %q may not write in a namespace it neither created nor was adopted in (label %s or %s) (policy %s)",
			fed, memberrbac.CreatedByLabel, memberrbac.AdoptedByLabel(fed), policy),
		MessageExpression: strconv.Quote(fmt.Sprintf("federation %q may not write in namespace ", fed)) + " + request.namespace + " +
			strconv.Quote(fmt.Sprintf(": it neither created it nor was it adopted (label %s or %s) (policy %s)", memberrbac.CreatedByLabel, memberrbac.AdoptedByLabel(fed), policy)),
	}
}

// celList is a CEL list literal of strings.
func celList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// accountUsername is the username a member authenticates a service account as.
func accountUsername(namespace, name string) string {
	return serviceaccount.MakeUsername(namespace, name)
}

// fieldManager is kubefed's field manager in server-side applies.
const fieldManager = "kubefed"

// installPolicy applies the policy and its binding, replacing those a
// previous join of the same federation may have left. A failed join removes
// them again unless they were there before: left by an unjoin that could
// not reach the member, they still bound the account it left too.
func installPolicy(ctx context.Context, member kubernetes.Interface, a *memberAccess, undo *rollback) error {
	policies := member.AdmissionregistrationV1().ValidatingAdmissionPolicies()
	bindings := member.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	_, err := bindings.Get(ctx, a.PolicyBinding.Name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return policyError("ValidatingAdmissionPolicyBinding", err)
	}
	if err != nil {
		undo.add(func() error { return policies.Delete(context.Background(), a.Policy.Name, metav1.DeleteOptions{}) })
		undo.add(func() error {
			return bindings.Delete(context.Background(), a.PolicyBinding.Name, metav1.DeleteOptions{})
		})
	}
	if err := apply(ctx, policies.Patch, a.Policy.Name, a.Policy); err != nil {
		return policyError("ValidatingAdmissionPolicy", err)
	}
	if err := apply(ctx, bindings.Patch, a.PolicyBinding.Name, a.PolicyBinding); err != nil {
		return policyError("ValidatingAdmissionPolicyBinding", err)
	}
	return nil
}

// patchFunc is a typed client's Patch.
type patchFunc[T any] func(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (T, error)

// apply server-side applies obj, which carries its TypeMeta, with a typed
// client's Patch.
func apply[T any](ctx context.Context, patch patchFunc[T], name string, obj any) error {
	_, err := applyObject(ctx, patch, name, obj, false)
	return err
}

// applyObject server-side applies obj as kubefed, forced, and returns the
// object the member then holds; with dryRun the member only says what it
// would hold.
func applyObject[T any](ctx context.Context, patch patchFunc[T], name string, obj any, dryRun bool) (T, error) {
	var zero T
	body, err := json.Marshal(obj)
	if err != nil {
		return zero, err
	}
	opts := metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return patch(ctx, name, types.ApplyPatchType, body, opts)
}

// policyError says what failed; a member too old to serve the API (before
// Kubernetes 1.30) is told apart, since join refuses to leave it unguarded.
func policyError(what string, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("creating %s in the member: the member does not serve admissionregistration.k8s.io/v1 %s (Kubernetes 1.30 or later): %w", what, what, err)
	}
	return fmt.Errorf("creating %s in the member: %w", what, err)
}

// removePolicy deletes the policy and its binding; absent ones are fine.
func removePolicy(ctx context.Context, member kubernetes.Interface, fed string) []error {
	name := accessName(fed)
	del := metav1.DeleteOptions{}
	var errs []error
	for _, remove := range []func() error{
		func() error {
			return member.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, name, del)
		},
		func() error {
			return member.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, name, del)
		},
	} {
		if err := remove(); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errs
}
