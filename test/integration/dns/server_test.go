package dns_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/miekg/dns"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/testprocess"
)

// binary is the federation-dns built once by TestMain.
var binary string

// TestMain builds federation-dns once into a temporary directory. With
// -short the suite is skipped: building CoreDNS takes a minute.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("skipping the federation-dns integration tests in -short mode")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "federation-dns-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating a directory for the federation-dns binary:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "federation-dns")
	build := exec.Command("go", "build", "-o", binary, "github.com/federation-v1/federation/dns")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building federation-dns: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is a running federation-dns.
type server struct {
	// addr is the DNS address, 127.0.0.1:port, for UDP and TCP.
	addr string
	// health, ready and metrics are the HTTP addresses of those plugins.
	health, ready, metrics string
}

// corefile is the configuration template; {{.Plugins}} adds directives.
var corefile = template.Must(template.New("Corefile").Parse(`example.com:{{.Port}} {
    bind 127.0.0.1
    etcd example.com {
        endpoint {{.Etcd}}
        path /skydns
    }
    health {{.Health}}
    ready {{.Ready}}
    prometheus {{.Metrics}}
    errors
{{.Plugins}}
}
`))

// startServer writes a Corefile serving example.com. from the etcd at
// endpoint, starts federation-dns on free ports, and waits until it
// answers. The process is stopped at the end of the test, and its output
// shown if the test failed.
func startServer(t testing.TB, endpoint string, plugins ...string) *server {
	t.Helper()
	dir := t.TempDir()
	port := freeDNSPort(t)
	s := &server{
		addr:    fmt.Sprintf("127.0.0.1:%d", port),
		health:  freeTCPAddr(t),
		ready:   freeTCPAddr(t),
		metrics: freeTCPAddr(t),
	}
	conf := filepath.Join(dir, "Corefile")
	var b strings.Builder
	if err := corefile.Execute(&b, map[string]any{
		"Port": port, "Etcd": endpoint, "Health": s.health, "Ready": s.ready, "Metrics": s.metrics,
		"Plugins": "    " + strings.Join(plugins, "\n    "),
	}); err != nil {
		t.Fatalf("writing the Corefile: %v", err)
	}
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatalf("writing the Corefile: %v", err)
	}

	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("federation-dns Corefile:\n%s", b.String())
		}
	})
	server := testprocess.Start(t, "federation-dns", exec.Command(binary, "-conf", conf))

	err := poll.Until(context.Background(), 30*time.Second, "federation-dns to be ready and answer on "+s.addr, func(context.Context) error {
		select {
		case <-server.Exited():
			return poll.Abort(fmt.Errorf("federation-dns exited: %v", server.Err()))
		default:
		}
		if err := httpOK("http://" + s.ready + "/ready"); err != nil {
			return err
		}
		_, err := exchange(s.addr, "udp", "example.com.", dns.TypeSOA)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// exchange sends one query and returns the response.
func exchange(addr, network, name string, qtype uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	c := &dns.Client{Net: network, Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		return nil, fmt.Errorf("querying %s %s over %s at %s: %w", name, dns.TypeToString[qtype], network, addr, err)
	}
	return r, nil
}

// httpOK returns an error unless GET url answers 200.
func httpOK(url string) error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}

// httpGet returns the body of GET url.
func httpGet(url string) (string, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("reading GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), nil
}

// freeDNSPort returns a 127.0.0.1 port free for both UDP and TCP.
func freeDNSPort(t testing.TB) int {
	t.Helper()
	for range 20 {
		u, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("finding a free UDP port: %v", err)
		}
		port := u.LocalAddr().(*net.UDPAddr).Port
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		u.Close()
		if err == nil {
			l.Close()
			return port
		}
	}
	t.Fatal("found no port free for both UDP and TCP on 127.0.0.1")
	return 0
}

// freeTCPAddr returns a 127.0.0.1 address with a free TCP port.
func freeTCPAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free TCP port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}
