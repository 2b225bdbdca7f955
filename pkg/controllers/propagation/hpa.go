package propagation

import (
	"context"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/federation-v1/federation/pkg/controllers/propagation/hpatarget"
	"github.com/federation-v1/federation/pkg/planner/replicaplan"
)

// planHPA divides a federated HPA over the clusters running its target,
// marks the target, and returns the clusters that get a copy with the plan;
// a nil plan when the HPA is copied whole (its target is not divided).
func (c *Controller) planHPA(ctx context.Context, hpa *unstructured.Unstructured, placed map[string]bool) (*unstructured.Unstructured, map[string]bool, replicaplan.Plan, error) {
	target, err := hpatarget.Of(ctx, c.fedClient, hpa)
	if err != nil || target == nil {
		return hpa, placed, nil, err
	}
	plan := replicaplan.DivideHPA(hpa, target, placed)
	clusters := slices.Sorted(maps.Keys(plan["maxReplicas"]))
	if err := hpatarget.Mark(ctx, c.fedClient, c.typ.Resource, hpa, target, clusters); err != nil {
		return nil, nil, nil, err
	}
	hpa, err = c.recordPlan(ctx, hpa, plan, nil, false)
	if err != nil {
		return nil, nil, nil, err
	}
	running := map[string]bool{}
	for _, cl := range clusters {
		running[cl] = true
	}
	return hpa, running, plan, nil
}
