package apiserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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
	cmd          *exec.Cmd
	exited       chan error
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
	if s.port, err = freePort(); err != nil {
		return nil, err
	}
	if err := s.writeKubeconfigs(); err != nil {
		return nil, err
	}
	logFile, err := os.Create(s.logPath)
	if err != nil {
		return nil, fmt.Errorf("creating the server log: %w", err)
	}
	s.cmd = exec.Command(binary,
		"--data-dir", dataDir,
		"--bind-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(s.port),
		"--token-auth-file", tokens,
		"--client-ca-file", certs.caFile,
	)
	s.cmd.Args = append(s.cmd.Args, extraArgs...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", binary, err)
	}
	s.exited = make(chan error, 1)
	go func() {
		s.exited <- s.cmd.Wait()
		logFile.Close()
	}()
	if err := s.waitReady(); err != nil {
		s.stop()
		return nil, fmt.Errorf("%w (log: %s)", err, s.logPath)
	}
	return s, nil
}

// setup is a hook for state every test of the shared server needs.
func (s *server) setup() error { return nil }

// url is the server's base URL.
func (s *server) url() string { return fmt.Sprintf("https://127.0.0.1:%d", s.port) }

// waitReady polls /readyz with the good token until it answers 200.
func (s *server) waitReady() error {
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
	deadline := time.Now().Add(startTimeout)
	var last string
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("federation-apiserver exited before it was ready: %v", err)
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, s.url()+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+goodToken)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("federation-apiserver not ready after %s: last /readyz answer: %s", startTimeout, last)
}

// stop terminates the server and waits for it, killing it if it does not
// stop in time.
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

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

// freePort returns a port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("listener address is not TCP")
	}
	return addr.Port, nil
}

// request sends one HTTP request with an optional bearer token and body
// and returns the status code and body.
func (s *server) request(t *testing.T, method, path, token, contentType, body string) (int, string) {
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
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, readAll(resp.Body)
}
