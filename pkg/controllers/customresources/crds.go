package customresources

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/federatedtypes"
)

// CRDsName is the name in --controllers of the propagation controller of
// CustomResourceDefinitions.
const CRDsName = "customresourcedefinitions"

// CRDResource is the resource of CustomResourceDefinitions.
var CRDResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDs is the federated type of CustomResourceDefinitions: cluster-scoped,
// copied whole (spec) to the selected members. Their deletion is held by
// the federation's finalizer, the CRD store writing no tombstones.
var CRDs = &federatedtypes.Type{
	Name:      CRDsName,
	Resource:  CRDResource,
	Kind:      "CustomResourceDefinition",
	Fields:    []string{"spec"},
	Finalized: true,
}
