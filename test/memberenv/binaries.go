package memberenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/mod/modfile"
)

// Binaries are the paths of the programs an environment runs.
type Binaries struct {
	Etcd                  string
	KubeAPIServer         string
	KubeControllerManager string
	KubeScheduler         string
	Kwok                  string
	// KwokStages is the stage configuration that makes kwok nodes Ready and pods Running.
	KwokStages string
	// MemberEnv is this project's memberenv command, which runs the load-balancer simulator.
	MemberEnv string
	// Helm is the real Helm v3 client, for the helm e2e suite.
	Helm string
}

// tool is one tools module under test/tools and what it builds.
type tool struct {
	dir      string   // folder under test/tools
	module   string   // the module whose version keys the cache
	packages []string // main packages to build
	// name prefixes the cache folder when it is not dir: two tools may
	// build from one tools module.
	name string
	// test: packages are test packages, built with `go test -c` into
	// <base>.test (the conformance suite's e2e.test).
	test bool
	// versionVar, when set, is the variable (-X) that gets the module's
	// version, which the binary reports of itself.
	versionVar string
}

var tools = []tool{
	{dir: "etcd", module: "go.etcd.io/etcd/server/v3", packages: []string{"go.etcd.io/etcd/server/v3"}},
	{dir: "kwok", module: "sigs.k8s.io/kwok", packages: []string{"sigs.k8s.io/kwok/cmd/kwok"}},
	{dir: "helm", module: "helm.sh/helm/v3", packages: []string{"helm.sh/helm/v3/cmd/helm"},
		versionVar: "helm.sh/helm/v3/internal/version.version"},
	{dir: "kubernetes", module: "k8s.io/kubernetes", packages: []string{
		"k8s.io/kubernetes/cmd/kube-apiserver",
		"k8s.io/kubernetes/cmd/kube-controller-manager",
		"k8s.io/kubernetes/cmd/kube-scheduler",
	}},
}

// kwokStageFiles are the kwok stages (from its module) that DESIGN.md names.
var kwokStageFiles = []string{
	"kustomize/stage/node/fast/node-initialize.yaml",
	"kustomize/stage/node/heartbeat/node-heartbeat.yaml",
	"kustomize/stage/pod/fast/pod-ready.yaml",
	"kustomize/stage/pod/fast/pod-complete.yaml",
	"kustomize/stage/pod/fast/pod-delete.yaml",
}

// RepoRoot finds the project's root folder: $FEDERATION_ROOT, or the nearest
// parent of the working directory that holds test/tools.
func RepoRoot() (string, error) {
	if root := os.Getenv("FEDERATION_ROOT"); root != "" {
		return root, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "test", "tools", "kubernetes", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("memberenv: cannot find the project root (a folder with test/tools); set FEDERATION_ROOT")
		}
		dir = parent
	}
}

// EnsureBinaries builds whatever tool binary is missing from the cache
// (root/.cache/bin/<tool>-<version>/) and returns all paths. A lock file
// serialises concurrent callers such as parallel test packages.
func EnsureBinaries(ctx context.Context, root string, logf func(string, ...any)) (*Binaries, error) {
	cache, unlock, err := lockCache(root)
	if err != nil {
		return nil, err
	}
	defer unlock()

	dirs := map[string]string{}
	for _, t := range tools {
		dir, err := ensureTool(ctx, root, cache, t, logf)
		if err != nil {
			return nil, err
		}
		dirs[t.dir] = dir
	}
	stages, err := ensureKwokStages(ctx, root, dirs["kwok"])
	if err != nil {
		return nil, err
	}
	// The memberenv command is ours and changes with the source; go build's own
	// cache makes this quick when nothing changed.
	memberenv := filepath.Join(cache, "memberenv")
	if err := goBuild(ctx, root, memberenv, "./test/cmd/memberenv"); err != nil {
		return nil, err
	}
	return &Binaries{
		Etcd:                  filepath.Join(dirs["etcd"], "etcd"),
		KubeAPIServer:         filepath.Join(dirs["kubernetes"], "kube-apiserver"),
		KubeControllerManager: filepath.Join(dirs["kubernetes"], "kube-controller-manager"),
		KubeScheduler:         filepath.Join(dirs["kubernetes"], "kube-scheduler"),
		Kwok:                  filepath.Join(dirs["kwok"], "kwok"),
		KwokStages:            stages,
		MemberEnv:             memberenv,
		Helm:                  filepath.Join(dirs["helm"], "helm"),
	}, nil
}

// ensureBinary builds a tool of one package unless it is cached, and
// returns its binary.
func ensureBinary(ctx context.Context, root, cache string, t tool, logf func(string, ...any)) (string, error) {
	dir, err := ensureTool(ctx, root, cache, t, logf)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, t.binary(t.packages[0])), nil
}

