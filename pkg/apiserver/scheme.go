package apiserver

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	appsinstall "k8s.io/kubernetes/pkg/apis/apps/install"
	authenticationinstall "k8s.io/kubernetes/pkg/apis/authentication/install"
	authorizationinstall "k8s.io/kubernetes/pkg/apis/authorization/install"
	autoscalinginstall "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	batchinstall "k8s.io/kubernetes/pkg/apis/batch/install"
	certificatesinstall "k8s.io/kubernetes/pkg/apis/certificates/install"
	coordinationinstall "k8s.io/kubernetes/pkg/apis/coordination/install"
	coreinstall "k8s.io/kubernetes/pkg/apis/core/install"
	extensionsinstall "k8s.io/kubernetes/pkg/apis/extensions/install"
	networkinginstall "k8s.io/kubernetes/pkg/apis/networking/install"
	policyinstall "k8s.io/kubernetes/pkg/apis/policy/install"
	rbacinstall "k8s.io/kubernetes/pkg/apis/rbac/install"

	federationinstall "github.com/federation-v1/federation/pkg/apis/federation/install"
)

// The server serves Kubernetes' own types with Kubernetes' own scheme
// (legacyscheme), so that its conversions, defaulting and validation apply
// unchanged. The federation group is added to the same scheme.
func init() {
	coreinstall.Install(legacyscheme.Scheme)
	appsinstall.Install(legacyscheme.Scheme)
	extensionsinstall.Install(legacyscheme.Scheme)
	networkinginstall.Install(legacyscheme.Scheme)
	policyinstall.Install(legacyscheme.Scheme)
	batchinstall.Install(legacyscheme.Scheme)
	autoscalinginstall.Install(legacyscheme.Scheme)
	rbacinstall.Install(legacyscheme.Scheme)
	authorizationinstall.Install(legacyscheme.Scheme)
	authenticationinstall.Install(legacyscheme.Scheme)
	coordinationinstall.Install(legacyscheme.Scheme)
	certificatesinstall.Install(legacyscheme.Scheme)
	federationinstall.Install(legacyscheme.Scheme)

	// The types every API server needs for discovery and errors.
	metav1.AddToGroupVersion(legacyscheme.Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	legacyscheme.Scheme.AddUnversionedTypes(unversioned,
		&metav1.Status{},
		&metav1.APIVersions{},
		&metav1.APIGroupList{},
		&metav1.APIGroup{},
		&metav1.APIResourceList{},
	)
}
