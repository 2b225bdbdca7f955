// Package etcdtest runs the project's embedded etcd (pkg/embeddedetcd) for
// a test, with a client, so that tests need no etcd binary and always run.
package etcdtest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
)

// Server is a running single-member etcd.
type Server struct {
	// Endpoint is the client URL, e.g. http://127.0.0.1:40123.
	Endpoint string
	// Client is connected to Endpoint.
	Client *clientv3.Client
}

// Start runs an etcd on free 127.0.0.1 ports with its data in a test
// temporary directory; the test's cleanup stops it.
func Start(t testing.TB) *Server {
	t.Helper()
	e, err := embeddedetcd.Start(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Stop)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.ClientURL()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("connecting to embedded etcd at %s: %v", e.ClientURL(), err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &Server{Endpoint: e.ClientURL(), Client: c}
}

// Keys returns the keys under prefix with their mod revisions.
func (s *Server) Keys(t testing.TB, prefix string) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.Client.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatalf("listing etcd keys under %s: %v", prefix, err)
	}
	out := make(map[string]int64, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		out[string(kv.Key)] = kv.ModRevision
	}
	return out
}

// Revision returns the current revision of the etcd.
func (s *Server) Revision(t testing.TB) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := s.Client.Get(ctx, "/")
	if err != nil {
		t.Fatalf("reading the etcd revision: %v", err)
	}
	return resp.Header.Revision
}
