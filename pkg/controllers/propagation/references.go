package propagation

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// ReasonReferenceNotOurs: a copy names a member object (its pods'
// ServiceAccount, an HPA's target, ...) that is not the federation's copy
// there; it is not written.
const ReasonReferenceNotOurs = "ReferenceNotOwnedInCluster"

// referencesOurs returns nil when every member object a copy names (its
// pods' ServiceAccount, a token Secret's, an HPA's target, a RoleBinding's
// Role: federatedtypes.References) is the federation's own copy in
// cluster. The member resolves those names with its own rights, so a copy
// naming another team's member-only object would act through it for the
// tenant (told once in a ReasonReferenceNotOurs event on fed). It reads
// the copy as it is sent there (desired: overrides applied), and
// the member's object from our cache, else live.
func (c *Controller) referencesOurs(ctx context.Context, cluster string, fed, desired *unstructured.Unstructured) error {
	refs, err := federatedtypes.References(desired)
	what := c.what(key(desired.GetNamespace(), desired.GetName()))
	if err != nil {
		return fmt.Errorf("%s is not written to members: %w", what, err)
	}
	for _, r := range refs {
		if cur, ok := c.members.Get(cluster, r.Resource, desired.GetNamespace(), r.Name); ok && c.isOurs(cur) {
			continue
		}
		live, err := c.readMember(ctx, cluster, r.Resource, desired.GetNamespace(), r.Name)
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("%s waits for its %s %s (%s) in cluster %s", what, r.Kind, r.Name, r.Field, cluster)
		case err != nil:
			return fmt.Errorf("reading %s %s/%s, which %s names, in cluster %s: %w", r.Kind, desired.GetNamespace(), r.Name, what, cluster, err)
		case !c.isOurs(live):
			err := fmt.Errorf("%s names %s %s (%s), which in cluster %s is not the federation's: it is not written there", what, r.Kind, r.Name, r.Field, cluster)
			c.notWritten(cluster, fed, ReasonReferenceNotOurs, err)
			return err
		}
	}
	return nil
}
