// Package kubectl runs the real kubectl binary in tests, the way a user would.
package kubectl

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Default is the kubectl every machine of the project has (DESIGN.md).
const Default = "/usr/bin/kubectl"

// Versioned returns the path of a specific kubectl minor shipped with the
// machine's cloud SDK, e.g. Versioned("1.27").
func Versioned(minor string) string {
	return "/usr/lib/google-cloud-sdk/bin/kubectl." + minor
}

// Runner runs kubectl against one kubeconfig.
type Runner struct {
	// Path of the kubectl binary; Default when empty.
	Path string
	// Kubeconfig passed with --kubeconfig.
	Kubeconfig string
	// Timeout of one invocation; 60s when zero.
	Timeout time.Duration
}

// Run runs kubectl with args and returns its standard output. A non-zero
// exit is an error that carries the command line and standard error.
func (r Runner) Run(ctx context.Context, args ...string) (string, error) {
	return r.RunWithInput(ctx, "", args...)
}

// RunWithInput is Run with stdin set to input (for `-f -`).
func (r Runner) RunWithInput(ctx context.Context, input string, args ...string) (string, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	path := r.Path
	if path == "" {
		path = Default
	}
	full := append([]string{"--kubeconfig=" + r.Kubeconfig}, args...)
	cmd := exec.CommandContext(ctx, path, full...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=")
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
