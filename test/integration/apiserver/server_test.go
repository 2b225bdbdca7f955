package apiserver

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/test/apiserverprocess"
)

// Credentials the servers accept.
const (
	goodToken = "test-admin-token"
	tokenUser = "admin"
	certUser  = "cert-user"
)

// startTimeout bounds how long a server may take to become ready.
const startTimeout = 2 * time.Minute

// server is a running federation-apiserver and the kubeconfigs to reach it.
type server struct {
	dir, dataDir string
	port         int
	process      *apiserverprocess.Process
	logPath      string
	certs        clientCerts
	// tokenConfig, certConfig, badTokenConfig and anonymousConfig are
	// kubeconfigs with a good token, a good client certificate, a wrong
	// token and no credentials.
	tokenConfig, certConfig, badTokenConfig, anonymousConfig string
}

// startServer starts the binary with its files in dir and its embedded
// etcd in dataDir, on a free port, and waits until it is ready. Starting
// again with the same dir and dataDir restarts on the same data. extraArgs
// are added to the command line.
func startServer(dir, dataDir string, extraArgs ...string) (*server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	s := &server{dir: dir, dataDir: dataDir, logPath: filepath.Join(dir, "server.log")}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(goodToken+","+tokenUser+",uid-admin,\"system:masters\"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("writing the token file: %w", err)
	}
	certs, err := newClientCerts(dir, certUser, "testers")
	if err != nil {
		return nil, err
	}
	s.certs = certs
	if s.port, err = freeport.Pick("127.0.0.1"); err != nil {
		return nil, err
	}
	if err := s.writeKubeconfigs(); err != nil {
		return nil, err
	}
	args := []string{
		"--data-dir", dataDir,
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(s.port),
		"--token-auth-file", tokens,
		"--client-ca-file", certs.caFile,
	}
	s.process, err = apiserverprocess.Start(binary, append(args, extraArgs...), s.logPath)
	if err != nil {
		return nil, err
	}
	if err := s.process.WaitReady(s.url(), goodToken, startTimeout); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// url is the server's base URL.
func (s *server) url() string { return fmt.Sprintf("https://127.0.0.1:%d", s.port) }

// stop terminates the server.
func (s *server) stop() { s.process.Stop() }

// writeKubeconfigs writes one kubeconfig per kind of credentials.
func (s *server) writeKubeconfigs() error {
	users := map[*string]string{
		&s.tokenConfig:     "token: " + goodToken,
		&s.badTokenConfig:  "token: not-a-valid-token",
		&s.certConfig:      fmt.Sprintf("client-certificate: %s\n    client-key: %s", s.certs.certFile, s.certs.keyFile),
		&s.anonymousConfig: "{}",
	}
	for field, user := range users {
		f, err := os.CreateTemp(s.dir, "kubeconfig-")
		if err != nil {
			return fmt.Errorf("creating a kubeconfig: %w", err)
		}
		_, err = fmt.Fprintf(f, `apiVersion: v1
kind: Config
clusters:
- name: federation
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: user
  user:
    %s
contexts:
- name: federation
  context: {cluster: federation, user: user}
current-context: federation
`, s.url(), user)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.Name(), err)
		}
		*field = f.Name()
	}
	return nil
}

// request sends one HTTP request with an optional bearer token, body and
// more headers (name, value, ...) and returns the status code and body.
func (s *server) request(t *testing.T, method, path, token, contentType, body string, headers ...string) (int, string) {
	t.Helper()
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	req, err := http.NewRequest(method, s.url()+path, strings.NewReader(body))
	if err != nil {
		t.Fatalf("building %s %s: %v", method, path, err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, readAll(resp.Body)
}
