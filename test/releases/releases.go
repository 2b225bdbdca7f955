// Package releases builds a released version of the federation from its
// commit, for the upgrade tests: the previous release is the one the
// tree's VERSION names, made by the commit that last changed VERSION
// (docs/releasing.md). Builds are cached in .cache/releases/, keyed by
// version and commit, like the other outside tools.
package releases

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Build is a release's binaries: kubefed and, beside it, the control plane,
// the agent, federation-dns and etcd (kubefed finds them there).
type Build struct {
	Version string
	Commit  string
	Bin     string
}

// complete marks a finished build in its folder.
const complete = ".complete"

// BuildPrevious builds the previous release once and returns it.
func BuildPrevious() (Build, error) {
	root, err := moduleRoot()
	if err != nil {
		return Build{}, err
	}
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		return Build{}, fmt.Errorf("the previous release: %w", err)
	}
	commit, err := git(root, "log", "-1", "--format=%H", "--", "VERSION")
	if err != nil || commit == "" {
		return Build{}, fmt.Errorf("the previous release: no commit of VERSION in this clone (a shallow clone needs its history): %v", err)
	}
	b := Build{Version: strings.TrimSpace(string(version)), Commit: commit}
	dir := filepath.Join(root, ".cache", "releases", b.Version+"-"+commit[:12])
	b.Bin = filepath.Join(dir, "bin")
	if _, err := os.Stat(filepath.Join(b.Bin, complete)); err == nil {
		return b, nil
	}
	if err := build(root, dir, b); err != nil {
		return Build{}, fmt.Errorf("building release %s (%s): %w", b.Version, commit, err)
	}
	return b, nil
}

// build unpacks the release's tree with git archive and builds it as
// make build does, with the release's version.
func build(root, dir string, b Build) error {
	src, bin := filepath.Join(dir, "src"), filepath.Join(dir, "bin.partial")
	for _, d := range []string{src, bin} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	archive := exec.Command("sh", "-c", fmt.Sprintf("git -C %q archive %s | tar -x -C %q", root, b.Commit, src))
	if out, err := archive.CombinedOutput(); err != nil {
		return fmt.Errorf("git archive: %w: %s", err, out)
	}
	pkg := "github.com/federation-v1/federation/pkg/version"
	ldflags := fmt.Sprintf("-X %s.gitVersion=%s -X %s.gitCommit=%s -X %s.gitTreeState=clean", pkg, b.Version, pkg, b.Commit, pkg)
	for _, args := range [][]string{
		{"build", "-ldflags", ldflags, "-o", bin + "/", "./kubefed", "./federation-apiserver", "./federation-controller-manager", "./federation-agent"},
		{"build", "-ldflags", ldflags, "-o", filepath.Join(bin, "federation-dns"), "./dns"},
		{"build", "-o", filepath.Join(bin, "etcd"), "go.etcd.io/etcd/server/v3"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, complete), []byte(b.Version+" "+b.Commit+"\n"), 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(b.Bin); err != nil {
		return err
	}
	if err := os.Rename(bin, b.Bin); err != nil {
		return err
	}
	return os.RemoveAll(src)
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the federation's module")
	}
	return filepath.Dir(gomod), nil
}

func git(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}
