package apiserver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
)

// protobufPrefix starts every object Kubernetes stores as protobuf.
const protobufPrefix = "k8s\x00"

// TestExternalEtcd runs the server against an etcd of its own (given with
// --etcd-servers and --etcd-prefix) and checks where and how objects are
// stored: Kubernetes types as protobuf, Clusters as JSON, under the prefix.
func TestExternalEtcd(t *testing.T) {
	etcd, err := embeddedetcd.Start(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(etcd.Stop)

	s, err := startServer(t.TempDir(), filepath.Join(t.TempDir(), "unused"),
		"--etcd-servers", etcd.ClientURL(), "--etcd-prefix", "/federation-test")
	require.NoError(t, err)
	t.Cleanup(s.stop)

	k := newKubectl(t, kubectls[len(kubectls)-1], s.tokenConfig)
	k.must(t, "", "create", "namespace", "stored")
	k.must(t, tutorialDeployment, "-n", "stored", "create", "-f", "-")
	k.must(t, fmtManifest("clusters.federation", "stored-cluster", ""), "create", "-f", "-")

	client, err := clientv3.New(clientv3.Config{Endpoints: []string{etcd.ClientURL()}, DialTimeout: 10 * time.Second})
	require.NoError(t, err)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	get := func(key string) string {
		resp, err := client.Get(ctx, key)
		require.NoError(t, err, key)
		require.Len(t, resp.Kvs, 1, "no key %s in etcd", key)
		return string(resp.Kvs[0].Value)
	}
	// The extensions/v1beta1 Deployment is stored as apps/v1.
	deployment := get("/federation-test/deployments/stored/nginx-deployment")
	assert.Equal(t, protobufPrefix, deployment[:4], "deployment not stored as protobuf")
	assert.Contains(t, deployment, "apps/v1")
	assert.Equal(t, protobufPrefix, get("/federation-test/namespaces/stored")[:4], "namespace not stored as protobuf")
	cluster := get("/federation-test/clusters/stored-cluster")
	assert.Contains(t, cluster, `"apiVersion":"federation/v1beta1"`)
	assert.Contains(t, cluster, `"kind":"Cluster"`)
}
