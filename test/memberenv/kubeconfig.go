package memberenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// credential is a token user of a member apiserver.
type credential struct {
	User   string
	Token  string
	Groups []string
}

func newCredential(user string, groups ...string) (credential, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return credential{}, err
	}
	return credential{User: user, Token: hex.EncodeToString(b), Groups: groups}, nil
}

// writeTokenFile writes kube-apiserver's --token-auth-file: token,user,uid,"groups".
func writeTokenFile(path string, creds []credential) error {
	var b strings.Builder
	for _, c := range creds {
		fmt.Fprintf(&b, "%s,%s,%s,\"%s\"\n", c.Token, c.User, c.User, strings.Join(c.Groups, ","))
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// contextEntry is one context of a kubeconfig: a server reached with a token.
type contextEntry struct {
	Name   string
	Server string
	Token  string
}

// kubeconfig builds a kubeconfig whose contexts share the environment CA;
// cluster, user and context of each entry are all named entry.Name.
func kubeconfig(caPEM []byte, entries []contextEntry) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	for _, e := range entries {
		cfg.Clusters[e.Name] = &clientcmdapi.Cluster{Server: e.Server, CertificateAuthorityData: caPEM}
		cfg.AuthInfos[e.Name] = &clientcmdapi.AuthInfo{Token: e.Token}
		cfg.Contexts[e.Name] = &clientcmdapi.Context{Cluster: e.Name, AuthInfo: e.Name}
	}
	if len(entries) > 0 {
		cfg.CurrentContext = entries[0].Name
	}
	return cfg
}

func writeKubeconfig(path string, caPEM []byte, entries ...contextEntry) error {
	return clientcmd.WriteToFile(*kubeconfig(caPEM, entries), path)
}

// MergeKubeconfig copies the environment's contexts into the user's
// kubeconfig (KUBECONFIG or ~/.kube/config), replacing entries of the same
// name and leaving the current context alone.
func MergeKubeconfig(envKubeconfig string) error {
	ours, err := clientcmd.LoadFromFile(envKubeconfig)
	if err != nil {
		return err
	}
	access := clientcmd.NewDefaultPathOptions()
	theirs, err := access.GetStartingConfig()
	if err != nil {
		return err
	}
	for name, c := range ours.Clusters {
		theirs.Clusters[name] = c
	}
	for name, a := range ours.AuthInfos {
		theirs.AuthInfos[name] = a
	}
	for name, c := range ours.Contexts {
		theirs.Contexts[name] = c
	}
	return clientcmd.ModifyConfig(access, *theirs, true)
}
