package apiserver

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// watchTimeout bounds how long a watch may take to report a change.
const watchTimeout = 30 * time.Second

// TestResourceLifecycle drives every served resource through every kubectl
// verb with each kubectl version: create, get (yaml and table), list,
// watch, label, annotate, patch (strategic, merge, json), edit, apply
// (client-side and server-side), scale, explain and delete.
func TestResourceLifecycle(t *testing.T) {
	for _, path := range kubectls {
		k := newKubectl(t, path, shared.tokenConfig)
		k.env = append(k.env, "KUBE_EDITOR="+editorScript(t))
		version := strings.TrimPrefix(filepath.Base(path), "kubectl.")
		suffix := strings.ReplaceAll(version, ".", "")
		t.Run(k.version(), func(t *testing.T) {
			t.Parallel()
			ns := "lifecycle-" + suffix
			k.must(t, "", "create", "namespace", ns)
			for i, r := range servedResources {
				t.Run(r.resource, func(t *testing.T) {
					lifecycle(t, k, r, fmt.Sprintf("obj%d-%s", i, suffix), ns)
				})
			}
		})
	}
}

// editorScript writes the KUBE_EDITOR used by `kubectl edit`: it changes the
// marker label from "before" to "edited".
func editorScript(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "editor.sh")
	script := "#!/bin/sh\nexec sed -i 's/marker: before/marker: edited/' \"$@\"\n"
	require.NoError(t, os.WriteFile(path, []byte(script), 0o755))
	return path
}

func lifecycle(t *testing.T, k *kubectl, r served, name, namespace string) {
	if r.clusterScoped {
		namespace = ""
	}
	manifest := func(name, marker string) string { return fmt.Sprintf(r.manifest, name, namespace, marker) }
	withNS := func(args ...string) []string {
		if namespace != "" {
			args = append(args, "-n", namespace)
		}
		return args
	}
	label := func(name, key string) string {
		return k.jsonpath(t, r.resource, namespace, name, ".metadata.labels."+key)
	}

	k.must(t, manifest(name, "before"), "create", "-f", "-")

	out := k.must(t, "", withNS("get", r.resource, name, "-o", "yaml")...)
	assert.Contains(t, out, "name: "+name)
	assert.Contains(t, out, "marker: before")

	out = k.must(t, "", withNS("get", r.resource, name)...)
	if !r.unnamedTable {
		assert.Contains(t, out, name)
	}
	for _, column := range r.columns {
		assert.Contains(t, out, column, "table of %s", r.resource)
	}

	out = k.must(t, "", withNS("get", r.resource, "-o", "name")...)
	assert.Contains(t, out, "/"+name+"\n")

	watchLabel(t, k, r.resource, namespace, name)

	k.must(t, "", withNS("label", r.resource, name, "labelled=yes")...)
	assert.Equal(t, "yes", label(name, "labelled"))
	k.must(t, "", withNS("annotate", r.resource, name, "annotated=yes")...)
	assert.Equal(t, "yes", k.jsonpath(t, r.resource, namespace, name, ".metadata.annotations.annotated"))

	k.must(t, "", withNS("patch", r.resource, name, "-p", `{"metadata":{"labels":{"strategic":"yes"}}}`)...)
	assert.Equal(t, "yes", label(name, "strategic"))
	k.must(t, "", withNS("patch", r.resource, name, "--type=merge", "-p", `{"metadata":{"labels":{"merge":"yes"}}}`)...)
	assert.Equal(t, "yes", label(name, "merge"))
	k.must(t, "", withNS("patch", r.resource, name, "--type=json", "-p", `[{"op":"add","path":"/metadata/labels/json","value":"yes"}]`)...)
	assert.Equal(t, "yes", label(name, "json"))

	k.must(t, "", withNS("edit", r.resource, name)...)
	assert.Equal(t, "edited", label(name, "marker"))

	if r.scalable {
		k.must(t, "", withNS("scale", r.resource, name, "--replicas=3")...)
		assert.Equal(t, "3", k.jsonpath(t, r.resource, namespace, name, ".spec.replicas"))
	}

	explain := []string{"explain", r.resource}
	if group, ok := strings.CutPrefix(r.resource, strings.Split(r.resource, ".")[0]+".v1beta1."); ok {
		explain = []string{"explain", strings.Split(r.resource, ".")[0], "--api-version", group + "/v1beta1"}
	}
	out = k.must(t, "", explain...)
	assert.Contains(t, out, "KIND:")

	applied := name + "-a"
	k.must(t, manifest(applied, "before"), "apply", "-f", "-")
	k.must(t, manifest(applied, "after"), "apply", "-f", "-")
	assert.Equal(t, "after", label(applied, "marker"))

	serverSide := name + "-s"
	k.must(t, manifest(serverSide, "before"), "apply", "--server-side", "-f", "-")
	k.must(t, manifest(serverSide, "after"), "apply", "--server-side", "-f", "-")
	assert.Equal(t, "after", label(serverSide, "marker"))

	k.must(t, "", withNS("delete", r.resource, name, applied, serverSide, "--timeout=60s")...)
	stderr := k.fails(t, "", withNS("get", r.resource, name)...)
	assert.Contains(t, stderr, "NotFound")
}

// watchLabel watches one object with `kubectl get -w`, labels it, and waits
// for the watch to print the new label.
func watchLabel(t *testing.T, k *kubectl, resource, namespace, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), watchTimeout)
	defer cancel()
	args := []string{"get", resource, "--field-selector", "metadata.name=" + name, "-w",
		"-o", `jsonpath={.metadata.labels.watched}{"\n"}`}
	if namespace != "" {
		args = append(args, "-n", namespace)
	}
	cmd := k.command(ctx, "", args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	next := func(what string) (string, bool) {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Errorf("%s: watch of %s %s ended while waiting for %s", k.version(), resource, name, what)
			}
			return line, ok
		case <-ctx.Done():
			t.Errorf("%s: watch of %s %s: no %s within %s", k.version(), resource, name, what, watchTimeout)
			return "", false
		}
	}
	// The first line is the object as listed: the watch is established.
	if _, ok := next("initial listing"); !ok {
		return
	}
	labelArgs := []string{"label", resource, name, "watched=yes"}
	if namespace != "" {
		labelArgs = append(labelArgs, "-n", namespace)
	}
	k.must(t, "", labelArgs...)
	for {
		line, ok := next(`event with label watched=yes`)
		if !ok || line == "yes" {
			return
		}
	}
}