// ensureTool builds one tools module's binaries unless its versioned cache
// folder already holds them all.
func ensureTool(ctx context.Context, root, cache string, t tool, logf func(string, ...any)) (string, error) {
	modDir := filepath.Join(root, "test", "tools", t.dir)
	version, err := requiredVersion(filepath.Join(modDir, "go.mod"), t.module)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, t.cacheName()+"-"+version)
	if haveAll(dir, t) {
		return dir, nil
	}
	if logf != nil {
		logf("building %s %s (first time only; cached in %s)", t.cacheName(), version, dir)
	}
	tmp := dir + ".partial"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	// One package is built to its file name (go would name etcd's main
	// "server", after its module path without the /v3); several go to a
	// folder, named after their paths, sharing one compile.
	out := tmp + "/"
	if len(t.packages) == 1 {
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return "", err
		}
		out = filepath.Join(tmp, t.binary(t.packages[0]))
	}
	ldflags := "-s -w"
	if t.versionVar != "" {
		ldflags += " -X " + t.versionVar + "=" + version
	}
	args := append([]string{"build", "-ldflags=" + ldflags, "-o", out}, t.packages...)
	if t.test { // vet is for the package's authors
		args = append([]string{"test", "-c", "-vet=off", "-ldflags=" + ldflags, "-o", out}, t.packages...)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = modDir
	// Kubernetes takes about ten minutes to build: say it is still going.
	stop := every(progressInterval, func(elapsed time.Duration) {
		if logf != nil {
			logf("still building %s %s (%s so far)", t.cacheName(), version, elapsed.Round(time.Second))
		}
	})
	output, err := cmd.CombinedOutput()
	stop()
	if err != nil {
		return "", fmt.Errorf("building %s %s in %s: %w\n%s", t.dir, version, modDir, err, output)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return dir, os.Rename(tmp, dir)
}

// binaryName is the file go build writes for a main package.
// progressInterval is how often a long build says it is still going.
const progressInterval = 30 * time.Second

// every calls tick with the time elapsed, every interval, until the
// returned stop is called; stop waits for a tick under way.
func every(interval time.Duration, tick func(elapsed time.Duration)) (stop func()) {
	start := time.Now()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				tick(time.Since(start))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

func binaryName(pkg string) string {
	base := filepath.Base(pkg)
	if base == "v3" { // go.etcd.io/etcd/server/v3
		return "etcd"
	}
	return base
}

// cacheName is the tool's cache folder without its version.
func (t tool) cacheName() string {
	if t.name != "" {
		return t.name
	}
	return t.dir
}

// binary is the file built for pkg.
func (t tool) binary(pkg string) string {
	if t.test {
		return filepath.Base(pkg) + ".test"
	}
	return binaryName(pkg)
}

func haveAll(dir string, t tool) bool {
	for _, p := range t.packages {
		if _, err := os.Stat(filepath.Join(dir, t.binary(p))); err != nil {
			return false
		}
	}
	return true
}

// ensureKwokStages concatenates kwok's stage files from its module into one
// configuration file beside the kwok binary.
func ensureKwokStages(ctx context.Context, root, kwokDir string) (string, error) {
	path := filepath.Join(kwokDir, "stages.yaml")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kwok")
	cmd.Dir = filepath.Join(root, "test", "tools", "kwok")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating the kwok module for its stage files: %w", err)
	}
	modDir := strings.TrimSpace(string(out))
	var docs []string
	for _, f := range kwokStageFiles {
		b, err := os.ReadFile(filepath.Join(modDir, f))
		if err != nil {
			return "", fmt.Errorf("reading kwok stage file: %w", err)
		}
		docs = append(docs, strings.TrimSpace(string(b)))
	}
	return path, os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644)
}

func goBuild(ctx context.Context, dir, out, pkg string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// requiredVersion reads the version of module from a go.mod's require block.
func requiredVersion(gomod, module string) (string, error) {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	f, err := modfile.ParseLax(gomod, data, nil)
	if err != nil {
		return "", fmt.Errorf("parsing %s: %w", gomod, err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == module {
			return r.Mod.Version, nil
		}
	}
	return "", fmt.Errorf("%s does not require %s", gomod, module)
}

// lockCache makes the tools' cache folder (root/.cache/bin) and locks it
// for the caller, so that concurrent callers (test packages run in
// parallel) build each tool once.
func lockCache(root string) (cache string, unlock func(), err error) {
	cache = filepath.Join(root, ".cache", "bin")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", nil, err
	}
	unlock, err = lockFile(filepath.Join(cache, ".lock"))
	return cache, unlock, err
}

// lockFile takes an exclusive flock on path and returns its release.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}
