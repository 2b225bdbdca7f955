package memberproxy

import (
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// MaxOpenPerCaller bounds the requests one federation user without the
// proxy subresource has open through the proxy of one apiserver at a
// time. Watches, logs -f and exec hold theirs for as long as they last,
// each with a connection to a member: without a bound, one user could
// hold an apiserver's (and a member's) connections until they run out.
const MaxOpenPerCaller = 64

// MaxOpenPerCluster bounds those requests of every such user together to
// one member, through one apiserver: the member's connections, and an
// agent member's one tunnel, are shared with the controller manager.
const MaxOpenPerCluster = 256

// openRequests counts each caller's open requests.
type openRequests struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

func newOpenRequests(max int) *openRequests {
	return &openRequests{max: max, open: map[string]int{}}
}

// take counts one more request under key, or refuses it with why (which
// is given the bound); done must be called once it ends.
func (o *openRequests) take(key string, why func(max int) string) (done func(), err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open[key] >= o.max {
		return nil, apierrors.NewTooManyRequests(why(o.max), 5)
	}
	o.open[key]++
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.open[key]--; o.open[key] <= 0 {
			delete(o.open, key)
		}
	}, nil
}

// budgets are the bounds of the requests open through the proxy.
type budgets struct{ perCaller, perCluster *openRequests }

func newBudgets() budgets {
	return budgets{perCaller: newOpenRequests(MaxOpenPerCaller), perCluster: newOpenRequests(MaxOpenPerCluster)}
}

// take counts one more request of caller to cluster, or refuses it.
func (b budgets) take(caller, cluster string) (done func(), err error) {
	callerDone, err := b.perCaller.take(caller, func(max int) string {
		return fmt.Sprintf("user %q already has %d requests open through the members' proxy of this apiserver (watches, logs -f, exec): close some first", caller, max)
	})
	if err != nil {
		return nil, err
	}
	clusterDone, err := b.perCluster.take(cluster, func(max int) string {
		return fmt.Sprintf("%d requests are open through the members' proxy of this apiserver to cluster %s: try again later", max, cluster)
	})
	if err != nil {
		callerDone()
		return nil, err
	}
	return func() { clusterDone(); callerDone() }, nil
}
