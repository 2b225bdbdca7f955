package gitops_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/test/memberenv"
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
		f.hostKubectl(host, "apply", "--server-side", "-f", crd)
	}
	f.hostKubectl(host, "wait", "--for=condition=Established", "--timeout=30s",
		"crd/gitrepositories.source.toolkit.fluxcd.io", "crd/kustomizations.kustomize.toolkit.fluxcd.io")
	f.hostKubectl(host, "create", "namespace", fluxNamespace)

	// The controllers find their cluster through KUBECONFIG's current context.
	cfg, err := clientcmd.LoadFromFile(f.User.Kubeconfig)
	require.NoError(t, err)
	cfg.CurrentContext = host
	kubeconfig := filepath.Join(t.TempDir(), "host.kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, kubeconfig))

	storage := loopbackAddress(t)
	runController(t, "source-controller", flux.SourceController, kubeconfig,
		"--storage-path="+t.TempDir(), "--storage-addr="+storage, "--storage-adv-addr="+storage)
	// A Kustomization made before its source's first artifact waits for the
	// source's watch event, or for this retry (30 s by default).
	runController(t, "kustomize-controller", flux.KustomizeController, kubeconfig, "--requeue-dependency=5s")
}

// runController starts one Flux controller and stops it when the test ends.
func runController(t *testing.T, name, binary, kubeconfig string, flags ...string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	args := append([]string{"--metrics-addr=0", "--health-addr=0", "--log-encoding=console", "--enable-leader-election=false"}, flags...)
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "RUNTIME_NAMESPACE="+fluxNamespace)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// It dies with the test binary, even if that is killed. (It reads its
	// cluster from the environment only, which localprocess does not set.)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start(), name)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("%s's log:\n%s", name, tail(string(b), 150))
			}
		}
	})
}

// loopbackAddress is a free TCP address on 127.0.0.1.
func loopbackAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[%d lines before]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
