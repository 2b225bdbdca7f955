package app

import (
	"context"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/federation-v1/federation/pkg/controllers/customresources"
)

// startCustomResources runs the controller that starts, for each
// Established CRD, the propagation controller of its custom resources.
func startCustomResources(_ context.Context, cc *ControllerContext) (func(context.Context) error, error) {
	c, err := cc.customResources()
	if err != nil {
		return nil, err
	}
	return c.Run, nil
}

// startCRDs runs the propagation controller of CRDs, whose deletions wait
// for the copies of their custom resources to be let go.
func startCRDs(ctx context.Context, cc *ControllerContext) (func(context.Context) error, error) {
	c, err := cc.customResources()
	if err != nil {
		return nil, err
	}
	t := *customresources.CRDs
	t.Dependents = c.Dependents
	return propagationInit(&t)(ctx, cc)
}

// customResources returns the controller of the custom resources'
// controllers, making it the first time (it runs only if started).
func (cc *ControllerContext) customResources() (*customresources.Controller, error) {
	if cc.CustomResources == nil {
		members, err := cc.members()
		if err != nil {
			return nil, err
		}
		c, err := customresources.New(cc.FedDynamic, cc.DynamicInformers.ForResource(customresources.CRDResource), members,
			cc.Options.customResourceEnabled, cc.Recorder, cc.Options.Propagation)
		if err != nil {
			return nil, err
		}
		c.WatchTombstones(cc.TombstoneInformers.Core().V1().ConfigMaps())
		cc.CustomResources = c
	}
	return cc.CustomResources, nil
}

// customResourceEnabled reports whether the propagation of a CRD's custom
// resources runs: with customresources.Name (which '*' includes), unless
// "-<plural>.<group>" in --controllers turns it off.
func (o *Options) customResourceEnabled(crd string) bool {
	return o.enabled(customresources.Name) && !slices.Contains(o.Controllers, "-"+crd)
}

// customResourceController reports whether a --controllers name is a
// CRD's (<plural>.<group>), which cannot be checked before the CRD exists;
// a name with a dot that is no CRD name is refused.
func customResourceController(name string) (bool, string) {
	if !strings.Contains(name, ".") {
		return false, ""
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return true, msgs[0]
	}
	return true, ""
}
