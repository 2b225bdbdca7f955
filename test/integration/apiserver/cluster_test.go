package apiserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestClusterStatus checks the Cluster's status rules end to end: create
// clears the status, an update of the cluster keeps it, and an update of
// the status keeps the spec; kubectl prints the status columns.
func TestClusterStatus(t *testing.T) {
	k := newKubectl(t, kubectls[len(kubectls)-1], shared.tokenConfig)
	const name = "status-rules"
	withStatus := fmtManifest("clusters.federation", name, "") + "status:\n  region: ignored\n"
	k.must(t, withStatus, "create", "-f", "-")
	assert.Equal(t, "", k.jsonpath(t, "clusters", "", name, ".status.region"), "create clears status")

	k.must(t, "", "patch", "cluster", name, "--subresource=status", "--type=merge", "-p",
		`{"status":{"conditions":[{"type":"Ready","status":"True"}],"zones":["z1","z2"],"region":"r1"},"spec":{"secretRef":{"name":"changed"}}}`)
	assert.Equal(t, "r1", k.jsonpath(t, "clusters", "", name, ".status.region"))
	assert.Equal(t, name+"-credentials", k.jsonpath(t, "clusters", "", name, ".spec.secretRef.name"), "a status update keeps the spec")

	k.must(t, "", "patch", "cluster", name, "--type=merge", "-p",
		`{"status":{"region":"other"},"spec":{"secretRef":{"name":"changed"}}}`)
	assert.Equal(t, "r1", k.jsonpath(t, "clusters", "", name, ".status.region"), "an update keeps the status")
	assert.Equal(t, "changed", k.jsonpath(t, "clusters", "", name, ".spec.secretRef.name"))

	out := k.must(t, "", "get", "cluster", name)
	assert.Regexp(t, name+`\s+Ready\s+z1,z2\s+r1\s+`, out)

	k.must(t, "", "patch", "cluster", name, "--subresource=status", "--type=merge", "-p",
		`{"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Offline","status":"True"}]}}`)
	assert.Regexp(t, name+`\s+Offline\s+`, k.must(t, "", "get", "cluster", name))

	stderr := k.fails(t, "", "patch", "cluster", name, "--type=merge", "-p", `{"spec":{"serverAddressByClientCIDRs":[]}}`)
	assert.Contains(t, stderr, "spec.serverAddressByClientCIDRs", "an update validates the spec")
	k.must(t, "", "delete", "cluster", name)
}
