package processplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/pkg/localprocess"
)

// Program names of the plane.
const (
	APIServer         = "federation-apiserver"
	ControllerManager = "federation-controller-manager"
)

// readyTimeout bounds the wait for a starting apiserver.
const readyTimeout = 90 * time.Second

// New plans a plane from opts without touching the disk: it validates them,
// refuses a folder that already holds a plane (so nothing of it changes), and
// picks its ports.
func New(opts Options) (*Plane, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if existing, err := Load(opts.Dir); err == nil {
		if existing.Running() {
			return nil, fmt.Errorf("federation %q already runs at %s (folder %s); nothing changed", opts.Name, existing.Server, opts.Dir)
		}
		return nil, fmt.Errorf("federation %q exists but is stopped (folder %s); nothing changed: start it with `kubefed start %s`, or remove it with `kubefed delete %s --local`", opts.Name, opts.Dir, opts.Name, opts.Name)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	p := &Plane{
		Options: opts, Processes: map[string]*localprocess.Process{}, askedPort: opts.Port, new: true,
		EncryptionConfig: encryptionConfigFile, AuditPolicy: auditPolicyFile,
	}
	if err := p.pickPorts(); err != nil {
		return nil, err
	}
	return p, nil
}

// pickPorts picks the ports the options leave free: the apiserver's (unless
// given), the controller managers', the etcd members' and the DNS server's.
func (p *Plane) pickPorts() error {
	p.Port = p.askedPort
	if p.Port == 0 {
		port, err := freeport.Pick(bindAddress(p.Options))
		if err != nil {
			return err
		}
		p.Port = port
	}
	host := "127.0.0.1"
	if p.AdvertiseAddress != "" {
		host = p.AdvertiseAddress
	}
	p.Server = "https://" + net.JoinHostPort(host, strconv.Itoa(p.Port))
	if p.HA {
		if err := p.planHA(); err != nil {
			return err
		}
	} else {
		cmPort, err := freeport.Pick("127.0.0.1")
		if err != nil {
			return err
		}
		p.ControllerManagerAddress = net.JoinHostPort("127.0.0.1", strconv.Itoa(cmPort))
	}
	return p.planDNS()
}

// Create writes the planned plane to its folder: credentials, the
// encryption key, the audit policy and the state.
func (p *Plane) Create() error {
	if err := os.MkdirAll(p.path("logs"), 0o700); err != nil {
		return err
	}
	if err := p.createCredentials(); err != nil {
		return fmt.Errorf("creating credentials for federation %q: %w", p.Name, err)
	}
	if err := p.writeEncryptionConfig(); err != nil {
		return fmt.Errorf("writing the encryption configuration of federation %q: %w", p.Name, err)
	}
	if err := p.writeAuditPolicy(); err != nil {
		return fmt.Errorf("writing the audit policy of federation %q: %w", p.Name, err)
	}
	return p.writeConfiguration()
}

// writeConfiguration writes what names the plane's addresses: the
// controller manager's kubeconfig, the DNS files and the state.
func (p *Plane) writeConfiguration() error {
	if err := p.writeControllerManagerKubeconfig(); err != nil {
		return fmt.Errorf("writing the controller manager's kubeconfig of federation %q: %w", p.Name, err)
	}
	if err := p.writeDNSFiles(); err != nil {
		return fmt.Errorf("writing the DNS configuration of federation %q: %w", p.Name, err)
	}
	return p.save()
}

// CommandLines are the programs Start would run, for --dry-run.
func (p *Plane) CommandLines(find func(program string) (string, error)) []string {
	var lines []string
	for _, in := range instancesOf(p) {
		path, err := find(in.program)
		if err != nil {
			path = in.program + " (not found: " + err.Error() + ")"
		}
		lines = append(lines, path+" "+strings.Join(in.args, " "))
	}
	return lines
}

// Start starts every instance of the plane that is not running (all of
// them, or those a fault or StopInstance took away), with the binaries
// found by find.
func (p *Plane) Start(find func(program string) (string, error)) error {
	if err := p.ensureFiles(); err != nil {
		return err
	}
	for _, in := range instancesOf(p) {
		if p.Processes[in.name].Alive() {
			continue
		}
		path, err := find(in.program)
		if err != nil {
			return err
		}
		if err := p.startInstance(in, path); err != nil {
			return err
		}
	}
	return nil
}

// ensureFiles makes the files that planes made by earlier versions lack.
func (p *Plane) ensureFiles() error {
	if err := p.ensureControllerManagerServingCert(); err != nil {
		return fmt.Errorf("issuing the controller manager's serving certificate: %w", err)
	}
	if err := p.ensureEtcdClientTLS(); err != nil {
		return fmt.Errorf("securing the embedded etcd's client port: %w", err)
	}
	if err := p.ensureAgentCredentials(); err != nil {
		return fmt.Errorf("the agents CA of federation %q: %w", p.Name, err)
	}
	if err := p.ensureServiceAccountKey(); err != nil {
		return fmt.Errorf("the service-account signing key of federation %q: %w", p.Name, err)
	}
	return nil
}

// startInstance starts in with the binary path and records it.
func (p *Plane) startInstance(in instance, path string) error {
	proc := &localprocess.Process{
		Name: in.name,
		Path: path,
		Args: in.args,
		Log:  p.path("logs", in.name+".log"),
	}
	if err := proc.Start(true); err != nil {
		return err
	}
	p.Processes[in.name] = proc
	return p.save()
}

// portAttempts bounds how often Up starts a new plane on newly picked ports.
const portAttempts = 3

// UpProgress hears how Up goes, for a person watching; nil fields are not
// called.
type UpProgress struct {
	// Started: the programs run, and the wait for them begins.
	Started func()
	// Tick comes about once a second while waiting.
	Tick func()
	// Retrying: a program found its port taken; Up stopped the plane and
	// starts it again on other ports.
	Retrying func(err error)
}

// Up starts the plane's programs and waits until they serve (Start, then
// WaitReady). A port is picked free but released until its program binds
// it, and something else may bind it first: then a new plane (not one
// loaded, whose addresses kubeconfigs already hold) picks its ports again
// and starts again, up to portAttempts times.
func (p *Plane) Up(ctx context.Context, find func(program string) (string, error), progress UpProgress) error {
	for attempt := 1; ; attempt++ {
		err := p.Start(find)
		if err == nil {
			call(progress.Started)
			err = p.WaitReady(ctx, progress.Tick)
		}
		if err == nil || !p.new || attempt == portAttempts || !p.portTaken() {
			return err
		}
		if progress.Retrying != nil {
			progress.Retrying(err)
		}
		if err := p.Stop(); err != nil {
			return err
		}
		// The members recorded their peers' old addresses in their data,
		// which holds nothing else yet: they start again from nothing.
		for _, m := range p.EtcdMembers {
			if err := os.RemoveAll(p.path(dataFolder, m.Name)); err != nil {
				return err
			}
		}
		if err := p.pickPorts(); err != nil {
			return err
		}
		if err := p.writeConfiguration(); err != nil {
			return err
		}
	}
}

func call(f func()) {
	if f != nil {
		f()
	}
}

// portTaken reports whether a program's latest run found its port taken.
func (p *Plane) portTaken() bool {
	for _, proc := range p.Processes {
		if strings.Contains(proc.LastRunLog(), "address already in use") {
			return true
		}
	}
	return false
}

// WaitReady waits until every instance of the plane serves, in start
// order: etcd members /health, the apiservers /readyz (see
// waitAPIServersReady for those sharing a port), the controller managers
// /healthz and the DNS server, if any, /ready. It calls tick about once a
// second so that a person sees progress.
func (p *Plane) WaitReady(ctx context.Context, tick func()) error {
	var names []string
	for _, in := range instancesOf(p) {
		names = append(names, in.name)
	}
	return p.waitInstancesReady(ctx, names, everySecond(tick))
}

// waitAPIServerReady waits until a single plane's apiserver answers /readyz.
func (p *Plane) waitAPIServerReady(ctx context.Context, tick func()) error {
	client, err := p.AdminClient()
	if err != nil {
		return err
	}
	return localprocess.WaitFor(ctx, readyTimeout, "federation-apiserver /readyz", p.Processes[APIServer], func() error {
		call(tick)
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}

// EnsureSystemNamespace creates the federation-system namespace.
func (p *Plane) EnsureSystemNamespace(ctx context.Context) error {
	client, err := p.AdminClient()
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: federationv1beta1.SystemNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", federationv1beta1.SystemNamespace, err)
	}
	return nil
}

// stopGrace is how long a stopping process may take to exit on SIGTERM
// before it is killed.
const stopGrace = 15 * time.Second

// Stop stops every instance of the plane, last started first (the
// instances of one program at once); its data stays.
func (p *Plane) Stop() error {
	var errs []error
	stopped := map[string]bool{}
	stop := func(names []string) {
		errc := make(chan error, len(names))
		for _, name := range names {
			stopped[name] = true
			go func(proc *localprocess.Process) { errc <- proc.Stop(stopGrace) }(p.Processes[name])
		}
		for range names {
			errs = append(errs, <-errc)
		}
	}
	instances := instancesOf(p)
	for i := len(instances) - 1; i >= 0; {
		program := instances[i].program
		var names []string
		for ; i >= 0 && instances[i].program == program; i-- {
			names = append(names, instances[i].name)
		}
		stop(names)
	}
	// Any other process recorded (none, unless the plane changed shape).
	var others []string
	for name := range p.Processes {
		if !stopped[name] {
			others = append(others, name)
		}
	}
	stop(others)
	return errors.Join(append(errs, p.save())...)
}

// Delete stops the plane and removes its folder.
func (p *Plane) Delete() error {
	if err := p.Stop(); err != nil {
		return err
	}
	return os.RemoveAll(p.Dir)
}

// AdminClient is a clientset with the plane's admin credentials.
func (p *Plane) AdminClient() (kubernetes.Interface, error) {
	cfg, err := p.AdminKubeconfig()
	if err != nil {
		return nil, err
	}
	rest, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(rest)
}

// FindBinary looks for program beside the running executable, then on PATH.
func FindBinary(program string) (string, error) {
	if self, err := os.Executable(); err == nil {
		candidate := filepath.Join(filepath.Dir(self), program)
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
	}
	path, err := execLookPath(program)
	if err != nil {
		return "", fmt.Errorf("%s not found beside kubefed or on PATH (build it with `make build`): %w", program, err)
	}
	return path, nil
}

func bindAddress(o Options) string {
	if o.AdvertiseAddress != "" {
		return o.AdvertiseAddress
	}
	return "127.0.0.1"
}

// joinNonEmpty joins the non-empty strings with commas.
func joinNonEmpty(items []string) string {
	var out []string
	for _, s := range items {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}
