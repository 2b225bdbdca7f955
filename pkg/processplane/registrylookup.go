package processplane

import (
	"errors"
	"fmt"
	"os"
)

// StaleRecordError says that the registry records a folder for a
// federation that no longer holds it (removed or moved by hand).
type StaleRecordError struct {
	Name, Dir, Registry string
}

func (e *StaleRecordError) Error() string {
	return fmt.Sprintf("federation %q was created in %s (recorded in %s), which holds no federation any more: "+
		"if it moved, pass --data-dir; `kubefed delete %s --local` forgets it", e.Name, e.Dir, e.Registry, e.Name)
}

// Locate finds the local federation name: in dataDir when given, else in
// the folder the registry records for it, else in its default folder
// (a federation made before the registry). Each miss is an error saying
// where it looked.
func Locate(reg *Registry, name, dataDir string) (*Plane, error) {
	if dataDir != "" {
		p, err := Load(dataDir)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no local federation %q in %s (--data-dir)", name, dataDir)
		}
		return named(p, name, dataDir, err)
	}
	dir, recorded, err := reg.Lookup(name)
	if err != nil {
		return nil, err
	}
	if recorded {
		p, err := Load(dir)
		if errors.Is(err, os.ErrNotExist) {
			return nil, &StaleRecordError{Name: name, Dir: dir, Registry: reg.Path()}
		}
		return named(p, name, dir, err)
	}
	dir, err = DefaultDir(name)
	if err != nil {
		return nil, err
	}
	p, err := Load(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no local federation %q: none recorded in %s, none in %s (create one with `kubefed init %s --local`)",
			name, reg.Path(), dir, name)
	}
	return named(p, name, dir, err)
}

// named checks that the plane loaded from dir is the federation name.
func named(p *Plane, name, dir string, err error) (*Plane, error) {
	if err != nil {
		return nil, err
	}
	if p.Name != name {
		return nil, fmt.Errorf("%s holds federation %q, not %q", dir, p.Name, name)
	}
	return p, nil
}

// Claim checks that init may make the federation name in dir: the registry
// records no other folder that still holds a federation of that name.
// A stale record is replaced by init's.
func Claim(reg *Registry, name, dir string) error {
	recorded, ok, err := reg.Lookup(name)
	if err != nil || !ok || recorded == abs(dir) {
		return err
	}
	if _, err := Load(recorded); err == nil {
		return fmt.Errorf("federation %q already exists in %s (recorded in %s); nothing changed: use it, or remove it with `kubefed delete %s --local`",
			name, recorded, reg.Path(), name)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
