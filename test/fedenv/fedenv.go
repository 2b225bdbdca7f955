// Package fedenv is the end-to-end setting of the federation's tests: the
// built binaries, a person with their own kubeconfig who runs kubefed and
// kubectl, a local federation and real member clusters.
package fedenv

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
	"github.com/federation-v1/federation/test/buildversion"
	"github.com/federation-v1/federation/test/kubectl"
	"github.com/federation-v1/federation/test/memberenv"
)

// planePrograms are the processes of a local plane, for cleaning up.
var planePrograms = map[string]bool{processplane.APIServer: true, processplane.ControllerManager: true, processplane.DNSServerProgram: true, processplane.EtcdProgram: true, processplane.AgentProgram: true}

// PlanePrograms are the program names of a local plane, for
// localprocess.FindMentioning.
func PlanePrograms() map[string]bool { return planePrograms }

// Version is the federation's version BuildBinaries gave the binaries, as
// `make build` does (git describe).
var Version string

// program is one binary the e2e suites run: its name in bin/ and its
// package; versioned ones carry the federation's version, as `make build`
// gives it.
type program struct {
	name, pkg string
	versioned bool
}

// programs are every binary BuildBinaries makes and $FEDENV_BIN must hold:
// kubefed, the control plane, the agent, federation-dns and etcd (the
// members of an HA plane, kubefed init --ha, at the version the apiserver
// embeds). kubefed finds the others beside itself.
var programs = []program{
	{"kubefed", "github.com/federation-v1/federation/kubefed", true},
	{processplane.APIServer, "github.com/federation-v1/federation/federation-apiserver", true},
	{processplane.ControllerManager, "github.com/federation-v1/federation/federation-controller-manager", true},
	{processplane.AgentProgram, "github.com/federation-v1/federation/federation-agent", true},
	{processplane.DNSServerProgram, "github.com/federation-v1/federation/dns", false},
	{processplane.EtcdProgram, "go.etcd.io/etcd/server/v3", false},
}

// BuildBinaries builds the programs into dir/bin.
func BuildBinaries(dir string) (string, error) {
	bin := filepath.Join(dir, "bin")
	ldflags, version, err := buildversion.LDFlags()
	if err != nil {
		return "", err
	}
	Version = version
	for _, p := range programs {
		args := []string{"build", "-o", filepath.Join(bin, p.name)}
		if p.versioned {
			args = append(args, "-ldflags", ldflags)
		}
		b := exec.Command("go", append(args, p.pkg)...)
		b.Stdout, b.Stderr = os.Stdout, os.Stderr
		if err := b.Run(); err != nil {
			return "", fmt.Errorf("building %s: %w", p.name, err)
		}
	}
	return bin, nil
}

// User is a person with their own kubeconfig and home folder.
type User struct {
	T          testing.TB
	Home       string
	Kubeconfig string
	// Bin holds kubefed and the control plane binaries.
	Bin string
}

