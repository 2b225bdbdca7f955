package localplane

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
	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
)

// SystemNamespace holds the federation's own objects (member credentials);
// it is never propagated.
const SystemNamespace = federationv1beta1.SystemNamespace

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
// given), the controller manager's and the DNS server's.
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
	cmPort, err := freeport.Pick("127.0.0.1")
	if err != nil {
		return err
	}
	p.ControllerManagerAddress = net.JoinHostPort("127.0.0.1", strconv.Itoa(cmPort))
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
	for _, prog := range programsOf(p) {
		path, err := find(prog.name)
		if err != nil {
			path = prog.name + " (not found: " + err.Error() + ")"
		}
		lines = append(lines, path+" "+strings.Join(prog.args(p), " "))
	}
	return lines
}

// Start starts every program of the plane that is not running, with the
// binaries found by find.
func (p *Plane) Start(find func(program string) (string, error)) error {
	if err := p.ensureControllerManagerServingCert(); err != nil {
		return fmt.Errorf("issuing the controller manager's serving certificate: %w", err)
	}
	if err := p.ensureEtcdClientTLS(); err != nil {
		return fmt.Errorf("securing the embedded etcd's client port: %w", err)
	}
	for _, prog := range programsOf(p) {
		if p.Processes[prog.name].Alive() {
			continue
		}
		path, err := find(prog.name)
		if err != nil {
			return err
		}
		proc := &localprocess.Process{
			Name: prog.name,
			Path: path,
			Args: prog.args(p),
			Log:  p.path("logs", prog.name+".log"),
		}
		if err := proc.Start(true); err != nil {
			return err
		}
		p.Processes[prog.name] = proc
		if err := p.save(); err != nil {
			return err
		}
	}
	return nil
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

// WaitReady waits until the apiserver answers /readyz, the controller
// manager /healthz and the DNS server, if any, /ready, calling tick about
// once a second so that a person sees progress.
func (p *Plane) WaitReady(ctx context.Context, tick func()) error {
	client, err := p.AdminClient()
	if err != nil {
		return err
	}
	last := time.Now()
	err = localprocess.WaitFor(ctx, readyTimeout, "federation-apiserver /readyz", p.Processes[APIServer], func() error {
		if tick != nil && time.Since(last) >= time.Second {
			tick()
			last = time.Now()
		}
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
	if err != nil {
		return err
	}
	err = localprocess.WaitFor(ctx, readyTimeout, "federation-controller-manager /healthz", p.Processes[ControllerManager], func() error {
		return httpprobe.GetOK(ctx, "https://"+p.ControllerManagerAddress+"/healthz")
	})
	if err != nil {
		return err
	}
	return p.waitDNSReady(ctx)
}

// EnsureSystemNamespace creates the federation-system namespace.
func (p *Plane) EnsureSystemNamespace(ctx context.Context) error {
	client, err := p.AdminClient()
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: SystemNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", SystemNamespace, err)
	}
	return nil
}

// Stop stops every program of the plane; its data stays.
func (p *Plane) Stop() error {
	var errs []error
	for i := len(programs) - 1; i >= 0; i-- {
		if proc := p.Processes[programs[i].name]; proc != nil {
			errs = append(errs, proc.Stop(15*time.Second))
		}
	}
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
