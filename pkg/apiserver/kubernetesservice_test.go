package apiserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	netutils "k8s.io/utils/net"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func TestKubernetesServiceIsTheFirstAddressOnToTheServer(t *testing.T) {
	_, cidr, err := netutils.ParseCIDRSloppy("198.18.0.0/16")
	require.NoError(t, err)
	svc, err := kubernetesService(*cidr, 6443)
	require.NoError(t, err)
	assert.Equal(t, "198.18.0.1", svc.Spec.ClusterIP)
	assert.Equal(t, []corev1.IPFamily{corev1.IPv4Protocol}, svc.Spec.IPFamilies)
	assert.Equal(t, []corev1.ServicePort{{Name: "https", Protocol: corev1.ProtocolTCP, Port: 443, TargetPort: intstr.FromInt32(6443)}}, svc.Spec.Ports)
	assert.Equal(t, "true", svc.Labels[federationv1beta1.LocalLabel])
	assert.Nil(t, svc.Spec.Selector)

	_, cidr, err = netutils.ParseCIDRSloppy("fd00:fed::/112")
	require.NoError(t, err)
	svc, err = kubernetesService(*cidr, 443)
	require.NoError(t, err)
	assert.Equal(t, "fd00:fed::1", svc.Spec.ClusterIP)
	assert.Equal(t, []corev1.IPFamily{corev1.IPv6Protocol}, svc.Spec.IPFamilies)
}

func TestEnsureKubernetesService(t *testing.T) {
	ctx := context.Background()
	_, cidr, _ := netutils.ParseCIDRSloppy("198.18.0.0/16")
	want, err := kubernetesService(*cidr, 6443)
	require.NoError(t, err)

	client := fake.NewClientset()
	require.NoError(t, ensureKubernetesService(ctx, client, want))
	got, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, want.Spec, got.Spec, "created")

	// One made by hand before the federation served its own (no local
	// label, other ports, a selector): labelled local and put right, its
	// address kept.
	mine := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{ClusterIP: "198.18.4.4", Selector: map[string]string{"app": "x"},
			Ports: []corev1.ServicePort{{Port: 80}}},
	}
	client = fake.NewClientset(mine)
	require.NoError(t, ensureKubernetesService(ctx, client, want))
	got, err = client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "true", got.Labels[federationv1beta1.LocalLabel])
	assert.Equal(t, "a", got.Labels["team"])
	assert.Equal(t, want.Spec.Ports, got.Spec.Ports)
	assert.Nil(t, got.Spec.Selector)
	assert.Equal(t, "198.18.4.4", got.Spec.ClusterIP)

	// As it should be: nothing written.
	client.ClearActions()
	require.NoError(t, ensureKubernetesService(ctx, client, want))
	for _, a := range client.Actions() {
		assert.Equal(t, "get", a.GetVerb())
	}
}
