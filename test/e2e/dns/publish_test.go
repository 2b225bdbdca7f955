package dns_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/fedenv"
)

// TestDNSSettingsKeptPublished checks that the controller manager keeps the
// DNS settings kubefed join reads (federation-system/federation-dns) as
// kubefed init publishes them: deleted, or pointed elsewhere, by hand, they
// come back, with nobody running kubefed again. A control plane run in a
// cluster has no kubefed init --local: there the controller manager alone
// publishes them.
func TestDNSSettingsKeptPublished(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	out := u.InitFederation("federation", "--dns-provider=coredns", "--dns-zone-name=example.com.")
	m := regexp.MustCompile(`is answering at: (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	want := "example.com. " + m[1]
	k := u.Kubectl()
	published := func(ctx context.Context) error {
		got, err := k.Run(ctx, "--context=federation", "-n", "federation-system", "get", "configmap", "federation-dns",
			"-o", "jsonpath={.data.zone} {.data.server}")
		if err != nil {
			return err
		}
		if strings.TrimSpace(got) != want {
			return fmt.Errorf("it holds %q, not %q", got, want)
		}
		return nil
	}
	require.NoError(t, poll.Until(ctx, 10*time.Second, "the DNS settings kubefed init published", published))

	_, err := k.Run(ctx, "--context=federation", "-n", "federation-system", "delete", "configmap", "federation-dns")
	require.NoError(t, err)
	require.NoError(t, poll.Until(ctx, 30*time.Second, "the deleted DNS settings published again", published))

	_, err = k.Run(ctx, "--context=federation", "-n", "federation-system", "patch", "configmap", "federation-dns",
		"--type=merge", "-p", `{"data":{"server":"203.0.113.1:53"}}`)
	require.NoError(t, err)
	require.NoError(t, poll.Until(ctx, 30*time.Second, "the changed DNS settings published again", published))
}
