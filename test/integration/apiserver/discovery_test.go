package apiserver

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// servedNames are the resources `kubectl api-resources -o name` must list.
var servedNames = []string{
	"certificatesigningrequests.certificates.k8s.io",
	"clusterrolebindings.rbac.authorization.k8s.io",
	"clusterroles.rbac.authorization.k8s.io",
	"clusters.federation",
	"configmaps",
	"cronjobs.batch",
	"customresourcedefinitions.apiextensions.k8s.io",
	"daemonsets.apps",
	"daemonsets.extensions",
	"deployments.apps",
	"deployments.extensions",
	"endpoints",
	"events",
	"horizontalpodautoscalers.autoscaling",
	"ingresses.extensions",
	"ingresses.networking.k8s.io",
	"jobs.batch",
	"leases.coordination.k8s.io",
	"limitranges",
	"localsubjectaccessreviews.authorization.k8s.io",
	"namespaces",
	"networkpolicies.networking.k8s.io",
	"persistentvolumeclaims",
	"persistentvolumes",
	"poddisruptionbudgets.policy",
	"pods",
	"replicasets.apps",
	"replicasets.extensions",
	"replicationcontrollers",
	"resourcequotas",
	"rolebindings.rbac.authorization.k8s.io",
	"roles.rbac.authorization.k8s.io",
	"secrets",
	"selfsubjectaccessreviews.authorization.k8s.io",
	"selfsubjectreviews.authentication.k8s.io",
	"selfsubjectrulesreviews.authorization.k8s.io",
	"serviceaccounts",
	"services",
	"statefulsets.apps",
	"subjectaccessreviews.authorization.k8s.io",
	"tokenreviews.authentication.k8s.io",
}

// servedVersions are the group versions `kubectl api-versions` must list.
var servedVersions = []string{
	"apiextensions.k8s.io/v1",
	"apps/v1",
	"authentication.k8s.io/v1",
	"authorization.k8s.io/v1",
	"autoscaling/v1",
	"autoscaling/v2",
	"batch/v1",
	"certificates.k8s.io/v1",
	"coordination.k8s.io/v1",
	"extensions/v1beta1",
	"federation/v1beta1",
	"networking.k8s.io/v1",
	"policy/v1",
	"rbac.authorization.k8s.io/v1",
	"v1",
}

// TestDiscovery checks that discovery lists exactly the served groups and
// resources, with each kubectl.
func TestDiscovery(t *testing.T) {
	for _, path := range kubectls {
		k := newKubectl(t, path, shared.tokenConfig)
		t.Run(k.version(), func(t *testing.T) {
			assert.Equal(t, servedNames, sortedLines(k.must(t, "", "api-resources", "-o", "name")))
			assert.Equal(t, servedVersions, sortedLines(k.must(t, "", "api-versions")))
		})
	}
}

// TestEndpoints checks the non-resource endpoints: health, version,
// metrics and OpenAPI v2 and v3 for every served group.
func TestEndpoints(t *testing.T) {
	for _, path := range []string{"/healthz", "/livez", "/readyz"} {
		status, body := shared.request(t, http.MethodGet, path, goodToken, "", "")
		assert.Equal(t, http.StatusOK, status, "%s: %s", path, body)
		assert.Equal(t, "ok", body, path)
	}

	// The Kubernetes release served, carrying the federation's build.
	_, body := shared.request(t, http.MethodGet, "/version", goodToken, "", "")
	var version struct{ GitVersion, GitCommit, Major, Minor string }
	require.NoError(t, json.Unmarshal([]byte(body), &version), body)
	require.NotEmpty(t, fedVersion)
	assert.Equal(t, "v1.36.3+federation."+fedVersion, version.GitVersion)
	assert.Len(t, version.GitCommit, 40, "the federation's commit")
	assert.Equal(t, []string{"1", "36"}, []string{version.Major, version.Minor})
	for _, path := range kubectls {
		// kubectl parses gitVersion as semver for its skew warning.
		k := newKubectl(t, path, shared.tokenConfig)
		var versions struct{ ServerVersion struct{ GitVersion string } }
		out := k.must(t, "", "version", "-o", "json")
		require.NoError(t, json.Unmarshal([]byte(out), &versions), out)
		assert.Equal(t, "v1.36.3+federation."+fedVersion, versions.ServerVersion.GitVersion, k.version())
	}

	status, body := shared.request(t, http.MethodGet, "/metrics", goodToken, "", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "apiserver_request_total")

	status, body = shared.request(t, http.MethodGet, "/openapi/v2", goodToken, "", "")
	require.Equal(t, http.StatusOK, status)
	var v2 struct {
		Definitions map[string]struct {
			GVKs []map[string]string `json:"x-kubernetes-group-version-kind"`
		} `json:"definitions"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v2))
	for _, name := range []string{
		"io.k8s.api.core.v1.Namespace", "io.k8s.api.core.v1.Service", "io.k8s.api.core.v1.Secret",
		"io.k8s.api.core.v1.ConfigMap", "io.k8s.api.core.v1.Event", "io.k8s.api.apps.v1.Deployment",
		"io.k8s.api.apps.v1.ReplicaSet", "io.k8s.api.apps.v1.DaemonSet", "io.k8s.api.networking.v1.Ingress",
		"io.k8s.api.batch.v1.Job", "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler",
		"io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler", "io.k8s.api.extensions.v1beta1.Deployment",
		"io.k8s.api.extensions.v1beta1.ReplicaSet", "io.k8s.api.extensions.v1beta1.DaemonSet",
		"io.k8s.api.extensions.v1beta1.Ingress",
	} {
		assert.Contains(t, v2.Definitions, name)
	}
	cluster, ok := v2.Definitions["com.github.federation-v1.federation.pkg.apis.federation.v1beta1.Cluster"]
	require.True(t, ok, "OpenAPI v2 has no Cluster definition")
	assert.Equal(t, []map[string]string{{"group": "federation", "version": "v1beta1", "kind": "Cluster"}}, cluster.GVKs)

	status, body = shared.request(t, http.MethodGet, "/openapi/v3", goodToken, "", "")
	require.Equal(t, http.StatusOK, status)
	var v3 struct {
		Paths map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &v3))
	for _, gv := range servedVersions {
		path := "apis/" + gv
		if gv == "v1" {
			path = "api/v1"
		}
		assert.Contains(t, v3.Paths, path)
	}
	status, body = shared.request(t, http.MethodGet, "/openapi/v3/apis/federation/v1beta1", goodToken, "", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "serverAddressByClientCIDRs")
}

// TestContentTypes checks that clients preferring protobuf get it for
// Kubernetes types and fall back to JSON for Clusters, which have no
// protobuf encoding.
func TestContentTypes(t *testing.T) {
	const protobufFirst = "application/vnd.kubernetes.protobuf, application/json"
	status, body := shared.request(t, http.MethodGet, "/apis/federation/v1beta1/clusters", goodToken, "", "", "Accept", protobufFirst)
	assert.Equal(t, http.StatusOK, status, body)
	assert.Contains(t, body, `"kind":"ClusterList"`)

	status, body = shared.request(t, http.MethodGet, "/api/v1/namespaces", goodToken, "", "", "Accept", protobufFirst)
	assert.Equal(t, http.StatusOK, status, body)
	assert.True(t, strings.HasPrefix(body, "k8s\x00"), "namespaces not served as protobuf")
}

// sortedLines splits output into sorted, non-empty lines.
func sortedLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

// readAll reads a response body for an error message.
func readAll(r io.Reader) string {
	b, _ := io.ReadAll(r)
	return string(b)
}
