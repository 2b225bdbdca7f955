package processplane

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// savedPlane writes the state of a plane named name in dir, as Create does.
func savedPlane(t *testing.T, name, dir string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o700))
	require.NoError(t, (&Plane{Options: Options{Name: name, Dir: dir}}).save())
}

func TestRegistryRecordsLooksUpAndForgets(t *testing.T) {
	reg := NewRegistry(filepath.Join(t.TempDir(), "fed", "registry.json"))
	_, ok, err := reg.Lookup("a")
	require.NoError(t, err, "no registry yet is an empty one")
	assert.False(t, ok)

	require.NoError(t, reg.Record("a", "/data/a"))
	require.NoError(t, reg.Record("b", "/data/b"))
	dir, ok, err := reg.Lookup("a")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "/data/a", dir)

	require.NoError(t, reg.Forget("a", "/elsewhere"))
	_, ok, _ = reg.Lookup("a")
	assert.True(t, ok, "a record of another folder stays")
	require.NoError(t, reg.Forget("a", "/data/a"))
	_, ok, _ = reg.Lookup("a")
	assert.False(t, ok)
	_, ok, _ = reg.Lookup("b")
	assert.True(t, ok, "the other records stay")

	info, err := os.Stat(reg.Path())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

func TestRegistryRecordsAbsoluteFolders(t *testing.T) {
	t.Chdir(t.TempDir())
	reg := NewRegistry("registry.json")
	require.NoError(t, reg.Record("a", "planes/a"))
	dir, _, err := reg.Lookup("a")
	require.NoError(t, err)
	wd, _ := os.Getwd()
	assert.Equal(t, filepath.Join(wd, "planes/a"), dir)
}

func TestABrokenRegistryNamesItself(t *testing.T) {
	reg := NewRegistry(filepath.Join(t.TempDir(), "registry.json"))
	require.NoError(t, os.WriteFile(reg.Path(), []byte("{not json"), 0o600))
	_, _, err := reg.Lookup("a")
	require.ErrorContains(t, err, reg.Path())
	require.ErrorContains(t, err, "fix or remove it")
}

func TestLocate(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	reg, err := DefaultRegistry()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(home, ".federation", "registry.json"), reg.Path())
	elsewhere := filepath.Join(t.TempDir(), "planes", "fed")
	savedPlane(t, "fed", elsewhere)
	require.NoError(t, reg.Record("fed", elsewhere))
	savedPlane(t, "old", filepath.Join(home, ".federation", "old"))

	p, err := Locate(reg, "fed", "")
	require.NoError(t, err, "found from the record")
	assert.Equal(t, elsewhere, p.Dir)

	p, err = Locate(reg, "old", "")
	require.NoError(t, err, "not recorded (made before the registry): the default folder")
	assert.Equal(t, "old", p.Name)

	p, err = Locate(reg, "fed", elsewhere)
	require.NoError(t, err, "--data-dir")
	assert.Equal(t, "fed", p.Name)

	_, err = Locate(reg, "other", elsewhere)
	assert.EqualError(t, err, elsewhere+` holds federation "fed", not "other"`)

	_, err = Locate(reg, "fed", filepath.Join(home, "nowhere"))
	assert.EqualError(t, err, `no local federation "fed" in `+filepath.Join(home, "nowhere")+" (--data-dir)")

	_, err = Locate(reg, "none", "")
	assert.EqualError(t, err, `no local federation "none": none recorded in `+reg.Path()+", none in "+
		filepath.Join(home, ".federation", "none")+" (create one with `kubefed init none --local`)")

	require.NoError(t, os.RemoveAll(elsewhere))
	_, err = Locate(reg, "fed", "")
	var stale *StaleRecordError
	require.ErrorAs(t, err, &stale, "the recorded folder is gone")
	assert.Equal(t, StaleRecordError{Name: "fed", Dir: elsewhere, Registry: reg.Path()}, *stale)
	assert.Contains(t, err.Error(), "`kubefed delete fed --local` forgets it")
}

func TestClaim(t *testing.T) {
	reg := NewRegistry(filepath.Join(t.TempDir(), "registry.json"))
	dir := filepath.Join(t.TempDir(), "fed")
	require.NoError(t, Claim(reg, "fed", dir), "nothing recorded")
	savedPlane(t, "fed", dir)
	require.NoError(t, reg.Record("fed", dir))
	require.NoError(t, Claim(reg, "fed", dir), "the same folder: New tells whether it runs")

	other := filepath.Join(t.TempDir(), "fed2")
	err := Claim(reg, "fed", other)
	require.ErrorContains(t, err, `federation "fed" already exists in `+dir)

	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, Claim(reg, "fed", other), "a stale record gives way")
}
