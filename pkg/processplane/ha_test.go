package processplane

import (
	"context"
	"crypto/x509"
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
	"k8s.io/client-go/util/cert"
)

// createdHAPlane plans and creates an HA plane in a temporary folder.
func createdHAPlane(t *testing.T, opts Options) *Plane {
	t.Helper()
	opts.Name, opts.Dir, opts.HA = "fed", filepath.Join(t.TempDir(), "fed"), true
	p, err := New(opts)
	require.NoError(t, err)
	require.NoError(t, p.Create())
	return p
}

// argsOf returns the command line of the plane's instance name.
func argsOf(t *testing.T, p *Plane, name string) []string {
	t.Helper()
	in, ok := p.instance(name)
	require.True(t, ok, "instance %s", name)
	return in.args
}

// flagValues returns the values of --flag in args.
func flagValues(args []string, flag string) []string {
	var values []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+flag+"="); ok {
			values = append(values, v)
		}
	}
	return values
}

func TestHAPlaneRunsThreeEtcdMembersTwoAPIServersTwoControllerManagers(t *testing.T) {
	p := createdHAPlane(t, Options{DNSZone: "example.com."})

	assert.Equal(t, []string{"etcd-0", "etcd-1", "etcd-2"}, p.Instances(EtcdProgram))
	assert.Equal(t, []string{"federation-apiserver-0", "federation-apiserver-1"}, p.Instances(APIServer))
	assert.Equal(t, []string{"federation-controller-manager-0", "federation-controller-manager-1"}, p.Instances(ControllerManager))
	assert.Equal(t, []string{"federation-dns"}, p.Instances(DNSServerProgram))
	var order []string
	for _, in := range instancesOf(p) {
		order = append(order, in.program)
	}
	assert.Equal(t, []string{EtcdProgram, EtcdProgram, EtcdProgram, APIServer, APIServer, ControllerManager, ControllerManager, DNSServerProgram},
		order, "etcd first: the apiservers store in it; the controller managers need the apiservers")

	t.Run("every port but the apiservers' own", func(t *testing.T) {
		ports := []int{p.Port, portOf(t, p.DNS.Address), portOf(t, p.DNS.HealthAddress), portOf(t, p.DNS.ReadyAddress), portOf(t, p.DNS.MetricsAddress)}
		for _, m := range p.EtcdMembers {
			ports = append(ports, m.ClientPort, m.PeerPort)
		}
		for _, a := range p.ControllerManagerAddresses {
			ports = append(ports, portOf(t, a))
		}
		assert.Len(t, ports, 5+6+2)
		slices.Sort(ports)
		assert.Equal(t, ports, slices.Compact(slices.Clone(ports)), "no port twice: %v", ports)
		assert.Equal(t, p.ControllerManagerAddresses[0], p.ControllerManagerAddress, "the first controller manager is the plane's")
	})

	t.Run("etcd members form one cluster over TLS", func(t *testing.T) {
		var peers []string
		for _, m := range p.EtcdMembers {
			peers = append(peers, m.Name+"="+m.PeerURL())
		}
		for _, m := range p.EtcdMembers {
			args := argsOf(t, p, m.Name)
			assert.Equal(t, []string{strings.Join(peers, ",")}, flagValues(args, "initial-cluster"), m.Name)
			assert.Equal(t, []string{m.Name}, flagValues(args, "name"))
			assert.Equal(t, []string{p.path("data", m.Name)}, flagValues(args, "data-dir"), "its data in the plane's folder")
			assert.Equal(t, []string{"https://127.0.0.1:" + strconv.Itoa(m.ClientPort)}, flagValues(args, "listen-client-urls"))
			assert.Equal(t, []string{"https://127.0.0.1:" + strconv.Itoa(m.PeerPort)}, flagValues(args, "listen-peer-urls"))
			assert.Subset(t, args, []string{"--client-cert-auth", "--peer-client-cert-auth"}, "certificates required both ways")
			assert.Equal(t, []string{p.path(etcdCACert)}, flagValues(args, "trusted-ca-file"))
			assert.Equal(t, []string{p.path(etcdCACert)}, flagValues(args, "peer-trusted-ca-file"))
		}
	})

	t.Run("the apiservers share the port, the etcd cluster and every secret but keep their own audit log", func(t *testing.T) {
		a0, a1 := argsOf(t, p, "federation-apiserver-0"), argsOf(t, p, "federation-apiserver-1")
		for _, args := range [][]string{a0, a1} {
			assert.Contains(t, args, "--permit-port-sharing")
			assert.Equal(t, []string{strconv.Itoa(p.Port)}, flagValues(args, "secure-port"))
			assert.Equal(t, []string{strings.Join(p.etcdClientURLs(), ",")}, flagValues(args, "etcd-servers"), "every member")
			assert.Equal(t, []string{p.path(etcdAPIServerCert)}, flagValues(args, "etcd-certfile"))
			for _, a := range args {
				assert.NotRegexp(t, "^--(data-dir|embedded-etcd)", a, "nothing of the embedded etcd")
			}
		}
		for _, flag := range []string{"tls-cert-file", "tls-private-key-file", "client-ca-file", "encryption-provider-config", "audit-policy-file", "etcd-cafile", "etcd-keyfile"} {
			assert.Len(t, flagValues(a0, flag), 1, flag)
			assert.Equal(t, flagValues(a0, flag), flagValues(a1, flag), "the same %s", flag)
		}
		assert.Equal(t, []string{p.path("logs/audit-0.log")}, flagValues(a0, "audit-log-path"))
		assert.Equal(t, []string{p.path("logs/audit-1.log")}, flagValues(a1, "audit-log-path"))
	})

	t.Run("each controller manager serves on its own port, on the one apiserver address", func(t *testing.T) {
		for i, name := range p.Instances(ControllerManager) {
			args := argsOf(t, p, name)
			_, port, _ := net.SplitHostPort(p.ControllerManagerAddresses[i])
			assert.Equal(t, []string{port}, flagValues(args, "secure-port"))
			url, err := p.ControllerManagerURL(name)
			require.NoError(t, err)
			assert.Equal(t, "https://"+p.ControllerManagerAddresses[i], url)
		}
		_, err := p.ControllerManagerURL("federation-controller-manager-7")
		assert.ErrorContains(t, err, `no controller manager "federation-controller-manager-7"`)
	})

	t.Run("DNS reads the etcd cluster", func(t *testing.T) {
		assert.Equal(t, p.etcdClientURLs(), p.DNS.EtcdEndpoints)
		assert.True(t, p.DNS.EtcdTLS)
		assert.Zero(t, p.DNS.EmbeddedEtcdPort)
		conf, err := os.ReadFile(p.path(ProviderConfig))
		require.NoError(t, err)
		assert.Contains(t, string(conf), "etcd-endpoints = "+strings.Join(p.etcdClientURLs(), ",")+"\n")
		corefile, err := os.ReadFile(p.path(corefile))
		require.NoError(t, err)
		assert.Contains(t, string(corefile), "endpoint "+strings.Join(p.etcdClientURLs(), " ")+"\n")
	})

	t.Run("the same after a restart", func(t *testing.T) {
		loaded, err := Load(p.Dir)
		require.NoError(t, err)
		assert.Equal(t, instancesOf(p), instancesOf(loaded))
	})
}

