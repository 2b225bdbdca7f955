// Package install registers the federation API group in a scheme.
package install

import (
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	federationv1beta1 "github.com/federation-v1/federation/pkg/apis/federation/v1beta1"
)

// Install registers the federation group and its only version, v1beta1, in scheme.
func Install(scheme *runtime.Scheme) {
	utilruntime.Must(federationv1beta1.AddToScheme(scheme))
	utilruntime.Must(scheme.SetVersionPriority(federationv1beta1.SchemeGroupVersion))
}
