package kubefed

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInitHARequiresLocal(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	_, err := runKubefed("init", "fed", "--ha")
	require.Error(t, err)
	assert.ErrorContains(t, err, "--ha is a topology of local processes: add --local")
}

// TestInitHADryRun prints the command line of every process of the HA
// topology and creates nothing.
func TestInitHADryRun(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	out, err := runKubefed("init", "fed", "--local", "--ha", "--dry-run")
	require.NoError(t, err)
	lines := regexp.MustCompile(`(?m)^  \S+`).FindAllString(out, -1)
	var programs []string
	for _, l := range lines {
		programs = append(programs, filepath.Base(strings.Fields(l)[0]))
	}
	assert.Equal(t, []string{"etcd", "etcd", "etcd", "federation-apiserver", "federation-apiserver",
		"federation-controller-manager", "federation-controller-manager"}, programs, out)
	assert.Equal(t, 2, strings.Count(out, "--permit-port-sharing"), out)
	assert.NoDirExists(t, filepath.Join(home, ".federation", "fed"))

	out, err = runKubefed("init", "fed", "--local", "--ha", "--dry-run", "--etcd-servers=http://10.0.0.1:2379")
	require.NoError(t, err)
	assert.NotContains(t, out, "--name=etcd-0", "no etcd of ours on someone else's")
	assert.Equal(t, 2, strings.Count(out, "--etcd-servers=http://10.0.0.1:2379"), out)
}
