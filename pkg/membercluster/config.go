// Package membercluster turns a registered Cluster and its credentials
// Secret into a client configuration for the member's API server.
package membercluster

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Keys of a member's credentials Secret in the federation-system namespace:
// either a whole kubeconfig, or a bearer token with the member's CA.
const (
	KubeconfigKey = "kubeconfig"
	TokenKey      = "token"
	CAKey         = "ca.crt"
)

// RequestTimeout bounds every call to a member unless the caller sets its
// own: an unreachable member must never block the controllers.
const RequestTimeout = 30 * time.Second

// ClientQPS and ClientBurst limit the calls to each member cluster; every
// member has its own budget.
const (
	ClientQPS   = 100
	ClientBurst = 200
)

// ServerAddress picks the member's address for this control plane: the entry
// for every client (0.0.0.0/0 or ::/0) when there is one, else the first.
func ServerAddress(cluster *federationv1beta1.Cluster) (string, error) {
	entries := cluster.Spec.ServerAddressByClientCIDRs
	for _, e := range entries {
		if e.ClientCIDR == "0.0.0.0/0" || e.ClientCIDR == "::/0" {
			return e.ServerAddress, nil
		}
	}
	if len(entries) == 0 || entries[0].ServerAddress == "" {
		return "", fmt.Errorf("cluster %s has no server address in spec.serverAddressByClientCIDRs", cluster.Name)
	}
	return entries[0].ServerAddress, nil
}

// RESTConfig builds the configuration to reach cluster with the credentials
// in secret. The server always comes from the Cluster, so that editing its
// spec moves the federation to another address.
func RESTConfig(cluster *federationv1beta1.Cluster, secret *corev1.Secret) (*rest.Config, error) {
	server, err := ServerAddress(cluster)
	if err != nil {
		return nil, err
	}
	var cfg *rest.Config
	switch {
	case len(secret.Data[KubeconfigKey]) > 0:
		cfg, err = clientcmd.RESTConfigFromKubeConfig(secret.Data[KubeconfigKey])
		if err != nil {
			return nil, fmt.Errorf("cluster %s: secret %s/%s key %q: %w", cluster.Name, secret.Namespace, secret.Name, KubeconfigKey, err)
		}
	case len(secret.Data[TokenKey]) > 0:
		cfg = &rest.Config{
			BearerToken:     string(secret.Data[TokenKey]),
			TLSClientConfig: rest.TLSClientConfig{CAData: secret.Data[CAKey]},
		}
	default:
		return nil, fmt.Errorf("cluster %s: secret %s/%s has neither %q nor %q", cluster.Name, secret.Namespace, secret.Name, KubeconfigKey, TokenKey)
	}
	cfg.Host = server
	cfg.Timeout = RequestTimeout
	cfg.UserAgent = "federation-controller-manager"
	return cfg, nil
}

// SecretNamespace holds the members' credentials Secrets in the federation.
const SecretNamespace = federationv1beta1.SystemNamespace
