package app

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/federation-v1/federation/pkg/embeddedetcd"
)

// TestEmbeddedEtcdClientTLSFlags: the flags reach the embedded etcd's
// options, and come all together, with a client port to secure.
func TestEmbeddedEtcdClientTLSFlags(t *testing.T) {
	tlsFlags := []string{"--embedded-etcd-tls-cert-file=etcd.crt", "--embedded-etcd-tls-private-key-file=etcd.key", "--embedded-etcd-client-ca-file=ca.crt"}
	parse := func(args ...string) *Options {
		o := NewOptions()
		fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
		o.AddFlags(fs)
		require.NoError(t, fs.Parse(args))
		require.NoError(t, o.Complete())
		return o
	}

	o := parse(append(tlsFlags, "--embedded-etcd-client-port=2379")...)
	require.NoError(t, o.Validate())
	assert.Equal(t, embeddedetcd.Options{ClientPort: 2379, ClientTLS: &embeddedetcd.ClientTLS{CertFile: "etcd.crt", KeyFile: "etcd.key", CAFile: "ca.crt"}},
		o.embeddedEtcdOptions())
	assert.Equal(t, embeddedetcd.Options{}, parse().embeddedEtcdOptions(), "the socket only, by default")

	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no client CA":  {[]string{"--embedded-etcd-client-port=2379", tlsFlags[0], tlsFlags[1]}, "go together"},
		"no port":       {tlsFlags, "need --embedded-etcd-client-port"},
		"external etcd": {append(tlsFlags, "--embedded-etcd-client-port=2379", "--etcd-servers=https://10.0.0.1:2379"), "no --etcd-servers"},
	} {
		t.Run(name, func(t *testing.T) {
			assert.ErrorContains(t, parse(tc.args...).Validate(), tc.want)
		})
	}
}
