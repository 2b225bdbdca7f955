package processplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/federation-v1/federation/pkg/freeport"
)

// EtcdProgram is the etcd binary the members of an HA plane's etcd cluster
// run (`make build` builds it into bin/ from the version the apiserver
// embeds).
const EtcdProgram = "etcd"

// EtcdMember is one member of an HA plane's etcd cluster, on 127.0.0.1.
type EtcdMember struct {
	// Name is the member's etcd --name and its instance name (etcd-0).
	Name       string `json:"name"`
	ClientPort int    `json:"clientPort"`
	PeerPort   int    `json:"peerPort"`
}

// ClientURL serves the member's clients, over TLS to client certificates
// of the plane's etcd CA only.
func (m EtcdMember) ClientURL() string {
	return "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(m.ClientPort))
}

// PeerURL is where the other members reach it, over TLS both ways.
func (m EtcdMember) PeerURL() string {
	return "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(m.PeerPort))
}

// Credentials of an HA plane's etcd cluster, from the plane's etcd CA
// (see createEtcdCredentials); the serving certificate is etcdServingCert.
const (
	etcdPeerCert      = "pki/etcd-peer.crt"
	etcdPeerKey       = "pki/etcd-peer.key"
	etcdAPIServerCert = "pki/etcd-apiserver.crt"
	etcdAPIServerKey  = "pki/etcd-apiserver.key"
	// etcdAdminCert is kubefed's own (backup) and tests'.
	etcdAdminCert = "pki/etcd-admin.crt"
	etcdAdminKey  = "pki/etcd-admin.key"
)

// planEtcdMembers picks the ports of a new etcd cluster.
func (p *Plane) planEtcdMembers() error {
	p.EtcdMembers = nil
	for i := range haEtcdMembers {
		ports := make([]int, 2)
		for j := range ports {
			port, err := freeport.Pick("127.0.0.1")
			if err != nil {
				return err
			}
			ports[j] = port
		}
		p.EtcdMembers = append(p.EtcdMembers, EtcdMember{Name: instanceName(EtcdProgram, i), ClientPort: ports[0], PeerPort: ports[1]})
	}
	return nil
}

// etcdClientURLs are the client URLs of every member.
func (p *Plane) etcdClientURLs() []string {
	var urls []string
	for _, m := range p.EtcdMembers {
		urls = append(urls, m.ClientURL())
	}
	return urls
}

// etcdClusterToken keeps two planes' clusters apart should their
// members ever reach each other.
func (p *Plane) etcdClusterToken() string { return "federation-" + p.Name }

// initialCluster is etcd's --initial-cluster: every member's peer URL.
func (p *Plane) initialCluster() string {
	var members []string
	for _, m := range p.EtcdMembers {
		members = append(members, m.Name+"="+m.PeerURL())
	}
	return strings.Join(members, ",")
}

// etcdArgs run member m with its data in the plane's data folder. The
// --initial-* flags only matter the first time: a member with data rejoins
// the cluster its data records.
func etcdArgs(p *Plane, m EtcdMember) []string {
	return []string{
		"--name=" + m.Name,
		"--data-dir=" + p.path(dataFolder, m.Name),
		"--listen-client-urls=" + m.ClientURL(),
		"--advertise-client-urls=" + m.ClientURL(),
		"--listen-peer-urls=" + m.PeerURL(),
		"--initial-advertise-peer-urls=" + m.PeerURL(),
		"--initial-cluster=" + p.initialCluster(),
		"--initial-cluster-state=new",
		"--initial-cluster-token=" + p.etcdClusterToken(),
		"--client-cert-auth",
		"--trusted-ca-file=" + p.path(etcdCACert),
		"--cert-file=" + p.path(etcdServingCert),
		"--key-file=" + p.path(etcdServingKey),
		"--peer-client-cert-auth",
		"--peer-trusted-ca-file=" + p.path(etcdCACert),
		"--peer-cert-file=" + p.path(etcdPeerCert),
		"--peer-key-file=" + p.path(etcdPeerKey),
		// Nothing uses etcd's JSON gateway, which would dial the client
		// port with the serving certificate as a client certificate
		// (as in pkg/embeddedetcd).
		"--enable-grpc-gateway=false",
	}
}

// etcdClientArgs point an apiserver at the etcd cluster.
func etcdClientArgs(p *Plane) []string {
	return []string{
		"--etcd-servers=" + strings.Join(p.etcdClientURLs(), ","),
		"--etcd-cafile=" + p.path(etcdCACert),
		"--etcd-certfile=" + p.path(etcdAPIServerCert),
		"--etcd-keyfile=" + p.path(etcdAPIServerKey),
	}
}

// etcdTLSConfig trusts the plane's etcd CA and authenticates with
// certFile, as the members require.
func (p *Plane) etcdTLSConfig(certFile, keyFile string) (*tls.Config, error) {
	roots, err := p.certPool(etcdCACert)
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(p.path(certFile), p.path(keyFile))
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// EtcdClient is a client of the plane's own etcd: an HA plane's members
// (over TLS, as the plane's etcd admin), or a single plane's embedded etcd
// (its private socket, while the apiserver runs). A plane on --etcd-servers
// has none (ErrExternalEtcd). The caller closes it.
func (p *Plane) EtcdClient() (*clientv3.Client, error) {
	if err := p.ownsEtcd(); err != nil {
		return nil, err
	}
	cfg := clientv3.Config{Endpoints: []string{p.etcdEndpoint()}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()}
	if len(p.EtcdMembers) > 0 {
		tlsConfig, err := p.etcdTLSConfig(etcdAdminCert, etcdAdminKey)
		if err != nil {
			return nil, fmt.Errorf("reading the etcd credentials of federation %q: %w", p.Name, err)
		}
		cfg.Endpoints, cfg.TLS = p.etcdClientURLs(), tlsConfig
	}
	client, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("reaching the etcd of federation %q: %w", p.Name, err)
	}
	return client, nil
}

// etcdHealthy fails unless member m answers its /health with a leader.
func (p *Plane) etcdHealthy(ctx context.Context, m EtcdMember) error {
	tlsConfig, err := p.etcdTLSConfig(etcdAdminCert, etcdAdminKey)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.ClientURL()+"/health", nil)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s/health: %s", m.ClientURL(), resp.Status)
	}
	return nil
}

// etcdMember returns the member named name.
func (p *Plane) etcdMember(name string) (EtcdMember, bool) {
	for _, m := range p.EtcdMembers {
		if m.Name == name {
			return m, true
		}
	}
	return EtcdMember{}, false
}
