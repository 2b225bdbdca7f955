package memberenv_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/memberenv"
)

// helperEnv tells the re-executed test binary to act as a test that is
// killed half-way.
const helperEnv = "MEMBERENV_KILLED_TEST_DIR"

// TestKilledTestLeavesNoProcess runs a test process that starts a member
// cluster through the Go framework and is then killed with SIGKILL, as a
// go test timeout or a CI abort would: its clusters must die with it.
func TestKilledTestLeavesNoProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperStartsAndWaitsToBeKilled$", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for _, p := range memberenv.Leftovers(dir) {
			_ = syscall.Kill(p.Pid, syscall.SIGKILL)
		}
	})

	ready := make(chan error, 1)
	go func() {
		var log strings.Builder
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			log.WriteString(scanner.Text() + "\n")
			if strings.Contains(scanner.Text(), "ENVIRONMENT READY") {
				ready <- nil
				return
			}
		}
		ready <- fmt.Errorf("helper ended before its environment was ready:\n%s", log.String())
	}()
	select {
	case err := <-ready:
		require.NoError(t, err)
	case <-time.After(3 * time.Minute):
		t.Fatal("helper did not start its environment within 3 minutes")
	}
	require.NotEmpty(t, memberenv.Leftovers(dir), "the helper's environment runs")

	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	require.NoError(t, poll.Until(context.Background(), 15*time.Second, "the killed test's processes to die", func(context.Context) error {
		if left := memberenv.Leftovers(dir); len(left) > 0 {
			return fmt.Errorf("%d still running, first %s pid %d", len(left), left[0].Name, left[0].Pid)
		}
		return nil
	}))
}

// TestHelperStartsAndWaitsToBeKilled is the killed test of
// TestKilledTestLeavesNoProcess; it does nothing when run on its own.
func TestHelperStartsAndWaitsToBeKilled(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("runs only as the helper of TestKilledTestLeavesNoProcess")
	}
	env, err := memberenv.Start(context.Background(), memberenv.Options{
		Dir: dir, Clusters: memberenv.DefaultClusters(1, 1),
	})
	require.NoError(t, err)
	client, err := env.Client("cluster1")
	require.NoError(t, err)
	nodes, err := client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, nodes.Items, 1)
	fmt.Println("ENVIRONMENT READY")
	select {} // wait for SIGKILL
}
