package app

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.Equal(t, []string{"NamespaceLifecycle", "FederationFinalizer", "FederationAnnotations", "FederationRBAC"}, enabledPlugins(o))
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
