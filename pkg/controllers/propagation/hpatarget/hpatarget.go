// Package hpatarget marks the target of a federated HorizontalPodAutoscaler
// (a Deployment, say) with the clusters the HPA's copies run in, and takes
// the mark off when the HPA goes: the target's replicas there are the
// members' HPAs' to change (federationv1beta1.HPATargetClustersAnnotation).
// The propagation engine marks as it plans an HPA; the release stage
// releases the target of a deleted one.
package hpatarget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// Of returns the federated object an HPA scales, when it is of a divided
// kind and exists.
func Of(ctx context.Context, fed dynamic.Interface, hpa *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	kind, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "kind")
	name, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "name")
	resource, ok := federatedtypes.HPATarget(kind)
	if !ok || name == "" {
		return nil, nil
	}
	target, err := fed.Resource(resource).Namespace(hpa.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s, the target of HPA %s: %w", kind, hpa.GetNamespace(), name, hpa.GetName(), err)
	}
	return target, nil
}

// ErrHPAGone says the HPA being planned was deleted meanwhile: its
// tombstone gives the target its replicas back, and nothing of it is written.
var ErrHPAGone = errors.New("the HPA was deleted")

// Mark sets (or, with no clusters, removes) the hpa-target-cluster-list
// annotation on the HPA's target; hpas is the HPAs' resource.
func Mark(ctx context.Context, fed dynamic.Interface, hpas schema.GroupVersionResource, hpa, target *unstructured.Unstructured, clusters []string) error {
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
		if live, err := fed.Resource(hpas).Namespace(hpa.GetNamespace()).Get(ctx, hpa.GetName(), metav1.GetOptions{}); apierrors.IsNotFound(err) ||
			err == nil && (live.GetUID() != hpa.GetUID() || live.GetDeletionTimestamp() != nil) {
			return ErrHPAGone
		} else if err != nil {
			return fmt.Errorf("reading HPA %s/%s: %w", hpa.GetNamespace(), hpa.GetName(), err)
		}
	}
	target.SetAnnotations(annotations)
	resource, _ := federatedtypes.HPATarget(target.GetKind())
	if _, err := fed.Resource(resource).Namespace(target.GetNamespace()).Update(ctx, target, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("marking %s %s/%s as the target of HPA %s: %w", target.GetKind(), target.GetNamespace(), target.GetName(), hpa.GetName(), err)
	}
	return nil
}

// Release gives a deleted HPA's target its replica counts back.
func Release(ctx context.Context, fed dynamic.Interface, hpas schema.GroupVersionResource, hpa *unstructured.Unstructured) error {
	target, err := Of(ctx, fed, hpa)
	if err != nil || target == nil {
		return err
	}
	return Mark(ctx, fed, hpas, hpa, target, nil)
}
