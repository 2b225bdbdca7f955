package hostplane

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/federation-v1/federation/pkg/poll"
)

// WaitAddress waits until Service svc can be reached from outside the
// host cluster and returns HOST:PORT: a LoadBalancer's ingress and the
// Service's port, or for a NodePort advertise (default: a node's address)
// and the node port. The Service's first port is the one meant.
func (h *Host) WaitAddress(ctx context.Context, svc, advertise string, timeout time.Duration) (string, error) {
	var address string
	err := poll.UntilEvery(ctx, timeout, time.Second, "an address of Service "+h.Namespace+"/"+svc, func(ctx context.Context) error {
		s, err := h.Kube.CoreV1().Services(h.Namespace).Get(ctx, svc, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(s.Spec.Ports) == 0 {
			return poll.Abort(fmt.Errorf("Service %s has no ports", svc))
		}
		port := s.Spec.Ports[0]
		switch s.Spec.Type {
		case corev1.ServiceTypeLoadBalancer:
			for _, in := range s.Status.LoadBalancer.Ingress {
				host := in.IP
				if host == "" {
					host = in.Hostname
				}
				if host != "" {
					address = net.JoinHostPort(host, strconv.Itoa(int(port.Port)))
					return nil
				}
			}
			return errors.New("its load balancer has no ingress yet")
		case corev1.ServiceTypeNodePort:
			if port.NodePort == 0 {
				return errors.New("no node port allocated yet")
			}
			host := advertise
			if host == "" {
				if host, err = h.nodeAddress(ctx); err != nil {
					return err
				}
			}
			address = net.JoinHostPort(host, strconv.Itoa(int(port.NodePort)))
			return nil
		default:
			return poll.Abort(fmt.Errorf("Service %s is of type %s: nothing outside the cluster reaches it", svc, s.Spec.Type))
		}
	})
	return address, err
}

// nodeAddress is a node's external address, else its internal one.
func (h *Host) nodeAddress(ctx context.Context) (string, error) {
	nodes, err := h.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, want := range []corev1.NodeAddressType{corev1.NodeExternalIP, corev1.NodeInternalIP} {
		for _, n := range nodes.Items {
			for _, a := range n.Status.Addresses {
				if a.Type == want && a.Address != "" {
					return a.Address, nil
				}
			}
		}
	}
	return "", errors.New("no node has an address: give --api-server-advertise-address")
}

// hostOf is the host of HOST:PORT ("" for "").
func hostOf(address string) string {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return address
	}
	return host
}
