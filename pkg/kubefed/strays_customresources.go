package kubefed

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/federation-v1/federation/pkg/controllers/customresources"
	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// customResourceTypes are the federated types of the custom resources
// the controller manager propagates: one per CRD Established at the
// federation and not being deleted (its copies are being let go then),
// built as the controller manager builds it. A CRD whose resources cannot
// be propagated has no copies and is skipped.
func customResourceTypes(ctx context.Context, fed dynamic.Interface) ([]*federatedtypes.Type, error) {
	list, err := fed.Resource(customresources.CRDResource).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the federation's CustomResourceDefinitions: %w", err)
	}
	var out []*federatedtypes.Type
	for i := range list.Items {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, crd); err != nil {
			continue
		}
		if crd.DeletionTimestamp != nil || !customresources.Established(crd) {
			continue
		}
		if t, err := customresources.Type(crd); err == nil {
			out = append(out, t)
		}
	}
	return out, nil
}
