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
}

// programs of a local plane, in start order. The controller manager and the
// DNS server join this list as they are built.
var programs = []program{
	{name: APIServer, args: apiserverArgs},
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
	return args
}
