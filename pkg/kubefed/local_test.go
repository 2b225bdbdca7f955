package kubefed

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/processplane"
)

func TestCommandsOnAFederationWhoseRecordedFolderIsGone(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	gone := filepath.Join(t.TempDir(), "fed")
	reg, err := processplane.DefaultRegistry()
	require.NoError(t, err)
	require.NoError(t, reg.Record("fed", gone))
	require.NoError(t, reg.Record("keep", filepath.Join(t.TempDir(), "keep")))
	kubeconfig := filepath.Join(home, "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	for _, name := range []string{"fed", "keep"} {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: "x"}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	require.NoError(t, clientcmd.WriteToFile(*cfg, kubeconfig))

	for _, args := range [][]string{{"start"}, {"stop"}, {"backup", "-o", filepath.Join(home, "snap")}} {
		_, err := runKubefed(append(args, "fed", "--kubeconfig="+kubeconfig)...)
		require.Error(t, err, args[0])
		assert.Contains(t, err.Error(), `federation "fed" was created in `+gone+" (recorded in "+reg.Path()+"), which holds no federation any more", args[0])
	}
	_, err = runKubefed("delete", "fed", "--kubeconfig="+kubeconfig)
	require.ErrorContains(t, err, "add --local")
	_, ok, _ := reg.Lookup("fed")
	assert.True(t, ok, "nothing forgotten without --local")

	out, err := runKubefed("delete", "fed", "--local", "--kubeconfig="+kubeconfig)
	require.NoError(t, err)
	assert.Equal(t, `Federation "fed": its folder `+gone+" was gone already; its record and kubeconfig entries are removed\n", out)
	_, ok, _ = reg.Lookup("fed")
	assert.False(t, ok)
	_, ok, _ = reg.Lookup("keep")
	assert.True(t, ok)
	after, err := clientcmd.LoadFromFile(kubeconfig)
	require.NoError(t, err)
	assert.NotContains(t, after.Contexts, "fed")
	assert.Contains(t, after.Contexts, "keep")

	_, err = runKubefed("delete", "fed", "--local", "--kubeconfig="+kubeconfig)
	require.ErrorContains(t, err, `no local federation "fed": none recorded in `+reg.Path())
}