// portOf is the port of address.
func portOf(t *testing.T, address string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(address)
	require.NoError(t, err)
	n, err := strconv.Atoi(port)
	require.NoError(t, err)
	return n
}

// TestHAPlaneEtcdCredentials: the etcd cluster's certificates come from
// the plane's etcd CA, which is not the CA of the apiserver's users: no
// tenant's client certificate opens etcd.
func TestHAPlaneEtcdCredentials(t *testing.T) {
	p := createdHAPlane(t, Options{})
	etcdCA := loadPool(t, p.path(etcdCACert))
	usersCA := loadPool(t, p.path(caCert))
	verify := func(file string, roots *x509.CertPool, usage x509.ExtKeyUsage) error {
		certs, err := cert.CertsFromFile(p.path(file))
		require.NoError(t, err)
		_, err = certs[0].Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	assert.NoError(t, verify(etcdPeerCert, etcdCA, x509.ExtKeyUsageServerAuth), "a peer serves")
	assert.NoError(t, verify(etcdPeerCert, etcdCA, x509.ExtKeyUsageClientAuth), "and dials its peers")
	assert.NoError(t, verify(etcdServingCert, etcdCA, x509.ExtKeyUsageServerAuth))
	for _, client := range []string{etcdAPIServerCert, etcdAdminCert} {
		assert.NoError(t, verify(client, etcdCA, x509.ExtKeyUsageClientAuth), client)
		assert.Error(t, verify(client, usersCA, x509.ExtKeyUsageClientAuth), "%s is not of the users' CA", client)
	}
	assert.NoFileExists(t, p.path(etcdDNSCert), "no DNS, no DNS certificate")
}

func loadPool(t *testing.T, file string) *x509.CertPool {
	t.Helper()
	certs, err := cert.CertsFromFile(file)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(certs[0])
	return pool
}

// TestHAPlaneOnAnExternalEtcd: with --etcd-servers the plane runs no etcd
// of its own, still two apiservers and two controller managers.
func TestHAPlaneOnAnExternalEtcd(t *testing.T) {
	p := createdHAPlane(t, Options{EtcdServers: []string{"http://10.0.0.1:2379", "http://10.0.0.2:2379"}})
	assert.Empty(t, p.Instances(EtcdProgram))
	assert.Empty(t, p.EtcdMembers)
	assert.Len(t, p.Instances(APIServer), 2)
	assert.Len(t, p.Instances(ControllerManager), 2)
	for _, name := range p.Instances(APIServer) {
		assert.Equal(t, []string{"http://10.0.0.1:2379,http://10.0.0.2:2379"}, flagValues(argsOf(t, p, name), "etcd-servers"))
		assert.Empty(t, flagValues(argsOf(t, p, name), "etcd-certfile"))
	}
	assert.NoFileExists(t, p.path(etcdCACert), "no etcd of ours, no etcd CA")
	_, err := p.EtcdClient()
	assert.ErrorIs(t, err, ErrExternalEtcd)
}

// TestSinglePlaneInstances: a plane of init without --ha keeps its
// program names, which existing state files hold.
func TestSinglePlaneInstances(t *testing.T) {
	p := createdPlane(t, "fed")
	assert.Equal(t, []string{APIServer}, p.Instances(APIServer))
	assert.Equal(t, []string{ControllerManager}, p.Instances(ControllerManager))
	assert.Empty(t, p.Instances(EtcdProgram), "embedded in the apiserver")
	assert.Empty(t, p.Instances(DNSServerProgram))
	assert.Empty(t, p.ControllerManagerAddresses)
	url, err := p.ControllerManagerURL(ControllerManager)
	require.NoError(t, err)
	assert.Equal(t, "https://"+p.ControllerManagerAddress, url)
	data, err := os.ReadFile(p.path(stateFile))
	require.NoError(t, err)
	assert.NotRegexp(t, regexp.MustCompile(`"(HA|etcdMembers|controllerManagerAddresses)"`), string(data), "nothing new in a single plane's state")
}

func TestInstanceControlNamesTheInstance(t *testing.T) {
	p := createdHAPlane(t, Options{})
	assert.ErrorContains(t, p.Kill("etcd-7"), `no instance "etcd-7"`)
	assert.ErrorContains(t, p.Kill("etcd-1"), "etcd-1 of federation \"fed\" does not run")
	assert.ErrorContains(t, p.StopInstance("federation-apiserver-0"), "does not run")
	assert.ErrorContains(t, p.StartInstance(context.Background(), "federation-apiserver-1"), "never ran")
}

// TestListensOn finds this process's own listener by its port.
func TestListensOn(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	listens, err := listensOn(os.Getpid(), port)
	require.NoError(t, err)
	assert.True(t, listens)
	require.NoError(t, l.Close())
	listens, err = listensOn(os.Getpid(), port)
	require.NoError(t, err)
	assert.False(t, listens, "closed")
}

// TestRestoreOfAnHAPlane gives each member of the cluster the snapshot,
// as members of one new cluster.
func TestRestoreOfAnHAPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd")
	}
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "fed.snapshot")
	withEtcd(t, t.TempDir(), func(c *clientv3.Client) {
		_, err := c.Put(ctx, "/registry/kept", "before")
		require.NoError(t, err)
		stream, err := c.Snapshot(ctx)
		require.NoError(t, err)
		defer stream.Close()
		require.NoError(t, writeFileAtomic(file, stream))
	})
	p := createdHAPlane(t, Options{})
	require.NoError(t, os.MkdirAll(p.path(dataFolder, "etcd-0", "member"), 0o700))

	aside, err := p.Restore(file, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	require.NoError(t, err)
	assert.DirExists(t, filepath.Join(aside, "etcd-0", "member"), "the former data is kept")
	for _, m := range p.EtcdMembers {
		assert.DirExists(t, p.path(dataFolder, m.Name, "member", "snap"), m.Name)
	}
	assert.NoDirExists(t, p.path(dataFolder, etcdFolder), "no embedded etcd's data")
}
