// Package apiserver tests the built federation-apiserver binary with real
// kubectl binaries: every served resource through every kubectl verb,
// authentication, bad input, and restarts with the same data directory.
package apiserver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/federation-v1/federation/test/buildversion"
)

// kubectls are the kubectl binaries every test drives the server with.
var kubectls = []string{
	"/usr/lib/google-cloud-sdk/bin/kubectl.1.27",
	"/usr/lib/google-cloud-sdk/bin/kubectl.1.33",
}

// binary is the federation-apiserver built once for the package.
var binary string

// fedVersion is the federation's version the binary was built with (git describe).
var fedVersion string

// shared is the server most tests share; restart tests start their own.
var shared *server

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "federation-apiserver-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating a temporary directory:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "federation-apiserver")
	var ldflags string
	if ldflags, fedVersion, err = buildversion.LDFlags(); err != nil {
		fmt.Fprintln(os.Stderr, "the federation's version:", err)
		return 1
	}
	build := exec.Command("go", "build", "-ldflags", ldflags, "-o", binary, "github.com/federation-v1/federation/federation-apiserver")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building federation-apiserver:", err)
		return 1
	}
	for _, k := range kubectls {
		if _, err := os.Stat(k); err != nil {
			fmt.Fprintln(os.Stderr, "kubectl needed by the tests is missing:", err)
			return 1
		}
	}
	// No controller manager runs here to remove the federation's finalizer,
	// and some tests register clusters while others delete objects: the
	// shared server runs without the plugin that sets it (TestFederationFinalizer
	// tests it on its own server).
	shared, err = startServer(filepath.Join(dir, "shared"), filepath.Join(dir, "shared-data"), "--disable-admission-plugins=FederationFinalizer")
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the shared server:", err)
		return 1
	}
	defer shared.stop()
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "server log: %s\n", shared.logPath)
	}
	return code
}
