// Package kubefed_test drives the built kubefed binary as a person would:
// init a local federation, stop, start and delete it, join and unjoin real
// member clusters, checked with the real kubectl.
package kubefed_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// binDir holds kubefed and the control plane binaries, built once; kubefed
// finds the others beside itself.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kubefed-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", binDir+"/",
		"github.com/federation-v1/federation/kubefed",
		"github.com/federation-v1/federation/federation-apiserver",
		"github.com/federation-v1/federation/federation-controller-manager")
	dns := exec.Command("go", "build", "-o", filepath.Join(binDir, "federation-dns"), "github.com/federation-v1/federation/dns")
	for _, b := range []*exec.Cmd{build, dns} {
		b.Stdout, b.Stderr = os.Stdout, os.Stderr
		if err := b.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building kubefed and the control plane:", err)
			return 1
		}
	}
	return m.Run()
}
