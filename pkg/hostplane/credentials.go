package hostplane

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/pki"
)

// Keys of the credentials Secret (the chart's certificates.existingSecret),
// mounted by every pod at /etc/federation/pki.
const (
	KeyCA                          = "ca.crt"
	KeyAPIServerCert               = "apiserver.crt"
	KeyAPIServerKey                = "apiserver.key"
	KeyControllerManagerKubeconfig = "controller-manager.kubeconfig"
	KeyControllerManagerCert       = "controller-manager.crt"
	KeyControllerManagerKey        = "controller-manager.key"
	KeyEtcdCA                      = "etcd-ca.crt"
	KeyEtcdServerCert              = "etcd-server.crt"
	KeyEtcdServerKey               = "etcd-server.key"
	KeyEtcdClientCert              = "etcd-client.crt"
	KeyEtcdClientKey               = "etcd-client.key"
	KeyEncryptionConfig            = "encryption-config.yaml"
	// KeyServiceAccountKey signs and verifies the federation's own
	// service-account tokens: one key for every apiserver replica.
	KeyServiceAccountKey = "service-account.key"
)

// SecretKeys are every key of the credentials Secret.
var SecretKeys = []string{
	KeyCA, KeyAPIServerCert, KeyAPIServerKey, KeyControllerManagerKubeconfig,
	KeyControllerManagerCert, KeyControllerManagerKey, KeyEtcdCA, KeyEtcdServerCert,
	KeyEtcdServerKey, KeyEtcdClientCert, KeyEtcdClientKey, KeyEncryptionConfig, KeyServiceAccountKey,
}

// Identity of the person who runs init: an admin (system:masters), as
// with --local. Its key stays in their kubeconfig, never in the host.
const (
	adminUser  = "admin"
	adminGroup = "system:masters"
)

// Credentials are the Secret's data and the admin's client certificate.
type Credentials struct {
	// Data is the credentials Secret's.
	Data map[string][]byte
	// AdminCert and AdminKey are the admin's, for the kubeconfig only.
	AdminCert, AdminKey []byte
}

// IssueCredentials issues new credentials for the plane the layout
// describes: a federation CA (serving and clients) and a separate etcd CA
// (tenants signed by the federation CA must not read etcd). Neither CA's
// key is kept: nothing else is ever signed by them. From an earlier
// Secret's data (nil: none) two keys are kept, each made when missing: the
// encryption configuration (a new key would make every stored Secret
// unreadable) and the service-account signing key (tokens already handed
// out stay valid).
func IssueCredentials(l Layout, earlier map[string][]byte) (*Credentials, error) {
	// pki writes PEM files; they go to a private folder removed on return.
	dir, err := os.MkdirTemp("", "kubefed-credentials-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	files := map[string][]byte{}
	read := func(names ...string) error {
		for _, n := range names {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				return err
			}
			files[n] = b
		}
		return nil
	}
	at := func(n string) string { return filepath.Join(dir, n) }

	ca, err := pki.NewCA("federation-" + l.Name + "-ca")
	if err != nil {
		return nil, err
	}
	etcdCA, err := pki.NewCA("federation-" + l.Name + "-etcd-ca")
	if err != nil {
		return nil, err
	}
	err = errors.Join(
		ca.IssueServing(at(KeyAPIServerCert), at(KeyAPIServerKey), "federation-apiserver", l.APIServerHosts()...),
		ca.IssueServing(at(KeyControllerManagerCert), at(KeyControllerManagerKey), "federation-controller-manager",
			l.ServiceHosts(l.ControllerManagerService())...),
		ca.IssueClient(at("cm-client.crt"), at("cm-client.key"), federationv1beta1.ControllerManagerUser),
		ca.IssueClient(at("admin.crt"), at("admin.key"), adminUser, adminGroup),
		etcdCA.IssuePeer(at(KeyEtcdServerCert), at(KeyEtcdServerKey), "federation-etcd", l.EtcdHosts()...),
		etcdCA.IssueClient(at(KeyEtcdClientCert), at(KeyEtcdClientKey), "federation-etcd-client"),
	)
	if err == nil {
		err = read(KeyAPIServerCert, KeyAPIServerKey, KeyControllerManagerCert, KeyControllerManagerKey,
			"cm-client.crt", "cm-client.key", "admin.crt", "admin.key",
			KeyEtcdServerCert, KeyEtcdServerKey, KeyEtcdClientCert, KeyEtcdClientKey)
	}
	if err != nil {
		return nil, fmt.Errorf("issuing the federation's credentials: %w", err)
	}
	encryptionConfig := earlier[KeyEncryptionConfig]
	if encryptionConfig == nil {
		if encryptionConfig, err = pki.NewEncryptionConfig(); err != nil {
			return nil, err
		}
	}
	cmKubeconfig, err := clientcmd.Write(*pki.Kubeconfig(federationv1beta1.ControllerManagerUser, l.InternalAPIServerURL(),
		ca.CertPEM(), files["cm-client.crt"], files["cm-client.key"]))
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{
		KeyCA:                          ca.CertPEM(),
		KeyControllerManagerKubeconfig: cmKubeconfig,
		KeyEtcdCA:                      etcdCA.CertPEM(),
		KeyEncryptionConfig:            encryptionConfig,
		KeyServiceAccountKey:           earlier[KeyServiceAccountKey],
	}
	if err := EnsureServiceAccountKey(data); err != nil {
		return nil, err
	}
	for _, k := range []string{KeyAPIServerCert, KeyAPIServerKey, KeyControllerManagerCert, KeyControllerManagerKey,
		KeyEtcdServerCert, KeyEtcdServerKey, KeyEtcdClientCert, KeyEtcdClientKey} {
		data[k] = files[k]
	}
	return &Credentials{Data: data, AdminCert: files["admin.crt"], AdminKey: files["admin.key"]}, nil
}

