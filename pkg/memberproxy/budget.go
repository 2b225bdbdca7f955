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

// openRequests counts each caller's open requests.
type openRequests struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

func newOpenRequests(max int) *openRequests {
	return &openRequests{max: max, open: map[string]int{}}
}

// take counts one more request of caller, or refuses it; done must be
// called once it ends.
func (o *openRequests) take(caller string) (done func(), err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open[caller] >= o.max {
		return nil, apierrors.NewTooManyRequests(fmt.Sprintf("user %q already has %d requests open through the members' proxy of this apiserver (watches, logs -f, exec): close some first", caller, o.max), 5)
	}
	o.open[caller]++
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.open[caller]--; o.open[caller] <= 0 {
			delete(o.open, caller)
		}
	}, nil
}
