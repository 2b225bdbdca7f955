package guard

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/fedobject"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// ReasonReferenceNotOurs: a copy names a member object (its pods'
// ServiceAccount, Secrets, ConfigMaps or claims, an HPA's target, ...)
// that is not the federation's copy there; it is not written, and a copy
// written before is removed.
const ReasonReferenceNotOurs = "ReferenceNotOwnedInCluster"

// ErrReferenceNotOurs keeps a copy out of a member (and takes it out):
// what it names is another's there, or gone from the federation too.
type ErrReferenceNotOurs struct{ Msg string }

func (e *ErrReferenceNotOurs) Error() string { return e.Msg }

// errCannotName keeps a copy out of a member: it names an object of a
// kind the federation never propagates (federatedtypes.References' error;
// overrides can make one). A copy already there is left as it is.
type errCannotName struct{ err error }

func (e *errCannotName) Error() string { return e.err.Error() }
func (e *errCannotName) Unwrap() error { return e.err }

// referenceNotOurs tells (once per cause: notWritten) that fed's copy is
// not written in cluster, and why, and returns that as ErrReferenceNotOurs.
func (g *Guard) referenceNotOurs(cluster string, fed *unstructured.Unstructured, format string, args ...any) error {
	err := &ErrReferenceNotOurs{Msg: fmt.Sprintf(format, args...)}
	g.notWritten(cluster, fed, ReasonReferenceNotOurs, err)
	return err
}

// ReferencesOurs returns nil when every member object the copy desired of
// fed names is ours in cluster (referencesOurs); what the copy names
// that the federation never propagates (errCannotName) keeps the same
// copy (hash) refused for longer and longer, until the object changes.
// Its unheld names are checked again from here on.
func (g *Guard) ReferencesOurs(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured, hash string) error {
	objKey := fedobject.Key(fed.GetNamespace(), fed.GetName())
	err := g.referencesOurs(ctx, cluster, fed, desired)
	g.unheld.checked(copyAt{cluster, objKey})
	var cannotName *errCannotName
	if errors.As(err, &cannotName) {
		return &errRefusedByMember{err: err, wait: g.refusedWrites.Next(fedobject.CopyKey(cluster, objKey), hash)}
	}
	return err
}

// referencesOurs returns nil when every member object a copy names
// (federatedtypes.References) is the federation's own copy in cluster, and
// no claim a StatefulSet copy would use is another's. The member resolves
// those names with its own rights, so a copy naming another team's
// member-only object would act through it for the tenant (told once in a
// ReasonReferenceNotOurs event on fed). It reads the copy as it is sent
// there (desired: overrides applied), and the member's object from our
// cache, else live. An absent object is waited for while the federation
// has it (its copy is on its way); an absent optional one is no reference.
func (g *Guard) referencesOurs(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured) error {
	refs, err := federatedtypes.References(desired)
	what := g.objs.What(fedobject.Key(desired.GetNamespace(), desired.GetName()))
	if err != nil {
		err = &errCannotName{fmt.Errorf("%s is not written to members: %w", what, err)}
		g.notWritten(cluster, fed, ReasonReferenceNotOurs, err)
		return err
	}
	ns := desired.GetNamespace()
	_, copyExists := g.members.Get(cluster, g.typ.Resource, ns, desired.GetName())
	for _, r := range refs {
		if r.AtCreate && copyExists {
			continue
		}
		if cur, ok := g.members.Get(cluster, r.Resource, ns, r.Name); ok && g.isOurs(cur) {
			continue
		}
		live, err := g.readMember(ctx, cluster, r.Resource, ns, r.Name)
		switch {
		case apierrors.IsNotFound(err) && r.Optional:
			continue
		case apierrors.IsNotFound(err):
			if federated, ferr := g.federationHas(ctx, r, ns); ferr != nil || federated {
				return fmt.Errorf("%s waits for its %s %s (%s) in cluster %s", what, r.Kind, r.Name, r.Field, cluster)
			}
			return g.referenceNotOurs(cluster, fed, "%s names %s %s (%s), which neither the federation nor cluster %s holds", what, r.Kind, r.Name, r.Field, cluster)
		case err != nil:
			return fmt.Errorf("reading %s %s/%s, which %s names, in cluster %s: %w", r.Kind, ns, r.Name, what, cluster, err)
		case !g.isOurs(live):
			return g.referenceNotOurs(cluster, fed, "%s names %s %s (%s), which in cluster %s is not the federation's", what, r.Kind, r.Name, r.Field, cluster)
		}
	}
	return g.claimsOurs(ctx, cluster, fed, desired)
}

