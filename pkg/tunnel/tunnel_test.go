package tunnel

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/federation-v1/federation/pkg/agent"
	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// federation is a TLS server with a hub behind the tunnel and proxy paths,
// as the federation apiserver's Connecters route them (without their
// authentication, which the e2e tests cover).
func federation(t *testing.T, hub *Hub, cluster string) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc(wire.TunnelPath(cluster), func(w http.ResponseWriter, r *http.Request) { hub.ServeTunnel(cluster, "serial", w, r) })
	mux.HandleFunc(wire.ProxyPath(cluster)+"/", func(w http.ResponseWriter, r *http.Request) {
		hub.ServeProxy(cluster, strings.TrimPrefix(r.URL.Path, wire.ProxyPath(cluster)), w, r)
	})
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// member answers with what it received: the path, the query and the
// credentials, and streams /stream line by line.
func member(t *testing.T) *httptest.Server {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			flusher := w.(http.Flusher)
			for i := range 3 {
				_, _ = io.WriteString(w, "event "+string(rune('0'+i))+"\n")
				flusher.Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
			return
		}
		w.Header().Set("X-Seen-Authorization", r.Header.Get("Authorization"))
		w.Header().Set("X-Seen-Impersonate-User", r.Header.Get("Impersonate-User"))
		_, _ = io.WriteString(w, r.URL.Path+"?"+r.URL.RawQuery)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func startAgent(t *testing.T, ctx context.Context, fed, mem *httptest.Server, cluster string) {
	startAgentAt(t, ctx, fed.URL, pool(fed), mem, cluster)
}

// startAgentAt starts an agent dialling address, which roots verify.
func startAgentAt(t *testing.T, ctx context.Context, address string, roots *x509.CertPool, mem *httptest.Server, cluster string) {
	cfg := agent.Config{
		Cluster:    cluster,
		Federation: []string{address},
		TLS:        func() *tls.Config { return &tls.Config{RootCAs: roots} },
		Member: &rest.Config{Host: mem.URL, BearerToken: "agent-token",
			TLSClientConfig: rest.TLSClientConfig{Insecure: true}},
		MaxBackoff: 200 * time.Millisecond,
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		assert.NoError(t, agent.Run(ctx, cfg))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func pool(srv *httptest.Server) *x509.CertPool {
	return srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
}

func waitConnected(t *testing.T, hub *Hub, cluster string, want bool) {
	t.Helper()
	require.Eventually(t, func() bool { return hub.Connected(cluster) == want }, 10*time.Second, 10*time.Millisecond)
}

func TestTheFederationReachesTheMemberThroughTheAgentAsTheAgent(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub := NewHub()
	fed, mem := federation(t, hub, "c1"), member(t)

	client := fed.Client()
	get := func(path string, header http.Header) *http.Response {
		req, err := http.NewRequest(http.MethodGet, fed.URL+wire.ProxyPath("c1")+path, nil)
		require.NoError(t, err)
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	resp := get("/api/v1/namespaces", nil)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "no agent yet")
	assert.Equal(t, wire.StatusTunnelDown, resp.Header.Get(wire.StatusHeader))

	startAgent(t, ctx, fed, mem, "c1")
	waitConnected(t, hub, "c1", true)

	resp = get("/api/v1/namespaces?limit=5", http.Header{"Authorization": {"Bearer federation-secret"}, "Impersonate-User": {"admin"}})
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "/api/v1/namespaces?limit=5", string(body))
	assert.Equal(t, "Bearer agent-token", resp.Header.Get("X-Seen-Authorization"), "the member sees the agent, never the caller's credential")
	assert.Empty(t, resp.Header.Get("X-Seen-Impersonate-User"), "no impersonation goes through")

	// A stream reaches the caller line by line, before it ends.
	resp = get("/stream", nil)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "event 0\n", line)

	// The member gone: the agent answers, and says so.
	mem.Close()
	resp = get("/api/v1/namespaces", nil)
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	assert.Equal(t, wire.StatusMemberUnreachable, resp.Header.Get(wire.StatusHeader))

	// Unjoined: the hub cuts the tunnel at once; the agent dials again.
	hub.Close("c1")
	waitConnected(t, hub, "c1", false)
	waitConnected(t, hub, "c1", true)
}

func TestTheAgentDialsNothingButItsMember(t *testing.T) {
	ctx, hub, _, mem := connectedAgent(t)

	// Asked for any other address, the agent refuses: remotedialer then
	// drops the whole tunnel, and the agent dials the federation again.
	// remotedialer connects asynchronously: a refusal shows on the first read.
	other, err := hub.server.Dialer("c1")(ctx, "tcp", mem.Listener.Addr().String())
	require.NoError(t, err)
	defer other.Close()
	_, _ = io.WriteString(other, "GET / HTTP/1.1\r\nHost: member\r\n\r\n")
	_ = other.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = other.Read(make([]byte, 1))
	require.Error(t, err, "an address other than the member's API through the agent's proxy")
	assert.Contains(t, err.Error(), "tunnel disconnect")

	waitConnected(t, hub, "c1", true)
	conn, err := hub.Dial(ctx, "c1")
	require.NoError(t, err)
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /x HTTP/1.1\r\nHost: member\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestTheNewestTunnelOfAClusterWins(t *testing.T) {
	ctx, hub, fed, mem := connectedAgent(t)
	hub.mu.Lock()
	var first net.Conn
	for c := range hub.conns["c1"] {
		first = c
	}
	hub.mu.Unlock()

	// A second agent with the same identity: it takes the cluster over,
	// and the first one's tunnel is closed, not kept beside it.
	startAgent(t, ctx, fed, mem, "c1")
	require.Eventually(t, func() bool {
		hub.mu.Lock()
		defer hub.mu.Unlock()
		_, stillThere := hub.conns["c1"][first]
		return !stillThere && len(hub.conns["c1"]) == 1
	}, 10*time.Second, 10*time.Millisecond)
}

// connectedAgent is a hub with cluster c1's agent connected; it stops
// with the test.
func connectedAgent(t *testing.T) (context.Context, *Hub, *httptest.Server, *httptest.Server) {
	ctx, cancel := context.WithCancel(context.Background())
	hub := NewHub()
	fed, mem := federation(t, hub, "c1"), member(t)
	t.Cleanup(cancel)
	startAgent(t, ctx, fed, mem, "c1")
	waitConnected(t, hub, "c1", true)
	return ctx, hub, fed, mem
}

// sharedPort stands for apiservers sharing one address (SO_REUSEPORT, or a
// Service): each new connection goes to the next backend that is up.
type sharedPort struct {
	listener net.Listener
	mu       sync.Mutex
	backends []string
	down     map[string]bool
	dials    int
}

func newSharedPort(t *testing.T, backends ...*httptest.Server) *sharedPort {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &sharedPort{listener: l, down: map[string]bool{}}
	for _, b := range backends {
		p.backends = append(p.backends, b.Listener.Addr().String())
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", p.next())
			if err != nil {
				_ = in.Close()
				continue
			}
			go func() { _, _ = io.Copy(out, in); _ = out.Close() }()
			go func() { _, _ = io.Copy(in, out); _ = in.Close() }()
		}
	}()
	return p
}

func (p *sharedPort) next() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		b := p.backends[p.dials%len(p.backends)]
		p.dials++
		if !p.down[b] {
			return b
		}
	}
}

