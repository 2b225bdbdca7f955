package app

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	api "k8s.io/kubernetes/pkg/apis/core"

	"github.com/federation-v1/federation/pkg/admission/federationworkloads"
)

func TestOptionsCompleteAndValidate(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*Options)
		wantErr string
	}{
		{name: "defaults", mutate: func(*Options) {}},
		{name: "external etcd", mutate: func(o *Options) { o.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:2379"} }},
		{name: "no data dir for embedded etcd", mutate: func(o *Options) { o.DataDir = "" }, wantErr: "--data-dir"},
		{name: "bad event TTL", mutate: func(o *Options) { o.EventTTL = -time.Second }, wantErr: "--event-ttl"},
		{name: "bad port", mutate: func(o *Options) { o.SecureServing.BindPort = 70000 }, wantErr: "secure-port"},
		{name: "service range not a CIDR", mutate: func(o *Options) { o.ServiceClusterIPRange = "198.18.0.1" }, wantErr: `--service-cluster-ip-range "198.18.0.1": not a CIDR`},
		{name: "service range too large", mutate: func(o *Options) { o.ServiceClusterIPRange = "10.0.0.0/8" }, wantErr: "--service-cluster-ip-range 10.0.0.0/8: must have 2 to 20 host bits"},
		{name: "service range too small", mutate: func(o *Options) { o.ServiceClusterIPRange = "198.18.0.0/31" }, wantErr: "--service-cluster-ip-range 198.18.0.0/31"},
		{name: "IPv6 service range", mutate: func(o *Options) { o.ServiceClusterIPRange = "fd00:fed::/112" }},
		{name: "external IP CIDRs", mutate: func(o *Options) { o.AllowedServiceExternalIPCIDRs = []string{"192.0.2.0/24", "2001:db8::/64"} }},
		{name: "external IP CIDR not a CIDR", mutate: func(o *Options) { o.AllowedServiceExternalIPCIDRs = []string{"192.0.2.1"} },
			wantErr: `--allowed-service-external-ip-cidrs "192.0.2.1": not a CIDR`},
		{name: "unknown admission plugin", mutate: func(o *Options) { o.Admission.EnablePlugins = []string{"NoSuchPlugin"} }, wantErr: "NoSuchPlugin"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := NewOptions()
			c.mutate(o)
			require.NoError(t, o.Complete())
			err := o.Validate()
			if c.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.wantErr)
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := NewOptions()
	require.NoError(t, o.Complete())
	assert.True(t, o.EmbeddedEtcd(), "no --etcd-servers means embedded etcd")
	assert.Equal(t, "/registry", o.Etcd.StorageConfig.Prefix)
	assert.True(t, o.Etcd.EnableWatchCache, "watch cache on")
	assert.Equal(t, "application/vnd.kubernetes.protobuf", o.Etcd.DefaultStorageMediaType)
	assert.Equal(t, filepath.Join(o.DataDir, "certs"), o.SecureServing.ServerCert.CertDirectory)
	assert.Equal(t, []string{"NamespaceLifecycle", "FederationFinalizer", "FederationAnnotations", "FederationRBAC", "FederationWorkloads", "ResourceQuota"}, enabledPlugins(o))
	assert.Empty(t, o.AllowedServiceExternalIPCIDRs, "no external IP is allowed by default")
}

// enabledPlugins lists the admission plugins that are on by default.
func enabledPlugins(o *Options) []string {
	var on []string
	for _, name := range o.Admission.RecommendedPluginOrder {
		if !o.Admission.DefaultOffPlugins.Has(name) {
			on = append(on, name)
		}
	}
	return on
}

// TestAllowedServiceExternalIPCIDRsReachTheAdmission: the flag is what
// FederationWorkloads allows.
func TestAllowedServiceExternalIPCIDRsReachTheAdmission(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	require.NoError(t, fs.Parse([]string{"--allowed-service-external-ip-cidrs=192.0.2.0/24,2001:db8::/64"}))
	client := fake.NewSimpleClientset()
	plugin, err := o.Admission.Plugins.InitPlugin(federationworkloads.PluginName, nil,
		initializer.New(client, nil, informers.NewSharedInformerFactory(client, 0), nil, nil, nil, nil, nil))
	require.NoError(t, err)
	validate := func(ip string) error {
		svc := &api.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"}, Spec: api.ServiceSpec{ExternalIPs: []string{ip}}}
		attrs := admission.NewAttributesRecord(svc, nil, api.Kind("Service").WithVersion("v1"), "team-a", "web", api.Resource("services").WithVersion("v1"),
			"", admission.Create, nil, false, &user.DefaultInfo{Name: "alice"})
		return plugin.(admission.ValidationInterface).Validate(context.Background(), attrs, nil)
	}
	assert.NoError(t, validate("192.0.2.7"))
	assert.NoError(t, validate("2001:db8::7"))
	assert.ErrorContains(t, validate("8.8.8.8"), "spec.externalIPs[0]: Forbidden: 8.8.8.8 is not in the external IP ranges the federation allows (192.0.2.0/24, 2001:db8::/64)")
}
