package propagation

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
	"github.com/federation-v1/federation/pkg/poll"
	"github.com/federation-v1/federation/pkg/processplane"
)

var controllerManagerFlags = flag.String("controller-manager-flags", "",
	"extra flags of the controller manager, space-separated (e.g. --concurrent-object-syncs=10); the reference takes its concurrency from them too")

// withControllerManagerFlags replaces the plane's controller manager by one
// with the -controller-manager-flags, on the same kubeconfig and address.
func (bn *bench) withControllerManagerFlags() {
	extra := strings.Fields(*controllerManagerFlags)
	if len(extra) == 0 {
		return
	}
	for _, f := range extra {
		if v, ok := strings.CutPrefix(f, "--concurrent-object-syncs="); ok {
			n, err := strconv.Atoi(v)
			bn.check(err)
			bn.workers = n
		}
	}
	dir := bn.u.PlaneDir(federation)
	for _, p := range localprocess.FindMentioning(dir, map[string]bool{processplane.ControllerManager: true}) {
		bn.check(p.Stop(5 * time.Second))
	}
	plane := bn.u.Plane(federation)
	p := bn.controllerManagerProcess(extra, "controller-manager-bench.log")
	bn.check(p.Start(false))
	bn.b.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	bn.check(poll.Until(context.Background(), 30*time.Second, "the restarted controller manager's /healthz", func(context.Context) error {
		return httpprobe.GetOK(context.Background(), "https://"+plane.ControllerManagerAddress+"/healthz")
	}))
	bn.note(fmt.Sprintf("%d clusters: controller manager run with %s", len(bn.clusters), *controllerManagerFlags))
}

// controllerManagerProcess is the plane's controller manager as the bench
// starts it again: on the plane's kubeconfig and address, with extra flags,
// logging to log in the plane's folder.
func (bn *bench) controllerManagerProcess(extra []string, log string) *localprocess.Process {
	dir := bn.u.PlaneDir(federation)
	return &localprocess.Process{
		Name: processplane.ControllerManager,
		Path: filepath.Join(bn.u.Bin, processplane.ControllerManager),
		Args: append(append([]string{
			"--kubeconfig=" + filepath.Join(dir, processplane.ControllerManagerKubeconfig),
			"--federation-name=" + federation,
		}, bn.u.Plane(federation).ControllerManagerServingArgs()...), extra...),
		Log: filepath.Join(dir, log),
	}
}
