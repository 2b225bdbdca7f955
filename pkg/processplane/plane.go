// Package processplane runs a federation control plane on this machine, with
// no host cluster: federation-apiserver on its embedded etcd (or an external
// one) and the federation's other programs, as detached processes whose
// credentials, data, logs and state live in one folder (~/.federation/NAME).
// It is what `kubefed init NAME --local`, `kubefed stop|start NAME` and
// `kubefed delete NAME --local` act on.
package processplane

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/federation-v1/federation/pkg/localprocess"
)

// stateFile is the plane's state in its folder.
const stateFile = "federation.json"

// Options describe a new local control plane.
type Options struct {
	// Name of the federation: also its kubeconfig cluster, user and context.
	Name string
	// Dir holds everything of the plane.
	Dir string
	// AdvertiseAddress is added to the serving certificate and, when set,
	// is the address the apiserver binds; otherwise it binds 127.0.0.1.
	AdvertiseAddress string
	// Port of the apiserver; 0 picks a free one.
	Port int
	// EtcdServers: an external etcd; empty runs the embedded one.
	EtcdServers []string
	// DNSZone is the federation's DNS zone (e.g. "example.com."); empty
	// means no DNS.
	DNSZone string
	// DNSPort is where federation-dns answers on the bind address; 0 picks
	// a free port.
	DNSPort int
	// DNSProviderConfig is a v1 coredns-provider.conf of an existing
	// etcd/CoreDNS: then no DNS server of ours runs.
	DNSProviderConfig string
	// HA runs the high-availability topology (see ha.go): a 3-member etcd
	// cluster of our own unless EtcdServers, two apiservers sharing one
	// port and two controller managers.
	HA bool `json:",omitempty"`
}

// Validate checks the options a person gives.
func (o Options) Validate() error {
	if errs := validation.IsDNS1123Label(o.Name); len(errs) > 0 {
		return fmt.Errorf("federation name %q: %s", o.Name, errs[0])
	}
	if o.Dir == "" {
		return fmt.Errorf("federation %q: no data folder", o.Name)
	}
	for flag, port := range map[string]int{"--api-server-port": o.Port, "--dns-port": o.DNSPort} {
		if port < 0 || port > 65535 {
			return fmt.Errorf("%s %d: want 1-65535, or 0 for a free port", flag, port)
		}
	}
	if o.DNSZone != "" {
		if errs := validation.IsDNS1123Subdomain(strings.TrimSuffix(o.DNSZone, ".")); len(errs) > 0 {
			return fmt.Errorf("--dns-zone-name %q: %s", o.DNSZone, errs[0])
		}
	}
	if o.DNSProviderConfig != "" && o.DNSZone == "" {
		return fmt.Errorf("--dns-provider-config needs --dns-zone-name")
	}
	return nil
}

// DefaultDir is where a plane lives unless told otherwise: ~/.federation/NAME.
func DefaultDir(name string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the home folder for ~/.federation: %w", err)
	}
	return filepath.Join(home, ".federation", name), nil
}

// Plane is a local control plane, as saved in its state file.
type Plane struct {
	Options
	// Server is the apiserver's URL.
	Server string `json:"server"`
	// ControllerManagerAddress serves the controller manager's /healthz, /metrics and
	// /debug/pprof/ over HTTPS (see ControllerManagerClient).
	ControllerManagerAddress string `json:"controllerManagerAddress"`
	// ControllerManagerAddresses are those of every controller manager
	// instance of an HA plane, in instance order (the first is
	// ControllerManagerAddress); empty in a single plane.
	ControllerManagerAddresses []string `json:"controllerManagerAddresses,omitempty"`
	// EtcdMembers are the etcd cluster an HA plane runs itself; empty in a
	// single plane (embedded etcd) and with --etcd-servers.
	EtcdMembers []EtcdMember `json:"etcdMembers,omitempty"`
	// DNS is set when the plane runs its own DNS server.
	DNS *DNSServer `json:"dns,omitempty"`
	// Processes by instance name: the program's name in a single plane
	// (federation-apiserver), NAME-INDEX in an HA plane
	// (federation-apiserver-1, etcd-0); see Instances.
	Processes map[string]*localprocess.Process `json:"processes"`
	// Agents are the arguments of the local agents of members joined with
	// `kubefed join --connection=agent --agent=local`, by cluster name.
	Agents map[string][]string `json:"agents,omitempty"`
	// EncryptionConfig and AuditPolicy are the apiserver's
	// --encryption-provider-config and --audit-policy-file, relative to
	// the folder; empty in a plane made before init wrote them, which
	// then runs without.
	EncryptionConfig string `json:"encryptionConfig,omitempty"`
	AuditPolicy      string `json:"auditPolicy,omitempty"`

	// new is a plane of New, not Load: nothing outside its folder holds its
	// addresses yet, so it may pick its ports again.
	new bool
	// askedPort is the apiserver port the options asked for; 0 picks one.
	askedPort int
}

// Load reads the plane in dir; a missing plane is an os.ErrNotExist error.
func Load(dir string) (*Plane, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	p := &Plane{}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, stateFile), err)
	}
	return p, nil
}

// Running reports whether any program of the plane runs.
func (p *Plane) Running() bool {
	for _, proc := range p.Processes {
		if proc.Alive() {
			return true
		}
	}
	return false
}

func (p *Plane) save() error {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	tmp := p.path(stateFile + ".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p.path(stateFile))
}

func (p *Plane) path(parts ...string) string {
	return filepath.Join(append([]string{p.Dir}, parts...)...)
}
