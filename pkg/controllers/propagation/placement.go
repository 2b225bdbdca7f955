package propagation

import (
	"context"

	"github.com/federation-v1/federation/pkg/membercluster"
)

// namespaceIn reports whether a namespaced object's namespace is in a
// member for placement. Our label-filtered cache only holds the member
// namespaces that carry our label: one found there is in; one missing from
// it may only have lost its label (or not be in the cache yet), so it is
// looked up (namespaceLive). We read it live rather than keep a second,
// unfiltered watch of every member namespace: a miss is rare once a
// namespace is propagated (the namespaces controller labels it again), one
// read answers it, and the members' caches keep growing only with what
// the federation made. A failed read is no proof of absence: the namespace
// counts as in, and a removal is confirmed live anyway (unplace.go).
func (c *Controller) namespaceIn(ctx context.Context, cluster, namespace string) bool {
	if _, ok := c.members.Get(cluster, membercluster.NamespacesResource, "", namespace); ok {
		return true
	}
	in, err := c.w.NamespaceLive(ctx, cluster, namespace)
	return in || err != nil
}
