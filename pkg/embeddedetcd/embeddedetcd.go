// Package embeddedetcd runs an etcd server inside the process, for a
// federation control plane that is not given an external etcd. Its data
// lives in a directory and survives restarts.
package embeddedetcd

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startTimeout bounds how long Start waits for etcd to become ready.
const startTimeout = 60 * time.Second

// Server is a running embedded etcd.
type Server struct {
	etcd      *embed.Etcd
	clientURL string
}

// Start runs an etcd member with its data in dataDir/etcd, serving clients
// on a unix socket in that directory (see ClientURL), which only the owner
// of the data can reach. Its peer port, on 127.0.0.1, is never dialled: the
// member is alone.
func Start(dataDir string) (*Server, error) {
	cfg := embed.NewConfig()
	cfg.Name = "federation"
	cfg.Dir = filepath.Join(dataDir, "etcd")
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	// Clients reach etcd through a unix socket in the data directory, so
	// that only users who can read the data can reach it. etcd dials its own
	// advertised client address.
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the embedded etcd directory %s: %w", cfg.Dir, err)
	}
	socket, err := filepath.Abs(filepath.Join(cfg.Dir, "client.sock"))
	if err != nil {
		return nil, fmt.Errorf("locating the embedded etcd socket: %w", err)
	}
	// etcd wants host:port even for a socket: the file is named
	// "client.sock:0".
	clientURL := url.URL{Scheme: "unix", Host: socket + ":0"}
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
	return &Server{etcd: e, clientURL: "unix://" + clientURL.Host}, nil
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
	return s.clientURL
}

// Err reports errors that stop the etcd from serving.
func (s *Server) Err() <-chan error {
	return s.etcd.Err()
}

// Stop shuts the etcd down and waits until it has.
func (s *Server) Stop() {
	s.etcd.Close()
}
