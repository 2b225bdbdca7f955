package karmadaenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
)

// Options say where the plane lives and what it runs.
type Options struct {
	// Dir is the plane's run folder (certificates, kubeconfigs, etcd, logs).
	Dir string
	// KarmadaBin holds Karmada's programs, KarmadaSrc its source tree.
	KarmadaBin, KarmadaSrc string
	// Etcd, KubeAPIServer and KubeControllerManager are the project's
	// cached Kubernetes binaries (memberenv.Binaries).
	Etcd, KubeAPIServer, KubeControllerManager string
	// ExtraFlags are more flags by program (e.g. ControllerManager:
	// --kube-api-qps=...), after the defaults.
	ExtraFlags map[string][]string
	// Logf, when set, says what is starting.
	Logf func(string, ...any)
}

// Plane is a running Karmada control plane.
type Plane struct {
	opts Options
	// Server is karmada-apiserver's URL, EtcdURL its etcd's.
	Server, EtcdURL string
	Ports           map[string]int
	// Processes by program name, in start order in Programs.
	Processes map[string]*localprocess.Process
	Programs  []string
	caPEM     []byte
}

// Start starts the plane and returns once Karmada's APIs are served and its
// controllers run. On error everything started is stopped.
func Start(ctx context.Context, opts Options) (_ *Plane, err error) {
	if err := Check(opts.KarmadaBin, opts.KarmadaSrc); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	p := &Plane{opts: opts, Ports: map[string]int{}, Processes: map[string]*localprocess.Process{}}
	defer func() {
		if err != nil {
			_ = p.Stop()
		}
	}()
	for _, name := range portNames {
		if p.Ports[name], err = freeport.Pick("127.0.0.1"); err != nil {
			return nil, err
		}
	}
	p.Server = "https://" + addr(p.Ports[KubeAPIServer])
	p.EtcdURL = "http://" + addr(p.Ports["etcd"])
	if err := p.writeCredentials(); err != nil {
		return nil, err
	}
	steps := []struct {
		what string
		do   func() error
	}{
		{"etcd", func() error { return p.startAndWait(ctx, Etcd, p.EtcdURL+"/health") }},
		{"karmada-apiserver", func() error { return p.startAPIServer(ctx) }},
		{"kube-controller-manager", func() error {
			return p.startAndWait(ctx, KubeControllerManager, fmt.Sprintf("https://%s/healthz", addr(p.Ports[KubeControllerManager])))
		}},
		{"Karmada's namespace and CRDs", func() error { return p.installCRDs(ctx) }},
		{"karmada-aggregated-apiserver", func() error { return p.startAggregatedAPIServer(ctx) }},
		{"karmada-webhook", func() error { return p.startWebhook(ctx) }},
		{"karmada-controller-manager", func() error {
			return p.startAndWait(ctx, ControllerManager, fmt.Sprintf("http://%s/healthz", addr(p.Ports[ControllerManager+"-health"])))
		}},
		{"karmada-scheduler", func() error {
			return p.startAndWait(ctx, Scheduler, fmt.Sprintf("http://%s/healthz", addr(p.Ports[Scheduler+"-health"])))
		}},
	}
	for _, s := range steps {
		start := time.Now()
		if err := s.do(); err != nil {
			return nil, fmt.Errorf("karmadaenv: %s: %w", s.what, err)
		}
		p.logf("karmadaenv: %s ready after %s", s.what, time.Since(start).Round(100*time.Millisecond))
	}
	return p, nil
}

func (p *Plane) logf(format string, args ...any) {
	if p.opts.Logf != nil {
		p.opts.Logf(format, args...)
	}
}

func (p *Plane) path(name string) string { return filepath.Join(p.opts.Dir, name) }

// programPath is where a program's binary is.
func (p *Plane) programPath(program string) string {
	switch program {
	case Etcd:
		return p.opts.Etcd
	case KubeAPIServer:
		return p.opts.KubeAPIServer
	case KubeControllerManager:
		return p.opts.KubeControllerManager
	default:
		return filepath.Join(p.opts.KarmadaBin, program)
	}
}

// start starts one program, its output in logs/<program>.log.
func (p *Plane) start(program string) (*localprocess.Process, error) {
	proc := &localprocess.Process{
		Name: "karmada/" + program,
		Path: p.programPath(program),
		Args: append(p.args(program), p.opts.ExtraFlags[program]...),
		Log:  p.path(filepath.Join("logs", program+".log")),
	}
	if err := proc.Start(false); err != nil {
		return nil, err
	}
	p.Processes[program] = proc
	p.Programs = append(p.Programs, program)
	return proc, nil
}

// startAndWait starts a program and waits until url answers 200.
func (p *Plane) startAndWait(ctx context.Context, program, url string) error {
	proc, err := p.start(program)
	if err != nil {
		return err
	}
	return localprocess.WaitFor(ctx, 90*time.Second, program+" "+url, proc, func() error {
		return httpprobe.GetOK(ctx, url)
	})
}

func (p *Plane) startAPIServer(ctx context.Context) error {
	proc, err := p.start(KubeAPIServer)
	if err != nil {
		return err
	}
	client, err := p.Client()
	if err != nil {
		return err
	}
	return localprocess.WaitFor(ctx, 90*time.Second, "karmada-apiserver /readyz", proc, func() error {
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}

// Stop stops every program, the last started first.
func (p *Plane) Stop() error {
	var errs []error
	for i := len(p.Programs) - 1; i >= 0; i-- {
		errs = append(errs, p.Processes[p.Programs[i]].Stop(10*time.Second))
	}
	return errors.Join(errs...)
}

// PIDs are the plane's processes by program.
func (p *Plane) PIDs() map[string]int {
	out := map[string]int{}
	for name, proc := range p.Processes {
		out[name] = proc.Pid
	}
	return out
}

// Kubeconfig is the admin's kubeconfig of karmada-apiserver.
func (p *Plane) Kubeconfig() string { return p.path(adminKubeconfig) }

// RESTConfig is the admin's client configuration of karmada-apiserver.
func (p *Plane) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", p.Kubeconfig())
}

// Client is an admin clientset of karmada-apiserver.
func (p *Plane) Client() (kubernetes.Interface, error) {
	cfg, err := p.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// LogTails are the last lines of every program's log, for a failure.
func (p *Plane) LogTails(lines int) string {
	var b strings.Builder
	for _, name := range p.Programs {
		fmt.Fprintf(&b, "--- %s (%s)\n%s\n", name, p.Processes[name].Log, p.Processes[name].LogTail(lines))
	}
	return b.String()
}

// LogDir holds every program's log.
func (p *Plane) LogDir() string { return p.path("logs") }
