package apiserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utilversion "k8s.io/apimachinery/pkg/util/version"

	"github.com/federation-v1/federation/pkg/version"
)

func TestVersionCarriesTheFederationsBuild(t *testing.T) {
	info := NewEffectiveVersion("1.36.3").Info()
	require.NotNil(t, info)
	assert.Equal(t, "1", info.Major)
	assert.Equal(t, "36", info.Minor)
	assert.Equal(t, version.Served(), info.GitVersion)
	fed, ok := version.FromServed(info.GitVersion)
	assert.True(t, ok)
	assert.Equal(t, version.Get().GitVersion, fed)
	assert.Equal(t, version.Get().GitCommit, info.GitCommit)
	// kubectl's version skew check parses it as semver.
	v, err := utilversion.ParseSemantic(info.GitVersion)
	require.NoError(t, err)
	assert.Equal(t, uint(36), v.Minor())
}
