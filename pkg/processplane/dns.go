package processplane

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/pki"
)

// DNSServerProgram is the program name of the federation DNS server.
const DNSServerProgram = "federation-dns"

// Files of the DNS set-up, relative to the plane's folder.
const (
	corefile = "Corefile"
	// ProviderConfig is the v1 coredns-provider.conf describing this plane's
	// DNS: where its records go (etcd) and who serves them.
	ProviderConfig = "coredns-provider.conf"
)

// DNSServer is the plane's own DNS server: a CoreDNS build serving the zone
// from the records the controller manager writes under /skydns in etcd.
type DNSServer struct {
	// Address answers DNS queries (UDP and TCP).
	Address string `json:"address"`
	// EtcdEndpoints hold the records: the apiserver's embedded etcd, an HA
	// plane's etcd members, or the external etcd.
	EtcdEndpoints []string `json:"etcdEndpoints"`
	// EmbeddedEtcdPort is where the apiserver's embedded etcd serves clients
	// (0 with an external etcd).
	EmbeddedEtcdPort int `json:"embeddedEtcdPort,omitempty"`
	// EtcdTLS: the etcd serves over TLS to clients with a certificate of
	// the plane's etcd CA only (the embedded etcd's port, or an HA plane's
	// members). A plane made before the embedded etcd's port had TLS is
	// switched to it at its next start.
	EtcdTLS bool `json:"etcdTLS,omitempty"`
	// HealthAddress and ReadyAddress serve /health and /ready; MetricsAddress /metrics.
	HealthAddress  string `json:"healthAddress"`
	ReadyAddress   string `json:"readyAddress"`
	MetricsAddress string `json:"metricsAddress"`
}

// planDNS picks the DNS server's ports, when the plane runs one.
func (p *Plane) planDNS() error {
	if p.DNSZone == "" || p.DNSProviderConfig != "" {
		return nil
	}
	host := bindAddress(p.Options)
	ports := make([]int, 4)
	for i := range ports {
		port, err := freeport.Pick("127.0.0.1")
		if err != nil {
			return err
		}
		ports[i] = port
	}
	if p.DNSPort != 0 {
		ports[0] = p.DNSPort
	}
	d := &DNSServer{
		Address:        net.JoinHostPort(host, strconv.Itoa(ports[0])),
		HealthAddress:  "127.0.0.1:" + strconv.Itoa(ports[1]),
		ReadyAddress:   "127.0.0.1:" + strconv.Itoa(ports[2]),
		MetricsAddress: "127.0.0.1:" + strconv.Itoa(ports[3]),
		EtcdEndpoints:  p.EtcdServers,
	}
	switch {
	case len(p.EtcdMembers) > 0:
		d.EtcdEndpoints, d.EtcdTLS = p.etcdClientURLs(), true
	case len(p.EtcdServers) == 0:
		port, err := freeport.Pick("127.0.0.1")
		if err != nil {
			return err
		}
		d.EmbeddedEtcdPort = port
		d.useEtcdTLS()
	}
	p.DNS = d
	return nil
}

// useEtcdTLS points the DNS server and the DNS writer at the embedded etcd's
// TLS port.
func (d *DNSServer) useEtcdTLS() {
	d.EtcdTLS = true
	d.EtcdEndpoints = []string{fmt.Sprintf("https://127.0.0.1:%d", d.EmbeddedEtcdPort)}
}

// Credentials of the embedded etcd's client port, relative to the plane's
// folder. Their CA is not the plane's: that one also signs the apiserver's
// users (tenants among them), and none of them may read etcd directly.
const (
	etcdCACert         = "pki/etcd-ca.crt"
	etcdCAKey          = "pki/etcd-ca.key"
	etcdServingCert    = "pki/etcd-server.crt"
	etcdServingKey     = "pki/etcd-server.key"
	etcdDNSCert        = "pki/etcd-federation-dns.crt"
	etcdDNSKey         = "pki/etcd-federation-dns.key"
	etcdControllerCert = "pki/etcd-controller-manager.crt"
	etcdControllerKey  = "pki/etcd-controller-manager.key"
)

