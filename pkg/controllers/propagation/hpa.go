package propagation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
	"github.com/federation-v1/federation/pkg/planner/replicaplan"
)

// targetOf returns the federated object an HPA scales, when it is of a
// divided kind and exists.
func (c *Controller) targetOf(ctx context.Context, hpa *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	kind, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "kind")
	name, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "name")
	resource, ok := federatedtypes.HPATarget(kind)
	if !ok || name == "" {
		return nil, nil
	}
	target, err := c.fedClient.Resource(resource).Namespace(hpa.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s, the target of HPA %s: %w", kind, hpa.GetNamespace(), name, hpa.GetName(), err)
	}
	return target, nil
}

// errHPAGone says the HPA being planned was deleted meanwhile: its
// tombstone gives the target its replicas back, and nothing of it is written.
var errHPAGone = errors.New("the HPA was deleted")

// markTarget sets (or, with no clusters, removes) the
// hpa-target-cluster-list annotation on the HPA's target.
func (c *Controller) markTarget(ctx context.Context, hpa, target *unstructured.Unstructured, clusters []string) error {
	want := ""
	if len(clusters) > 0 {
		b, _ := json.Marshal(struct{ Names []string }{clusters})
		want = string(b)
	}
	annotations := target.GetAnnotations()
	if annotations[federationv1beta1.HPATargetClustersAnnotation] == want {
		return nil
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	if want == "" {
		delete(annotations, federationv1beta1.HPATargetClustersAnnotation)
	} else {
		annotations[federationv1beta1.HPATargetClustersAnnotation] = want
	}
	if want != "" {
		// target was read live just before: if the HPA is still there now,
		// a deletion after this read makes our write below conflict, and
		// its release (from the tombstone) is not undone by a stale cache.
		if live, err := c.resource(hpa.GetNamespace()).Get(ctx, hpa.GetName(), metav1.GetOptions{}); apierrors.IsNotFound(err) ||
			err == nil && (live.GetUID() != hpa.GetUID() || live.GetDeletionTimestamp() != nil) {
			return errHPAGone
		} else if err != nil {
			return fmt.Errorf("reading HPA %s/%s: %w", hpa.GetNamespace(), hpa.GetName(), err)
		}
	}
	target.SetAnnotations(annotations)
	resource, _ := federatedtypes.HPATarget(target.GetKind())
	if _, err := c.fedClient.Resource(resource).Namespace(target.GetNamespace()).Update(ctx, target, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("marking %s %s/%s as the target of HPA %s: %w", target.GetKind(), target.GetNamespace(), target.GetName(), hpa.GetName(), err)
	}
	return nil
}

// planHPA divides a federated HPA over the clusters running its target,
// marks the target, and returns the clusters that get a copy with the plan;
// a nil plan when the HPA is copied whole (its target is not divided).
func (c *Controller) planHPA(ctx context.Context, hpa *unstructured.Unstructured, placed map[string]bool) (*unstructured.Unstructured, map[string]bool, replicaplan.Plan, error) {
	target, err := c.targetOf(ctx, hpa)
	if err != nil || target == nil {
		return hpa, placed, nil, err
	}
	plan := replicaplan.DivideHPA(hpa, target, placed)
	clusters := slices.Sorted(maps.Keys(plan["maxReplicas"]))
	if err := c.markTarget(ctx, hpa, target, clusters); err != nil {
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

// releaseTarget gives a deleted HPA's target its replica counts back.
func (c *Controller) releaseTarget(ctx context.Context, hpa *unstructured.Unstructured) error {
	target, err := c.targetOf(ctx, hpa)
	if err != nil || target == nil {
		return err
	}
	return c.markTarget(ctx, hpa, target, nil)
}