func (p *sharedPort) setDown(srv *httptest.Server, down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down[srv.Listener.Addr().String()] = down
}

func (p *sharedPort) dialCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dials
}

func (h *Hub) tunnelConns(cluster string) []net.Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	var conns []net.Conn
	for c := range h.conns[cluster] {
		conns = append(conns, c)
	}
	return conns
}

func TestAnAgentHoldsATunnelToEachApiserverBehindOneAddress(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hubA, hubB := NewHub(), NewHub()
	fedA, fedB, mem := federation(t, hubA, "c1"), federation(t, hubB, "c1"), member(t)
	port := newSharedPort(t, fedA, fedB)
	startAgentAt(t, ctx, "https://"+port.listener.Addr().String(), pool(fedA), mem, "c1")
	waitConnected(t, hubA, "c1", true)
	waitConnected(t, hubB, "c1", true)
	heldA, heldB := hubA.tunnelConns("c1"), hubB.tunnelConns("c1")
	require.Len(t, heldA, 1)
	require.Len(t, heldB, 1)

	// The agent goes on dialling extra tunnels; the apiservers answer that
	// they hold one, and keep the tunnel they have.
	dials := port.dialCount()
	require.Eventually(t, func() bool { return port.dialCount() >= dials+4 }, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, heldA, hubA.tunnelConns("c1"), "apiserver A keeps its one tunnel")
	assert.Equal(t, heldB, hubB.tunnelConns("c1"), "apiserver B keeps its one tunnel")

	// A gone: B still reaches the member at once.
	port.setDown(fedA, true)
	hubA.Close("c1")
	resp, err := fedB.Client().Get(fedB.URL + wire.ProxyPath("c1") + "/api")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// A back: it gets a tunnel again.
	port.setDown(fedA, false)
	waitConnected(t, hubA, "c1", true)
	waitConnected(t, hubB, "c1", true)
}
