package customresources

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/controllers/propagation"
	"github.com/federation-v1/federation/pkg/membercluster"
)

// Manager is what memberCaches needs of the member manager besides what
// the propagation controller does: letting a watch go, and restarting a
// member's informer that waits for its resource to be served.
type Manager interface {
	propagation.Members
	Unwatch(gvr schema.GroupVersionResource, h membercluster.Handler)
	RestartUnsynced(cluster string, gvr schema.GroupVersionResource)
}

// memberCaches gives one custom resource's propagation controller the
// member manager's caches for as long as it runs: what the controller
// watches (its resource, cached whole, and whatever else it asks for) is
// watched from start to release, with memberCaches as the handler, which
// passes the events on while the controller runs. Release lets every
// watch go, so that the members' informers of the resource stop when the
// CRD goes, changes or is turned off. Everything else is the manager's.
type memberCaches struct {
	Manager
	gvr schema.GroupVersionResource
	// crd is the CRD's name: its copy appearing in a member restarts an
	// informer still waiting for the resource to be served there.
	crd string

	mu sync.Mutex
	// ctx ends when the controller stops; nil before start.
	ctx     context.Context
	handler membercluster.Handler
	// wanted are the resources the controller watches, and whether it
	// reads only their metadata; watched those the manager was given,
	// which release takes back.
	wanted  map[schema.GroupVersionResource]bool
	watched map[schema.GroupVersionResource]bool
}

func newMemberCaches(m Manager, gvr schema.GroupVersionResource, crd string) *memberCaches {
	return &memberCaches{Manager: m, gvr: gvr, crd: crd, wanted: map[schema.GroupVersionResource]bool{}}
}

// Watch takes the propagation controller's handler of a resource; the
// manager is asked at start.
func (c *memberCaches) Watch(gvr schema.GroupVersionResource, h membercluster.Handler) {
	c.want(gvr, h, false)
}

// WatchMetadata is Watch of the metadata only, but for the custom
// resource itself, which is cached whole.
func (c *memberCaches) WatchMetadata(gvr schema.GroupVersionResource, h membercluster.Handler) {
	c.want(gvr, h, gvr != c.gvr)
}

func (c *memberCaches) want(gvr schema.GroupVersionResource, h membercluster.Handler, metadataOnly bool) {
	c.mu.Lock()
	c.handler = h
	if whole, ok := c.wanted[gvr]; ok {
		metadataOnly = metadataOnly && whole
	}
	c.wanted[gvr] = metadataOnly
	started := c.watched != nil
	c.mu.Unlock()
	if started {
		c.watch(gvr, metadataOnly)
	}
}

// watch asks the manager for a resource, with c as the handler.
func (c *memberCaches) watch(gvr schema.GroupVersionResource, metadataOnly bool) {
	c.mu.Lock()
	if c.watched == nil {
		c.mu.Unlock()
		return
	}
	c.watched[gvr] = true
	c.mu.Unlock()
	if metadataOnly {
		c.Manager.WatchMetadata(gvr, c)
	} else {
		c.Manager.Watch(gvr, c)
	}
}

// start watches, until release, what the controller asked for, the
// members' namespaces (passed on) and CRDs (see MemberChanged). Events
// are passed on until ctx ends.
func (c *memberCaches) start(ctx context.Context) {
	c.mu.Lock()
	c.ctx = ctx
	c.watched = map[schema.GroupVersionResource]bool{}
	wanted := map[schema.GroupVersionResource]bool{membercluster.NamespacesResource: true, CRDResource: true}
	for gvr, metadataOnly := range c.wanted {
		if base, ok := wanted[gvr]; ok {
			metadataOnly = metadataOnly && base
		}
		wanted[gvr] = metadataOnly
	}
	c.mu.Unlock()
	for gvr, metadataOnly := range wanted {
		c.watch(gvr, metadataOnly)
	}
}

// release lets every watch of start go: the members stop the informers no
// one else watches. It returns once they have stopped.
func (c *memberCaches) release() {
	c.mu.Lock()
	watched := c.watched
	c.watched = nil
	// Nothing is passed on any more (see running).
	c.handler = nil
	c.mu.Unlock()
	for gvr := range watched {
		c.Manager.Unwatch(gvr, c)
	}
}

// running returns the handler while the controller runs (until ctx ends
// or release), and whether it watches gvr.
func (c *memberCaches) running(gvr schema.GroupVersionResource) (membercluster.Handler, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil || c.ctx.Err() != nil {
		return nil, false
	}
	_, wanted := c.wanted[gvr]
	return c.handler, wanted
}

// MemberChanged passes on the events of what the controller watches and
// of namespaces, and restarts a cluster's informer of the resource that
// has not synced when the CRD's copy shows up there.
func (c *memberCaches) MemberChanged(cluster string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) {
	h, wanted := c.running(gvr)
	switch {
	case h == nil:
	case wanted || gvr == membercluster.NamespacesResource:
		h.MemberChanged(cluster, gvr, obj)
	case gvr == CRDResource && obj.GetName() == c.crd:
		c.RestartUnsynced(cluster, c.gvr)
	}
}

// ClustersChanged tells the controller.
func (c *memberCaches) ClustersChanged() {
	if h, _ := c.running(c.gvr); h != nil {
		h.ClustersChanged()
	}
}