// NewUser makes a user whose kubeconfig already has another context.
func NewUser(t testing.TB, bin string) *User {
	if testing.Short() {
		t.Skip("end to end: builds the binaries and runs clusters")
	}
	home := t.TempDir()
	u := &User{T: t, Home: home, Kubeconfig: filepath.Join(home, ".kube", "config"), Bin: bin}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["other"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos["other"] = &clientcmdapi.AuthInfo{Token: "x"}
	cfg.Contexts["other"] = &clientcmdapi.Context{Cluster: "other", AuthInfo: "other"}
	cfg.CurrentContext = "other"
	require.NoError(t, os.MkdirAll(filepath.Dir(u.Kubeconfig), 0o700))
	require.NoError(t, clientcmd.WriteToFile(*cfg, u.Kubeconfig))
	return u
}

// Kubefed runs kubefed and returns its output and error.
func (u *User) Kubefed(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(u.Bin, "kubefed"), args...)
	cmd.Env = append(os.Environ(), "HOME="+u.Home, "KUBECONFIG="+u.Kubeconfig)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// MustKubefed runs kubefed and fails the test when it fails.
func (u *User) MustKubefed(args ...string) string {
	u.T.Helper()
	out, err := u.Kubefed(args...)
	require.NoError(u.T, err, "kubefed %s:\n%s", strings.Join(args, " "), out)
	return out
}

// Kubectl runs the real kubectl with the user's kubeconfig.
func (u *User) Kubectl() kubectl.Runner {
	return kubectl.Runner{Kubeconfig: u.Kubeconfig, Timeout: 20 * time.Second}
}

// PlaneDir is the folder of the local federation name.
func (u *User) PlaneDir(name string) string { return filepath.Join(u.Home, ".federation", name) }

// InitFederation runs kubefed init NAME --local with extra flags and removes
// the plane when the test ends.
func (u *User) InitFederation(name string, extra ...string) string {
	u.T.Helper()
	u.T.Cleanup(func() {
		if u.T.Failed() {
			u.keepLogs(name)
		}
		_, _ = u.Kubefed("delete", name, "--local")
		for _, p := range localprocess.FindMentioning(u.PlaneDir(name), planePrograms) {
			_ = p.Stop(time.Second)
		}
	})
	return u.MustKubefed(append([]string{"init", name, "--local"}, extra...)...)
}

// WithMembers starts member clusters and gives the user their contexts.
func WithMembers(t testing.TB, u *User, clusters []memberenv.ClusterSpec) *memberenv.Environment {
	t.Helper()
	env, err := memberenv.Start(context.Background(), memberenv.Options{
		Dir: filepath.Join(t.TempDir(), "members"), Clusters: clusters, Logf: t.Logf,
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })
	members, err := clientcmd.LoadFromFile(env.Kubeconfig)
	require.NoError(t, err)
	mine, err := clientcmd.LoadFromFile(u.Kubeconfig)
	require.NoError(t, err)
	for name := range members.Contexts {
		mine.Clusters[name], mine.AuthInfos[name], mine.Contexts[name] = members.Clusters[name], members.AuthInfos[name], members.Contexts[name]
	}
	require.NoError(t, clientcmd.WriteToFile(*mine, u.Kubeconfig))
	return env
}

// ClusterTable returns `kubectl get clusters` rows by name: STATUS, ZONES, REGION.
func (u *User) ClusterTable(ctx context.Context, fed string) (map[string][]string, error) {
	out, err := u.Kubectl().Run(ctx, "--context="+fed, "get", "clusters", "--no-headers")
	if err != nil {
		return nil, err
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) >= 4 {
			rows[f[0]] = f[1:4]
		}
	}
	return rows, nil
}

// WaitClusterStatus waits until the clusters have the statuses in want.
func (u *User) WaitClusterStatus(fed string, timeout time.Duration, want map[string]string) {
	u.T.Helper()
	require.NoError(u.T, poll.Until(context.Background(), timeout, fmt.Sprintf("cluster statuses %v", want), func(ctx context.Context) error {
		rows, err := u.ClusterTable(ctx, fed)
		if err != nil {
			return err
		}
		for name, status := range want {
			if row, ok := rows[name]; !ok || row[0] != status {
				return fmt.Errorf("clusters are %v", rows)
			}
		}
		return nil
	}))
}

// Plane loads the state of the local federation name.
func (u *User) Plane(name string) *processplane.Plane {
	u.T.Helper()
	p, err := processplane.Load(u.PlaneDir(name))
	require.NoError(u.T, err)
	return p
}

// BuiltEnv names a folder that already holds what BuildBinaries makes, at
// this tree: `make test` sets it to `make build`'s bin/, so that the e2e
// packages share one build instead of each linking its own (about 15 s
// each). A `go test` without it builds as before.
const BuiltEnv = "FEDENV_BIN"

