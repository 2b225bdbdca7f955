// Package v1beta1 holds the federation/v1beta1 API types: the Cluster that
// registers a member cluster with the federation.
//
// +k8s:deepcopy-gen=package
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.github.federation-v1.federation.pkg.apis.federation.v1beta1
// +groupName=federation
package v1beta1
