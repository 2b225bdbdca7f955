package memberenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
)

// The programs of one member, in start order.
const (
	KubeAPIServer         = "kube-apiserver"
	KubeControllerManager = "kube-controller-manager"
	KubeScheduler         = "kube-scheduler"
	Kwok                  = "kwok"
	LoadBalancer          = "loadbalancer"
)

var memberComponents = []string{KubeAPIServer, KubeControllerManager, KubeScheduler, Kwok, LoadBalancer}

// Member is one member cluster of the environment.
type Member struct {
	Spec  ClusterSpec `json:"spec"`
	Index int         `json:"index"`
	// Dir holds the member's certificates, token file and kubeconfigs.
	Dir string `json:"dir"`
	// Server is the URL of the member's kube-apiserver.
	Server string `json:"server"`
	// Ports of the member's programs; kept across restarts. The
	// LoadBalancer's is where its process answers pods' forwarded ports.
	Ports map[string]int `json:"ports"`
	// Tokens of the member's users: admin and one per program.
	Tokens map[string]string `json:"tokens"`
	// PodCIDR is where kwok takes pod IPs from.
	PodCIDR string `json:"podCIDR"`
	// LoadBalancerPool is where the load-balancer simulator takes addresses from.
	LoadBalancerPool string                           `json:"loadBalancerPool"`
	Processes        map[string]*localprocess.Process `json:"processes"`
}

// users of a member apiserver: name → (user, groups). The controller manager
// and scheduler get the identities that Kubernetes' bootstrap RBAC expects;
// kwok plays every kubelet and the load-balancer simulator the cloud.
var users = map[string]credential{
	"admin":               {User: "admin", Groups: []string{"system:masters"}},
	KubeControllerManager: {User: "system:kube-controller-manager"},
	KubeScheduler:         {User: "system:kube-scheduler"},
	Kwok:                  {User: "kwok", Groups: []string{"system:masters"}},
	LoadBalancer:          {User: "loadbalancer-simulator", Groups: []string{"system:masters"}},
}

