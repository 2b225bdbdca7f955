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
// admin adopted it for it (memberrbac.AdoptedByLabel). `kubefed join
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

// adoptNamespaces marks the named member namespaces adopted by fed and
// returns what it left alone and why: namespaces the member does not have,
// and those another federation adopted. A failed join takes off the marks
// it added.
func adoptNamespaces(ctx context.Context, member kubernetes.Interface, fed string, names []string, undo *rollback) ([]string, error) {
	namespaces := member.CoreV1().Namespaces()
	var skipped []string
	for _, name := range names {
		ns, err := namespaces.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			skipped = append(skipped, fmt.Sprintf("namespace %s does not exist in the member; not adopted", name))
			continue
		}
		if err != nil {
			return skipped, fmt.Errorf("adopting namespace %s: %w", name, err)
		}
		switch owner, marked := ns.Labels[memberrbac.AdoptedByLabel]; {
		case owner == fed:
			continue
		case marked:
			skipped = append(skipped, fmt.Sprintf("namespace %s is adopted by federation %q; left as it is", name, owner))
			continue
		}
		if err := markAdopted(ctx, member, name, &fed); err != nil {
			return skipped, fmt.Errorf("adopting namespace %s: %w", name, err)
		}
		undo.add(func() error { return markAdopted(context.Background(), member, name, nil) })
	}
	return skipped, nil
}

// releaseNamespaces takes fed's adopted mark off every member namespace
// that carries it: unjoin's counterpart of adoptNamespaces.
func releaseNamespaces(ctx context.Context, member kubernetes.Interface, fed string) error {
	list, err := member.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: memberrbac.AdoptedByLabel + "=" + fed})
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range list.Items {
		if err := markAdopted(ctx, member, ns.Name, nil); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("taking %s off namespace %s: %w", memberrbac.AdoptedByLabel, ns.Name, err))
		}
	}
	return errors.Join(errs...)
}

// markAdopted sets namespace name's adopted mark to fed, or takes it off
// (nil), with a merge patch: nothing else of it changes.
func markAdopted(ctx context.Context, member kubernetes.Interface, name string, fed *string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{memberrbac.AdoptedByLabel: fed}}})
	if err != nil {
		return err
	}
	_, err = member.CoreV1().Namespaces().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	return err
}
