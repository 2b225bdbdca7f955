package hostplane

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/federation-v1/federation/pkg/poll"
)

// Deleted says what Delete did.
type Deleted struct {
	// Objects were deleted ("Kind/name").
	Objects []string
	// KeptClaims are etcd's PersistentVolumeClaims, kept without deleteData.
	KeptClaims []string
}

// found is an object of the plane in the host.
type found struct {
	gvr  schema.GroupVersionResource
	kind string
	obj  unstructured.Unstructured
}

func (f found) String() string { return f.kind + "/" + f.obj.GetName() }

// Delete deletes every object of federation name in the namespace (its
// instance label: the chart's objects and the credentials Secret), waits
// until they are gone, and keeps etcd's PersistentVolumeClaims unless
// deleteData, as `helm uninstall` keeps what a StatefulSet's claims hold.
// Objects a controller owns (pods, ReplicaSets) go with their owner.
func (h *Host) Delete(ctx context.Context, name string, deleteData bool, timeout time.Duration) (*Deleted, error) {
	objs, err := h.find(ctx, fmt.Sprintf("%s=%s,%s=%s", LabelName, AppName, LabelInstance, name))
	if err != nil {
		return nil, err
	}
	var rest, claims []found
	for _, f := range objs {
		if f.kind == "PersistentVolumeClaim" {
			claims = append(claims, f)
		} else {
			rest = append(rest, f)
		}
	}
	d := &Deleted{}
	// The workloads go first and entirely (foreground), so that no pod
	// still uses a claim deleted after them.
	if err := h.deleteAndWait(ctx, rest, timeout); err != nil {
		return nil, err
	}
	for _, f := range rest {
		d.Objects = append(d.Objects, f.String())
	}
	if deleteData {
		if err := h.deleteAndWait(ctx, claims, timeout); err != nil {
			return nil, err
		}
		for _, f := range claims {
			d.Objects = append(d.Objects, f.String())
		}
	} else {
		for _, f := range claims {
			d.KeptClaims = append(d.KeptClaims, f.obj.GetName())
		}
	}
	return d, nil
}

// DeleteSelected deletes every object of the namespace that selector (a
// label selector) matches and no controller owns, as Delete does, waits
// until they are gone and returns them ("Kind/name"): what another chart
// rendered into the namespace (a member's agent).
func (h *Host) DeleteSelected(ctx context.Context, selector string, timeout time.Duration) ([]string, error) {
	objs, err := h.find(ctx, selector)
	if err != nil {
		return nil, err
	}
	if err := h.deleteAndWait(ctx, objs, timeout); err != nil {
		return nil, err
	}
	var deleted []string
	for _, f := range objs {
		deleted = append(deleted, f.String())
	}
	return deleted, nil
}

// find lists the namespaced objects of every kind the host serves that
// selector matches, leaving out those a controller owns.
func (h *Host) find(ctx context.Context, selector string) ([]found, error) {
	lists, err := h.Kube.Discovery().ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("reading the cluster's APIs: %w", err)
	}
	var out []found
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			// Events are not the plane's; Endpoints go with their Service
			// (the endpoints controller keeps them in step).
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") ||
				r.Name == "events" || (gv.Group == "" && r.Name == "endpoints") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			items, err := h.Dynamic.Resource(gvr).Namespace(h.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("listing %s in %s: %w", r.Name, h.Namespace, err)
			}
			for _, obj := range items.Items {
				if metav1.GetControllerOfNoCopy(&obj) == nil {
					out = append(out, found{gvr: gvr, kind: r.Kind, obj: obj})
				}
			}
		}
	}
	return out, nil
}

// deleteAndWait deletes objs in the foreground and waits until they are gone.
func (h *Host) deleteAndWait(ctx context.Context, objs []found, timeout time.Duration) error {
	foreground := metav1.DeletePropagationForeground
	for _, f := range objs {
		err := h.Dynamic.Resource(f.gvr).Namespace(h.Namespace).Delete(ctx, f.obj.GetName(), metav1.DeleteOptions{PropagationPolicy: &foreground})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s in %s: %w", f, h.Namespace, err)
		}
	}
	return poll.UntilEvery(ctx, timeout, 500*time.Millisecond, "the deleted objects in "+h.Namespace+" to be gone", func(ctx context.Context) error {
		var left []string
		for _, f := range objs {
			obj, err := h.Dynamic.Resource(f.gvr).Namespace(h.Namespace).Get(ctx, f.obj.GetName(), metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				return err
			case obj.GetUID() == f.obj.GetUID() || f.obj.GetUID() == types.UID(""):
				left = append(left, f.String())
			}
		}
		if len(left) > 0 {
			return fmt.Errorf("still there: %s", strings.Join(left, ", "))
		}
		return nil
	})
}
