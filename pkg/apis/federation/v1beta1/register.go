package v1beta1

import (
	"net/url"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/federation-v1/federation/pkg/apis/federation"
)

// SchemeGroupVersion is the group and version of these types.
var SchemeGroupVersion = schema.GroupVersion{Group: federation.GroupName, Version: "v1beta1"}

// InternalGroupVersion is the internal version of the group. The group has a
// single version, so its types double as the internal types.
var InternalGroupVersion = schema.GroupVersion{Group: federation.GroupName, Version: runtime.APIVersionInternal}

var (
	// SchemeBuilder registers the types as both v1beta1 and the internal version.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds the types of this group to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a resource name.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	for _, gv := range []schema.GroupVersion{SchemeGroupVersion, InternalGroupVersion} {
		scheme.AddKnownTypes(gv, &Cluster{}, &ClusterList{}, &ClusterProxyOptions{})
	}
	// The proxy's options come from the query and the path of the request.
	if err := scheme.AddConversionFunc((*url.Values)(nil), (*ClusterProxyOptions)(nil), func(a, b any, _ conversion.Scope) error {
		b.(*ClusterProxyOptions).Path = (*a.(*url.Values)).Get("path")
		return nil
	}); err != nil {
		return err
	}
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