// builtBinaries returns $FEDENV_BIN ("" when unset) once it holds every
// program BuildBinaries makes, and sets Version as BuildBinaries does.
func builtBinaries() (string, error) {
	dir := os.Getenv(BuiltEnv)
	if dir == "" {
		return "", nil
	}
	for _, p := range programs {
		if _, err := os.Stat(filepath.Join(dir, p.name)); err != nil {
			return "", fmt.Errorf("$%s: %w (make build makes them)", BuiltEnv, err)
		}
	}
	_, version, err := buildversion.LDFlags()
	if err != nil {
		return "", err
	}
	Version = version
	return dir, nil
}

// RunMain is the TestMain of an e2e package: it builds the binaries into a
// temporary folder (or takes those of $FEDENV_BIN), sets *bin to it, runs
// the tests and removes the folder. With -short nothing is built (the e2e
// tests skip themselves).
func RunMain(m *testing.M, bin *string) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	built, err := builtBinaries()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if built != "" {
		*bin = built
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "federation-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if *bin, err = BuildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// keepLogs copies the plane's logs out of the test's temporary folder, which
// is removed, so that a failure can be understood: into $FEDENV_LOGS (default
// the system temporary folder), named after the test.
func (u *User) keepLogs(name string) {
	root := os.Getenv("FEDENV_LOGS")
	if root == "" {
		root = os.TempDir()
	}
	dst := filepath.Join(root, "fedenv-logs", strings.NewReplacer("/", "_", " ", "_").Replace(u.T.Name()))
	logs, _ := filepath.Glob(filepath.Join(u.PlaneDir(name), "logs", "*.log"))
	if err := os.MkdirAll(dst, 0o755); err != nil || len(logs) == 0 {
		return
	}
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil {
			_ = os.WriteFile(filepath.Join(dst, filepath.Base(l)), b, 0o644)
		}
	}
	u.T.Logf("the federation's logs are kept in %s", dst)
}

// RestartControllerManager replaces the controller manager of the local
// federation name by one with extra flags, on the same kubeconfig and
// address, waits for its /healthz and returns its log's path. The test's
// cleanup stops it.
func (u *User) RestartControllerManager(name string, flags ...string) string {
	u.T.Helper()
	dir := u.PlaneDir(name)
	for _, p := range localprocess.FindMentioning(dir, map[string]bool{processplane.ControllerManager: true}) {
		require.NoError(u.T, p.Stop(5*time.Second))
	}
	plane := u.Plane(name)
	address := plane.ControllerManagerAddress
	p := &localprocess.Process{
		Name: processplane.ControllerManager,
		Path: filepath.Join(u.Bin, processplane.ControllerManager),
		Args: append(plane.ControllerManagerArgs(), flags...),
		Log:  filepath.Join(u.T.TempDir(), "controller-manager.log"),
	}
	require.NoError(u.T, p.Start(false))
	u.T.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	require.NoError(u.T, localprocess.WaitFor(context.Background(), 90*time.Second, "the restarted controller manager's /healthz", p,
		func() error { return httpprobe.GetOK(context.Background(), "https://"+address+"/healthz") }))
	return p.Log
}

// ControllerManagerMetrics returns the /metrics of the local federation
// name's controller manager, read over HTTPS as the plane's admin.
func (u *User) ControllerManagerMetrics(name string) (string, error) {
	plane := u.Plane(name)
	return plane.ControllerManagerMetrics("https://" + plane.ControllerManagerAddress)
}

// JoinAll joins the member clusters to federation fed (also the name of its
// kubectl context) and waits until every one of them is Ready.
func (u *User) JoinAll(fed string, clusters ...string) {
	u.T.Helper()
	want := map[string]string{}
	for _, c := range clusters {
		u.MustKubefed("join", c, "--context="+fed)
		want[c] = "Ready"
	}
	u.WaitClusterStatus(fed, 2*time.Minute, want)
}

// ServerVersion is the version of federation fed's apiserver, as kubefed
// version prints it.
func (u *User) ServerVersion(fed string) string {
	u.T.Helper()
	out := u.MustKubefed("version", "--context="+fed)
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Server Version: "); ok {
			return v
		}
	}
	u.T.Fatalf("no server version in:\n%s", out)
	return ""
}
