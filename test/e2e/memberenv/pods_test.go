package memberenv_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/test/kubectl"
	"github.com/federation-v1/federation/test/memberenv"
)

// TestKubectlLogsExecAttachAndPortForwardReachKwokPods: the real kubectl's
// logs (and logs -f), exec, attach and port-forward work against a
// kwok-simulated pod of every full member, each answering with what names
// that member.
func TestKubectlLogsExecAttachAndPortForwardReachKwokPods(t *testing.T) {
	ctx := context.Background()
	env, err := memberenv.Start(ctx, memberenv.Options{
		Dir:      filepath.Join(t.TempDir(), "run"),
		Clusters: memberenv.DefaultClusters(2, 1),
		Logf:     t.Logf,
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })
	kc := kubectl.Runner{Kubeconfig: env.Kubeconfig}
	clusters := []string{"cluster1", "cluster2"}
	for _, c := range clusters {
		_, err := kc.Run(ctx, "--context="+c, "run", "box", "--image=busybox", "--restart=Never")
		require.NoError(t, err)
	}
	for _, c := range clusters {
		_, err := kc.Run(ctx, "--context="+c, "wait", "--for=condition=Ready", "pod/box", "--timeout=60s")
		require.NoError(t, err)
	}

	// cluster2 comes second: its exact log also shows that the lines
	// appended in cluster1 stayed there.
	for _, cluster := range clusters {
		t.Run(cluster, func(t *testing.T) {
			run := func(args ...string) (string, error) {
				return kc.Run(ctx, append([]string{"--context=" + cluster}, args...)...)
			}

			t.Run("logs", func(t *testing.T) {
				out, err := run("logs", "box")
				require.NoError(t, err)
				assert.Equal(t, memberenv.PodLogLine(cluster)+"\n", out)
			})

			t.Run("exec", func(t *testing.T) {
				out, err := run("exec", "box", "--", "echo", "hello")
				require.NoError(t, err)
				assert.Equal(t, "hello\n", out)
				out, err = run("exec", "box", "--", "cat", memberenv.ExecClusterFile)
				require.NoError(t, err)
				assert.Equal(t, cluster+"\n", out)
				out, err = run("exec", "box", "--", "sh", "-c", "echo $"+memberenv.ExecClusterEnv)
				require.NoError(t, err)
				assert.Equal(t, cluster+"\n", out)
				// kwok reports a failed command as an error, not its exit code.
				_, err = run("exec", "box", "--", "sh", "-c", "exit 3")
				assert.ErrorContains(t, err, "exit status 3")
			})

			t.Run("port-forward", func(t *testing.T) {
				pf := kubectl.Start(t, kc.Kubeconfig, "--context="+cluster, "port-forward", "pod/box", ":80")
				forwarding := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> 80`)
				var port string
				require.NoError(t, pf.WaitFor(ctx, "kubectl port-forward to listen", func(out string) bool {
					if m := forwarding.FindStringSubmatch(out); m != nil {
						port = m[1]
					}
					return port != ""
				}))
				client := &http.Client{Timeout: 10 * time.Second}
				resp, err := client.Get("http://127.0.0.1:" + port + "/")
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				require.NoError(t, err)
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, memberenv.PortForwardAnswer(cluster), string(body))
			})

			t.Run("logs -f shows an appended line", func(t *testing.T) {
				f := kubectl.Start(t, kc.Kubeconfig, "--context="+cluster, "logs", "-f", "box")
				require.NoError(t, f.WaitFor(ctx, "the pod's log so far", func(out string) bool {
					return strings.Contains(out, memberenv.PodLogLine(cluster))
				}))
				line := "followed in " + cluster
				require.NoError(t, env.AppendPodLog(cluster, line))
				require.NoError(t, f.WaitFor(ctx, "the appended line", func(out string) bool {
					return strings.Contains(out, line)
				}))
				assert.Equal(t, memberenv.PodLogLine(cluster)+"\n"+line+"\n", f.Stdout())
			})

			t.Run("attach shows lines appended while attached", func(t *testing.T) {
				a := kubectl.Start(t, kc.Kubeconfig, "--context="+cluster, "attach", "box")
				// attach shows only what comes after it is attached, which
				// kubectl does not say: append until a line shows.
				probe := "attached in " + cluster
				n := 0
				require.NoError(t, poll.Until(ctx, 30*time.Second, "an appended line on kubectl attach", func(context.Context) error {
					if strings.Contains(a.Stdout(), probe) {
						return nil
					}
					if err := a.Exited(); err != nil {
						return poll.Abort(err)
					}
					n++
					if err := env.AppendPodLog(cluster, fmt.Sprintf("%s %d", probe, n)); err != nil {
						return err
					}
					return fmt.Errorf("%d lines appended, kubectl said %q so far", n, a.Stdout())
				}))
				assert.Regexp(t, "^("+probe+` \d+
)+$`, a.Stdout(), "attach shows the appended lines alone")
			})
		})
	}
}
