package pki

import clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

// Kubeconfig is a kubeconfig for the apiserver at server whose
// cluster, user and context are all named name, with the CA and the
// client certificate and key embedded: how every plane, local or in a
// host cluster, hands out its credentials.
func Kubeconfig(name, server string, ca, cert, key []byte) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return cfg
}