// createEtcdCredentials writes the etcd CA and the etcd's serving
// certificate for 127.0.0.1 when the plane's own etcd serves TLS clients:
// with DNS, the client certificates of federation-dns and the controller
// manager; with an HA plane's etcd cluster, its members' peer certificate
// and the client certificates of the apiservers and of kubefed itself.
func (p *Plane) createEtcdCredentials() error {
	dns := p.DNS != nil && p.DNS.EtcdTLS
	if !dns && len(p.EtcdMembers) == 0 {
		return nil
	}
	ca, err := pki.NewCA("federation-" + p.Name + "-etcd-ca")
	if err != nil {
		return err
	}
	if err := ca.WriteFiles(p.path(etcdCACert), p.path(etcdCAKey)); err != nil {
		return err
	}
	if err := ca.IssueServing(p.path(etcdServingCert), p.path(etcdServingKey), "federation-etcd"); err != nil {
		return err
	}
	clients := map[string][2]string{}
	if dns {
		clients[DNSServerProgram] = [2]string{etcdDNSCert, etcdDNSKey}
		clients[ControllerManager] = [2]string{etcdControllerCert, etcdControllerKey}
	}
	if len(p.EtcdMembers) > 0 {
		if err := ca.IssuePeer(p.path(etcdPeerCert), p.path(etcdPeerKey), "federation-etcd-peer"); err != nil {
			return err
		}
		clients[APIServer] = [2]string{etcdAPIServerCert, etcdAPIServerKey}
		clients["kubefed"] = [2]string{etcdAdminCert, etcdAdminKey}
	}
	for user, files := range clients {
		if err := ca.IssueClient(p.path(files[0]), p.path(files[1]), user); err != nil {
			return err
		}
	}
	return nil
}

// ensureEtcdClientTLS switches a plane made before the embedded etcd's port
// had TLS to it: credentials, endpoints and DNS files. Only while none of
// its programs runs, so that they all start with the same.
func (p *Plane) ensureEtcdClientTLS() error {
	if p.DNS == nil || p.DNS.EmbeddedEtcdPort == 0 || p.DNS.EtcdTLS || p.Running() {
		return nil
	}
	p.DNS.useEtcdTLS()
	if err := p.createEtcdCredentials(); err != nil {
		return err
	}
	if err := p.writeDNSFiles(); err != nil {
		return err
	}
	return p.save()
}

// etcdClientTLSArgs make the apiserver's embedded etcd serve its client
// port over TLS to the holders of the etcd CA's certificates.
func etcdClientTLSArgs(p *Plane) []string {
	if p.DNS == nil || !p.DNS.EtcdTLS {
		return nil
	}
	return []string{
		"--embedded-etcd-tls-cert-file=" + p.path(etcdServingCert),
		"--embedded-etcd-tls-private-key-file=" + p.path(etcdServingKey),
		"--embedded-etcd-client-ca-file=" + p.path(etcdCACert),
	}
}

// DNSCacheSeconds caps how long federation-dns serves an answer from its
// cache: the cache multiplies the queries it can answer (every miss is an
// etcd read), and the cap keeps a changed record visible within seconds.
// Every query is not logged (add the log plugin to the Corefile for that):
// logging costs more than answering.
const DNSCacheSeconds = 2

var corefileTemplate = template.Must(template.New("Corefile").Parse(`# Written by kubefed init: the federation zone, served from etcd.
{{.Zone}}:{{.Port}} {
    bind {{.Host}}
    etcd {{.Zone}} {
        endpoint {{.Endpoints}}
        path /skydns
{{- if .TLS}}
        tls {{.TLS}}
{{- end}}
    }
    cache {{.CacheSeconds}}
    errors
    health {{.Health}}
    ready {{.Ready}}
    prometheus {{.Metrics}}
    reload
}
`))

