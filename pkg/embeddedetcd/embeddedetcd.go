// Package embeddedetcd runs an etcd server inside the process, for a
// federation control plane that is not given an external etcd. Its data
// lives in a directory and survives restarts.
package embeddedetcd

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startTimeout bounds how long Start waits for etcd to become ready.
const startTimeout = 60 * time.Second

// Server is a running embedded etcd.
type Server struct {
	etcd *embed.Etcd
}

// Start runs an etcd member with its data in dataDir, serving clients on
// 127.0.0.1:clientPort, or on a free port when clientPort is 0 (see
// ClientURL). A fixed port lets other programs of the control plane, such as
// the DNS server reading /skydns, share this etcd.
func Start(dataDir string, clientPort int) (*Server, error) {
	var err error
	cfg := embed.NewConfig()
	cfg.Name = "federation"
	cfg.Dir = filepath.Join(dataDir, "etcd")
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	// etcd dials its own advertised client address, so the port must be
	// known before it starts.
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	if clientPort == 0 {
		if clientURL, err = freeLocalURL(); err != nil {
			return nil, err
		}
	}
	peerURL, err := freeLocalURL()
	if err != nil {
		return nil, err
	}
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	// The member is alone: its advertised peer address is never dialled.
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd in %s: %w", cfg.Dir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s failed while starting: %w", cfg.Dir, err)
	case <-time.After(startTimeout):
		e.Close()
		return nil, fmt.Errorf("embedded etcd in %s not ready after %s", cfg.Dir, startTimeout)
	}
	return &Server{etcd: e}, nil
}

// freeLocalURL returns an http URL on a port of 127.0.0.1 that was free a
// moment ago.
func freeLocalURL() (url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return url.URL{}, fmt.Errorf("finding a free port for embedded etcd: %w", err)
	}
	defer l.Close()
	return url.URL{Scheme: "http", Host: l.Addr().String()}, nil
}

// ClientURL is the address clients reach the etcd at.
func (s *Server) ClientURL() string {
	return "http://" + s.etcd.Clients[0].Addr().String()
}

// Stop shuts the etcd down and waits until it has.
func (s *Server) Stop() {
	s.etcd.Close()
}
