package proxy_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/tunnel/wire"
	"github.com/federation-v1/federation/test/fedenv"
)

// memberContexts writes USER/CLUSTER contexts (TEMPORARY until kubefed kubeconfig).
func memberContexts(t *testing.T, u *fedenv.User, user string, clusters ...string) {
	cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
	require.NoError(t, err)
	base := cfg.Clusters[cfg.Contexts[user].Cluster]
	if len(clusters) == 0 {
		clusters = members
	}
	for _, c := range clusters {
		cl := base.DeepCopy()
		cl.Server = base.Server + wire.ProxyPath(c)
		cfg.Clusters[user+"/"+c] = cl
		cfg.Contexts[user+"/"+c] = &clientcmdapi.Context{Cluster: user + "/" + c, AuthInfo: cfg.Contexts[user].AuthInfo}
	}
	require.NoError(t, clientcmd.WriteToFile(*cfg, u.Kubeconfig))
}
