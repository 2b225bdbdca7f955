package processplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/federation-v1/federation/pkg/freeport"
	"github.com/federation-v1/federation/pkg/httpprobe"
	"github.com/federation-v1/federation/pkg/poll"
)

// The high-availability topology (kubefed init --ha): any one process may
// be lost and the federation still serves. Its etcd cluster of three
// members keeps a quorum with one down (unless --etcd-servers names an
// etcd of someone else's); two apiservers share one port on the bind
// address (SO_REUSEPORT: the kernel spreads new connections over those
// listening), so the kubeconfig's one address stays good while either
// runs; two controller managers elect a leader through a Lease, and the
// standby takes over when the leader is gone.
const (
	haEtcdMembers        = 3
	haAPIServers         = 2
	haControllerManagers = 2
)

// planHA picks the ports of an HA plane's controller managers and etcd
// members; the apiservers share the plane's port.
func (p *Plane) planHA() error {
	p.ControllerManagerAddresses = nil
	for range haControllerManagers {
		port, err := freeport.Pick("127.0.0.1")
		if err != nil {
			return err
		}
		p.ControllerManagerAddresses = append(p.ControllerManagerAddresses, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	p.ControllerManagerAddress = p.ControllerManagerAddresses[0]
	if len(p.EtcdServers) > 0 {
		return nil
	}
	return p.planEtcdMembers()
}

// haInstances are an HA plane's etcd members, apiservers and controller
// managers, in start order.
func haInstances(p *Plane) []instance {
	var out []instance
	for _, m := range p.EtcdMembers {
		out = append(out, instance{name: m.Name, program: EtcdProgram, args: etcdArgs(p, m)})
	}
	for i := range haAPIServers {
		out = append(out, instance{name: instanceName(APIServer, i), program: APIServer, args: haAPIServerArgs(p, i)})
	}
	for i, address := range p.ControllerManagerAddresses {
		out = append(out, instance{name: instanceName(ControllerManager, i), program: ControllerManager, args: controllerManagerArgs(p, address)})
	}
	return out
}

// haAPIServerArgs run the index-th apiserver of an HA plane. Whatever one
// apiserver must agree on with the other is the same file for both: the
// serving certificate and client CA (a client sees one server), the
// encryption key (each reads the Secrets the other sealed), the
// service-account signing key (each verifies the tokens the other signed)
// and the audit
// policy; the federation's identity and service addresses live in etcd.
// Only the audit log is each one's own, since two writers of one file
// would interleave and rotate it under each other. Nothing of the embedded
// etcd applies (--data-dir, --embedded-etcd-*): they store in the cluster.
func haAPIServerArgs(p *Plane, index int) []string {
	args := []string{
		"--bind-address=" + bindAddress(p.Options),
		"--secure-port=" + strconv.Itoa(p.Port),
		"--permit-port-sharing",
		"--tls-cert-file=" + p.path(servingCert),
		"--tls-private-key-file=" + p.path(servingKey),
		"--client-ca-file=" + p.path(caCert),
		"--agent-client-ca-file=" + p.path(agentsCACert),
		"--service-account-signing-key-file=" + p.path(serviceAccountKey),
	}
	if servers := joinNonEmpty(p.EtcdServers); servers != "" {
		args = append(args, "--etcd-servers="+servers)
	} else {
		args = append(args, etcdClientArgs(p)...)
	}
	return append(args, dataAtRestArgs(p, haAuditLogFile(index))...)
}

// haAuditLogFile is the index-th apiserver's audit log.
func haAuditLogFile(index int) string {
	return strings.TrimSuffix(auditLogFile, ".log") + "-" + strconv.Itoa(index) + ".log"
}

// apiserverStreak is how many GET /readyz in a row, each on a new
// connection, must succeed before the apiservers sharing the plane's port
// count as ready. Which of them a connection reaches is the kernel's
// choice (a hash of the client's address and port), not ours; once each
// listens, a new connection reaches one that is not ready yet with
// probability 1/2, so this many successes leave it unnoticed with
// probability 2^-16. The apiserver opens its listener before it serves,
// so a connection to one that listens but does not serve yet waits, and
// counts as a failure when the probe's timeout ends it.
const apiserverStreak = 16

// waitAPIServersReady waits until the apiserver instances names are alive
// and listen on the plane's port, then until apiserverStreak /readyz in a
// row succeed: only then does every connection to the port reach a ready
// apiserver.
func (p *Plane) waitAPIServersReady(ctx context.Context, names []string, tick func()) error {
	client, err := p.freshConnectionClient()
	if err != nil {
		return err
	}
	what := "federation apiservers " + strings.Join(names, ", ") + " listening on port " + strconv.Itoa(p.Port) +
		" and " + strconv.Itoa(apiserverStreak) + " /readyz in a row answered"
	err = poll.Until(ctx, readyTimeout, what, func(ctx context.Context) error {
		call(tick)
		for _, name := range names {
			proc := p.Processes[name]
			if !proc.Alive() {
				return poll.Abort(fmt.Errorf("%s exited; end of %s:\n%s", name, p.path("logs", name+".log"), proc.LogTail(20)))
			}
			listens, err := listensOn(proc.Pid, p.Port)
			if err != nil {
				return err
			}
			if !listens {
				return fmt.Errorf("%s does not listen on port %d yet", name, p.Port)
			}
		}
		for i := range apiserverStreak {
			if err := httpprobe.GetOKWith(ctx, client, p.Server+"/readyz", ""); err != nil {
				return fmt.Errorf("after %d /readyz answered: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		for _, name := range names {
			err = fmt.Errorf("%w; end of %s:\n%s", err, p.path("logs", name+".log"), p.Processes[name].LogTail(10))
		}
	}
	return err
}

// freshConnectionClient verifies the apiservers with the plane's CA and
// opens a new connection for every request (no keep-alive), so that each
// request may reach another of the apiservers sharing the port.
func (p *Plane) freshConnectionClient() (*http.Client, error) {
	roots, err := p.certPool(caCert)
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}, DisableKeepAlives: true},
		Timeout:   2 * time.Second,
	}, nil
}
