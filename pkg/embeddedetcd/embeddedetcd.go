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
	portURL   string
	// stopping silences the log while Stop closes the listeners: etcd
	// logs each closed listener as an error.
	stopping *atomic.Bool
}

// ClientTLS is how the embedded etcd serves clients on its TCP port: over
// TLS with this serving certificate, to clients with a certificate that the
// CA in CAFile signed. Others, on this machine too, get nothing.
type ClientTLS struct {
	CertFile string
	KeyFile  string
	CAFile   string
}

// Options say where the embedded etcd serves clients besides the unix
// socket in its directory.
type Options struct {
	// ClientPort, when not 0, serves clients on 127.0.0.1:ClientPort as
	// well, so that other programs of the control plane, such as the DNS
	// server reading /skydns, can share the etcd.
	ClientPort int
	// ClientTLS secures ClientPort. Without it the port is plain HTTP that
	// anyone on this machine may read and write (planes made before TLS).
	ClientTLS *ClientTLS
}

// Start runs an etcd member with its data in dataDir/etcd, serving clients
// on a unix socket in that directory, which only the owner of the data can
// reach, and on 127.0.0.1:clientPort (plain) when clientPort is not 0. See
// StartWithOptions.
func Start(dataDir string, clientPort int) (*Server, error) {
	return StartWithOptions(dataDir, Options{ClientPort: clientPort})
}

// StartWithOptions runs an etcd member with its data in dataDir/etcd. It
// serves clients on a unix socket in that directory (see ClientURL) and, with
// opts.ClientPort, on 127.0.0.1:ClientPort too (see PortURL). Its peer port,
// on 127.0.0.1, is never dialled: the member is alone.
func StartWithOptions(dataDir string, opts Options) (*Server, error) {
	cfg := embed.NewConfig()
	cfg.Name = "federation"
	cfg.Dir = filepath.Join(dataDir, "etcd")
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	// Nothing uses etcd's JSON gateway; it would dial the TLS port with the
	// serving certificate as a client certificate.
	cfg.EnableGRPCGateway = false
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
	socketURL, err := socketURL(cfg.Dir)
	if err != nil {
		return nil, err
	}
	clientURLs := []url.URL{socketURL}
	var portURL url.URL
	if opts.ClientPort != 0 {
		portURL = url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.ClientPort))}
		if t := opts.ClientTLS; t != nil {
			if err := t.validate(); err != nil {
				return nil, err
			}
			portURL.Scheme = "https"
			// Applies to the https URL only: the socket stays plain.
			info := &cfg.ClientTLSInfo
			info.CertFile, info.KeyFile, info.TrustedCAFile, info.ClientCertAuth = t.CertFile, t.KeyFile, t.CAFile, true
		}
		clientURLs = append(clientURLs, portURL)
	}
	peerURL, err := freeLocalURL()
	if err != nil {
		return nil, err
	}
	cfg.ListenClientUrls = clientURLs
	cfg.AdvertiseClientUrls = clientURLs
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
	s := &Server{etcd: e, clientURL: urlString(socketURL), stopping: stopping}
	if opts.ClientPort != 0 {
		s.portURL = urlString(portURL)
	}
	return s, nil
}

// validate checks that every file is named: a port with half a TLS set-up
// would be served plain or refuse everyone.
func (t *ClientTLS) validate() error {
	if t.CertFile == "" || t.KeyFile == "" || t.CAFile == "" {
		return fmt.Errorf("embedded etcd client TLS needs a certificate, its key and a client CA (got %q, %q, %q)", t.CertFile, t.KeyFile, t.CAFile)
	}
	return nil
}

// urlString is scheme://host: url.URL.String would escape the socket path's
// slashes.
func urlString(u url.URL) string {
	return u.Scheme + "://" + u.Host
}

// socketURL is the unix socket in dir.
func socketURL(dir string) (url.URL, error) {
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

// ClientURL is the unix socket clients of this machine's user reach the
// etcd at.
func (s *Server) ClientURL() string {
	return s.clientURL
}

// PortURL is the client URL on 127.0.0.1 (https with ClientTLS), or ""
// without a client port.
func (s *Server) PortURL() string {
	return s.portURL
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
