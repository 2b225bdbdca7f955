// Package tunnel is the federation apiserver's end of the agents' tunnels:
// an agent in a member the federation cannot dial opens a websocket to its
// Cluster's tunnel subresource, and the federation's requests to that
// member go back through it (rancher/remotedialer multiplexes them). The
// agent, not the federation, holds the member's credential: what comes out
// of the tunnel is plain HTTP that the agent sends on to its member's API
// server with its own identity.
package tunnel

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rancher/remotedialer"
	"github.com/sirupsen/logrus"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// sweepPeriod is how often the hub closes the tunnels of clusters that
// were deleted or no longer use an agent.
const sweepPeriod = 5 * time.Second

// StillAgent says whether the named cluster exists, is reached through an
// agent, and still takes the agent certificate of serial; the hub closes
// the tunnels for which it does not.
type StillAgent func(ctx context.Context, cluster, serial string) (bool, error)

// Hub holds the tunnels open to this apiserver, one set per cluster.
type Hub struct {
	server *remotedialer.Server

	mu sync.Mutex
	// conns are the hijacked connections of each cluster's tunnels, so
	// that unjoining can cut them at once (remotedialer has no call for it).
	conns map[string]map[net.Conn]opened
	// transports pool each cluster's connections through its tunnel.
	transports map[string]*http.Transport
	stillAgent StillAgent
}

// opened is who opened a tunnel: the agent process (wire.InstanceHeader)
// and the serial of its certificate.
type opened struct{ serial, instance string }

type clusterKey struct{}

// NewHub returns a hub; Run sweeps it.
func NewHub() *Hub {
	// remotedialer logs every connection at info through logrus.
	logrus.SetLevel(logrus.WarnLevel)
	h := &Hub{conns: map[string]map[net.Conn]opened{}, transports: map[string]*http.Transport{}}
	h.server = remotedialer.New(func(req *http.Request) (string, bool, error) {
		// Connect has authenticated and authorized the request and put
		// the cluster's name in its context.
		name, ok := req.Context().Value(clusterKey{}).(string)
		return name, ok && name != "", nil
	}, func(rw http.ResponseWriter, _ *http.Request, code int, err error) {
		http.Error(rw, err.Error(), code)
	})
	return h
}

// ServeTunnel upgrades an agent's request to cluster's tunnel. The caller
// has checked that the request comes from that cluster's agent, with the
// certificate of serial. An extra dial of an agent that holds a tunnel
// here already is refused with wire.StatusAlreadyHere, so that the agent
// dials again for another apiserver.
func (h *Hub) ServeTunnel(cluster, serial string, w http.ResponseWriter, r *http.Request) {
	by := opened{serial: serial, instance: r.Header.Get(wire.InstanceHeader)}
	if r.Header.Get(wire.RoleHeader) == wire.RoleExtra && h.holds(cluster, by.instance) {
		http.Error(w, "this apiserver holds a tunnel of this agent already", wire.StatusAlreadyHere)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), clusterKey{}, cluster))
	tunnelMetrics.connects.WithLabelValues(cluster).Inc()
	h.server.ServeHTTP(&recordingWriter{ResponseWriter: w, hub: h, cluster: cluster, by: by}, r)
	klog.V(2).InfoS("An agent's tunnel closed", "cluster", cluster)
}

// holds reports whether this apiserver holds a tunnel of cluster opened
// by the agent process instance.
func (h *Hub) holds(cluster, instance string) bool {
	if instance == "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, by := range h.conns[cluster] {
		if by.instance == instance {
			return true
		}
	}
	return false
}

// Connected reports whether cluster's agent holds a tunnel to this apiserver.
func (h *Hub) Connected(cluster string) bool { return h.server.HasSession(cluster) }

// Dial opens a connection to cluster's member API through its tunnel.
func (h *Hub) Dial(ctx context.Context, cluster string) (net.Conn, error) {
	conn, err := h.server.Dialer(cluster)(ctx, "tcp", wire.MemberAddress)
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: conn, cluster: cluster}, nil
}

// Close cuts every tunnel of cluster.
func (h *Hub) Close(cluster string) {
	h.mu.Lock()
	conns := h.conns[cluster]
	delete(h.conns, cluster)
	if t := h.transports[cluster]; t != nil {
		t.CloseIdleConnections()
	}
	h.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
	tunnelMetrics.open.WithLabelValues(cluster).Set(0)
}

