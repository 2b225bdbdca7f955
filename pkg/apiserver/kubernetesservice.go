package apiserver

import (
	"context"
	"fmt"
	"maps"
	"net"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	servicestore "github.com/federation-v1/federation/pkg/registry/core/service/storage"
)

// kubernetesServiceName is the Service, in namespace default, through which
// a cluster's clients find its API server; the federation serves its own.
const kubernetesServiceName = "kubernetes"

// kubernetesServiceInterval is how often default/kubernetes is put back as
// it should be, as kube-apiserver's own reconciler (one read from the watch
// cache each time).
const kubernetesServiceInterval = 10 * time.Second

// addServiceIPRepairHook adds the post-start hook of Kubernetes' repair
// loop of the cluster-IP allocations (the server is not ready before it
// first ran, as no Service could be given an address).
//
// It runs in every apiserver, as it does in every kube-apiserver replica,
// and is not elected: it is written to run in each. Every change of the
// allocation map it makes is a compare-and-swap on the map's
// resourceVersion in etcd (a conflict retries on a fresh read), it frees
// an address only after it saw it unused in several runs in a row (an
// address another apiserver just allocated is not freed), and each
// apiserver's readiness waits for its own first run, which an election
// would hold up for a standby.
func addServiceIPRepairHook(generic *genericapiserver.GenericAPIServer, ips *servicestore.ClusterIPAllocator) error {
	err := generic.AddPostStartHook("start-service-ip-repair", func(ctx genericapiserver.PostStartHookContext) error {
		client, err := kubernetes.NewForConfig(ctx.LoopbackClientConfig)
		if err != nil {
			return err
		}
		repaired := make(chan struct{})
		go ips.RunRepair(ctx, client.CoreV1(), client.EventsV1(), func() { close(repaired) })
		select {
		case <-repaired:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("the service IP allocations were not repaired before the server stopped")
		}
	})
	if err != nil {
		return fmt.Errorf("adding the service IP repair post-start hook: %w", err)
	}
	return nil
}

// keepKubernetesService puts default/kubernetes back as want every
// kubernetesServiceInterval until ctx ends. Only the apiserver leading the
// apiservers' controllers runs it (electedControllers): want holds this
// server's port, and apiservers on different ports would each write theirs.
func keepKubernetesService(ctx context.Context, client kubernetes.Interface, want *corev1.Service) {
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		// Every second at start-up, when "default" may not exist yet.
		_ = wait.PollUntilContextTimeout(ctx, time.Second, kubernetesServiceInterval, true, func(ctx context.Context) (bool, error) {
			return ensureKubernetesService(ctx, client, want) == nil, nil
		})
	}, kubernetesServiceInterval)
}

// servingPort is the port the server serves HTTPS on (443 without one).
func servingPort(serving *genericapiserver.SecureServingInfo) int {
	if serving != nil && serving.Listener != nil {
		if addr, ok := serving.Listener.Addr().(*net.TCPAddr); ok {
			return addr.Port
		}
	}
	return 443
}

// kubernetesService is default/kubernetes as a cluster has it: the first
// address of the service range, port 443 named https on to the server's
// port, no selector. It is local: copies would replace the members' own
// (and the propagation controller never writes one anyway).
func kubernetesService(cidr net.IPNet, targetPort int) (*corev1.Service, error) {
	ip, err := netutils.GetIndexedIP(&cidr, 1)
	if err != nil {
		return nil, fmt.Errorf("the first address of the service range %s: %w", cidr.String(), err)
	}
	family := corev1.IPv4Protocol
	if netutils.IsIPv6(ip) {
		family = corev1.IPv6Protocol
	}
	single := corev1.IPFamilyPolicySingleStack
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Name:      kubernetesServiceName,
			Namespace: metav1.NamespaceDefault,
			Labels: map[string]string{
				"component":                  "apiserver",
				"provider":                   "kubernetes",
				federationv1beta1.LocalLabel: "true",
			},
		},
		Spec: corev1.ServiceSpec{
			Type:            corev1.ServiceTypeClusterIP,
			ClusterIP:       ip.String(),
			ClusterIPs:      []string{ip.String()},
			IPFamilies:      []corev1.IPFamily{family},
			IPFamilyPolicy:  &single,
			SessionAffinity: corev1.ServiceAffinityNone,
			Ports: []corev1.ServicePort{{
				Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(int32(targetPort)),
			}},
		},
	}, nil
}

// ensureKubernetesService creates default/kubernetes, or puts back its
// labels and ports (its cluster IP cannot change: a Service made before the
// federation served it keeps the address it got).
func ensureKubernetesService(ctx context.Context, client kubernetes.Interface, want *corev1.Service) error {
	services := client.CoreV1().Services(metav1.NamespaceDefault)
	// From the watch cache: this runs every few seconds.
	got, err := services.Get(ctx, kubernetesServiceName, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		_, err = services.Create(ctx, want, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return nil
		}
	}
	if err != nil {
		klog.FromContext(ctx).Error(err, "Keeping the Service default/kubernetes")
		return err
	}
	if got.DeletionTimestamp != nil {
		return fmt.Errorf("default/kubernetes is being deleted")
	}
	labels := maps.Clone(got.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, want.Labels)
	if maps.Equal(labels, got.Labels) && reflect.DeepEqual(got.Spec.Ports, want.Spec.Ports) && got.Spec.Selector == nil {
		return nil
	}
	got = got.DeepCopy()
	got.Labels = labels
	got.Spec.Ports = want.Spec.Ports
	got.Spec.Selector = nil
	if _, err := services.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		klog.FromContext(ctx).Error(err, "Updating the Service default/kubernetes")
		return err
	}
	return nil
}
