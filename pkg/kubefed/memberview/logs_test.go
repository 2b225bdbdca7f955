package memberview

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseLogTarget(t *testing.T) {
	for _, tc := range []struct {
		arg, selector string
		want          logTarget
		err           string
	}{
		{arg: "web-1", want: logTarget{kind: "pod", name: "web-1"}},
		{arg: "po/web-1", want: logTarget{kind: "pod", name: "web-1"}},
		{arg: "deploy/web", want: logTarget{kind: "deployment", name: "web"}},
		{arg: "Deployments/web", want: logTarget{kind: "deployment", name: "web"}},
		{arg: "sts/db", want: logTarget{kind: "statefulset", name: "db"}},
		{arg: "svc/web", want: logTarget{kind: "service", name: "web"}},
		{selector: "app=web", want: logTarget{selector: "app=web"}},
		{err: "name a pod, TYPE/NAME"},
		{arg: "web", selector: "app=web", err: "not both"},
		{selector: "app in (", err: `-l "app in ("`},
		{arg: "cm/x", err: "logs reads pods, deployments"},
		{arg: "deploy/", err: "want TYPE/NAME"},
	} {
		got, err := parseLogTarget(tc.arg, tc.selector)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc)
			continue
		}
		require.NoError(t, err, tc)
		assert.Equal(t, tc.want, got)
	}
}

func TestPlanStreams(t *testing.T) {
	withInit := testPod("ns", "b", "", "app")
	withInit.Spec.InitContainers = []corev1.Container{{Name: "setup"}}
	pods := []corev1.Pod{testPod("ns", "a", "", "app", "sidecar"), withInit}

	streams, skipped := planStreams("c1", pods, "")
	assert.Empty(t, skipped)
	assert.Equal(t, []string{"[c1/a/app]", "[c1/a/sidecar]", "[c1/b]"}, prefixes(streams))
	assert.Equal(t, "app", streams[2].container)

	streams, skipped = planStreams("c1", pods, "setup")
	assert.Equal(t, []string{"[c1/b]"}, prefixes(streams))
	assert.Equal(t, []string{"c1/a has no container setup"}, skipped)
}

func prefixes(streams []logStream) []string {
	var out []string
	for _, s := range streams {
		out = append(out, s.prefix)
	}
	return out
}

func TestLogOptions(t *testing.T) {
	opts := logOptions{follow: true, tail: 20, since: 1500 * time.Millisecond, timestamps: true}.podLogOptions("app")
	assert.Equal(t, "app", opts.Container)
	assert.True(t, opts.Follow)
	assert.Equal(t, int64(20), *opts.TailLines)
	assert.Equal(t, int64(2), *opts.SinceSeconds)
	opts = logOptions{tail: -1}.podLogOptions("")
	assert.Nil(t, opts.TailLines)
	assert.Nil(t, opts.SinceSeconds)
}

// logsFederation has Deployment web in cluster1 (two pods, one with a
// sidecar) and cluster2 (one pod), and refuses everything in cluster3.
func logsFederation(t *testing.T) *fakeFederation {
	web := appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{Kind: "Deployment", APIVersion: "apps/v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	lone := testPod("team-a", "lone", "", "app")
	lone.Labels = nil
	return newFakeFederation(t, map[string]*fakeMember{
		"cluster1": {
			deployments: []appsv1.Deployment{web},
			pods:        []corev1.Pod{testPod("team-a", "web-1a", "", "app", "sidecar"), testPod("team-a", "web-1b", "", "app"), lone},
			logs: map[string]string{
				"web-1a/app": "one\ntwo\n", "web-1a/sidecar": "proxy up\n", "web-1b/app": "no newline at the end", "lone/app": "alone\n",
			},
		},
		"cluster2": {
			deployments: []appsv1.Deployment{web},
			pods:        []corev1.Pod{testPod("team-a", "web-2a", "", "app")},
			logs:        map[string]string{"web-2a/app": "hello from 2\n"},
			holdFollow:  true,
		},
		"cluster3": {forbidden: true},
	})
}

// sortedLines returns the lines of out, sorted: streams interleave.
func sortedLines(out string) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	sort.Strings(lines)
	return lines
}

