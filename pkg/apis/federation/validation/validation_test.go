package validation

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{name: "too many addresses", mutate: func(c *federationv1beta1.Cluster) {
			for range MaxServerAddresses {
				c.Spec.ServerAddressByClientCIDRs = append(c.Spec.ServerAddressByClientCIDRs, c.Spec.ServerAddressByClientCIDRs[0])
			}
		}, fields: []string{"spec.serverAddressByClientCIDRs"}},
		{name: "address too long", mutate: func(c *federationv1beta1.Cluster) {
			c.Spec.ServerAddressByClientCIDRs[0].ServerAddress = "https://" + strings.Repeat("a.", MaxServerAddressLength/2)
		}, fields: []string{"spec.serverAddressByClientCIDRs[0].serverAddress"}},
		{name: "http address", mutate: func(c *federationv1beta1.Cluster) {
			c.Spec.ServerAddressByClientCIDRs[0].ServerAddress = "http://10.1.2.3:6443"
		}, fields: []string{"spec.serverAddressByClientCIDRs[0].serverAddress"}},
		{name: "second address bad", mutate: func(c *federationv1beta1.Cluster) {
			c.Spec.ServerAddressByClientCIDRs = append(c.Spec.ServerAddressByClientCIDRs,
				federationv1beta1.ServerAddressByClientCIDR{ClientCIDR: "10.0.0.0/8", ServerAddress: "https://10.0.0.1/any/path"})
		}, fields: []string{"spec.serverAddressByClientCIDRs[1].serverAddress"}},
		{name: "empty secret name", mutate: func(c *federationv1beta1.Cluster) { c.Spec.SecretRef.Name = "" }, fields: []string{"spec.secretRef.name"}},
		{name: "agent without secretRef", mutate: func(c *federationv1beta1.Cluster) {
			c.Spec.Connection, c.Spec.SecretRef = federationv1beta1.ConnectionAgent, nil
		}},
		{name: "agent with a secretRef", mutate: func(c *federationv1beta1.Cluster) { c.Spec.Connection = federationv1beta1.ConnectionAgent }, fields: []string{"spec.secretRef"}},
		{name: "unknown connection", mutate: func(c *federationv1beta1.Cluster) { c.Spec.Connection = "Carrier-Pigeon" }, fields: []string{"spec.connection"}},
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

func TestCheckServerAddress(t *testing.T) {
	for _, addr := range []string{
		"https://10.1.2.3:6443",
		"https://10.1.2.3",
		"https://api.example.com",
		"https://API.Example.com:443",
		"https://api.example.com/",
		"https://[::1]:6443",
		"https://[2001:db8::1]",
		"https://localhost:1",
		"https://x",
	} {
		assert.NoError(t, CheckServerAddress(addr), addr)
	}
	for addr, why := range map[string]string{
		"http://10.1.2.3:6443":              "scheme must be https",
		"HTTP://10.1.2.3":                   "scheme must be https",
		"10.1.2.3:6443":                     "scheme must be https",
		"api.example.com":                   "scheme must be https",
		"ftp://x":                           "scheme must be https",
		"https:x":                           "scheme must be https",
		"https://":                          "no host",
		"https:///path":                     "no host",
		"https://127.0.0.1:1/any/path":      "no path",
		"https://x//":                       "no path",
		"https://x/%2e%2e":                  "no path",
		"https://x?a=b":                     "no query",
		"https://x/?":                       "no query",
		"https://x#frag":                    "no fragment",
		"https://x/#":                       "no fragment",
		"https://user:pass@x":               "no user information",
		"https://user@x":                    "no user information",
		"https://x_y.example.com":           "neither an IP address nor a DNS name",
		"https://-x":                        "neither an IP address nor a DNS name",
		"https://x:0":                       "port",
		"https://x:65536":                   "port",
		"https://x:":                        "empty port",
		"https://[fe80::1%25eth0]:6443":     "neither an IP address nor a DNS name",
		"https://x y":                       "",
		"https://x\n":                       "",
		"https://a.b.c:6443\r\nX-Evil: yes": "",
	} {
		err := CheckServerAddress(addr)
		require.Error(t, err, addr)
		assert.Contains(t, err.Error(), why, addr)
	}
}

func TestValidateClusterStatusUpdate(t *testing.T) {
	cases := []struct {
		name       string
		conditions []federationv1beta1.ClusterCondition
		zones      []string
		region     string
		fields     []string
	}{
		{name: "ready", conditions: []federationv1beta1.ClusterCondition{{Type: federationv1beta1.ClusterReady, Status: corev1.ConditionTrue}}},
		{name: "missing type", conditions: []federationv1beta1.ClusterCondition{{Status: corev1.ConditionTrue}}, fields: []string{"status.conditions[0].type"}},
		{name: "bad status", conditions: []federationv1beta1.ClusterCondition{{Type: federationv1beta1.ClusterReady, Status: "Maybe"}}, fields: []string{"status.conditions[0].status"}},
		{name: "duplicate type", conditions: []federationv1beta1.ClusterCondition{
			{Type: federationv1beta1.ClusterReady, Status: corev1.ConditionTrue},
			{Type: federationv1beta1.ClusterReady, Status: corev1.ConditionFalse},
		}, fields: []string{"status.conditions[1].type"}},
		{name: "too many conditions", conditions: func() []federationv1beta1.ClusterCondition {
			var out []federationv1beta1.ClusterCondition
			for i := range MaxConditions + 1 {
				out = append(out, federationv1beta1.ClusterCondition{Type: federationv1beta1.ClusterConditionType(fmt.Sprint("T", i)), Status: corev1.ConditionTrue})
			}
			return out
		}(), fields: []string{"status.conditions"}},
		{name: "message too long", conditions: []federationv1beta1.ClusterCondition{
			{Type: federationv1beta1.ClusterReady, Status: corev1.ConditionTrue, Message: strings.Repeat("x", MaxConditionMessageLength+1)},
		}, fields: []string{"status.conditions[0].message"}},
		{name: "zones and region", zones: []string{"us-east1-b", "us-east1-c"}, region: "us-east1"},
		{name: "region with a slash", region: "a/b", fields: []string{"status.region"}},
		{name: "region with a dot", region: "a.b", fields: []string{"status.region"}},
		{name: "region upper case", region: "US", fields: []string{"status.region"}},
		{name: "region too long", region: strings.Repeat("r", 64), fields: []string{"status.region"}},
		{name: "zone wildcard", zones: []string{"ok", "*"}, fields: []string{"status.zones[1]"}},
		{name: "zone empty", zones: []string{""}, fields: []string{"status.zones[0]"}},
		{name: "zone with a dot", zones: []string{"victim.default"}, fields: []string{"status.zones[0]"}},
		{name: "too many zones", zones: func() []string {
			var out []string
			for i := range MaxZones + 1 {
				out = append(out, fmt.Sprint("z", i))
			}
			return out
		}(), fields: []string{"status.zones"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cluster := validCluster()
			cluster.Status.Conditions = c.conditions
			cluster.Status.Zones, cluster.Status.Region = c.zones, c.region
			assert.Equal(t, c.fields, fieldsOf(ValidateClusterStatusUpdate(cluster, validCluster())))
		})
	}
}
