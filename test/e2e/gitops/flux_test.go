package gitops_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/test/memberenv"
	"github.com/federation-v1/federation/test/testprocess"
)

// fluxNamespace is where Flux runs in its host, as `flux install` puts it.
const fluxNamespace = "flux-system"

// startFlux installs Flux's CRDs into the host cluster (a member, through
// the user's context of that name) and runs source-controller and
// kustomize-controller as local processes against it, watching every
// namespace, without leader election, their metrics and probes off. Their
// logs are printed when the test fails.
func startFlux(t *testing.T, f *fixture, host string) {
	t.Helper()
	root, err := memberenv.RepoRoot()
	require.NoError(t, err)
	flux, err := memberenv.EnsureFlux(context.Background(), root, t.Logf)
	require.NoError(t, err)

	for _, crd := range flux.CRDs {
		// Server-side: the CRDs are larger than client-side apply's annotation.
		f.In(host).Kubectl("apply", "--server-side", "-f", crd)
	}
	f.In(host).Kubectl("wait", "--for=condition=Established", "--timeout=30s",
		"crd/gitrepositories.source.toolkit.fluxcd.io", "crd/kustomizations.kustomize.toolkit.fluxcd.io")
	f.In(host).Kubectl("create", "namespace", fluxNamespace)

	// The controllers find their cluster through KUBECONFIG's current context.
	cfg, err := clientcmd.LoadFromFile(f.User.Kubeconfig)
	require.NoError(t, err)
	cfg.CurrentContext = host
	kubeconfig := filepath.Join(t.TempDir(), "host.kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, kubeconfig))

	// source-controller's artifact server, which kustomize-controller fetches from.
	port, err := freeport.Pick("127.0.0.1")
	require.NoError(t, err)
	storage := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	runController(t, "source-controller", flux.SourceController, kubeconfig,
		"--storage-path="+t.TempDir(), "--storage-addr="+storage, "--storage-adv-addr="+storage)
	// A Kustomization made before its source's first artifact waits for the
	// source's watch event, or for this retry (30 s by default).
	runController(t, "kustomize-controller", flux.KustomizeController, kubeconfig, "--requeue-dependency=5s")
}

// runController starts one Flux controller for the length of the test. It
// reads its cluster from KUBECONFIG (it has no flag for it).
func runController(t *testing.T, name, binary, kubeconfig string, flags ...string) {
	t.Helper()
	args := append([]string{"--metrics-addr=0", "--health-addr=0", "--log-encoding=console", "--enable-leader-election=false"}, flags...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "RUNTIME_NAMESPACE="+fluxNamespace)
	testprocess.Start(t, name, cmd)
}
