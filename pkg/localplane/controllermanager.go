package localplane

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
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

// controllerManagerServingArgs serve the controller manager's /healthz,
// /metrics and /debug/pprof/ over HTTPS on ControllerManagerAddress; it
// authenticates client certificates of the plane's CA itself and asks the
// federation apiserver about tokens and permissions.
func controllerManagerServingArgs(p *Plane) []string {
	host, port, err := net.SplitHostPort(p.ControllerManagerAddress)
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
func (p *Plane) ControllerManagerServingArgs() []string { return controllerManagerServingArgs(p) }

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
// admin, and their base URL.
func (p *Plane) ControllerManagerClient() (*http.Client, string, error) {
	ca, err := os.ReadFile(p.path(caCert))
	if err != nil {
		return nil, "", err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, "", fmt.Errorf("no certificate in %s", p.path(caCert))
	}
	admin, err := tls.LoadX509KeyPair(p.path(adminCert), p.path(adminKey))
	if err != nil {
		return nil, "", err
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{admin}, MinVersion: tls.VersionTLS12}}
	return &http.Client{Transport: transport, Timeout: 2 * time.Minute}, "https://" + p.ControllerManagerAddress, nil
}