// EnsureServiceAccountKey puts a new service-account signing key into the
// credentials data unless it has one: made at init, and added to the
// Secret of a federation made before tokens were, without reissuing the
// rest. Tokens live as long as their key: it is kept across inits.
func EnsureServiceAccountKey(data map[string][]byte) error {
	if len(data[KeyServiceAccountKey]) > 0 {
		return nil
	}
	key, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return fmt.Errorf("making the service-account signing key: %w", err)
	}
	data[KeyServiceAccountKey] = key
	return nil
}

// AdminKubeconfig is the admin's kubeconfig of the federation at server:
// cluster, user and context all named after it, everything embedded.
func (c *Credentials) AdminKubeconfig(name, server string) *clientcmdapi.Config {
	return pki.Kubeconfig(name, server, c.Data[KeyCA], c.AdminCert, c.AdminKey)
}

// Reusable says why the credentials in an existing Secret cannot serve the
// plane the layout describes (nil: they can, and re-running init keeps
// them): a key missing, a host the apiserver's certificate lacks, or the
// controller manager pointed elsewhere.
func Reusable(data map[string][]byte, l Layout) error {
	for _, k := range SecretKeys {
		if len(data[k]) == 0 {
			return fmt.Errorf("it has no %s", k)
		}
	}
	certs, err := certutil.ParseCertsPEM(data[KeyAPIServerCert])
	if err != nil {
		return fmt.Errorf("%s: %w", KeyAPIServerCert, err)
	}
	for _, h := range l.APIServerHosts() {
		if err := certs[0].VerifyHostname(h); err != nil {
			return fmt.Errorf("the apiserver's certificate is not valid for %s", h)
		}
	}
	cfg, err := clientcmd.Load(data[KeyControllerManagerKubeconfig])
	if err != nil {
		return fmt.Errorf("%s: %w", KeyControllerManagerKubeconfig, err)
	}
	for _, c := range cfg.Clusters {
		if c.Server != l.InternalAPIServerURL() {
			return fmt.Errorf("the controller manager's kubeconfig points at %s, not %s", c.Server, l.InternalAPIServerURL())
		}
	}
	return nil
}

// SignedBy checks that certPEM is a client certificate of the CA caPEM:
// the admin's certificate in a kubeconfig still works with these credentials.
func SignedBy(certPEM, caPEM []byte) error {
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return fmt.Errorf("no CA certificate in %s", KeyCA)
	}
	_, err = certs[0].Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return err
}
