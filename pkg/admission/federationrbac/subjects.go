package federationrbac

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/rbac"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// keepLocal is how every refusal ends: the way to keep such a binding.
const keepLocal = " (label the RoleBinding federation.kubernetes.io/local=true to keep it at the federation)"

// validateSubjects refuses, in a propagated RoleBinding, the subjects that
// each member would resolve to its own identities: users and groups named
// "system:" (system:unauthenticated, system:authenticated,
// system:serviceaccounts, system:masters, system:serviceaccount:ns:name,
// ...), and service accounts of a namespace the federation does not
// propagate (one of the never-propagated namespaces, a local one, or none
// at all). Subjects the old binding already had (and was propagated with)
// are not checked again, so that a binding made before this rule, or whose
// account's namespace was deleted since, can still be updated, its
// finalizer removed among others.
func (p *Plugin) validateSubjects(ctx context.Context, b, old *rbac.RoleBinding) (field.ErrorList, error) {
	if old != nil && federatedtypes.Local(old) {
		old = nil
	}
	var errs field.ErrorList
	for i, s := range b.Subjects {
		if old != nil && slices.Contains(old.Subjects, s) {
			continue
		}
		path := field.NewPath("subjects").Index(i)
		switch s.Kind {
		case rbac.UserKind, rbac.GroupKind:
			if strings.HasPrefix(s.Name, "system:") {
				errs = append(errs, field.Forbidden(path.Child("name"), fmt.Sprintf(
					"a propagated RoleBinding may not name the %s %q: names starting with \"system:\" are each member's own identities "+
						"(its anonymous and authenticated users, service accounts, nodes and components), so every member would grant the role to them"+keepLocal,
					strings.ToLower(s.Kind), s.Name)))
			}
		case rbac.ServiceAccountKind:
			ns := s.Namespace
			if ns == "" {
				ns = b.Namespace // what RBAC reads an empty namespace as
			}
			why, err := p.unpropagatedNamespace(ctx, ns)
			if err != nil {
				return nil, err
			}
			if why != "" {
				errs = append(errs, field.Forbidden(path.Child("namespace"), fmt.Sprintf(
					"a propagated RoleBinding may not name a service account of the namespace %q: %s, so in each member the name would be one of that cluster's own accounts"+keepLocal,
					ns, why)))
			}
		}
	}
	return errs, nil
}

// unpropagatedNamespace says why the federation does not propagate the
// namespace ns, or "" if it does.
func (p *Plugin) unpropagatedNamespace(ctx context.Context, ns string) (string, error) {
	if slices.Contains(federatedtypes.DefaultNeverPropagatedNamespaces, ns) {
		return "the federation never propagates it", nil
	}
	n, err := p.Namespace(ctx, ns)
	switch {
	case err != nil:
		return "", fmt.Errorf("looking up the namespace %q of a service account subject: %w", ns, err)
	case n == nil:
		return "it does not exist at the federation", nil
	case federatedtypes.Local(n):
		return "it is labelled federation.kubernetes.io/local=true and stays at the federation", nil
	}
	return "", nil
}
