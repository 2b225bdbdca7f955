package apiserver

import (
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	basecompatibility "k8s.io/component-base/compatibility"

	"github.com/federation-v1/federation/pkg/version"
)

// servedVersion is the version /version reports: the Kubernetes version
// whose API is served, carrying the federation's own build (see
// version.Served), so that a user can tell which federation answers while
// kubectl still compares the Kubernetes major and minor with its own.
type servedVersion struct {
	basecompatibility.EffectiveVersion
}

// NewEffectiveVersion returns the effective version of a server serving
// the API of Kubernetes kubeVersion (for example "1.36.3").
func NewEffectiveVersion(kubeVersion string) basecompatibility.EffectiveVersion {
	return servedVersion{basecompatibility.NewEffectiveVersionFromString(kubeVersion, "", "")}
}

// Info returns the version information: Kubernetes' major, minor and
// emulation versions, and the federation's gitVersion (in Kubernetes'
// form), commit, tree state and build date.
func (v servedVersion) Info() *apimachineryversion.Info {
	info := v.EffectiveVersion.Info()
	if info == nil {
		return nil
	}
	fed := version.Get()
	info.GitVersion = version.Served()
	info.GitCommit, info.GitTreeState, info.BuildDate = fed.GitCommit, fed.GitTreeState, fed.BuildDate
	return info
}
