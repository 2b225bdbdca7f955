package fedenv

import (
	"path/filepath"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/pki"
)

// AddUser issues user (in groups) a client certificate from the CA of the
// local federation fed and adds a kubeconfig context of the user's name
// that reaches fed with it.
func (u *User) AddUser(fed, user string, groups ...string) {
	u.T.Helper()
	plane := u.PlaneDir(fed)
	ca, err := pki.LoadCA(filepath.Join(plane, "pki", "ca.crt"), filepath.Join(plane, "pki", "ca.key"))
	require.NoError(u.T, err)
	dir := u.T.TempDir()
	cert, key := filepath.Join(dir, user+".crt"), filepath.Join(dir, user+".key")
	require.NoError(u.T, ca.IssueClient(cert, key, user, groups...))
	cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
	require.NoError(u.T, err)
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificate: cert, ClientKey: key}
	cfg.Contexts[user] = &clientcmdapi.Context{Cluster: cfg.Contexts[fed].Cluster, AuthInfo: user}
	require.NoError(u.T, clientcmd.WriteToFile(*cfg, u.Kubeconfig))
}
