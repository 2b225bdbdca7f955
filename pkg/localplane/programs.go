package localplane

import (
	"os/exec"
	"strconv"
)

var execLookPath = exec.LookPath

// program is one process of the plane and how its command line is made.
type program struct {
	name string
	args func(p *Plane) []string
	// runs says whether this plane runs the program; nil means always.
	runs func(p *Plane) bool
}

// programs of a local plane, in start order.
var programs = []program{
	{name: APIServer, args: apiserverArgs},
	{name: ControllerManager, args: controllerManagerArgs},
	{name: DNSServerProgram, args: dnsArgs, runs: func(p *Plane) bool { return p.DNS != nil }},
}

// programsOf lists the programs p runs.
func programsOf(p *Plane) []program {
	var out []program
	for _, prog := range programs {
		if prog.runs == nil || prog.runs(p) {
			out = append(out, prog)
		}
	}
	return out
}

func controllerManagerArgs(p *Plane) []string {
	args := []string{
		"--kubeconfig=" + p.path(ControllerManagerKubeconfig),
		"--federation-name=" + p.Name,
	}
	args = append(args, controllerManagerServingArgs(p)...)
	if config := p.providerConfig(); config != "" {
		args = append(args, "--dns-provider=coredns", "--dns-provider-config="+config, "--dns-zone-name="+p.DNSZone)
	}
	return args
}

func apiserverArgs(p *Plane) []string {
	args := []string{
		"--bind-address=" + bindAddress(p.Options),
		"--secure-port=" + strconv.Itoa(p.Port),
		"--tls-cert-file=" + p.path(servingCert),
		"--tls-private-key-file=" + p.path(servingKey),
		"--client-ca-file=" + p.path(caCert),
		"--data-dir=" + p.path("data"),
	}
	if servers := joinNonEmpty(p.EtcdServers); servers != "" {
		args = append(args, "--etcd-servers="+servers)
	}
	if p.DNS != nil && p.DNS.EmbeddedEtcdPort != 0 {
		args = append(args, "--embedded-etcd-client-port="+strconv.Itoa(p.DNS.EmbeddedEtcdPort))
		args = append(args, etcdClientTLSArgs(p)...)
	}
	return append(args, dataAtRestArgs(p)...)
}

// dataAtRestArgs encrypt Secrets in etcd and write the audit log, when the
// plane has the files for it.
func dataAtRestArgs(p *Plane) []string {
	var args []string
	if p.EncryptionConfig != "" {
		args = append(args, "--encryption-provider-config="+p.path(p.EncryptionConfig))
	}
	if p.AuditPolicy != "" {
		args = append(args,
			"--audit-policy-file="+p.path(p.AuditPolicy),
			"--audit-log-path="+p.path(auditLogFile),
			"--audit-log-maxbackup="+strconv.Itoa(auditLogMaxBackups))
	}
	return args
}
