package memberenv

import (
	"fmt"
	"strconv"
)

// args returns the command line of one program of m. Every program names a
// path in the run folder, which is how Leftovers recognises strays.
func (e *Environment) args(m *Member, component string) []string {
	switch component {
	case KubeAPIServer:
		var runtimeConfig []string
		if m.Spec.RuntimeConfig != "" {
			runtimeConfig = []string{"--runtime-config=" + m.Spec.RuntimeConfig}
		}
		return append(append(runtimeConfig, m.auditFlags()...),
			"--etcd-servers="+e.EtcdURL,
			"--etcd-prefix=/"+m.Spec.Name,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port="+strconv.Itoa(m.Ports[KubeAPIServer]),
			"--tls-cert-file="+m.path("apiserver.crt"),
			"--tls-private-key-file="+m.path("apiserver.key"),
			"--client-ca-file="+e.PKI.CACert,
			"--token-auth-file="+m.path("tokens.csv"),
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file="+e.PKI.ServiceAccountKey,
			"--service-account-signing-key-file="+e.PKI.ServiceAccountKey,
			"--service-cluster-ip-range=10.96.0.0/16",
			"--allow-privileged=true",
			// Logs, exec, attach and port-forward go to kwok's kubelet
			// server on loopback (nodeStatus), which shows a certificate
			// of the environment's CA.
			"--kubelet-preferred-address-types="+string(kubeletAddressType),
			"--kubelet-certificate-authority="+e.PKI.CACert,
			// /debug/pprof/ for admins: the propagation benchmark profiles a
			// member with it (costs nothing until asked).
			"--profiling=true",
		)
	case KubeControllerManager:
		if m.Spec.APIOnly {
			return append(e.componentServing(m, component),
				"--controllers=serviceaccount-token",
				"--service-account-private-key-file="+e.PKI.ServiceAccountKey,
				"--root-ca-file="+e.PKI.CACert,
				"--cluster-name="+m.Spec.Name,
			)
		}
		return append(e.componentServing(m, component),
			"--cert-dir="+m.path("controller-manager-certs"),
			// nodeipam needs real pod networks; the node lifecycle controller,
			// which lifts the not-ready taint, must stay on.
			"--controllers=*,-nodeipam",
			"--use-service-account-credentials=true",
			"--service-account-private-key-file="+e.PKI.ServiceAccountKey,
			"--root-ca-file="+e.PKI.CACert,
			"--cluster-name="+m.Spec.Name,
			// A quota created just after an object it counts can miss it
			// (creations are charged by admission, which needs the quota's
			// first count) until the next full recount: 5 min by default,
			// longer than any test waits for a member's usage.
			"--resource-quota-sync-period=10s",
		)
	case KubeScheduler:
		return append(e.componentServing(m, component), "--cert-dir="+m.path("scheduler-certs"))
	case Kwok:
		return []string{
			"--kubeconfig=" + m.kubeconfig(Kwok),
			"--config=" + e.Binaries.KwokStages,
			"--config=" + m.path("kwok.yaml"),
			"--manage-all-nodes=true",
			"--cidr=" + m.PodCIDR,
			"--node-ip=" + m.nodeIP(),
			// Plain HTTP (/healthz) and HTTPS on one port.
			"--server-address=" + fmt.Sprintf("127.0.0.1:%d", m.Ports[Kwok]),
			"--tls-cert-file=" + m.path("kwok.crt"),
			"--tls-private-key-file=" + m.path("kwok.key"),
		}
	default: // LoadBalancer
		return []string{"lbsim",
			"--kubeconfig=" + m.kubeconfig(LoadBalancer),
			"--pool=" + m.LoadBalancerPool,
			"--cluster=" + m.Spec.Name,
			"--pod-ports-address=" + fmt.Sprintf("127.0.0.1:%d", m.Ports[LoadBalancer]),
		}
	}
}

// componentServing are the flags kube-controller-manager and kube-scheduler share.
func (e *Environment) componentServing(m *Member, component string) []string {
	kubeconfig := m.kubeconfig(component)
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(m.Ports[component]),
		// One instance per member: no need to wait for a lease.
		"--leader-elect=false",
	}
}
