package processplane

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
)

// This file lets tests (the fault matrix of test/e2e/faults) take one
// instance of a plane away and bring it back, as a crash or an operator
// would. The methods read and write the plane's state file: don't run a
// kubefed command on the same plane at the same time.

// Instances are the names of the plane's instances of program (EtcdProgram,
// APIServer, ControllerManager, DNSServerProgram), in start order: in an HA
// plane etcd-0..2, federation-apiserver-0..1, federation-controller-manager-0..1
// and federation-dns; in a single plane the program's name alone. None when
// the plane does not run program (etcd of a single plane: it is embedded in
// the apiserver; with --etcd-servers: someone else's).
func (p *Plane) Instances(program string) []string {
	var names []string
	for _, in := range instancesOf(p) {
		if in.program == program {
			names = append(names, in.name)
		}
	}
	return names
}

// Alive reports whether the instance runs.
func (p *Plane) Alive(instance string) bool {
	return p.Processes[instance].Alive()
}

// Kill kills the running instance with SIGKILL, as a crash would: nothing
// of it shuts down in order (a controller manager does not release its
// lease, an etcd member does not step down), and waits until it is gone.
func (p *Plane) Kill(instance string) error {
	proc, err := p.runningProcess(instance)
	if err != nil {
		return err
	}
	// Its own process group: Start runs each instance in a new session.
	if err := syscall.Kill(-proc.Pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("killing %s (pid %d): %w", instance, proc.Pid, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for proc.Alive() || !localprocess.Exited(proc.Pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (pid %d) still runs 10s after SIGKILL", instance, proc.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// StopInstance stops the running instance as `kubefed stop` stops each:
// SIGTERM, so that it shuts down in order (a controller manager releases
// its lease), and SIGKILL if it has not exited after 15 s.
func (p *Plane) StopInstance(instance string) error {
	proc, err := p.runningProcess(instance)
	if err != nil {
		return err
	}
	return proc.Stop(stopGrace)
}

// StartInstance starts a stopped or killed instance again, with the binary
// it ran before and the plane's arguments for it (as `kubefed start` would),
// on its data (an etcd member rejoins the cluster), records it in the
// state file, and waits until it serves, as WaitReady waits for it. An
// instance that runs is only waited for.
func (p *Plane) StartInstance(ctx context.Context, instance string) error {
	in, ok := p.instance(instance)
	if !ok {
		return fmt.Errorf("federation %q has no instance %q", p.Name, instance)
	}
	if !p.Alive(instance) {
		before := p.Processes[instance]
		if before == nil || before.Path == "" {
			return fmt.Errorf("%s of federation %q never ran: start the plane with `kubefed start %s`", instance, p.Name, p.Name)
		}
		if err := p.startInstance(in, before.Path); err != nil {
			return err
		}
	}
	return p.waitInstancesReady(ctx, []string{instance}, nil)
}

// Roll restarts the plane's instances one at a time, in start order, each
// with the binary find gives for its program (an upgrade, when those are
// newer) and the plane's arguments, and waits until each serves again
// before the next: with --ha the federation serves throughout, and a
// leading controller manager stopped releases its lease to the other. An
// instance that did not run is started. restarted hears of each.
func (p *Plane) Roll(ctx context.Context, find func(program string) (string, error), restarted func(instance string, took time.Duration)) error {
	if err := p.ensureFiles(); err != nil {
		return err
	}
	for _, in := range instancesOf(p) {
		path, err := find(in.program)
		if err != nil {
			return err
		}
		start := time.Now()
		if p.Alive(in.name) {
			if err := p.StopInstance(in.name); err != nil {
				return fmt.Errorf("stopping %s: %w", in.name, err)
			}
		}
		if err := p.startInstance(in, path); err != nil {
			return fmt.Errorf("starting %s: %w", in.name, err)
		}
		if err := p.waitInstancesReady(ctx, []string{in.name}, nil); err != nil {
			return err
		}
		if restarted != nil {
			restarted(in.name, time.Since(start))
		}
	}
	return nil
}

// instance returns the plane's instance named name.
func (p *Plane) instance(name string) (instance, bool) {
	for _, in := range instancesOf(p) {
		if in.name == name {
			return in, true
		}
	}
	return instance{}, false
}

// runningProcess is the process of the running instance name.
func (p *Plane) runningProcess(name string) (*localprocess.Process, error) {
	if _, ok := p.instance(name); !ok {
		return nil, fmt.Errorf("federation %q has no instance %q", p.Name, name)
	}
	if !p.Alive(name) {
		return nil, fmt.Errorf("%s of federation %q does not run", name, p.Name)
	}
	return p.Processes[name], nil
}

// waitInstancesReady waits until each of the instances names serves, in
// the order given; the apiservers among them together.
func (p *Plane) waitInstancesReady(ctx context.Context, names []string, tick func()) error {
	var apiservers []string
	for _, name := range names {
		if in, _ := p.instance(name); in.program == APIServer {
			apiservers = append(apiservers, name)
		}
	}
	for _, name := range names {
		in, _ := p.instance(name)
		proc := p.Processes[name]
		var err error
		switch in.program {
		case EtcdProgram:
			m, _ := p.etcdMember(name)
			err = localprocess.WaitFor(ctx, readyTimeout, name+" /health", proc, func() error {
				call(tick)
				return p.etcdHealthy(ctx, m)
			})
		case APIServer:
			switch {
			case name != apiservers[0]: // waited for with the first
			case p.HA:
				err = p.waitAPIServersReady(ctx, apiservers, tick)
			default:
				err = p.waitAPIServerReady(ctx, tick)
			}
		case ControllerManager:
			url, urlErr := p.ControllerManagerURL(name)
			if urlErr != nil {
				return urlErr
			}
			err = localprocess.WaitFor(ctx, readyTimeout, name+" /healthz", proc, func() error {
				call(tick)
				return httpprobe.GetOK(ctx, url+"/healthz")
			})
		case DNSServerProgram:
			err = p.waitDNSReady(ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// everySecond calls tick at most once a second; nil stays nil.
func everySecond(tick func()) func() {
	if tick == nil {
		return nil
	}
	last := time.Now()
	return func() {
		if time.Since(last) >= time.Second {
			tick()
			last = time.Now()
		}
	}
}