func TestLogsCommand(t *testing.T) {
	ctx := context.Background()
	fed := logsFederation(t)
	kubeconfig := writeKubeconfig(t, fed)
	logs := func(args ...string) (string, string, error) {
		return runCommand(ctx, append([]string{"logs", "--kubeconfig=" + kubeconfig, "--context=fed"}, args...)...)
	}

	// Every pod of the Deployment in every member, every container; the
	// refused member named on stderr.
	out, errOut, err := logs("deploy/web")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"[cluster1/web-1a/app] one",
		"[cluster1/web-1a/app] two",
		"[cluster1/web-1a/sidecar] proxy up",
		"[cluster1/web-1b] no newline at the end",
		"[cluster2/web-2a] hello from 2",
	}, sortedLines(out))
	assert.Equal(t, "cluster cluster3: pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"team-a\"\n", errOut)
	assert.NotEmpty(t, fed.received("/apis/federation/v1beta1/clusters/cluster1/proxy/apis/apps/v1/namespaces/team-a/deployments/web"))

	// A selector, one container, the last lines only.
	out, errOut, err = logs("-l", "app=web", "-c", "sidecar", "--tail=5", "--since=1m", "--cluster=cluster1")
	require.NoError(t, err)
	assert.Equal(t, "[cluster1/web-1a] proxy up\n", out)
	assert.Equal(t, "skipped cluster1/web-1b has no container sidecar\n", errOut)
	read := fed.received("/apis/federation/v1beta1/clusters/cluster1/proxy/api/v1/namespaces/team-a/pods/web-1a/log")
	require.NotEmpty(t, read)
	assert.Equal(t, "container=sidecar&sinceSeconds=60&tailLines=5", read[len(read)-1].query)

	// A pod's name: read in the one member that has it.
	out, errOut, err = logs("lone", "--cluster=cluster1,cluster2")
	require.NoError(t, err)
	assert.Equal(t, "[cluster1/lone] alone\n", out)
	assert.Empty(t, errOut)

	_, _, err = logs("nowhere", "--cluster=cluster1,cluster2")
	require.ErrorContains(t, err, "no pod nowhere in namespace team-a of any of 2 member clusters")
	_, _, err = logs("deploy/web", "--cluster=cluster3")
	require.ErrorContains(t, err, "no member cluster answered (1 asked)")

	// Following more streams than allowed is refused before any is read.
	_, _, err = logs("deploy/web", "-f", "--max-log-requests=2")
	require.ErrorContains(t, err, "4 log streams match (deployment web), more than --max-log-requests=2")
	// Without -f they are all read, two at a time.
	out, _, err = logs("deploy/web", "--max-log-requests=2")
	require.NoError(t, err)
	assert.Len(t, sortedLines(out), 5)
}

// TestLogsFollow follows a log the member holds open, until the command's
// context is cancelled (Ctrl-C).
func TestLogsFollow(t *testing.T) {
	fed := logsFederation(t)
	kubeconfig := writeKubeconfig(t, fed)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error)
	var out string
	go func() {
		var err error
		out, _, err = runCommand(ctx, "logs", "--kubeconfig="+kubeconfig, "--context=fed", "--cluster=cluster2", "deploy/web", "-f")
		done <- err
	}()
	require.Eventually(t, func() bool {
		return len(fed.received("/apis/federation/v1beta1/clusters/cluster2/proxy/api/v1/namespaces/team-a/pods/web-2a/log")) > 0
	}, 10*time.Second, 10*time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("logs -f returned before it was interrupted: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("logs -f did not stop when interrupted")
	}
	assert.Equal(t, "[cluster2/web-2a] hello from 2\n", out)
	read := fed.received("/apis/federation/v1beta1/clusters/cluster2/proxy/api/v1/namespaces/team-a/pods/web-2a/log")
	assert.Equal(t, "container=app&follow=true", read[0].query)
}
