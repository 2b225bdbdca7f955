package processplane

import (
	"os/exec"
	"strconv"
)

var execLookPath = exec.LookPath

// instance is one process of the plane: a program, and the name and
// command line of this copy of it.
type instance struct {
	// name keys Plane.Processes and names the log: the program's name in
	// a single plane, NAME-INDEX in an HA plane.
	name string
	// program is the binary, found with FindBinary.
	program string
	args    []string
}

// instancesOf lists the processes p runs, in start order: etcd, the
// apiservers, the controller managers, the DNS server, the local agents.
func instancesOf(p *Plane) []instance {
	var out []instance
	if p.HA {
		out = haInstances(p)
	} else {
		out = []instance{
			{name: APIServer, program: APIServer, args: apiserverArgs(p)},
			{name: ControllerManager, program: ControllerManager, args: controllerManagerArgs(p, p.ControllerManagerAddress)},
		}
	}
	if p.DNS != nil {
		out = append(out, instance{name: DNSServerProgram, program: DNSServerProgram, args: dnsArgs(p)})
	}
	return append(out, agentInstances(p)...)
}

// instanceName is the name of the index-th instance of program in an HA
// plane.
func instanceName(program string, index int) string {
	return program + "-" + strconv.Itoa(index)
}

func controllerManagerArgs(p *Plane, address string) []string {
	args := []string{
		"--kubeconfig=" + p.path(ControllerManagerKubeconfig),
		"--federation-name=" + p.Name,
		"--agent-signing-cert-file=" + p.path(agentsCACert),
		"--agent-signing-key-file=" + p.path(agentsCAKey),
	}
	args = append(args, controllerManagerServingArgs(p, address)...)
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
		"--agent-client-ca-file=" + p.path(agentsCACert),
		"--service-account-signing-key-file=" + p.path(serviceAccountKey),
		"--data-dir=" + p.path("data"),
		"--federation-name=" + p.Name,
	}
	if servers := joinNonEmpty(p.EtcdServers); servers != "" {
		args = append(args, "--etcd-servers="+servers)
	}
	if p.DNS != nil && p.DNS.EmbeddedEtcdPort != 0 {
		args = append(args, "--embedded-etcd-client-port="+strconv.Itoa(p.DNS.EmbeddedEtcdPort))
		args = append(args, etcdClientTLSArgs(p)...)
	}
	return append(args, dataAtRestArgs(p, auditLogFile)...)
}

// dataAtRestArgs encrypt Secrets in etcd and write the audit log to
// auditLog, when the plane has the files for it.
func dataAtRestArgs(p *Plane, auditLog string) []string {
	var args []string
	if p.EncryptionConfig != "" {
		args = append(args, "--encryption-provider-config="+p.path(p.EncryptionConfig))
	}
	if p.AuditPolicy != "" {
		args = append(args,
			"--audit-policy-file="+p.path(p.AuditPolicy),
			"--audit-log-path="+p.path(auditLog),
			"--audit-log-maxbackup="+strconv.Itoa(auditLogMaxBackups))
	}
	return args
}
