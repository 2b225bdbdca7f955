package kubefed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/pkg/memberrbac"
)

// The federation writes into a member namespace only if it created it or an
// admin adopted it for it (memberrbac.AdoptedByLabel: one label per
// federation, so that a namespace can be adopted for several). `kubefed join
// --adopt-namespaces` is that admin's act for the namespaces it names, with
// the member admin's credentials join runs with; unjoin takes the marks off
// again.

// validateAdoptNamespaces checks --adopt-namespaces: namespace names, none
// of the protected ones, which the federation never writes in.
func validateAdoptNamespaces(names []string) error {
	for _, ns := range names {
		if slices.Contains(protectedNamespaces, ns) {
			return fmt.Errorf("--adopt-namespaces: namespace %s is the member's own or holds the federation's credentials; the federation never writes there, so it is never adopted", ns)
		}
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return fmt.Errorf("--adopt-namespaces: %q is not a namespace name: %s", ns, errs[0])
		}
	}
	return nil
}

// adoptNamespaces marks the named member namespaces adopted for fed and
// returns what it left alone and why: namespaces the member does not have.
// A failed join takes off the marks it added.
func adoptNamespaces(ctx context.Context, member kubernetes.Interface, fed string, names []string, undo *rollback) ([]string, error) {
	pending, skipped, err := pendingAdoptions(ctx, member, fed, names)
	if err != nil {
		return skipped, err
	}
	for _, name := range pending {
		if err := markAdopted(ctx, member, name, fed, true); err != nil {
			return skipped, fmt.Errorf("adopting namespace %s: %w", name, err)
		}
		undo.add(func() error { return markAdopted(context.Background(), member, name, fed, false) })
	}
	return skipped, nil
}

// pendingAdoptions reads the named member namespaces and returns those not
// yet adopted for fed, and what it would leave alone and why: namespaces
// the member does not have.
func pendingAdoptions(ctx context.Context, member kubernetes.Interface, fed string, names []string) (pending, skipped []string, err error) {
	if errs := validation.IsQualifiedName(memberrbac.AdoptedByLabel(fed)); len(names) > 0 && len(errs) > 0 {
		return nil, nil, fmt.Errorf("--adopt-namespaces: federation %q's name is too long for its adopted mark %s (at most %d characters): %s",
			fed, memberrbac.AdoptedByLabel(fed), validation.LabelValueMaxLength-len(memberrbac.AdoptedByPrefix)+len("federation.kubernetes.io/"), errs[0])
	}
	namespaces := member.CoreV1().Namespaces()
	for _, name := range names {
		ns, err := namespaces.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			skipped = append(skipped, fmt.Sprintf("namespace %s does not exist in the member; not adopted", name))
			continue
		}
		if err != nil {
			return nil, skipped, fmt.Errorf("adopting namespace %s: %w", name, err)
		}
		if ns.Labels[memberrbac.AdoptedByLabel(fed)] != memberrbac.Adopted {
			pending = append(pending, name)
		}
	}
	return pending, skipped, nil
}

// releaseNamespaces takes fed's adopted mark off every member namespace
// that carries it: unjoin's counterpart of adoptNamespaces.
func releaseNamespaces(ctx context.Context, member kubernetes.Interface, fed string) error {
	list, err := member.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: memberrbac.AdoptedByLabel(fed) + "=" + memberrbac.Adopted})
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range list.Items {
		if err := markAdopted(ctx, member, ns.Name, fed, false); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("taking %s off namespace %s: %w", memberrbac.AdoptedByLabel(fed), ns.Name, err))
		}
	}
	return errors.Join(errs...)
}

// markAdopted puts fed's adopted mark on namespace name, or takes it off,
// with a merge patch: nothing else of it changes.
func markAdopted(ctx context.Context, member kubernetes.Interface, name, fed string, adopted bool) error {
	var value any
	if adopted {
		value = memberrbac.Adopted
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{memberrbac.AdoptedByLabel(fed): value}}})
	if err != nil {
		return err
	}
	_, err = member.CoreV1().Namespaces().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	return err
}
