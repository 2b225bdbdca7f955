package apiserver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAuthentication checks that requests without credentials or with a
// wrong token are rejected with 401, and that the good token and the good
// client certificate are accepted, with each kubectl.
func TestAuthentication(t *testing.T) {
	status, _ := shared.request(t, http.MethodGet, "/api/v1/namespaces", "", "", "")
	assert.Equal(t, http.StatusUnauthorized, status, "no credentials")
	status, _ = shared.request(t, http.MethodGet, "/api/v1/namespaces", "wrong-token", "", "")
	assert.Equal(t, http.StatusUnauthorized, status, "wrong token")
	status, _ = shared.request(t, http.MethodGet, "/healthz", "", "", "")
	assert.Equal(t, http.StatusUnauthorized, status, "no credentials for /healthz")

	for _, path := range kubectls {
		t.Run(newKubectl(t, path, "").version(), func(t *testing.T) {
			// Without credentials kubectl asks for a user name on stdin
			// (and reads EOF); the 401 itself is checked above.
			newKubectl(t, path, shared.anonymousConfig).fails(t, "", "get", "namespaces")
			stderr := newKubectl(t, path, shared.badTokenConfig).fails(t, "", "get", "namespaces")
			assert.Contains(t, stderr, "the server has asked for the client to provide credentials")
			for _, config := range []string{shared.tokenConfig, shared.certConfig} {
				k := newKubectl(t, path, config)
				k.must(t, "", "get", "namespaces")
				k.must(t, "", "get", "clusters")
			}
		})
	}
}
