// Package buildversion gives the tests' builds of the federation's binaries
// the version `make build` gives them (hack/version-ldflags.sh), so that
// tests can check what the binaries report.
package buildversion

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// gitVersionFlag finds the version in the script's -X flags.
var gitVersionFlag = regexp.MustCompile(`pkg/version\.gitVersion=(\S+)`)

// LDFlags returns the -ldflags of the federation's version and that
// version (git describe); both are empty outside a git checkout.
func LDFlags() (ldflags, version string, err error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", "", fmt.Errorf("finding the module: %w", err)
	}
	script := filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), "hack", "version-ldflags.sh")
	out, err := exec.Command(script).Output()
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", script, err)
	}
	ldflags = strings.TrimSpace(string(out))
	if m := gitVersionFlag.FindStringSubmatch(ldflags); m != nil {
		version = m[1]
	}
	return ldflags, version, nil
}
