package fedenv

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/memberenv"
)

// SettledMemberWrites waits until the federation has written nothing to
// the clusters for quiet (its copies' writes, and the follow-up writes
// the members' own controllers cause, are over), within timeout, and
// returns the count of its writes each member logged: a mark for
// memberenv.Environment.FederationWritesSince.
func SettledMemberWrites(t testing.TB, env *memberenv.Environment, clusters []string, quiet, timeout time.Duration) map[string]int {
	t.Helper()
	last, err := env.FederationWriteCounts(clusters)
	require.NoError(t, err)
	lastChange := time.Now()
	require.NoError(t, poll.Until(context.Background(), timeout, "the federation's member writes to settle", func(context.Context) error {
		now, err := env.FederationWriteCounts(clusters)
		if err != nil {
			return err
		}
		if !maps.Equal(now, last) {
			last, lastChange = now, time.Now()
		}
		if since := time.Since(lastChange); since < quiet {
			return fmt.Errorf("quiet for %s", since.Round(time.Second))
		}
		return nil
	}))
	return last
}

// NoMemberWritesFor fails the test unless the clusters log no write of
// the federation after mark, but to objects named in except, for window.
func NoMemberWritesFor(t testing.TB, env *memberenv.Environment, clusters []string, mark map[string]int, window time.Duration, except ...string) {
	t.Helper()
	start := time.Now()
	err := poll.Until(context.Background(), window, "the end of the quiet window", func(context.Context) error {
		others, err := env.FederationWritesSince(clusters, mark, except...)
		if err != nil {
			return poll.Abort(err)
		}
		if len(others) > 0 {
			return poll.Abort(fmt.Errorf("member writes %s after the mark: %v", time.Since(start).Round(time.Second), others))
		}
		return fmt.Errorf("quiet for %s", time.Since(start).Round(time.Second))
	})
	require.ErrorContains(t, err, "timed out", "no member write for %s", window)
}
