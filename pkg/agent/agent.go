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
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

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

// Run holds the tunnel open until ctx ends.
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

	maxBackoff := cfg.MaxBackoff
	if maxBackoff == 0 {
		maxBackoff = 30 * time.Second
	}
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.2, Steps: 64, Cap: maxBackoff}
	delay := backoff
	for attempt := 0; ctx.Err() == nil; attempt++ {
		address := cfg.Federation[attempt%len(cfg.Federation)]
		start := time.Now()
		err := connect(ctx, address, cfg, listener)
		if ctx.Err() != nil {
			return nil
		}
		agentMetrics.connected.Set(0)
		agentMetrics.reconnects.Inc()
		if time.Since(start) > maxBackoff {
			delay = backoff // it was up for a while: start over
		}
		wait := delay.Step()
		klog.FromContext(ctx).Info("The tunnel to the federation closed; reconnecting", "federation", address, "err", err, "after", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	return nil
}

// connect holds one tunnel until it breaks.
func connect(ctx context.Context, address string, cfg Config, listener *pipeListener) error {
	u, err := url.Parse(address)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("the federation's address %q is not an https:// URL", address)
	}
	u.Scheme = "wss"
	u.Path = strings.TrimSuffix(u.Path, "/") + wire.TunnelPath(cfg.Cluster)
	dialer := &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		TLSClientConfig:  cfg.TLS(),
		HandshakeTimeout: 10 * time.Second,
	}
	// Only the member's API, through the agent's proxy: nothing else in the
	// member can be dialled through the tunnel.
	authorize := func(proto, address string) bool { return proto == "tcp" && address == wire.MemberAddress }
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) { return listener.dial(ctx) }
	onConnect := func(ctx context.Context, _ *remotedialer.Session) error {
		agentMetrics.connected.Set(1)
		klog.FromContext(ctx).Info("The tunnel to the federation is open", "federation", address, "cluster", cfg.Cluster)
		return nil
	}
	return remotedialer.ConnectToProxyWithDialer(ctx, u.String(), nil, authorize, dialer, dial, onConnect)
}
