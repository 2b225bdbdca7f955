package hostplane

import (
	"net"
	"strconv"
)

// Layout is where the chart puts the plane's parts, read from the values
// it is rendered with: the names of the Services, and how the components
// reach each other (Service DNS names, or internalHost).
type Layout struct {
	// Name is the federation's (the release's).
	Name      string
	Namespace string
	values    map[string]any
}

// NewLayout reads the layout of release name in namespace from values.
func NewLayout(name, namespace string, values map[string]any) Layout {
	return Layout{Name: name, Namespace: namespace, values: values}
}

// Fullname prefixes every object's name: the release name, as the chart's
// fullname helper has it, unless fullnameOverride.
func (l Layout) Fullname() string {
	if s := stringAt(l.values, "fullnameOverride"); s != "" {
		return s
	}
	return l.Name
}

// APIServerService and the others name the chart's Services.
func (l Layout) APIServerService() string         { return l.Fullname() + "-apiserver" }
func (l Layout) ControllerManagerService() string { return l.Fullname() + "-controller-manager" }
func (l Layout) DNSService() string               { return l.Fullname() + "-dns" }
func (l Layout) EtcdService() string              { return l.Fullname() + "-etcd" }

// internalHost, when set, replaces every in-cluster Service name (pods on
// the host's network, as in the podman e2e).
func (l Layout) internalHost() string { return stringAt(l.values, "internalHost") }

// ServiceHosts are the names of Service svc inside the cluster, and
// internalHost: what a serving certificate of it must hold.
func (l Layout) ServiceHosts(svc string) []string {
	hosts := []string{svc, svc + "." + l.Namespace, svc + "." + l.Namespace + ".svc", svc + "." + l.Namespace + ".svc.cluster.local"}
	if h := l.internalHost(); h != "" {
		hosts = append(hosts, h)
	}
	return hosts
}

// APIServerHosts are the hosts of the apiserver's serving certificate: its
// Service's names, its advertise address and the extra SANs (where the
// external address is put).
func (l Layout) APIServerHosts() []string {
	hosts := l.ServiceHosts(l.APIServerService())
	if a := stringAt(l.values, "apiserver", "advertiseAddress"); a != "" {
		hosts = appendNew(hosts, a)
	}
	for _, h := range stringsAt(l.values, "apiserver", "extraSANs") {
		hosts = appendNew(hosts, h)
	}
	return hosts
}

// EtcdHosts are the hosts of etcd's certificate: its Services' names
// (the members' headless one and -client) and its members'
// (pod-N.SERVICE.NS.svc).
func (l Layout) EtcdHosts() []string {
	svc := l.EtcdService()
	return append(append(l.ServiceHosts(svc), l.ServiceHosts(svc+"-client")...),
		"*."+svc+"."+l.Namespace+".svc", "*."+svc+"."+l.Namespace+".svc.cluster.local")
}

// InternalAPIServerURL is how the controller manager reaches the
// apiserver: its Service, or internalHost on the container port.
func (l Layout) InternalAPIServerURL() string {
	if h := l.internalHost(); h != "" {
		return "https://" + net.JoinHostPort(h, strconv.Itoa(intAt(l.values, 8443, "apiserver", "securePort")))
	}
	return "https://" + net.JoinHostPort(l.APIServerService()+"."+l.Namespace+".svc", strconv.Itoa(intAt(l.values, 443, "apiserver", "service", "port")))
}