// federationHas reports whether the federation holds what r names, not
// being deleted.
func (g *Guard) federationHas(ctx context.Context, r federatedtypes.Reference, ns string) (bool, error) {
	obj, err := g.fed.Resource(r.Resource).Namespace(ns).Get(ctx, r.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil && obj.GetDeletionTimestamp() == nil, err
}

// claimsOurs refuses a StatefulSet copy whose claim templates name claims
// (TEMPLATE-STATEFULSET-ORDINAL) that the member holds and did not make
// from the federation's templates: its pods would mount another team's
// volumes. Claims made from our templates carry ClaimLabel; a copy sent
// without it (adopted, or older than the label) is not checked.
func (g *Guard) claimsOurs(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured) error {
	prefixes := federatedtypes.StatefulSetClaimPrefixes(desired)
	if len(prefixes) == 0 || !g.typ.Pods.HasFixed(desired) {
		return nil
	}
	// One list of the namespace's claims not made from our templates.
	others, err := g.listLive(ctx, cluster, federatedtypes.ClaimsResource, desired.GetNamespace(), g.notFromOurTemplates())
	if err != nil {
		return fmt.Errorf("listing the claims of namespace %s in cluster %s: %w", desired.GetNamespace(), cluster, err)
	}
	for i := range others {
		claim := &others[i]
		if g.isOurs(claim) || !isClaimOf(claim.GetName(), prefixes) {
			continue
		}
		return g.referenceNotOurs(cluster, fed, "%s would use PersistentVolumeClaim %s (spec.volumeClaimTemplates), which in cluster %s was not made from the federation's template",
			g.objs.What(fedobject.Key(desired.GetNamespace(), desired.GetName())), claim.GetName(), cluster)
	}
	return nil
}

// notFromOurTemplates selects the claims not made from the federation's
// StatefulSet templates (federatedtypes.ClaimLabel).
func (g *Guard) notFromOurTemplates() string {
	return federatedtypes.ClaimLabel + "!=" + g.members.Federation()
}

// listLive lists, from a member and within the member timeout, the
// metadata of its objects of gvr in ns that selector selects.
func (g *Guard) listLive(ctx context.Context, cluster string, gvr schema.GroupVersionResource, ns, selector string) ([]metav1.PartialObjectMetadata, error) {
	ctx, cancel := context.WithTimeout(ctx, g.opts.MemberTimeout)
	defer cancel()
	return g.members.ListLive(ctx, cluster, gvr, ns, selector)
}

var ordinal = regexp.MustCompile(`^[0-9]+$`)

func isClaimOf(name string, prefixes []string) bool {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(name, p); ok && ordinal.MatchString(rest) {
			return true
		}
	}
	return false
}

// ReferencesCached reports whether our member cache holds, as ours, every
// object a copy at names that must exist, and that none it may use was
// found another's (CheckUnheld): else its copy in sync is looked at again
// (referencesOurs, releaseIfNotOurs). What it may use and the federation
// does not hold there (optional references, a StatefulSet's claims) is
// remembered for CheckUnheld: reading them here would make every sync read
// them.
func (g *Guard) ReferencesCached(cluster string, desired *unstructured.Unstructured) bool {
	at := copyAt{cluster, fedobject.Key(desired.GetNamespace(), desired.GetName())}
	refs, err := federatedtypes.References(desired)
	if err != nil {
		// A copy in sync that names what the federation never propagates
		// was written before the rule: left as it is, as it was.
		return true
	}
	var unheld unheldNames
	held := true
	for _, r := range refs {
		if r.AtCreate {
			continue
		}
		if cur, ok := g.members.Get(at.cluster, r.Resource, desired.GetNamespace(), r.Name); ok && g.isOurs(cur) {
			continue
		}
		if !r.Optional {
			// Sent to the write path at once, which reads it live.
			held = false
			continue
		}
		unheld.refs = append(unheld.refs, r)
	}
	if g.typ.Pods.HasFixed(desired) {
		unheld.claimPrefixes = federatedtypes.StatefulSetClaimPrefixes(desired)
	}
	g.unheld.set(at, unheld)
	return held && !g.unheld.isForeign(at)
}
