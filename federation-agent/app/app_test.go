package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidate(t *testing.T) {
	valid := func() *Options {
		return &Options{Cluster: "c1", Federation: []string{"https://fed:443"}, FederationCAFile: "/ca.crt", TokenFile: "/token"}
	}
	assert.NoError(t, valid().Validate())
	inPod := valid()
	inPod.MemberTokenFile, inPod.CredentialSecret = "/var/run/member/token", "federation-system/federation-agent-credential"
	assert.NoError(t, inPod.Validate())

	for _, c := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.MemberTokenFile, o.MemberKubeconfig = "/t", "/k" }, "--member-token-file is for an agent in a pod"},
		{func(o *Options) { o.CredentialSecret = "federation-agent-credential" }, `--credential-secret "federation-agent-credential": want NAMESPACE/NAME`},
		{func(o *Options) { o.CredentialSecret = "Fed/x" }, `--credential-secret "Fed/x": namespace`},
		{func(o *Options) { o.CredentialSecret = "ns/" }, `--credential-secret "ns/": name`},
		{func(o *Options) { o.Federation = []string{"http://fed"} }, `--federation "http://fed": want an https:// address`},
	} {
		o := valid()
		c.change(o)
		assert.ErrorContains(t, o.Validate(), c.want)
	}
}
