package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const clustersPath = "/apis/federation/v1beta1/clusters"

// clusterJSON is a Cluster named name with the given
// serverAddressByClientCIDRs entries (JSON objects).
func clusterJSON(name string, entries ...string) string {
	return fmt.Sprintf(`{"apiVersion":"federation/v1beta1","kind":"Cluster","metadata":{"name":%q},
"spec":{"serverAddressByClientCIDRs":[%s],"secretRef":{"name":"%s-credentials"}}}`, name, strings.Join(entries, ","), name)
}

func entry(cidr, address string) string {
	return fmt.Sprintf(`{"clientCIDR":%q,"serverAddress":%q}`, cidr, address)
}

// TestClusterServerAddressValidation checks that only https://host[:port]
// is accepted as a member's address, on create and on update, with a 422
// naming the field: the member's token is sent there.
func TestClusterServerAddressValidation(t *testing.T) {
	const addressField = "spec.serverAddressByClientCIDRs[0].serverAddress"
	refused := map[string]string{
		"http":             "http://127.0.0.1:6443",
		"path":             "https://127.0.0.1:6443/any/path",
		"query":            "https://127.0.0.1:6443?x=y",
		"fragment":         "https://127.0.0.1:6443#x",
		"user info":        "https://user:password@127.0.0.1:6443",
		"no scheme":        "127.0.0.1:6443",
		"bad port":         "https://127.0.0.1:99999",
		"bad host":         "https://a_b.example.com",
		"over 2048 chars":  "https://" + strings.Repeat("a.", 1100) + "com",
		"line break":       "https://a.example.com\r\nX-Injected: 1",
		"a unix socket":    "unix:///var/run/docker.sock",
		"scheme-relative":  "//127.0.0.1:6443",
		"an opaque scheme": "https:127.0.0.1",
	}
	for name, address := range refused {
		t.Run("create refuses "+name, func(t *testing.T) {
			status, body := shared.request(t, http.MethodPost, clustersPath, goodToken, "application/json",
				clusterJSON("cv-refused", entry("0.0.0.0/0", address)))
			assert.Equal(t, http.StatusUnprocessableEntity, status, body)
			assert.Contains(t, body, addressField)
		})
	}

	t.Run("create refuses a bad CIDR and too many entries", func(t *testing.T) {
		status, body := shared.request(t, http.MethodPost, clustersPath, goodToken, "application/json",
			clusterJSON("cv-refused", entry("0.0.0.0/0", "https://a"), entry("10.0.0.0/33", "https://b")))
		assert.Equal(t, http.StatusUnprocessableEntity, status, body)
		assert.Contains(t, body, "spec.serverAddressByClientCIDRs[1].clientCIDR")

		var entries []string
		for i := range 17 {
			entries = append(entries, entry(fmt.Sprintf("10.%d.0.0/16", i), "https://a"))
		}
		status, body = shared.request(t, http.MethodPost, clustersPath, goodToken, "application/json", clusterJSON("cv-refused", entries...))
		assert.Equal(t, http.StatusUnprocessableEntity, status, body)
		assert.Contains(t, body, "spec.serverAddressByClientCIDRs")
		assert.Contains(t, body, "must have at most 16 items")
	})

	k := newKubectl(t, kubectls[len(kubectls)-1], shared.tokenConfig)
	const name = "cv-accepted"
	for i, address := range []string{"https://10.1.2.3:6443", "https://api.example.com", "https://[2001:db8::1]:443", "https://api.example.com/"} {
		t.Run("accepts "+address, func(t *testing.T) {
			verb := "create"
			if i > 0 {
				verb = "replace"
			}
			k.must(t, clusterJSON(name, entry("0.0.0.0/0", address)), verb, "-f", "-")
			assert.Equal(t, address, k.jsonpath(t, "clusters", "", name, ".spec.serverAddressByClientCIDRs[0].serverAddress"))
		})
	}
	t.Run("kubectl apply and patch name the field", func(t *testing.T) {
		stderr := k.fails(t, clusterJSON(name, entry("0.0.0.0/0", "http://10.1.2.3:6443")), "apply", "-f", "-")
		assert.Contains(t, stderr, addressField)
		stderr = k.fails(t, "", "patch", "cluster", name, "--type=merge", "-p",
			`{"spec":{"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"https://10.1.2.3:6443/api"}]}}`)
		assert.Contains(t, stderr, addressField)
		assert.Equal(t, "https://api.example.com/", k.jsonpath(t, "clusters", "", name, ".spec.serverAddressByClientCIDRs[0].serverAddress"),
			"a refused update changes nothing")
	})
	k.must(t, "", "delete", "cluster", name)
}

// TestClusterStatusValidation checks that the status subresource refuses a
// region or zone that is not a DNS-1123 label (they become labels of the
// Services' DNS names) and more than 64 zones, naming the field.
func TestClusterStatusValidation(t *testing.T) {
	k := newKubectl(t, kubectls[len(kubectls)-1], shared.tokenConfig)
	const name = "cv-status"
	k.must(t, fmtManifest("clusters.federation", name, ""), "create", "-f", "-")
	t.Cleanup(func() { k.must(t, "", "delete", "cluster", name) })
	patchStatus := func(status string) []string {
		return []string{"patch", "cluster", name, "--subresource=status", "--type=merge", "-p", `{"status":` + status + `}`}
	}

	k.must(t, "", patchStatus(`{"zones":["us-east1-b","us-east1-c"],"region":"us-east1"}`)...)
	require.Equal(t, "us-east1", k.jsonpath(t, "clusters", "", name, ".status.region"))

	var many []string
	for i := range 65 {
		many = append(many, fmt.Sprintf("%q", fmt.Sprint("z", i)))
	}
	const notALabel = "Invalid value"
	cases := []struct{ name, status, field, why string }{
		{"a slash in the region", `{"region":"a/b"}`, "status.region", notALabel},
		{"a dot in the region", `{"region":"svc.victim"}`, "status.region", notALabel},
		{"an upper-case region", `{"region":"US"}`, "status.region", notALabel},
		{"a wildcard zone", `{"zones":["us-east1-b","*"]}`, "status.zones[1]", notALabel},
		{"a dot in a zone", `{"zones":["victim.default"]}`, "status.zones[0]", notALabel},
		{"a slash in a zone", `{"zones":["a/b"]}`, "status.zones[0]", notALabel},
		{"too many zones", `{"zones":[` + strings.Join(many, ",") + `]}`, "status.zones", "must have at most 64 items"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stderr := k.fails(t, "", patchStatus(c.status)...)
			assert.Contains(t, stderr, c.field)
			assert.Contains(t, stderr, c.why)
		})
	}
	t.Run("a direct PUT of the status is refused with a 422", func(t *testing.T) {
		body := k.must(t, "", "get", "cluster", name, "-o", "json")
		body = strings.Replace(body, `"region": "us-east1"`, `"region": "a/b"`, 1)
		status, answer := shared.request(t, http.MethodPut, clustersPath+"/"+name+"/status", goodToken, "application/json", body)
		assert.Equal(t, http.StatusUnprocessableEntity, status, answer)
		assert.Contains(t, answer, "status.region")
	})
	assert.Equal(t, "us-east1", k.jsonpath(t, "clusters", "", name, ".status.region"), "refused updates changed nothing")
	assert.Equal(t, "us-east1-b us-east1-c", k.jsonpath(t, "clusters", "", name, ".status.zones[*]"))
}
