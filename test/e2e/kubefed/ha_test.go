package kubefed_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/dnsprovider"
	"github.com/federation-v1/federation/pkg/dnsprovider/coredns"
	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
)

// TestHATopology: `kubefed init NAME --local --ha` runs a 3-member etcd
// cluster, two apiservers behind the kubeconfig's one address and two
// controller managers of which one leads; the address answers while either
// apiserver is down; stop, start, backup, restore and delete act on all of
// it. It also measures the time to ready of both topologies.
func TestHATopology(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	k := u.Kubectl()

	singleInit := timed(func() { u.InitFederation("single") })
	u.MustKubefed("stop", "single")
	singleStart := timed(func() { u.MustKubefed("start", "single") })
	u.MustKubefed("delete", "single", "--local")

	var out string
	haInit := timed(func() { out = u.InitFederation("ha", "--ha") })
	t.Logf("time to ready, this machine, one run: kubefed init: single plane %s, HA plane %s; kubefed start: single %s",
		singleInit.Round(time.Millisecond), haInit.Round(time.Millisecond), singleStart.Round(time.Millisecond))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.True(t, strings.HasPrefix(lines[len(lines)-1], "Federation API server is running at: https://127.0.0.1:"), out)

	plane := u.Plane("ha")
	instances := slices.Concat(plane.Instances(processplane.EtcdProgram), plane.Instances(processplane.APIServer), plane.Instances(processplane.ControllerManager))
	require.Equal(t, []string{"etcd-0", "etcd-1", "etcd-2", "federation-apiserver-0", "federation-apiserver-1",
		"federation-controller-manager-0", "federation-controller-manager-1"}, instances)
	for _, name := range instances {
		assert.True(t, plane.Alive(name), "%s runs", name)
		assert.FileExists(t, filepath.Join(u.PlaneDir("ha"), "logs", name+".log"), "%s has its own log", name)
	}

	t.Run("three healthy etcd members of one cluster", func(t *testing.T) {
		client, err := plane.EtcdClient()
		require.NoError(t, err)
		defer client.Close()
		members, err := client.MemberList(ctx)
		require.NoError(t, err)
		var names []string
		for _, m := range members.Members {
			names = append(names, m.Name)
			assert.False(t, m.IsLearner, m.Name)
		}
		slices.Sort(names)
		assert.Equal(t, []string{"etcd-0", "etcd-1", "etcd-2"}, names)
		leaders := map[uint64]bool{}
		for _, m := range plane.EtcdMembers {
			status, err := client.Status(ctx, m.ClientURL())
			require.NoError(t, err, "status of %s", m.Name)
			assert.Equal(t, members.Header.ClusterId, status.Header.ClusterId, "%s is of the cluster", m.Name)
			assert.Empty(t, status.Errors, m.Name)
			leaders[status.Leader] = true
		}
		assert.Len(t, leaders, 1, "the members agree on one leader")
		assert.NotContains(t, leaders, uint64(0), "there is a leader")
	})

	t.Run("the one address answers while either apiserver is down", func(t *testing.T) {
		cfg, err := clientcmd.LoadFromFile(u.Kubeconfig)
		require.NoError(t, err)
		assert.Equal(t, plane.Server, cfg.Clusters["ha"].Server, "the kubeconfig lists the one address")

		// A Secret sealed by one apiserver, read through the other: they
		// share the encryption key and the etcd cluster.
		require.NoError(t, plane.Kill("federation-apiserver-1"))
		_, err = k.Run(ctx, "--context=ha", "create", "secret", "generic", "shared", "--from-literal=password=ha-7f3d")
		require.NoError(t, err, "written through federation-apiserver-0 alone")
		_, err = k.Run(ctx, "--context=ha", "create", "namespace", "written-by-0")
		require.NoError(t, err)
		require.NoError(t, plane.StartInstance(ctx, "federation-apiserver-1"))
		require.NoError(t, plane.Kill("federation-apiserver-0"))
		for range 5 { // each kubectl a new connection: any would reach the dead one
			value, err := k.Run(ctx, "--context=ha", "get", "secret", "shared", "-o", "jsonpath={.data.password}")
			require.NoError(t, err, "read through federation-apiserver-1 alone")
			decoded, err := base64.StdEncoding.DecodeString(value)
			require.NoError(t, err)
			assert.Equal(t, "ha-7f3d", string(decoded))
		}
		got, err := k.Run(ctx, "--context=ha", "get", "namespace", "written-by-0", "-o", "name")
		require.NoError(t, err)
		assert.Equal(t, "namespace/written-by-0", strings.TrimSpace(got))
		require.NoError(t, plane.StartInstance(ctx, "federation-apiserver-0"))

		etcd, err := plane.EtcdClient()
		require.NoError(t, err)
		defer etcd.Close()
		stored, err := etcd.Get(ctx, "/registry/secrets/default/shared")
		require.NoError(t, err)
		require.Len(t, stored.Kvs, 1)
		assert.True(t, strings.HasPrefix(string(stored.Kvs[0].Value), "k8s:enc:secretbox:v1:"), "sealed in etcd")
	})

	t.Run("both controller managers serve, exactly one leads", func(t *testing.T) {
		client, _, err := plane.ControllerManagerClient()
		require.NoError(t, err)
		require.NoError(t, poll.Until(ctx, time.Minute, "one leading controller manager", func(ctx context.Context) error {
			var leading []string
			for _, name := range plane.Instances(processplane.ControllerManager) {
				base, err := plane.ControllerManagerURL(name)
				if err != nil {
					return err
				}
				if err := httpprobe.GetOKWith(ctx, client, base+"/healthz", ""); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				status, err := leaderStatus(plane, base)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				if status == "1" {
					leading = append(leading, name)
				}
			}
			if len(leading) != 1 {
				return fmt.Errorf("leading: %v", leading)
			}
			return nil
		}))
		holder, err := k.Run(ctx, "--context=ha", "-n", "federation-system", "get", "lease", "federation-controller-manager", "-o", "jsonpath={.spec.holderIdentity}")
		require.NoError(t, err)
		assert.NotEmpty(t, holder, "the Lease names its holder")
	})

	t.Run("the etcd leader killed, then started again, rejoins", func(t *testing.T) {
		client, err := plane.EtcdClient()
		require.NoError(t, err)
		defer client.Close()
		leader := etcdLeader(ctx, t, plane, client)
		require.NoError(t, plane.Kill(leader.Name))
		// Writes fail until the other two elect a leader (etcd's election
		// timeout, 1 s), as with any etcd cluster; then two of three are a
		// quorum.
		killed := time.Now()
		require.NoError(t, poll.Until(ctx, 30*time.Second, "a write with "+leader.Name+" down", func(ctx context.Context) error {
			_, err := k.Run(ctx, "--context=ha", "create", "namespace", "while-etcd-leader-is-down")
			if err != nil && strings.Contains(err.Error(), "AlreadyExists") {
				return nil // an earlier try timed out but was written
			}
			return err
		}))
		t.Logf("a write succeeded %s after the etcd leader %s was killed", time.Since(killed).Round(time.Millisecond), leader.Name)
		require.NoError(t, plane.StartInstance(ctx, leader.Name))

		written, err := client.Get(ctx, "/registry/namespaces/while-etcd-leader-is-down")
		require.NoError(t, err)
		require.Len(t, written.Kvs, 1)
		require.NoError(t, poll.Until(ctx, 30*time.Second, leader.Name+" caught up with the write made without it", func(ctx context.Context) error {
			status, err := client.Status(ctx, leader.ClientURL())
			if err != nil {
				return err
			}
			if status.Header.Revision < written.Kvs[0].ModRevision {
				return fmt.Errorf("%s is at revision %d, the write at %d", leader.Name, status.Header.Revision, written.Kvs[0].ModRevision)
			}
			return nil
		}))
	})

	t.Run("stop stops every process, start brings them back with the data", func(t *testing.T) {
		_, err := k.Run(ctx, "--context=ha", "create", "namespace", "keep-me")
		require.NoError(t, err)
		u.MustKubefed("stop", "ha")
		assert.Empty(t, localprocess.FindMentioning(u.PlaneDir("ha"), fedenv.PlanePrograms()))
		_, err = k.Run(ctx, "--context=ha", "--request-timeout=3s", "get", "namespaces")
		require.Error(t, err, "a stopped federation does not answer")

		haStart := timed(func() { u.MustKubefed("start", "ha") })
		t.Logf("time to ready, kubefed start: single plane %s, HA plane %s", singleStart.Round(time.Millisecond), haStart.Round(time.Millisecond))
		plane = u.Plane("ha")
		for _, name := range instances {
			assert.True(t, plane.Alive(name), "%s runs again", name)
		}
		for _, ns := range []string{"keep-me", "written-by-0", "while-etcd-leader-is-down"} {
			got, err := k.Run(ctx, "--context=ha", "get", "namespace", ns, "-o", "name")
			require.NoError(t, err)
			assert.Equal(t, "namespace/"+ns, strings.TrimSpace(got))
		}
	})

	t.Run("backup of the cluster, restore into every member", func(t *testing.T) {
		snapshot := filepath.Join(t.TempDir(), "ha.snapshot")
		out := u.MustKubefed("backup", "ha", "-o", snapshot)
		assert.Contains(t, out, `Federation "ha" backed up to `+snapshot)
		_, err := k.Run(ctx, "--context=ha", "create", "namespace", "after-backup")
		require.NoError(t, err)

		out, err = u.Kubefed("restore", "ha", "-f", snapshot)
		require.Error(t, err)
		assert.Contains(t, out, "stop it first")
		u.MustKubefed("stop", "ha")
		u.MustKubefed("restore", "ha", "-f", snapshot)
		u.MustKubefed("start", "ha")
		got, err := k.Run(ctx, "--context=ha", "get", "namespace", "keep-me", "-o", "name")
		require.NoError(t, err)
		assert.Equal(t, "namespace/keep-me", strings.TrimSpace(got), "what the snapshot holds is back")
		_, err = k.Run(ctx, "--context=ha", "get", "namespace", "after-backup")
		assert.ErrorContains(t, err, "NotFound", "what came after it is not")

		plane = u.Plane("ha")
		client, err := plane.EtcdClient()
		require.NoError(t, err)
		defer client.Close()
		members, err := client.MemberList(ctx)
		require.NoError(t, err)
		assert.Len(t, members.Members, 3, "the restored cluster has every member")
	})

	t.Run("delete removes every process and the folder", func(t *testing.T) {
		u.MustKubefed("delete", "ha", "--local")
		assert.NoDirExists(t, u.PlaneDir("ha"))
		assert.Empty(t, localprocess.FindMentioning(u.PlaneDir("ha"), fedenv.PlanePrograms()))
	})
}

