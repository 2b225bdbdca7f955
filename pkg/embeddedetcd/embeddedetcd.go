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
	"strconv"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/federation-v1/federation/pkg/freeport"
)

// startTimeout bounds how long Start waits for etcd to become ready.
const startTimeout = 60 * time.Second

// Server is a running embedded etcd.
type Server struct {
	etcd      *embed.Etcd
	clientURL string
	// stopping silences the log while Stop closes the listeners: etcd
	// logs each closed listener as an error.
	stopping *atomic.Bool
}

// Start runs an etcd member with its data in dataDir/etcd. With clientPort
// 0 it serves clients on a unix socket in that directory, which only the
// owner of the data can reach; with a port it serves them on
// 127.0.0.1:clientPort, so that other programs of the control plane, such
// as the DNS server reading /skydns, can share it. See ClientURL. Its peer
// port, on 127.0.0.1, is never dialled: the member is alone.
func Start(dataDir string, clientPort int) (*Server, error) {
	cfg := embed.NewConfig()
	cfg.Name = "federation"
	cfg.Dir = filepath.Join(dataDir, "etcd")
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	stopping := &atomic.Bool{}
	logger, err := zap.NewProduction(zap.IncreaseLevel(zapcore.ErrorLevel), zap.WrapCore(func(core zapcore.Core) zapcore.Core {
		return unlessStopping{Core: core, stopping: stopping}
	}))
	if err != nil {
		return nil, fmt.Errorf("making the embedded etcd's logger: %w", err)
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger)
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the embedded etcd directory %s: %w", cfg.Dir, err)
	}
	clientURL, err := clientListenURL(cfg.Dir, clientPort)
	if err != nil {
		return nil, err
	}
	peerURL, err := freeLocalURL()
	if err != nil {
		return nil, err
	}
	// etcd dials its own advertised client address.
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
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
	// url.URL.String would escape the socket path's slashes.
	return &Server{etcd: e, clientURL: clientURL.Scheme + "://" + clientURL.Host, stopping: stopping}, nil
}

// clientListenURL is the unix socket in dir when port is 0, else
// 127.0.0.1:port.
func clientListenURL(dir string, port int) (url.URL, error) {
	if port != 0 {
		return url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}, nil
	}
	socket, err := filepath.Abs(filepath.Join(dir, "client.sock"))
	if err != nil {
		return url.URL{}, fmt.Errorf("locating the embedded etcd socket: %w", err)
	}
	// etcd wants host:port even for a socket: the file is named
	// "client.sock:0".
	return url.URL{Scheme: "unix", Host: socket + ":0"}, nil
}

// freeLocalURL returns an http URL on a port of 127.0.0.1 that was free a
// moment ago.
func freeLocalURL() (url.URL, error) {
	port, err := freeport.Pick("127.0.0.1")
	if err != nil {
		return url.URL{}, fmt.Errorf("finding a free port for embedded etcd: %w", err)
	}
	return url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port))}, nil
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
	s.stopping.Store(true)
	s.etcd.Close()
}

// unlessStopping drops log entries once the server is stopping.
type unlessStopping struct {
	zapcore.Core
	stopping *atomic.Bool
}

func (c unlessStopping) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.stopping.Load() {
		return ce
	}
	return c.Core.Check(e, ce)
}

func (c unlessStopping) With(fields []zapcore.Field) zapcore.Core {
	return unlessStopping{Core: c.Core.With(fields), stopping: c.stopping}
}
