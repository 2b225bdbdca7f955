package kubefed

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/version"
)

// versionServer answers /version with info, as an apiserver does.
func versionServer(t *testing.T, info apimachineryversion.Info) string {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(info)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestVersionCommand(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	for name, info := range map[string]apimachineryversion.Info{
		"fed":  {GitVersion: "v1.36.3+federation.v0.4.0-2-gabc1234", GitCommit: "abc1234ffff", BuildDate: "2026-11-23T20:00:00Z"},
		"kube": {GitVersion: "v1.32.0"},
	} {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: versionServer(t, info), InsecureSkipTLSVerify: true}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "x"}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	cfg.Contexts["down"] = &clientcmdapi.Context{Cluster: "down", AuthInfo: "fed"}
	cfg.Clusters["down"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true}
	cfg.CurrentContext = "fed"
	require.NoError(t, clientcmd.WriteToFile(*cfg, kubeconfig))

	out, err := runKubefed("version", "--kubeconfig="+kubeconfig)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	assert.Equal(t, "Client Version: "+version.String(), lines[0])
	assert.Equal(t, "Server Version: v0.4.0-2-gabc1234 (commit abc1234ffff, built 2026-11-23T20:00:00Z, serving the API of Kubernetes 1.36.3)", lines[1])

	out, err = runKubefed("version", "--kubeconfig="+kubeconfig, "--context=kube")
	require.NoError(t, err)
	assert.Contains(t, out, "Server Version: v1.32.0 (not a federation apiserver")

	out, err = runKubefed("version", "--kubeconfig="+kubeconfig, "--client", "-o", "json")
	require.NoError(t, err)
	var got versions
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, version.Get(), *got.ClientVersion)
	assert.Nil(t, got.ServerVersion, "--client asks no server")

	out, err = runKubefed("version", "--kubeconfig="+kubeconfig, "--context=down")
	require.ErrorContains(t, err, "reading the version of the server at https://127.0.0.1:1")
	assert.Contains(t, out, "Client Version: ", "the client's version is printed all the same")

	_, err = runKubefed("version", "-o", "wide")
	require.ErrorContains(t, err, `--output "wide": want json or yaml`)

	out, err = runKubefed("--version")
	require.NoError(t, err)
	assert.Equal(t, "kubefed "+version.String()+"\n", out)
}