// TestHAPlaneDNS: with --ha, federation-dns and the DNS records of
// coredns-provider.conf (the controller manager's) use the etcd cluster:
// a record written while the first member is down is answered.
func TestHAPlaneDNS(t *testing.T) {
	ctx := context.Background()
	u := fedenv.NewUser(t, binDir)
	out := u.InitFederation("hadns", "--ha", "--dns-provider=coredns", "--dns-zone-name=example.com.")
	m := regexp.MustCompile(`Federation DNS server for example.com. is answering at: (\S+)`).FindStringSubmatch(out)
	require.NotNil(t, m, "init names the DNS server's address:\n%s", out)
	server := m[1]
	plane := u.Plane("hadns")

	f, err := os.Open(filepath.Join(u.PlaneDir("hadns"), "coredns-provider.conf"))
	require.NoError(t, err)
	cfg, err := coredns.ParseConfig(f)
	f.Close()
	require.NoError(t, err)
	provider, err := coredns.NewFromConfig(cfg)
	require.NoError(t, err)
	defer provider.Close()
	zone, err := provider.Zone(ctx, "example.com.")
	require.NoError(t, err)
	answers := func(name string, ips ...string) {
		t.Helper()
		// An upsert, retried as the DNS controller retries it: the client's
		// connection to a member just killed is reset under a write in
		// flight, which etcd's client does not retry itself.
		require.NoError(t, poll.Until(ctx, 30*time.Second, "writing "+name, func(ctx context.Context) error {
			return zone.StartChangeset().Upsert(dnsprovider.RecordSet{
				Name: name, Type: dnsprovider.A, TTL: dnsprovider.DefaultTTL, Rrdatas: ips,
			}).Apply(ctx)
		}))
		require.NoError(t, poll.Until(ctx, 30*time.Second, fmt.Sprintf("%s to answer %v", name, ips), func(ctx context.Context) error {
			got, err := lookupA(ctx, server, name)
			if err == nil && !assert.ObjectsAreEqual(ips, got) {
				err = fmt.Errorf("answered %v", got)
			}
			return err
		}))
	}
	answers("before.default.hadns.svc.example.com.", "127.1.1.1")
	require.NoError(t, plane.Kill("etcd-0"))
	answers("without-etcd-0.default.hadns.svc.example.com.", "127.1.2.1")
}

