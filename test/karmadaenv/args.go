package karmadaenv

import (
	"fmt"
	"strconv"
)

// addr is 127.0.0.1:port.
func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// args returns a program's command line: the flags Karmada's manifests
// (artifacts/deploy) give it, pointed at loopback and the plane's files.
// Verbosity and feature gates stay at the programs' defaults (the manifests'
// --v=4 and AllAlpha/AllBeta are a developer's setup, not a release's).
func (p *Plane) args(program string) []string {
	switch program {
	case Etcd:
		peer := "http://" + addr(p.Ports["etcd-peer"])
		// Durable like the federation apiserver's embedded etcd, which
		// syncs its writes: no --unsafe-no-fsync here.
		return []string{
			"--name=karmada",
			"--data-dir=" + p.path("etcd"),
			"--listen-client-urls=" + p.EtcdURL,
			"--advertise-client-urls=" + p.EtcdURL,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=karmada=" + peer,
			"--log-level=warn",
		}
	case KubeAPIServer:
		return []string{
			"--etcd-servers=" + p.EtcdURL,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(p.Ports[KubeAPIServer]),
			"--tls-cert-file=" + p.path(apiserverCert),
			"--tls-private-key-file=" + p.path(apiserverKey),
			"--client-ca-file=" + p.path(caCert),
			"--allow-privileged=true",
			"--authorization-mode=Node,RBAC",
			"--enable-bootstrap-token-auth=true",
			"--disable-admission-plugins=StorageObjectInUseProtection,ServiceAccount",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + p.path(serviceAccountKey),
			"--service-account-signing-key-file=" + p.path(serviceAccountKey),
			"--service-cluster-ip-range=10.96.0.0/12",
			// The aggregation layer, for karmada-aggregated-apiserver.
			"--proxy-client-cert-file=" + p.path(frontProxyCert),
			"--proxy-client-key-file=" + p.path(frontProxyKey),
			"--requestheader-client-ca-file=" + p.path(frontProxyCACert),
			"--requestheader-allowed-names=" + frontProxyUserName,
			"--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--requestheader-group-headers=X-Remote-Group",
			"--requestheader-username-headers=X-Remote-User",
			"--profiling=true",
		}
	case KubeControllerManager:
		kc := p.kubeconfig(KubeControllerManager)
		return []string{
			"--kubeconfig=" + kc,
			"--authentication-kubeconfig=" + kc,
			"--authorization-kubeconfig=" + kc,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(p.Ports[KubeControllerManager]),
			"--cert-dir=" + p.path("kube-controller-manager-certs"),
			"--cluster-name=karmada",
			"--cluster-signing-cert-file=" + p.path(caCert),
			"--cluster-signing-key-file=" + p.path(caKey),
			"--controllers=namespace,garbagecollector,serviceaccount-token,ttl-after-finished,bootstrapsigner,tokencleaner,csrcleaner,csrsigning,clusterrole-aggregation",
			"--root-ca-file=" + p.path(caCert),
			"--service-account-private-key-file=" + p.path(serviceAccountKey),
			"--use-service-account-credentials=true",
			"--leader-elect=false",
		}
	case AggregatedAPIServer:
		kc := p.kubeconfig(AggregatedAPIServer)
		return []string{
			"--kubeconfig=" + kc,
			"--authentication-kubeconfig=" + kc,
			"--authorization-kubeconfig=" + kc,
			"--etcd-servers=" + p.EtcdURL,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(p.Ports[AggregatedAPIServer]),
			"--tls-cert-file=" + p.path(aggregatedCert),
			"--tls-private-key-file=" + p.path(aggregatedKey),
			"--cert-dir=" + p.path("aggregated-apiserver-certs"),
		}
	case Webhook:
		return []string{
			"--kubeconfig=" + p.kubeconfig(Webhook),
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(p.Ports[Webhook]),
			"--cert-dir=" + p.path(webhookCertDir),
			"--metrics-bind-address=" + addr(p.Ports[Webhook+"-metrics"]),
			"--health-probe-bind-address=" + addr(p.Ports[Webhook+"-health"]),
		}
	case ControllerManager:
		return []string{
			"--kubeconfig=" + p.kubeconfig(ControllerManager),
			"--cluster-status-update-frequency=10s",
			"--metrics-bind-address=" + addr(p.Ports[ControllerManager+"-metrics"]),
			"--health-probe-bind-address=" + addr(p.Ports[ControllerManager+"-health"]),
			// For the benchmark's profiles; costs nothing until asked.
			"--enable-pprof",
			"--profiling-bind-address=" + addr(p.Ports[ControllerManager+"-pprof"]),
		}
	case Scheduler:
		return []string{
			"--kubeconfig=" + p.kubeconfig(Scheduler),
			"--metrics-bind-address=" + addr(p.Ports[Scheduler+"-metrics"]),
			"--health-probe-bind-address=" + addr(p.Ports[Scheduler+"-health"]),
			"--enable-pprof",
			"--profiling-bind-address=" + addr(p.Ports[Scheduler+"-pprof"]),
		}
	}
	panic(fmt.Sprintf("karmadaenv: no program %q", program))
}

// portNames are the ports the plane's programs listen on.
var portNames = []string{"etcd", "etcd-peer", KubeAPIServer, KubeControllerManager, AggregatedAPIServer,
	Webhook, Webhook + "-metrics", Webhook + "-health",
	ControllerManager + "-metrics", ControllerManager + "-health", ControllerManager + "-pprof",
	Scheduler + "-metrics", Scheduler + "-health", Scheduler + "-pprof"}

// ProfileURL is where a Karmada program (ControllerManager, Scheduler)
// serves /debug/pprof/, over plain HTTP on loopback.
func (p *Plane) ProfileURL(program string) string {
	return "http://" + addr(p.Ports[program+"-pprof"]) + "/debug/pprof/"
}
