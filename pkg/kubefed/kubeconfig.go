package kubefed

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// addContext copies the single context of entry (cluster, user and context
// all named name) into the user's kubeconfig; the current context stays.
func addContext(access clientcmd.ConfigAccess, name string, entry *clientcmdapi.Config) error {
	cfg, err := access.GetStartingConfig()
	if err != nil {
		return fmt.Errorf("reading kubeconfig: %w", err)
	}
	cfg.Clusters[name] = entry.Clusters[name]
	cfg.AuthInfos[name] = entry.AuthInfos[name]
	cfg.Contexts[name] = entry.Contexts[name]
	return clientcmd.ModifyConfig(access, *cfg, true)
}

// removeContext deletes the cluster, user and context named name from the
// user's kubeconfig, and the current context when it was that one.
func removeContext(access clientcmd.ConfigAccess, name string) error {
	cfg, err := access.GetStartingConfig()
	if err != nil {
		return fmt.Errorf("reading kubeconfig: %w", err)
	}
	delete(cfg.Clusters, name)
	delete(cfg.AuthInfos, name)
	delete(cfg.Contexts, name)
	if cfg.CurrentContext == name {
		cfg.CurrentContext = ""
	}
	return clientcmd.ModifyConfig(access, *cfg, true)
}
