package kubefed_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/fedenv"
)

// takePort serves HTTP on address until the test ends, as the program did
// that took kubefed init's apiserver port in a CI run.
func takePort(t *testing.T, address string) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", address)
	require.NoError(t, err)
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// TestANewPlaneWhosePortsWereTakenComesUpOnOthers: the ports a new plane
// picks are free when picked, but anything may bind them before the plane's
// programs do. Then the plane picks other ports and starts again, and every
// file naming its addresses follows.
func TestANewPlaneWhosePortsWereTakenComesUpOnOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("end to end: runs the control plane's programs")
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "portfed")
	plane, err := processplane.New(processplane.Options{Name: "portfed", Dir: dir, DNSZone: "example.com."})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = plane.Stop()
		for _, p := range localprocess.FindMentioning(dir, fedenv.PlanePrograms()) {
			_ = p.Stop(time.Second)
		}
	})
	takenServer, takenDNS := plane.Server, plane.DNS.Address
	squatter := takePort(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(plane.Port)))
	takePort(t, takenDNS)

	require.NoError(t, plane.Create())
	var retries []error
	find := func(program string) (string, error) { return filepath.Join(binDir, program), nil }
	require.NoError(t, plane.Up(ctx, find, processplane.UpProgress{Retrying: func(err error) { retries = append(retries, err) }}))

	require.Len(t, retries, 1, "one retry on new ports")
	assert.Contains(t, retries[0].Error(), "address already in use", "the retry names the cause")
	assert.NotEqual(t, takenServer, plane.Server)
	assert.NotEqual(t, takenDNS, plane.DNS.Address)

	client, err := plane.AdminClient()
	require.NoError(t, err)
	_, err = client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	require.NoError(t, err, "the apiserver answers at %s", plane.Server)

	saved, err := processplane.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, plane.Server, saved.Server, "the state names the new address")
	assert.Equal(t, plane.DNS.Address, saved.DNS.Address)
	cm, err := clientcmd.LoadFromFile(filepath.Join(dir, processplane.ControllerManagerKubeconfig))
	require.NoError(t, err)
	assert.Equal(t, plane.Server, cm.Clusters[cm.Contexts[cm.CurrentContext].Cluster].Server, "the controller manager's kubeconfig names the new address")
	corefile, err := os.ReadFile(filepath.Join(dir, "Corefile"))
	require.NoError(t, err)
	_, dnsPort, err := net.SplitHostPort(plane.DNS.Address)
	require.NoError(t, err)
	assert.Contains(t, string(corefile), "example.com.:"+dnsPort, "the DNS server serves on its new port")

	resp, err := http.Get(squatter.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the program holding the old port is untouched")
}
