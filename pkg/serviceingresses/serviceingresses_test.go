package serviceingresses

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func TestRoundTripKeepsTheV1Format(t *testing.T) {
	in := Ingresses{Items: []ClusterIngress{
		{Cluster: "c2"}, // a load balancer without ready endpoints
		{Cluster: "c1", Items: []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}},
	}}
	value := in.String()
	assert.Equal(t, `{"items":[{"cluster":"c1","items":[{"ip":"1.2.3.4"}]},{"cluster":"c2","items":null}]}`, value)
	back, err := Parse(value)
	require.NoError(t, err)
	assert.Equal(t, in, back)
}

func TestParse(t *testing.T) {
	got, err := Parse("")
	require.NoError(t, err)
	assert.Empty(t, got.Items)
	got, err = Parse(`{"items":[{"cluster":"c1","items":[{"hostname":"lb.example.net"}]}]}`)
	require.NoError(t, err)
	assert.Equal(t, "lb.example.net", got.Items[0].Items[0].Hostname)
	_, err = Parse(`{"items":`)
	assert.ErrorContains(t, err, federationv1beta1.ServiceIngressesAnnotation)
}