// newMember prepares a member's folder: ports, credentials, serving
// certificate and a kubeconfig for each of its programs.
func (e *Environment) newMember(index int, spec ClusterSpec) (*Member, error) {
	if index > 90 {
		return nil, fmt.Errorf("memberenv: at most 90 members (pod CIDRs are 10.<n>.0.0/16 below the service range), asked for %d", index)
	}
	m := &Member{
		Spec:             spec,
		Index:            index,
		Dir:              filepath.Join(e.Dir, spec.Name),
		Ports:            map[string]int{},
		Tokens:           map[string]string{},
		PodCIDR:          fmt.Sprintf("10.%d.0.1/16", index),
		LoadBalancerPool: fmt.Sprintf("127.1.%d.0/24", index),
		Processes:        map[string]*localprocess.Process{},
	}
	if err := os.MkdirAll(m.Dir, 0o700); err != nil {
		return nil, err
	}
	programs := []string{KubeAPIServer, KubeControllerManager, KubeScheduler, Kwok}
	if !spec.APIOnly {
		// The load-balancer simulator's process also serves pods' forwarded ports.
		programs = append(programs, LoadBalancer)
	}
	for _, c := range programs {
		port, err := freeport.Pick("127.0.0.1")
		if err != nil {
			return nil, err
		}
		m.Ports[c] = port
	}
	m.Server = fmt.Sprintf("https://127.0.0.1:%d", m.Ports[KubeAPIServer])

	var creds []credential
	for name, u := range users {
		c, err := newCredential(u.User, u.Groups...)
		if err != nil {
			return nil, err
		}
		m.Tokens[name] = c.Token
		creds = append(creds, c)
	}
	if err := writeTokenFile(m.path("tokens.csv"), creds); err != nil {
		return nil, err
	}
	ca, err := e.PKI.ca()
	if err != nil {
		return nil, err
	}
	if err := ca.IssueServing(m.path("apiserver.crt"), m.path("apiserver.key"), spec.Name, "kubernetes", "kubernetes.default", "kubernetes.default.svc"); err != nil {
		return nil, err
	}
	if !spec.APIOnly {
		// kwok serves the kubelet API (logs, exec, attach, port-forward)
		// to kube-apiserver, which checks this against the CA.
		if err := ca.IssueServing(m.path("kwok.crt"), m.path("kwok.key"), spec.Name+"-kubelet"); err != nil {
			return nil, err
		}
		if err := m.writePodFiles(); err != nil {
			return nil, err
		}
	}
	caPEM, err := os.ReadFile(e.PKI.CACert)
	if err != nil {
		return nil, err
	}
	for name := range users {
		entry := contextEntry{Name: spec.Name, Server: m.Server, Token: m.Tokens[name]}
		if err := writeKubeconfig(m.kubeconfig(name), caPEM, entry); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Member) path(name string) string { return filepath.Join(m.Dir, name) }

// kubeconfig is the path of the kubeconfig a member's user connects with.
func (m *Member) kubeconfig(user string) string { return m.path(user + ".kubeconfig") }

// startMember starts every program of m and waits until the member can run pods.
func (e *Environment) startMember(ctx context.Context, m *Member) error {
	if err := e.StartAPIServer(ctx, m.Spec.Name); err != nil {
		return err
	}
	if m.Spec.APIOnly {
		return e.startComponent(ctx, m, KubeControllerManager)
	}
	client, err := e.Client(m.Spec.Name)
	if err != nil {
		return err
	}
	if err := ensureNodes(ctx, client, m); err != nil {
		return fmt.Errorf("cluster %s: %w", m.Spec.Name, err)
	}
	for _, c := range []string{KubeControllerManager, KubeScheduler, LoadBalancer} {
		if err := e.startComponent(ctx, m, c); err != nil {
			return err
		}
	}
	if err := e.startKwok(ctx, m, client); err != nil {
		return err
	}
	if err := ensureKubeletEndpoints(ctx, client, m); err != nil {
		return err
	}
	return e.waitServiceAccount(ctx, m, client)
}

// kwokCrashRetries bounds how often a kwok that crashed while starting is
// started again.
const kwokCrashRetries = 3

// startKwok starts kwok and waits until it has made every node of m Ready.
// kwok v0.8.0 can crash there: its node and pod controllers build their CEL
// environments at once on their first events, and easycel writes a package
// map without a lock ("fatal error: concurrent map writes", seen in CI on a
// member restarted with pods). Once both are built nothing writes that map
// again, so a kwok that died of a Go runtime fatal error while starting is
// started again, as a kubelet's supervisor would; any other exit is an error.
func (e *Environment) startKwok(ctx context.Context, m *Member, client kubernetes.Interface) error {
	for attempt := 1; ; attempt++ {
		err := e.startComponent(ctx, m, Kwok)
		if err == nil {
			err = e.waitNodesReady(ctx, m, client)
		}
		proc := m.Processes[Kwok]
		if err == nil || attempt == kwokCrashRetries || proc.Alive() || !strings.Contains(proc.LastRunLog(), "fatal error:") {
			return err
		}
		if e.logf != nil {
			e.logf("memberenv: %s kwok crashed while starting (attempt %d), starting it again: %v", m.Spec.Name, attempt, err)
		}
	}
}

// portRetries bounds how often a component is moved to a new port.
const portRetries = 3

// startComponent starts one program of m and waits for its /healthz. Ports
// are picked free but only bound later by the program, so on a busy machine
// another process can take one first: a program that died for that is
// started again on a new port.
func (e *Environment) startComponent(ctx context.Context, m *Member, c string) error {
	for attempt := 1; ; attempt++ {
		if err := e.startProcess(m, c); err != nil {
			return err
		}
		url := m.healthURL(c)
		if url == "" {
			return nil
		}
		proc := m.Processes[c]
		serving := m.servingLine(c)
		err := localprocess.WaitFor(ctx, 60*time.Second, m.Spec.Name+" "+c+" /healthz", proc, func() error {
			if err := httpprobe.GetOK(ctx, url); err != nil {
				return err
			}
			// The answer may come from another program holding the port.
			if !strings.Contains(proc.LastRunLog(), serving) {
				return fmt.Errorf("no %q in its log yet", serving)
			}
			return nil
		})
		if err == nil || attempt == portRetries || proc.Alive() || !strings.Contains(proc.LastRunLog(), "address already in use") {
			return err
		}
		port, err := freeport.Pick("127.0.0.1")
		if err != nil {
			return err
		}
		e.mu.Lock()
		m.Ports[c] = port
		e.mu.Unlock()
	}
}

// servingLine is what a member program logs once it listens on its port.
func (m *Member) servingLine(c string) string {
	switch c {
	case Kwok:
		return fmt.Sprintf(`"address":"127.0.0.1:%d"`, m.Ports[c])
	case LoadBalancer:
		return podPortsServingLine(fmt.Sprintf("127.0.0.1:%d", m.Ports[c]))
	}
	return fmt.Sprintf("Serving securely on 127.0.0.1:%d", m.Ports[c])
}

// healthURL is where a member program answers /healthz; "" for programs
// without one.
func (m *Member) healthURL(c string) string {
	switch c {
	case KubeControllerManager, KubeScheduler:
		return fmt.Sprintf("https://127.0.0.1:%d/healthz", m.Ports[c])
	case Kwok, LoadBalancer:
		return fmt.Sprintf("http://127.0.0.1:%d/healthz", m.Ports[c])
	default:
		return ""
	}
}

// StartAPIServer starts the named member's kube-apiserver and waits for /readyz.
func (e *Environment) StartAPIServer(ctx context.Context, name string) error {
	m := e.Member(name)
	if m == nil {
		return fmt.Errorf("memberenv: no cluster named %q", name)
	}
	if err := e.startProcess(m, KubeAPIServer); err != nil {
		return err
	}
	client, err := e.Client(name)
	if err != nil {
		return err
	}
	return localprocess.WaitFor(ctx, 90*time.Second, name+" kube-apiserver /readyz", m.Processes[KubeAPIServer], func() error {
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}

// StopAPIServer stops the named member's kube-apiserver only: the member
// becomes unreachable while its other programs keep running.
func (e *Environment) StopAPIServer(name string) error {
	m := e.Member(name)
	if m == nil {
		return fmt.Errorf("memberenv: no cluster named %q", name)
	}
	return e.stopProcesses(m, KubeAPIServer)
}

// StopMember stops every program of the named member; its data stays in etcd.
func (e *Environment) StopMember(name string) error {
	m := e.Member(name)
	if m == nil {
		return fmt.Errorf("memberenv: no cluster named %q", name)
	}
	return e.stopProcesses(m, memberComponents...)
}

// StartMember starts every program of a stopped member again, on the same
// ports and data, and waits until it can run pods.
func (e *Environment) StartMember(ctx context.Context, name string) error {
	m := e.Member(name)
	if m == nil {
		return fmt.Errorf("memberenv: no cluster named %q", name)
	}
	return e.startMember(ctx, m)
}

// startProcess starts one program of m unless it already runs.
func (e *Environment) startProcess(m *Member, component string) error {
	if m.Processes[component].Alive() {
		return nil
	}
	// Written at each start: a run folder of an earlier version has none.
	switch component {
	case KubeAPIServer:
		if err := m.writeAuditPolicy(); err != nil {
			return err
		}
	case Kwok:
		if err := m.writeKwokConfig(); err != nil {
			return err
		}
	}
	p := &localprocess.Process{
		Name: m.Spec.Name + "/" + component,
		Path: e.programPath(component),
		Args: e.args(m, component),
		Log:  filepath.Join(e.Dir, "logs", m.Spec.Name+"-"+component+".log"),
	}
	if err := p.Start(e.Detached); err != nil {
		return err
	}
	e.mu.Lock()
	m.Processes[component] = p
	e.mu.Unlock()
	return e.save()
}

// stopProcesses stops the given programs of m, in reverse start order.
func (e *Environment) stopProcesses(m *Member, components ...string) error {
	var errs []error
	for i := len(components) - 1; i >= 0; i-- {
		if p := m.Processes[components[i]]; p != nil {
			errs = append(errs, p.Stop(10*time.Second))
		}
	}
	errs = append(errs, e.save())
	return errors.Join(errs...)
}

func (e *Environment) programPath(component string) string {
	switch component {
	case KubeAPIServer:
		return e.Binaries.KubeAPIServer
	case KubeControllerManager:
		return e.Binaries.KubeControllerManager
	case KubeScheduler:
		return e.Binaries.KubeScheduler
	case Kwok:
		return e.Binaries.Kwok
	default:
		return e.Binaries.MemberEnv
	}
}
