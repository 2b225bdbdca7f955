package apiserver

import (
	"strings"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
	basecompatibility "k8s.io/component-base/compatibility"
)

// servedVersion is the version /version reports: the Kubernetes version
// whose API is served. Without release ldflags, k8s.io/component-base
// reports "v0.0.0-master+$Format:%H$", which kubectl cannot parse.
type servedVersion struct {
	basecompatibility.EffectiveVersion
}

// NewEffectiveVersion returns the effective version of a server serving
// the API of Kubernetes kubeVersion (for example "1.36.3").
func NewEffectiveVersion(kubeVersion string) basecompatibility.EffectiveVersion {
	return servedVersion{basecompatibility.NewEffectiveVersionFromString(kubeVersion, "", "")}
}

// Info returns the version information, with the served Kubernetes version
// as gitVersion unless the build set one.
func (v servedVersion) Info() *apimachineryversion.Info {
	info := v.EffectiveVersion.Info()
	if info != nil && strings.Contains(info.GitVersion, "$Format") {
		info.GitVersion = "v" + v.BinaryVersion().String()
		info.GitCommit = ""
	}
	return info
}
