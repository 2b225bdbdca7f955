package apiserver

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/test/apiserverprocess"
)

// token is the bearer token both servers accept.
const token = "bench-token"

// readyTimeout bounds how long a server may take to become ready.
const readyTimeout = 3 * time.Minute

// server is one API server under test and a client for it.
type server struct {
	name    string
	process *apiserverprocess.Process
	client  kubernetes.Interface
}

// kubeAPIServerPath finds the kube-apiserver binary, or skips.
func kubeAPIServerPath(b *testing.B) string {
	if path := os.Getenv("KUBE_APISERVER"); path != "" {
		return path
	}
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		b.Fatalf("finding the module root: %v", err)
	}
	path := filepath.Join(filepath.Dir(string(out[:len(out)-1])), ".cache", "bin", "kubernetes-v1.36.3", "kube-apiserver")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("no kube-apiserver to compare with (%v); set KUBE_APISERVER", err)
	}
	return path
}

// buildFederationAPIServer builds the binary into dir.
func buildFederationAPIServer(b *testing.B, dir string) string {
	path := filepath.Join(dir, "federation-apiserver")
	build := exec.Command("go", "build", "-o", path, "github.com/federation-v1/federation/federation-apiserver")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building federation-apiserver: %v\n%s", err, out)
	}
	return path
}

// startServer starts binary with the flags common to both servers plus
// extra, and returns it once ready.
func startServer(b *testing.B, name, binary, dir, etcdURL string, extra ...string) *server {
	port, err := freeport.Pick("127.0.0.1")
	if err != nil {
		b.Fatal(err)
	}
	tokens := filepath.Join(dir, name+"-tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",admin,uid-admin,\"system:masters\"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	args := append([]string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(dir, name+"-certs"),
		"--etcd-servers=" + etcdURL,
		"--etcd-prefix=/" + name,
		"--token-auth-file=" + tokens,
	}, extra...)
	p, err := apiserverprocess.Start(binary, args, filepath.Join(dir, name+".log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.Stop)
	url := fmt.Sprintf("https://127.0.0.1:%d", port)
	if err := p.WaitReady(url, token, readyTimeout); err != nil {
		b.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(&rest.Config{
		Host:            url,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             -1, // no client-side rate limit: measure the server
	})
	if err != nil {
		b.Fatal(err)
	}
	return &server{name: name, process: p, client: client}
}

// kubeAPIServerFlags are the flags kube-apiserver needs beyond the common
// ones, configured like federation-apiserver where it matters: allow-all
// authorization and no priority and fairness queueing.
func kubeAPIServerFlags(b *testing.B, dir string) []string {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	keyFile := filepath.Join(dir, "service-account.key")
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(keyFile, pemKey, 0o600); err != nil {
		b.Fatal(err)
	}
	return []string{
		"--authorization-mode=AlwaysAllow",
		"--enable-priority-and-fairness=false",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + keyFile,
		"--service-account-signing-key-file=" + keyFile,
		"--service-cluster-ip-range=10.96.0.0/16",
	}
}
