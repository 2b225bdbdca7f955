package validation

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

func validCluster() *federationv1beta1.Cluster {
	return &federationv1beta1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "us-east", ResourceVersion: "1"},
		Spec: federationv1beta1.ClusterSpec{
			ServerAddressByClientCIDRs: []federationv1beta1.ServerAddressByClientCIDR{{ClientCIDR: "0.0.0.0/0", ServerAddress: "https://10.1.2.3:6443"}},
			SecretRef:                  &corev1.LocalObjectReference{Name: "us-east-xxxxx"},
		},
	}
}

func TestValidateCluster(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*federationv1beta1.Cluster)
		fields []string
	}{
		{name: "valid", mutate: func(*federationv1beta1.Cluster) {}},
		{name: "valid without secretRef", mutate: func(c *federationv1beta1.Cluster) { c.Spec.SecretRef = nil }},
		{name: "valid IPv6 CIDR", mutate: func(c *federationv1beta1.Cluster) { c.Spec.ServerAddressByClientCIDRs[0].ClientCIDR = "::/0" }},
		{name: "name not DNS-1035", mutate: func(c *federationv1beta1.Cluster) { c.Name = "1cluster" }, fields: []string{"metadata.name"}},
		{name: "no addresses", mutate: func(c *federationv1beta1.Cluster) { c.Spec.ServerAddressByClientCIDRs = nil }, fields: []string{"spec.serverAddressByClientCIDRs"}},
		{name: "bad CIDR", mutate: func(c *federationv1beta1.Cluster) { c.Spec.ServerAddressByClientCIDRs[0].ClientCIDR = "10.0.0.0" }, fields: []string{"spec.serverAddressByClientCIDRs[0].clientCIDR"}},
		{name: "missing CIDR", mutate: func(c *federationv1beta1.Cluster) { c.Spec.ServerAddressByClientCIDRs[0].ClientCIDR = "" }, fields: []string{"spec.serverAddressByClientCIDRs[0].clientCIDR"}},
		{name: "missing address", mutate: func(c *federationv1beta1.Cluster) { c.Spec.ServerAddressByClientCIDRs[0].ServerAddress = "" }, fields: []string{"spec.serverAddressByClientCIDRs[0].serverAddress"}},
		{name: "empty secret name", mutate: func(c *federationv1beta1.Cluster) { c.Spec.SecretRef.Name = "" }, fields: []string{"spec.secretRef.name"}},
		{name: "bad secret name", mutate: func(c *federationv1beta1.Cluster) { c.Spec.SecretRef.Name = "Bad_Name" }, fields: []string{"spec.secretRef.name"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cluster := validCluster()
			c.mutate(cluster)
			assert.Equal(t, c.fields, fieldsOf(ValidateCluster(cluster)), "create")
			if cluster.Name != validCluster().Name {
				return // names cannot change on update
			}
			assert.Equal(t, c.fields, fieldsOf(ValidateClusterUpdate(cluster, validCluster())), "update validates the spec too")
		})
	}
}

func TestValidateClusterStatusUpdate(t *testing.T) {
	cases := []struct {
		name       string
		conditions []federationv1beta1.ClusterCondition
		fields     []string
	}{
		{name: "ready", conditions: []federationv1beta1.ClusterCondition{{Type: federationv1beta1.ClusterReady, Status: corev1.ConditionTrue}}},
		{name: "missing type", conditions: []federationv1beta1.ClusterCondition{{Status: corev1.ConditionTrue}}, fields: []string{"status.conditions[0].type"}},
		{name: "bad status", conditions: []federationv1beta1.ClusterCondition{{Type: federationv1beta1.ClusterReady, Status: "Maybe"}}, fields: []string{"status.conditions[0].status"}},
		{name: "duplicate type", conditions: []federationv1beta1.ClusterCondition{
			{Type: federationv1beta1.ClusterReady, Status: corev1.ConditionTrue},
			{Type: federationv1beta1.ClusterReady, Status: corev1.ConditionFalse},
		}, fields: []string{"status.conditions[1].type"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cluster := validCluster()
			cluster.Status.Conditions = c.conditions
			assert.Equal(t, c.fields, fieldsOf(ValidateClusterStatusUpdate(cluster, validCluster())))
		})
	}
}
