package memberenv

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Flux's source-controller and kustomize-controller, which the gitops suite
// runs against a member as their host. Like e2e.test they are not in tools:
// only that suite needs them. Each is cached by its own version.
var (
	sourceController = tool{dir: "flux", name: "flux-source-controller", module: "github.com/fluxcd/source-controller",
		packages: []string{"github.com/fluxcd/source-controller"}}
	kustomizeController = tool{dir: "flux", name: "flux-kustomize-controller", module: "github.com/fluxcd/kustomize-controller",
		packages: []string{"github.com/fluxcd/kustomize-controller"}}
)

// Flux is where the built Flux controllers and their CRDs are.
type Flux struct {
	SourceController    string
	KustomizeController string
	// CRDs are the controllers' CustomResourceDefinition manifests, from
	// their modules' config/crd/bases.
	CRDs []string
}

// EnsureFlux builds Flux's controllers unless they are cached
// (root/.cache/bin/flux-<controller>-<version>/) and returns their paths and
// CRD files.
func EnsureFlux(ctx context.Context, root string, logf func(string, ...any)) (*Flux, error) {
	cache, unlock, err := lockCache(root)
	if err != nil {
		return nil, err
	}
	defer unlock()
	flux := &Flux{}
	if flux.SourceController, err = ensureBinary(ctx, root, cache, sourceController, logf); err != nil {
		return nil, err
	}
	if flux.KustomizeController, err = ensureBinary(ctx, root, cache, kustomizeController, logf); err != nil {
		return nil, err
	}
	for _, t := range []tool{sourceController, kustomizeController} {
		crds, err := moduleCRDs(ctx, root, t)
		if err != nil {
			return nil, err
		}
		flux.CRDs = append(flux.CRDs, crds...)
	}
	return flux, nil
}

// moduleCRDs lists the CRD manifests in a tool module's config/crd/bases,
// in Go's module cache (downloaded again if the binaries were cached but the
// module cache was not).
func moduleCRDs(ctx context.Context, root string, t tool) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", t.module)
	cmd.Dir = filepath.Join(root, "test", "tools", t.dir)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("locating the %s module for its CRDs: %w", t.module, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return nil, fmt.Errorf("locating the %s module for its CRDs: %w", t.module, err)
	}
	crds, err := filepath.Glob(filepath.Join(mod.Dir, "config", "crd", "bases", "*.yaml"))
	if err == nil && len(crds) == 0 {
		err = fmt.Errorf("no CRDs in %s's config/crd/bases", t.module)
	}
	return crds, err
}
