package processplane

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/federation-v1/federation/pkg/pki"
)

// The controller manager's serving certificate, issued by the plane's CA
// for 127.0.0.1, so that whoever reads its /metrics can verify it.
const (
	controllersServingCert = "pki/controller-manager-serving.crt"
	controllersServingKey  = "pki/controller-manager-serving.key"
)

// controllerManagerServingArgs serve a controller manager's /healthz,
// /metrics and /debug/pprof/ over HTTPS on address; it authenticates client
// certificates of the plane's CA itself and asks the federation apiserver
// about tokens and permissions.
func controllerManagerServingArgs(p *Plane, address string) []string {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		host, port = "127.0.0.1", "0"
	}
	return []string{
		"--bind-address=" + host,
		"--secure-port=" + port,
		"--tls-cert-file=" + p.path(controllersServingCert),
		"--tls-private-key-file=" + p.path(controllersServingKey),
		"--client-ca-file=" + p.path(caCert),
	}
}

// ControllerManagerServingArgs are the flags that serve the controller
// manager's endpoints as the plane does, for a controller manager started
// by hand (tests) on the plane's address.
func (p *Plane) ControllerManagerServingArgs() []string {
	return controllerManagerServingArgs(p, p.ControllerManagerAddress)
}

// ControllerManagerArgs are the flags the plane runs its controller
// manager with (kubeconfig, name, serving, DNS), for one restarted by
// hand (tests) with more.
func (p *Plane) ControllerManagerArgs() []string {
	return controllerManagerArgs(p, p.ControllerManagerAddress)
}

// ensureControllerManagerServingCert issues the serving certificate unless
// the plane has it (planes made before it existed get it at their next
// start).
func (p *Plane) ensureControllerManagerServingCert() error {
	if _, err := os.Stat(p.path(controllersServingCert)); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ca, err := pki.LoadCA(p.path(caCert), p.path(caKey))
	if err != nil {
		return fmt.Errorf("loading the plane's CA: %w", err)
	}
	return ca.IssueServing(p.path(controllersServingCert), p.path(controllersServingKey), "federation-controller-manager", "127.0.0.1")
}

// ControllerManagerClient returns a client of the controller manager's
// HTTPS endpoints that verifies it and authenticates as the plane's
// admin, and their base URL (the first instance's in an HA plane: see
// ControllerManagerURL for the others; the client serves them all).
func (p *Plane) ControllerManagerClient() (*http.Client, string, error) {
	roots, err := p.certPool(caCert)
	if err != nil {
		return nil, "", err
	}
	admin, err := tls.LoadX509KeyPair(p.path(adminCert), p.path(adminKey))
	if err != nil {
		return nil, "", err
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{admin}, MinVersion: tls.VersionTLS12}}
	return &http.Client{Transport: transport, Timeout: 2 * time.Minute}, "https://" + p.ControllerManagerAddress, nil
}

// ControllerManagerURL is the base URL of the HTTPS endpoints (/healthz,
// /metrics) of the controller manager instance, one of
// Instances(ControllerManager); ControllerManagerClient's client reaches it.
func (p *Plane) ControllerManagerURL(instance string) (string, error) {
	for i, name := range p.Instances(ControllerManager) {
		if name == instance {
			return "https://" + p.controllerManagerAddress(i), nil
		}
	}
	return "", fmt.Errorf("federation %q has no controller manager %q (it has %v)", p.Name, instance, p.Instances(ControllerManager))
}

// controllerManagerAddress serves the index-th controller manager.
func (p *Plane) controllerManagerAddress(index int) string {
	if index < len(p.ControllerManagerAddresses) {
		return p.ControllerManagerAddresses[index]
	}
	return p.ControllerManagerAddress
}

// ControllerManagerMetrics reads the /metrics of the controller manager
// serving at base (ControllerManagerURL), over HTTPS as the plane's admin.
func (p *Plane) ControllerManagerMetrics(base string) (string, error) {
	client, _, err := p.ControllerManagerClient()
	if err != nil {
		return "", err
	}
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s/metrics: %s", base, resp.Status)
	}
	return string(body), nil
}

// certPool holds the certificates of the plane's file (a CA's), for
// clients that verify the plane's servers.
func (p *Plane) certPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(p.path(file))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", p.path(file))
	}
	return roots, nil
}
