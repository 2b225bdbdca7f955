package propagation

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/component-base/metrics/testutil"

	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/syncmetrics"
	"github.com/federation-v1/federation/pkg/controllers/propagation/internal/testmembers"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

func initialPending(t *testing.T, typ string) float64 {
	t.Helper()
	v, err := testutil.GetGaugeMetricValue(syncmetrics.InitialPending.WithLabelValues(typ))
	require.NoError(t, err)
	return v
}

// reconcileOnce runs one reconcile of key as a worker does (Sync, then
// reconciled when it returned no error), then the member writes it handed
// over.
func (tc *testController) reconcileOnce(t *testing.T, key string) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, tc.Sync(ctx, key))
	tc.reconciled(key)
	for _, cluster := range tc.w.Clusters() {
		require.Empty(t, tc.w.Drain(ctx, cluster))
	}
	tc.afterWrites()
}

func TestTheInitialSyncEndsOnceEveryObjectFoundAtStartIsInSyncOrWritten(t *testing.T) {
	atRest, missing := configMapObj("at-rest"), configMapObj("missing")
	members := testmembers.New([]string{"c1", "c2"})
	for _, c := range []string{"c1", "c2"} {
		members.Put(c, appliedCopy(t, atRest))
	}
	members.Put("c1", appliedCopy(t, missing))
	tc := newTestController(t, federatedtypes.ByName("configmaps"), members, atRest, missing)
	tc.initial.typ = t.Name() // a series of its own
	tc.initial.start(tc.cachedKeys(""))
	assert.InDelta(t, 2, initialPending(t, t.Name()), 0, "both objects found at start")

	tc.reconcileOnce(t, "ns/at-rest")
	assert.InDelta(t, 1, initialPending(t, t.Name()), 0, "every copy of ns/at-rest in sync")
	assert.Empty(t, members.Actions("c1"))

	tc.reconcileOnce(t, "ns/missing")
	assert.Equal(t, []string{"create"}, members.Actions("c2"))
	assert.InDelta(t, 0, initialPending(t, t.Name()), 0, "once its missing copy was written")

	tc.initial.settled("ns/at-rest")
	assert.InDelta(t, 0, initialPending(t, t.Name()), 0, "a key counts once")
}

func TestAReconcileThatLooksAgainLaterDoesNotEndTheInitialSync(t *testing.T) {
	s := newInitialSync(t.Name())
	s.start([]string{"ns/a", "ns/b"})
	s.recheck("ns/a")
	s.settled("ns/a")
	assert.InDelta(t, 2, initialPending(t, t.Name()), 0, "the reconcile that asked to look again")
	s.settled("ns/a")
	assert.InDelta(t, 1, initialPending(t, t.Name()), 0, "the one after it")
	s.settled("ns/new")
	assert.InDelta(t, 1, initialPending(t, t.Name()), 0, "an object created after the start is not waited for")
}

func TestOnlyPendingKeysAreMarkedToLookAgain(t *testing.T) {
	s := newInitialSync(t.Name())
	s.start([]string{"ns/a"})
	s.recheck("ns/a")
	s.recheck("ns/settled-long-ago")
	assert.Equal(t, map[string]bool{"ns/a": true}, s.later, "a key not waited for leaves no mark behind")
}
