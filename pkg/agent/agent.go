// Package agent is the member's end of an agent tunnel: it dials out to the
// federation apiserver, holds the cluster's tunnel open (reconnecting with
// backoff, to any of the federation's apiservers), and answers what comes
// through it with a proxy to its member's API server that acts with the
// agent's own identity. The proxy is reached only through the tunnel: it
// listens on no port.
package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"github.com/rancher/remotedialer"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/federation-v1/federation/pkg/tunnel/wire"
)

// Config is what an agent needs.
type Config struct {
	// Cluster is the member's name at the federation.
	Cluster string
	// Federation are the https:// addresses of the federation's apiservers;
	// the agent tries them in turn.
	Federation []string
	// TLS authenticates the agent to the federation (its client
	// certificate) and the federation to the agent (RootCAs).
	TLS func() *tls.Config
	// Member reaches the member's API server with the agent's identity.
	Member *rest.Config
	// MaxBackoff caps the wait between reconnections (default 30s).
	MaxBackoff time.Duration
}

// Run holds the tunnels open until ctx ends: a primary one, redialled with
// backoff whenever it closes, and one more to each other apiserver the
// agent's dials reach (see wire.RoleHeader), so that whichever apiserver a
// request of the federation reaches holds a tunnel of this member.
func Run(ctx context.Context, cfg Config) error {
	if len(cfg.Federation) == 0 || cfg.Cluster == "" || cfg.TLS == nil || cfg.Member == nil {
		return errors.New("agent: the federation's address, the cluster's name, the federation credential and the member's configuration are all required")
	}
	logrus.SetLevel(logrus.WarnLevel)
	proxy, err := newMemberProxy(cfg.Member)
	if err != nil {
		return err
	}
	listener := newPipeListener()
	server := &http.Server{Handler: proxy, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = server.Serve(listener) }()
	defer server.Close()

	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	t := &tunnels{cfg: cfg, listener: listener, instance: uuid.NewString(), extraClosed: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	wg.Go(func() { t.holdPrimary(ctx) })
	wg.Go(func() { t.probe(ctx) })
	wg.Wait()
	return nil
}

// probePeriod caps the wait between an agent's extra dials: an apiserver
// that starts (again) gets the agent's tunnel within about this time.
const probePeriod = 10 * time.Second

// tunnels are one agent process's tunnels.
type tunnels struct {
	cfg      Config
	listener *pipeListener
	// instance names this agent process to the apiservers.
	instance string
	// extraClosed wakes the prober when an extra tunnel closes: its
	// apiserver may be gone, and the primary may now be there.
	extraClosed chan struct{}
	open        atomic.Int64
}

// holdPrimary keeps the primary tunnel open, dialling the federation's
// addresses in turn with backoff.
func (t *tunnels) holdPrimary(ctx context.Context) {
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 64, Cap: t.cfg.MaxBackoff}
	delay := backoff
	for attempt := 0; ctx.Err() == nil; attempt++ {
		address := t.cfg.Federation[attempt%len(t.cfg.Federation)]
		start := time.Now()
		ws, err := t.dial(ctx, address, wire.RolePrimary)
		if err == nil {
			err = t.serve(ctx, address, ws)
		}
		if ctx.Err() != nil {
			return
		}
		agentMetrics.reconnects.Inc()
		if time.Since(start) > t.cfg.MaxBackoff {
			delay = backoff // it was up for a while: start over
		}
		wait := delay.Step()
		klog.FromContext(ctx).Info("The tunnel to the federation closed; reconnecting", "federation", address, "err", err, "after", wait.Round(time.Millisecond))
		if !sleep(ctx, wait, nil) {
			return
		}
	}
}

// probe dials extra tunnels until every apiserver it reaches holds one:
// at once after a new one opened (there may be more), every probePeriod
// while the apiservers answer that they hold one already.
func (t *tunnels) probe(ctx context.Context) {
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 64, Cap: min(probePeriod, t.cfg.MaxBackoff)}
	delay := backoff
	for attempt := 0; ; attempt++ {
		if !sleep(ctx, delay.Step(), t.extraClosed) {
			return
		}
		address := t.cfg.Federation[attempt%len(t.cfg.Federation)]
		ws, err := t.dial(ctx, address, wire.RoleExtra)
		if err != nil {
			if !errors.Is(err, errAlreadyHere) {
				klog.FromContext(ctx).V(2).Info("An extra tunnel to the federation failed", "federation", address, "err", err)
			}
			continue
		}
		delay = backoff
		go func() {
			err := t.serve(ctx, address, ws)
			if ctx.Err() == nil {
				klog.FromContext(ctx).Info("An extra tunnel to the federation closed", "federation", address, "err", err)
				select {
				case t.extraClosed <- struct{}{}:
				default:
				}
			}
		}()
	}
}

// sleep waits d, or until wake; it reports false when ctx ended.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
	case <-wake:
	}
	return true
}

// errAlreadyHere: the apiserver an extra dial reached holds a tunnel of
// this agent already.
var errAlreadyHere = errors.New("this apiserver holds a tunnel of this agent already")

// dial opens a tunnel's websocket to the federation at address.
func (t *tunnels) dial(ctx context.Context, address, role string) (*websocket.Conn, error) {
	u, err := url.Parse(address)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("the federation's address %q is not an https:// URL", address)
	}
	u.Scheme = "wss"
	u.Path = strings.TrimSuffix(u.Path, "/") + wire.TunnelPath(t.cfg.Cluster)
	dialer := &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		TLSClientConfig:  t.cfg.TLS(),
		HandshakeTimeout: 10 * time.Second,
	}
	header := http.Header{wire.InstanceHeader: {t.instance}, wire.RoleHeader: {role}}
	ws, resp, err := dialer.DialContext(ctx, u.String(), header)
	if err != nil {
		if resp == nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode == wire.StatusAlreadyHere {
			return nil, errAlreadyHere
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, fmt.Errorf("%w: %s: %s", err, resp.Status, strings.TrimSpace(string(body)))
	}
	return ws, nil
}

// serve holds an open tunnel until it breaks or ctx ends (as
// remotedialer.ConnectToProxy does, whose dial hides the refusals).
func (t *tunnels) serve(ctx context.Context, address string, ws *websocket.Conn) error {
	defer ws.Close()
	// Only the member's API, through the agent's proxy: nothing else in the
	// member can be dialled through the tunnel.
	authorize := func(proto, address string) bool { return proto == "tcp" && address == wire.MemberAddress }
	dialMember := func(ctx context.Context, _, _ string) (net.Conn, error) { return t.listener.dial(ctx) }
	session := remotedialer.NewClientSessionWithDialer(authorize, ws, dialMember)
	defer session.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	agentMetrics.connected.Set(float64(t.open.Add(1)))
	defer func() { agentMetrics.connected.Set(float64(t.open.Add(-1))) }()
	klog.FromContext(ctx).Info("A tunnel to the federation is open", "federation", address, "cluster", t.cfg.Cluster, "tunnels", t.open.Load())
	served := make(chan error, 1)
	go func() {
		_, err := session.Serve(ctx)
		served <- err
	}()
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return err
	}
}