// CheckWith sets how Run learns which clusters are gone.
func (h *Hub) CheckWith(stillAgent StillAgent) { h.stillAgent = stillAgent }

// Run closes, until ctx ends, the tunnels that the CheckWith function says
// are no longer their cluster's.
func (h *Hub) Run(ctx context.Context) {
	stillAgent := h.stillAgent
	if stillAgent == nil {
		return
	}
	t := time.NewTicker(sweepPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		type tunnel struct{ cluster, serial string }
		h.mu.Lock()
		var open []tunnel
		for name, conns := range h.conns {
			for _, by := range conns {
				open = append(open, tunnel{name, by.serial})
			}
		}
		h.mu.Unlock()
		for _, tun := range open {
			if ok, err := stillAgent(ctx, tun.cluster, tun.serial); err == nil && !ok {
				klog.InfoS("Closing the tunnel of a cluster that is gone, no longer uses an agent, or no longer takes the agent's certificate", "cluster", tun.cluster)
				h.Close(tun.cluster)
			}
		}
	}
}

// remember records cluster's new tunnel and closes its others: the newest
// tunnel wins, so that an agent that dials again after its connection
// died unseen (a NAT that forgot it) is used at once, and one cluster holds
// one tunnel on each apiserver, however many connections its agent's
// certificate opens.
func (h *Hub) remember(cluster string, by opened, c net.Conn) {
	h.mu.Lock()
	older := h.conns[cluster]
	h.conns[cluster] = map[net.Conn]opened{c: by}
	tunnelMetrics.open.WithLabelValues(cluster).Set(1)
	h.mu.Unlock()
	for old := range older {
		_ = old.Close()
	}
}

// forget drops c, a closed connection of cluster. (Only c: a newer tunnel
// of the cluster may be recorded already while remotedialer still counts
// c's session.)
func (h *Hub) forget(cluster string, c net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.conns[cluster], c)
	if len(h.conns[cluster]) == 0 {
		delete(h.conns, cluster)
	}
	tunnelMetrics.open.WithLabelValues(cluster).Set(float64(len(h.conns[cluster])))
}

// recordingWriter keeps the connection remotedialer hijacks for the
// websocket, so that the hub can close it.
type recordingWriter struct {
	http.ResponseWriter
	hub     *Hub
	cluster string
	by      opened
}

func (w *recordingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the connection cannot be taken over for a websocket")
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.hub.remember(w.cluster, w.by, conn)
	forgetting := &forgettingConn{raw: conn, hub: w.hub, cluster: w.cluster}
	guarded := &guardedConn{Conn: conn, onAbuse: func(err error) {
		klog.InfoS("Closing an agent's tunnel: it sent what agents do not send", "cluster", forgetting.cluster, "err", err)
		// remotedialer ends the session on the read error, but leaves
		// the connection open.
		_ = forgetting.Close()
	}}
	forgetting.Conn = guarded
	// gorilla reads through the hijacked bufio.Reader when it is large
	// enough: give it one that reads through the guard. (It refuses a
	// client that sent bytes before the handshake ended, so the old one
	// holds none.)
	if rw.Reader.Buffered() == 0 {
		rw = bufio.NewReadWriter(bufio.NewReaderSize(guarded, rw.Reader.Size()), rw.Writer)
	}
	return forgetting, rw, nil
}

type forgettingConn struct {
	net.Conn
	// raw is the hijacked connection, as the hub records it.
	raw     net.Conn
	hub     *Hub
	cluster string
	once    sync.Once
}

func (c *forgettingConn) Close() error {
	c.once.Do(func() { c.hub.forget(c.cluster, c.raw) })
	return c.Conn.Close()
}

// countingConn counts the bytes of a member connection in the metrics.
type countingConn struct {
	net.Conn
	cluster string
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	tunnelMetrics.bytes.WithLabelValues(c.cluster, "received").Add(float64(n))
	return n, err
}

func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	tunnelMetrics.bytes.WithLabelValues(c.cluster, "sent").Add(float64(n))
	return n, err
}

// errNoTunnel is the answer to a request for a member whose agent holds no
// tunnel here.
func errNoTunnel(cluster string) error {
	return fmt.Errorf("cluster %s: its agent holds no tunnel to this federation apiserver", cluster)
}
