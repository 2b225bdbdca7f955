package apiserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// commandTimeout bounds one kubectl command.
const commandTimeout = 60 * time.Second

// kubectl runs one kubectl binary against a server with one kubeconfig.
type kubectl struct {
	path       string
	kubeconfig string
	home       string
	env        []string
}

// newKubectl returns a kubectl with its own HOME and discovery cache.
func newKubectl(t *testing.T, path, kubeconfig string) *kubectl {
	t.Helper()
	return &kubectl{path: path, kubeconfig: kubeconfig, home: t.TempDir()}
}

// version is the kubectl's name, for example kubectl.1.27.
func (k *kubectl) version() string { return filepath.Base(k.path) }

// command returns the command for args, not started.
func (k *kubectl) command(ctx context.Context, stdin string, args ...string) *exec.Cmd {
	full := append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", filepath.Join(k.home, "cache")}, args...)
	cmd := exec.CommandContext(ctx, k.path, full...)
	cmd.Env = append(append(os.Environ(), "HOME="+k.home), k.env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	return cmd
}

// run runs kubectl and returns its stdout, stderr and error.
func (k *kubectl) run(stdin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := k.command(ctx, stdin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s %s: %w\nstderr: %s", k.version(), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), stderr.String(), err
}

// must runs kubectl and fails the test if it fails.
func (k *kubectl) must(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, _, err := k.run(stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fails runs kubectl, fails the test if it succeeds, and returns stderr.
func (k *kubectl) fails(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, stderr, err := k.run(stdin, args...)
	if err == nil {
		t.Fatalf("%s %s succeeded, want an error; stdout:\n%s", k.version(), strings.Join(args, " "), out)
	}
	return stderr
}

// jsonpath returns one field of an object.
func (k *kubectl) jsonpath(t *testing.T, resource, namespace, name, path string) string {
	t.Helper()
	args := []string{"get", resource, name, "-o", "jsonpath={" + path + "}"}
	if namespace != "" {
		args = append(args, "-n", namespace)
	}
	return k.must(t, "", args...)
}

// pollTimeout bounds how long waitFor polls.
const pollTimeout = 30 * time.Second

// waitFor polls condition until it holds, failing the test with what it
// waited for when pollTimeout passes.
func waitFor(t *testing.T, what string, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(pollTimeout)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", pollTimeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