// TestANewHAPlaneWhosePortsWereTakenComesUpOnOthers: as for a single
// plane (ports_test.go), and the etcd members, which recorded their peers'
// first addresses, start again from nothing on the new ones.
func TestANewHAPlaneWhosePortsWereTakenComesUpOnOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: runs the control plane's programs")
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "haports")
	plane, err := processplane.New(processplane.Options{Name: "haports", Dir: dir, HA: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = plane.Stop()
		for _, p := range localprocess.FindMentioning(dir, fedenv.PlanePrograms()) {
			_ = p.Stop(time.Second)
		}
	})
	takenServer, takenPeer := plane.Server, plane.EtcdMembers[1].PeerURL()
	takePort(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(plane.Port)))
	takePort(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(plane.EtcdMembers[1].PeerPort)))

	require.NoError(t, plane.Create())
	var retries []error
	find := func(program string) (string, error) { return filepath.Join(binDir, program), nil }
	require.NoError(t, plane.Up(ctx, find, processplane.UpProgress{Retrying: func(err error) { retries = append(retries, err) }}))
	require.Len(t, retries, 1, "one retry on new ports")
	assert.NotEqual(t, takenServer, plane.Server)
	assert.NotEqual(t, takenPeer, plane.EtcdMembers[1].PeerURL())

	client, err := plane.EtcdClient()
	require.NoError(t, err)
	defer client.Close()
	members, err := client.MemberList(ctx)
	require.NoError(t, err)
	var peers, want []string
	for _, m := range members.Members {
		peers = append(peers, m.PeerURLs...)
	}
	for _, m := range plane.EtcdMembers {
		want = append(want, m.PeerURL())
	}
	assert.ElementsMatch(t, want, peers, "one cluster of the new addresses")
}