var providerConfigTemplate = template.Must(template.New("coredns-provider.conf").Parse(`[Global]
etcd-endpoints = {{.Endpoints}}
zones = {{.Zone}}
coredns-endpoints = {{.Address}}
{{- if .TLS}}
etcd-cert-file = {{.CertFile}}
etcd-key-file = {{.KeyFile}}
etcd-ca-file = {{.CAFile}}
{{- end}}
`))

// writeDNSFiles writes the Corefile of the DNS server and the
// coredns-provider.conf that tells the DNS writer where the records go.
func (p *Plane) writeDNSFiles() error {
	if p.DNS == nil {
		return nil
	}
	host, port, err := net.SplitHostPort(p.DNS.Address)
	if err != nil {
		return err
	}
	zone := strings.TrimSuffix(p.DNSZone, ".") + "."
	values := map[string]string{
		"Zone": zone, "Host": host, "Port": port, "Address": p.DNS.Address,
		"Health": p.DNS.HealthAddress, "Ready": p.DNS.ReadyAddress, "Metrics": p.DNS.MetricsAddress,
		"CacheSeconds": strconv.Itoa(DNSCacheSeconds),
	}
	for name, tmpl := range map[string]*template.Template{corefile: corefileTemplate, ProviderConfig: providerConfigTemplate} {
		values["Endpoints"] = strings.Join(p.DNS.EtcdEndpoints, " ")
		values["TLS"] = ""
		if p.DNS.EtcdTLS {
			// CoreDNS's etcd plugin: tls CERT KEY CACERT.
			values["TLS"] = corefileQuote(p.path(etcdDNSCert)) + " " + corefileQuote(p.path(etcdDNSKey)) + " " + corefileQuote(p.path(etcdCACert))
		}
		if name == ProviderConfig {
			values["Endpoints"] = strings.Join(p.DNS.EtcdEndpoints, ",")
			values["CertFile"], values["KeyFile"], values["CAFile"] = p.path(etcdControllerCert), p.path(etcdControllerKey), p.path(etcdCACert)
		}
		var b strings.Builder
		if err := tmpl.Execute(&b, values); err != nil {
			return err
		}
		if err := os.WriteFile(p.path(name), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// corefileQuote makes a path one Corefile token, spaces and all.
func corefileQuote(path string) string {
	return `"` + strings.ReplaceAll(path, `"`, `\"`) + `"`
}

func dnsArgs(p *Plane) []string {
	return []string{"-conf", p.path(corefile)}
}

// waitDNSReady waits for the DNS server's /ready.
func (p *Plane) waitDNSReady(ctx context.Context) error {
	if p.DNS == nil {
		return nil
	}
	return localprocess.WaitFor(ctx, 30*time.Second, "federation-dns /ready", p.Processes[DNSServerProgram], func() error {
		return httpprobe.GetOK(ctx, "http://"+p.DNS.ReadyAddress+"/ready")
	})
}

// providerConfig is the coredns-provider.conf the controller manager writes
// records with: the user's, or the one of the plane's own DNS server; "" when
// the plane has no DNS.
func (p *Plane) providerConfig() string {
	switch {
	case p.DNSProviderConfig != "":
		return p.DNSProviderConfig
	case p.DNS != nil:
		return p.path(ProviderConfig)
	default:
		return ""
	}
}

// PublishDNS writes the DNS ConfigMap in the federation; nothing when the
// plane has no DNS server of its own.
func (p *Plane) PublishDNS(ctx context.Context) error {
	if p.DNS == nil {
		return nil
	}
	client, err := p.AdminClient()
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: federationv1beta1.SystemNamespace, Name: federationv1beta1.DNSConfigMap},
		Data:       map[string]string{federationv1beta1.DNSZoneKey: strings.TrimSuffix(p.DNSZone, ".") + ".", federationv1beta1.DNSServerKey: p.DNS.Address},
	}
	_, err = client.CoreV1().ConfigMaps(federationv1beta1.SystemNamespace).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = client.CoreV1().ConfigMaps(federationv1beta1.SystemNamespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("publishing the DNS settings in %s/%s: %w", federationv1beta1.SystemNamespace, federationv1beta1.DNSConfigMap, err)
	}
	return nil
}
