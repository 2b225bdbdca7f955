package memberenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/localprocess"
)

// stateFile is the name of the state file in the run folder.
const stateFile = "state.json"

// Environment is a running set of member clusters. Start creates one, Load
// reads one another process started.
type Environment struct {
	Dir        string                `json:"dir"`
	Detached   bool                  `json:"detached"`
	Kubeconfig string                `json:"kubeconfig"`
	Binaries   *Binaries             `json:"binaries"`
	PKI        keyMaterial           `json:"pki"`
	EtcdURL    string                `json:"etcdURL"`
	Etcd       *localprocess.Process `json:"etcd"`
	Members    []*Member             `json:"members"`
	mu         sync.Mutex            // guards saving the state while members change it
	logf       func(string, ...any)
}

// startingAtOnce bounds the members starting together: a kube-apiserver
// takes seconds of CPU to start, and 50 at once on two cores would miss
// their readiness deadlines.
const startingAtOnce = 6

// Start builds any missing binary, then starts etcd and every member in
// parallel (startingAtOnce at a time), and returns once each member's nodes
// are Ready and its default service account exists, so pods can be created
// at once (an API-only member: once it serves). On error everything already
// started is stopped.
func Start(ctx context.Context, opts Options) (_ *Environment, err error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if old, err := Load(dir); err == nil && old.running() {
		return nil, fmt.Errorf("an environment already runs in %s: stop it first (make down)", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	bins, err := EnsureBinaries(ctx, root, opts.Logf)
	if err != nil {
		return nil, err
	}
	e := &Environment{Dir: dir, Detached: opts.Detached, Binaries: bins, logf: opts.logf,
		Kubeconfig: filepath.Join(dir, "kubeconfig")}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()
	if e.PKI, err = createKeyMaterial(dir); err != nil {
		return nil, err
	}
	if err := e.startEtcd(ctx); err != nil {
		return nil, err
	}
	for i, spec := range opts.Clusters {
		m, err := e.newMember(i+1, spec)
		if err != nil {
			return nil, err
		}
		e.Members = append(e.Members, m)
	}
	if err := e.writeKubeconfig(); err != nil {
		return nil, err
	}
	errs := make([]error, len(e.Members))
	var wg sync.WaitGroup
	starting := make(chan struct{}, startingAtOnce)
	for i, m := range e.Members {
		wg.Go(func() {
			starting <- struct{}{}
			defer func() { <-starting }()
			errs[i] = e.startMember(ctx, m)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return e, e.save()
}

// Load reads the state of an environment from its run folder.
func Load(dir string) (*Environment, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	e := &Environment{}
	if err := json.Unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, stateFile), err)
	}
	return e, nil
}

// Stop stops every process of the environment, members first, and then any
// straggler that names the run folder. Logs and data stay in the folder.
func (e *Environment) Stop() error {
	var errs []error
	for _, m := range e.Members {
		errs = append(errs, e.stopProcesses(m, memberComponents...))
	}
	if e.Etcd != nil {
		errs = append(errs, e.Etcd.Stop(10*time.Second))
	}
	for _, straggler := range Leftovers(e.Dir) {
		errs = append(errs, straggler.Stop(5*time.Second))
	}
	errs = append(errs, e.save())
	return errors.Join(errs...)
}

// running reports whether any process of the environment is alive.
func (e *Environment) running() bool {
	if e.Etcd.Alive() {
		return true
	}
	for _, m := range e.Members {
		for _, p := range m.Processes {
			if p.Alive() {
				return true
			}
		}
	}
	return false
}

// Member returns the member named name, or nil.
func (e *Environment) Member(name string) *Member {
	for _, m := range e.Members {
		if m.Spec.Name == name {
			return m
		}
	}
	return nil
}

// RESTConfig returns an admin client configuration for the named member.
func (e *Environment) RESTConfig(name string) (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: e.Kubeconfig},
		&clientcmd.ConfigOverrides{CurrentContext: name}).ClientConfig()
}

// Client returns an admin clientset for the named member.
func (e *Environment) Client(name string) (kubernetes.Interface, error) {
	cfg, err := e.RESTConfig(name)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

func (e *Environment) startEtcd(ctx context.Context) error {
	clientPort, err := freeport.Pick("127.0.0.1")
	if err != nil {
		return err
	}
	peerPort, err := freeport.Pick("127.0.0.1")
	if err != nil {
		return err
	}
	e.EtcdURL = fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	e.Etcd = &localprocess.Process{
		Name: "etcd",
		Path: e.Binaries.Etcd,
		Log:  filepath.Join(e.Dir, "logs", "etcd.log"),
		Args: []string{
			"--name=memberenv",
			"--data-dir=" + filepath.Join(e.Dir, "etcd"),
			"--listen-client-urls=" + e.EtcdURL,
			"--advertise-client-urls=" + e.EtcdURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=memberenv=" + peerURL,
			// A test environment: durability is not worth the fsync latency.
			"--unsafe-no-fsync",
			"--log-level=warn",
		},
	}
	if err := e.Etcd.Start(e.Detached); err != nil {
		return err
	}
	return localprocess.WaitFor(ctx, 30*time.Second, "etcd to answer /health", e.Etcd, func() error {
		return httpprobe.GetOK(ctx, e.EtcdURL+"/health")
	})
}

// save writes the state file; every change of process is saved so that
// make down finds what runs.
func (e *Environment) save() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(e.Dir, stateFile+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(e.Dir, stateFile))
}

// writeKubeconfig writes the environment's kubeconfig: one admin context per
// member, named after it.
func (e *Environment) writeKubeconfig() error {
	caPEM, err := os.ReadFile(e.PKI.CACert)
	if err != nil {
		return err
	}
	entries := make([]contextEntry, 0, len(e.Members))
	for _, m := range e.Members {
		entries = append(entries, contextEntry{Name: m.Spec.Name, Server: m.Server, Token: m.Tokens["admin"]})
	}
	return writeKubeconfig(e.Kubeconfig, caPEM, entries...)
}
