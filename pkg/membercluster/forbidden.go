package membercluster

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// A member informer whose list or watch is forbidden (the federation's
// account there has no rights on the resource: a custom resource group the
// member was not joined for) would retry within seconds for as long as it
// runs, each failure logged, until the member's access changes, which
// takes a `kubefed join --refresh`. It backs off instead, doubling from
// forbiddenFirstDelay to forbiddenMaxDelay, and says so once; and the
// cluster is known to hold nothing of ours there (Forbidden), so that a
// deletion does not wait for it.

const (
	forbiddenFirstDelay = time.Second
	forbiddenMaxDelay   = 5 * time.Minute
)

// nextForbiddenDelay is the wait after a forbidden list or watch that
// followed a wait of last (0 for the first).
func nextForbiddenDelay(last time.Duration) time.Duration {
	if last <= 0 {
		return forbiddenFirstDelay
	}
	return min(2*last, forbiddenMaxDelay)
}

// watchErrors handles the list and watch errors of one member informer.
// The reflector calls handle from its own loop and retries when it
// returns: handle's wait is the informer's back-off.
type watchErrors struct {
	cluster string
	gvr     schema.GroupVersionResource
	// forbidden: the last error was forbidden; unserved: it was
	// NotFound (the member does not serve the resource: no CRD of it).
	forbidden atomic.Bool
	unserved  atomic.Bool
	// delay is the last wait; only the reflector's loop uses it.
	delay time.Duration
}

func (w *watchErrors) handle(ctx context.Context, r *cache.Reflector, err error) {
	w.unserved.Store(apierrors.IsNotFound(err))
	if !apierrors.IsForbidden(err) {
		w.forbidden.Store(false)
		w.delay = 0
		cache.DefaultWatchErrorHandler(ctx, r, err)
		return
	}
	first := !w.forbidden.Swap(true)
	w.delay = nextForbiddenDelay(w.delay)
	logger := klog.FromContext(ctx)
	if first {
		logger.Info("The federation may not read this resource in the member; retrying with a back-off",
			"cluster", w.cluster, "resource", w.gvr.String(), "maxBackoff", forbiddenMaxDelay, "err", err)
	} else {
		logger.V(4).Info("Still forbidden to read the resource in the member", "cluster", w.cluster, "resource", w.gvr.String(), "retryIn", w.delay)
	}
	t := time.NewTimer(w.delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Unauthorized is a member's authorizer refusing the federation's account
// a request: the verb, resource (without its subresource) and API group
// its message names, as Kubernetes words it: `widgets.example.com "w" is
// forbidden: User "..." cannot create resource "widgets" in API group
// "example.com" in the namespace "ns"`. Other 403s (an admission policy
// or webhook saying no) are not.
type Unauthorized struct {
	Verb, Resource, Group string
}

// unauthorizedMessage is the authorizer's part of a Forbidden message
// (k8s.io/apiserver's responsewriters.forbiddenMessage).
var unauthorizedMessage = regexp.MustCompile(`is forbidden: User "(?:[^"\\]|\\.)*" cannot ([a-z]+) resource "([^"]*)" in API group "([^"]*)"`)

// AsUnauthorized reports whether err is a 403 of the member's authorizer,
// and what it refused.
func AsUnauthorized(err error) (Unauthorized, bool) {
	var status apierrors.APIStatus
	if !apierrors.IsForbidden(err) || !errors.As(err, &status) {
		return Unauthorized{}, false
	}
	m := unauthorizedMessage.FindStringSubmatch(status.Status().Message)
	if m == nil {
		return Unauthorized{}, false
	}
	resource, _, _ := strings.Cut(m[2], "/")
	return Unauthorized{Verb: m[1], Resource: resource, Group: m[3]}, true
}