func TestInitHARejectsBadInput(t *testing.T) {
	u := fedenv.NewUser(t, binDir)
	out, err := u.Kubefed("init", "fed", "--ha")
	require.Error(t, err)
	assert.Contains(t, out, "--ha is a topology of local processes: add --local")
	assert.NoDirExists(t, u.PlaneDir("fed"))
}

// etcdLeader is the member that leads the plane's etcd cluster.
func etcdLeader(ctx context.Context, t *testing.T, plane *processplane.Plane, client *clientv3.Client) processplane.EtcdMember {
	t.Helper()
	for _, m := range plane.EtcdMembers {
		status, err := client.Status(ctx, m.ClientURL())
		require.NoError(t, err, "status of %s", m.Name)
		if status.Header.MemberId == status.Leader {
			return m
		}
	}
	require.FailNow(t, "no etcd member leads")
	return processplane.EtcdMember{}
}

// timed returns how long do took.
func timed(do func()) time.Duration {
	start := time.Now()
	do()
	return time.Since(start)
}

var leaderStatusLine = regexp.MustCompile(`(?m)^leader_election_master_status\{[^}]*name="federation-controller-manager"[^}]*\} (\S+)$`)

// leaderStatus is the controller manager's leader_election_master_status
// of the federation's Lease: "1" while it leads.
func leaderStatus(plane *processplane.Plane, base string) (string, error) {
	metrics, err := plane.ControllerManagerMetrics(base)
	if err != nil {
		return "", err
	}
	m := leaderStatusLine.FindStringSubmatch(metrics)
	if m == nil {
		return "", fmt.Errorf("no leader_election_master_status of federation-controller-manager in %s/metrics", base)
	}
	return m[1], nil
}
