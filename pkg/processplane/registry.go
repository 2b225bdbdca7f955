package processplane

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// registryFile, beside the default folders in ~/.federation, records the
// folder of every local federation init made, so that start, stop, delete,
// backup and restore find one made with --data-dir by its name alone. Its
// name holds a dot, which no federation name does: it is never a
// federation's folder.
const registryFile = "registry.json"

// Registry is the record of local federations: name to folder.
type Registry struct {
	// path of the registry file; its lock is path + ".lock".
	path string
}

// registryContent is the registry file's JSON.
type registryContent struct {
	Federations map[string]registryEntry `json:"federations"`
}

type registryEntry struct {
	DataDir string `json:"dataDir"`
}

// DefaultRegistry is ~/.federation/registry.json.
func DefaultRegistry() (*Registry, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, fmt.Errorf("finding the home folder for ~/.federation: %w", err)
	}
	return NewRegistry(filepath.Join(home, ".federation", registryFile)), nil
}

// NewRegistry is the registry in the file path.
func NewRegistry(path string) *Registry { return &Registry{path: path} }

// Path is the registry's file, for messages.
func (r *Registry) Path() string { return r.path }

// Lookup returns the folder recorded for the federation name; ok is false
// when there is no record (or no registry yet).
func (r *Registry) Lookup(name string) (dir string, ok bool, err error) {
	c, err := r.read()
	if err != nil {
		return "", false, err
	}
	e, ok := c.Federations[name]
	return e.DataDir, ok, nil
}

// Record records dir (made absolute) as the folder of the federation name.
func (r *Registry) Record(name, dir string) error {
	return r.update(func(c *registryContent) { c.Federations[name] = registryEntry{DataDir: abs(dir)} })
}

// Forget removes the record of the federation name if it names dir: a
// record of another folder is another federation of that name, which
// stays recorded.
func (r *Registry) Forget(name, dir string) error {
	return r.update(func(c *registryContent) {
		if e, ok := c.Federations[name]; ok && e.DataDir == abs(dir) {
			delete(c.Federations, name)
		}
	})
}

// update changes the registry under its lock, so that two kubefed
// commands at once do not lose each other's records, and replaces the file
// whole, so that a reader never sees half of it.
func (r *Registry) update(change func(*registryContent)) error {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(r.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking %s: %w", r.path, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	c, err := r.read()
	if err != nil {
		return err
	}
	change(c)
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, r.path)
}

// abs is dir made absolute (as it is, should the working folder be gone).
func abs(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// read returns the registry's content; a missing file is an empty one.
func (r *Registry) read() (*registryContent, error) {
	c := &registryContent{Federations: map[string]registryEntry{}}
	data, err := os.ReadFile(r.path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("reading the registry of local federations %s: %w (fix or remove it)", r.path, err)
	}
	if c.Federations == nil {
		c.Federations = map[string]registryEntry{}
	}
	return c, nil
}
