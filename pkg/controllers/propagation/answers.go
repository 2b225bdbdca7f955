package propagation

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// writtenCopy is a member's answer to our write: the metadata of what it
// stored, or for types whose version is their shape, the whole object.
type writtenCopy interface {
	metav1.Object
	runtime.Object
}

// wholeAnswers reports whether the type's writes ask for the whole stored
// object (federatedtypes.Type.Shaped): its member caches hold whole
// objects too, whose shape a status write does not change. Every other
// type's answers are metadata only, which is cheaper to decode.
func (c *Controller) wholeAnswers() bool {
	return c.typ.Shaped && !c.typ.MetadataOnly()
}

// createIn creates desired in a member (failing with AlreadyExists when
// an object of its name is there).
func (c *Controller) createIn(ctx context.Context, cluster string, desired *unstructured.Unstructured) (writtenCopy, error) {
	if !c.wholeAnswers() {
		out, err := c.members.Create(ctx, cluster, c.typ.Resource, desired, FieldManager)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	res, err := c.memberResource(cluster, desired.GetNamespace())
	if err != nil {
		return nil, err
	}
	out, err := res.Create(ctx, desired, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// applyIn applies desired to a member server-side, taking over
// conflicting fields.
func (c *Controller) applyIn(ctx context.Context, cluster string, desired *unstructured.Unstructured) (writtenCopy, error) {
	if !c.wholeAnswers() {
		out, err := c.members.Apply(ctx, cluster, c.typ.Resource, desired, FieldManager)
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	res, err := c.memberResource(cluster, desired.GetNamespace())
	if err != nil {
		return nil, err
	}
	out, err := res.Apply(ctx, desired.GetName(), desired, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return nil, err
	}
	return out, nil
}
