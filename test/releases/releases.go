// Package releases builds a released version of the federation from its
// commit, for the upgrade tests: the previous release is the one the
// tree's VERSION names, made by the commit that last changed VERSION
// (docs/releasing.md). Builds are cached in .cache/releases/, keyed by
// version and commit, like the other outside tools.
package releases

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/federation-v1/federation/test/memberenv"
)

// Build is a release's binaries: kubefed and, beside it, the control plane,
// the agent, federation-dns and etcd (kubefed finds them there), static as
// in the release's image; and what its image and chart are made from.
type Build struct {
	Version string
	Commit  string
	Bin     string
	// Dir holds the release's Containerfile, LICENSE and chart
	// (deploy/charts/federation), kept from its tree.
	Dir string
}

// Chart is the release's host-cluster chart.
func (b Build) Chart() string { return filepath.Join(b.Dir, "charts", "federation") }

// complete marks a finished build in its folder; its name changes with
// what a build holds, so that an older cache is built again.
const complete = ".complete-static-chart"

// BuildPrevious builds the previous release once and returns it.
func BuildPrevious() (Build, error) {
	root, err := memberenv.RepoRoot()
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
	b.Bin, b.Dir = filepath.Join(dir, "bin"), dir
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
	ldflags := fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitCommit=%s -X %s.gitTreeState=clean", pkg, b.Version, pkg, b.Commit, pkg)
	// As hack/build-static.sh builds the image's: with -trimpath the
	// packages the release shares with the tree come from the build cache
	// that make image filled.
	for _, args := range [][]string{
		{"build", "-trimpath", "-ldflags", ldflags, "-o", bin + "/", "./kubefed", "./federation-apiserver", "./federation-controller-manager", "./federation-agent"},
		{"build", "-trimpath", "-ldflags", ldflags, "-o", filepath.Join(bin, "federation-dns"), "./dns"},
		{"build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(bin, "etcd"), "go.etcd.io/etcd/server/v3"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = src
		// Static, as in the image (hack/build-static.sh): Image packs them.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %w: %s", strings.Join(args, " "), err, out)
		}
	}
	// What the release's image and chart are made from.
	if err := os.RemoveAll(b.Chart()); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(b.Chart()), 0o755); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(src, "deploy", "charts", "federation"), b.Chart()); err != nil {
		return err
	}
	for from, to := range map[string]string{"build/Containerfile": "Containerfile", "LICENSE": "bin.partial/LICENSE"} {
		data, err := os.ReadFile(filepath.Join(src, from))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, to), data, 0o644); err != nil {
			return err
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

// Image builds the release's image with podman (podman makes the podman
// command, as podmanenv.Podman) from its binaries and Containerfile, as its
// make image would, and returns its reference: localhost/federation with
// the release's version and "-release" as the tag, apart from any image
// the tree's make image tagged.
func (b Build) Image(podman func(args ...string) *exec.Cmd) (string, error) {
	ref := "localhost/federation:" + b.Version + "-release"
	cmd := podman("build", "--file", filepath.Join(b.Dir, "Containerfile"),
		"--build-arg", "VERSION="+b.Version, "--build-arg", "REVISION="+b.Commit, "--tag", ref, b.Bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the image of release %s: %w: %s", b.Version, err, out)
	}
	return ref, nil
}

func git(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	return strings.TrimSpace(string(out)), err
}
