package kubeplay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Player plays plans with podman and removes what they made.
type Player struct {
	// Podman makes a podman command with this machine's runtime flags
	// (podmanenv.Podman).
	Podman func(args ...string) *exec.Cmd
	// Dir is an empty folder podman runs in: kube play builds, rather than
	// uses, an image whose name matches a folder in its working directory.
	Dir string
}

// Play writes the plan's YAML into Dir and plays it. podman makes what
// it can before it fails: Remove(plan.Prefix) cleans up either way.
func (p *Player) Play(ctx context.Context, plan *Plan) error {
	doc, err := plan.YAML()
	if err != nil {
		return err
	}
	file := filepath.Join(p.Dir, plan.Prefix+"play.yaml")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		return err
	}
	_, err = p.run(ctx, "kube", "play", "--build=false", file)
	return err
}

// things are what a play makes: pods (first: they use the others),
// volumes (ConfigMaps' and claims') and secrets; podman kube down would
// leave the last two.
var things = []struct{ list, remove []string }{
	{[]string{"pod", "ls", "--format", "{{.Name}}"}, []string{"pod", "rm", "--force", "--time", "2"}},
	{[]string{"volume", "ls", "--format", "{{.Name}}"}, []string{"volume", "rm", "--force"}},
	{[]string{"secret", "ls", "--format", "{{.Name}}"}, []string{"secret", "rm"}},
}

// Names lists the names of podman's pods, volumes and secrets that start
// with prefix.
func (p *Player) Names(ctx context.Context, prefix string) ([]string, error) {
	var names []string
	for _, thing := range things {
		out, err := p.run(ctx, thing.list...)
		if err != nil {
			return nil, err
		}
		for _, name := range strings.Fields(out) {
			if strings.HasPrefix(name, prefix) {
				names = append(names, name)
			}
		}
	}
	return names, nil
}

// Remove removes the pods, volumes and secrets whose names start with
// prefix. The pods go in parallel: podman takes seconds for each, even
// with no time to stop.
func (p *Player) Remove(ctx context.Context, prefix string) error {
	return p.remove(ctx, prefix, nil)
}

// remove is Remove, but for the names in keep.
func (p *Player) remove(ctx context.Context, prefix string, keep map[string]bool) error {
	var (
		mu   sync.Mutex
		errs []string
	)
	for i, thing := range things {
		out, err := p.run(ctx, thing.list...)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		var wg sync.WaitGroup
		for _, name := range strings.Fields(out) {
			if !strings.HasPrefix(name, prefix) || keep[name] {
				continue
			}
			remove := func() {
				if _, err := p.run(ctx, append(thing.remove, name)...); err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
				}
			}
			if i == 0 {
				wg.Go(remove)
			} else {
				remove()
			}
		}
		wg.Wait()
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing podman's %s*: %s", prefix, strings.Join(errs, "; "))
	}
	return nil
}

// Container is one of a plan's running containers as podman sees it.
type Container struct {
	Name     string
	State    string
	Restarts int
	// UID is the real user id of the container's first process, read from
	// the host's /proc ("" when it is not running).
	UID string
}

// Containers returns the containers of the pods whose names start with
// prefix, without podman's infra containers.
func (p *Player) Containers(ctx context.Context, prefix string) ([]Container, error) {
	out, err := p.run(ctx, "ps", "--all", "--format", "json")
	if err != nil {
		return nil, err
	}
	var listed []struct {
		Names   []string
		IsInfra bool
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil {
		return nil, fmt.Errorf("reading podman ps: %w", err)
	}
	var names []string
	for _, c := range listed {
		if !c.IsInfra && len(c.Names) == 1 && strings.HasPrefix(c.Names[0], prefix) {
			names = append(names, c.Names[0])
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	out, err = p.run(ctx, append([]string{"container", "inspect", "--format", "json"}, names...)...)
	if err != nil {
		return nil, err
	}
	var inspected []struct {
		Name         string
		RestartCount int
		State        struct {
			Status string
			Pid    int
		}
	}
	if err := json.Unmarshal([]byte(out), &inspected); err != nil {
		return nil, fmt.Errorf("reading podman container inspect: %w", err)
	}
	var cs []Container
	for _, c := range inspected {
		uid := ""
		if c.State.Pid > 0 {
			if uid, err = realUID(c.State.Pid); err != nil {
				return nil, fmt.Errorf("container %s: %w", c.Name, err)
			}
		}
		cs = append(cs, Container{Name: c.Name, State: c.State.Status, Restarts: c.RestartCount, UID: uid})
	}
	return cs, nil
}

// Logs returns a container's output, for a failing test's log.
func (p *Player) Logs(ctx context.Context, container string) (string, error) {
	cmd := p.Podman("logs", container)
	cmd.Dir = p.Dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func realUID(pid int) (string, error) {
	status, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("no Uid line in /proc/%d/status", pid)
}

func (p *Player) run(ctx context.Context, args ...string) (string, error) {
	cmd := p.Podman(args...)
	cmd.Dir = p.Dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("podman %s: %w", strings.Join(args, " "), err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return stdout.String(), fmt.Errorf("podman %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return stdout.String(), nil
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return stdout.String(), fmt.Errorf("podman %s: %w", strings.Join(args, " "), ctx.Err())
	}
}

// Replay plays a plan again over what an earlier play of its prefix made,
// as a cluster rolls its pods to new specs: the pods, secrets and
// ConfigMaps' volumes go and are made afresh, while the volumes of the
// claims stay with their data (podman would refuse to make them again).
func (p *Player) Replay(ctx context.Context, plan *Plan) error {
	claims := map[string]bool{}
	for _, obj := range plan.Objects {
		if c, ok := obj.(*corev1.PersistentVolumeClaim); ok {
			claims[c.Name] = true
		}
	}
	volumes, err := p.run(ctx, "volume", "ls", "--format", "{{.Name}}")
	if err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, name := range strings.Fields(volumes) {
		if claims[name] {
			kept[name] = true
		}
	}
	if err := p.remove(ctx, plan.Prefix, kept); err != nil {
		return err
	}
	again := *plan
	again.Objects = slices.DeleteFunc(slices.Clone(plan.Objects), func(obj runtime.Object) bool {
		c, ok := obj.(*corev1.PersistentVolumeClaim)
		return ok && kept[c.Name]
	})
	return p.Play(ctx, &again)
}
