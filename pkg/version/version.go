// Package version is the federation's own version, set at build time with
// -ldflags -X (the Makefile's build: hack/version-ldflags.sh), as
// Kubernetes sets k8s.io/component-base/version: every binary reports it
// (--version, `kubefed version`), and the federation apiserver's /version
// carries it inside a Kubernetes version kubectl can parse.
package version

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// Set by -ldflags "-X github.com/federation-v1/federation/pkg/version.NAME=VALUE".
var (
	// gitVersion is `git describe --tags --always --dirty`, e.g.
	// v0.4.0-3-g56e1a36-dirty, or 56e1a36 with no tag.
	gitVersion = ""
	// gitCommit is `git rev-parse HEAD`.
	gitCommit = ""
	// gitTreeState is "clean" or "dirty".
	gitTreeState = ""
	// buildDate is the build's time in ISO 8601, UTC.
	buildDate = ""
)

// Unknown is the version of a binary built without the ldflags (go build,
// go run): it says so rather than pretending to be a release.
const Unknown = "v0.0.0-unknown"

// Kubernetes is the Kubernetes release whose API, registry and libraries
// the federation serves and is built on.
const Kubernetes = "1.36.3"

// Get is the federation's version: gitVersion is its own, never
// Kubernetes'.
func Get() apimachineryversion.Info {
	v := gitVersion
	if v == "" {
		v = Unknown
	}
	return apimachineryversion.Info{
		GitVersion:   v,
		GitCommit:    gitCommit,
		GitTreeState: gitTreeState,
		BuildDate:    buildDate,
		GoVersion:    runtime.Version(),
		Compiler:     runtime.Compiler,
		Platform:     runtime.GOOS + "/" + runtime.GOARCH,
	}
}

// String is the one line of --version: the version, then the commit,
// tree state and build date when the build set them.
func String() string {
	info := Get()
	var details []string
	if info.GitCommit != "" {
		details = append(details, "commit "+info.GitCommit)
	}
	if info.GitTreeState != "" {
		details = append(details, "tree "+info.GitTreeState)
	}
	if info.BuildDate != "" {
		details = append(details, "built "+info.BuildDate)
	}
	details = append(details, "Kubernetes "+Kubernetes, info.GoVersion)
	return fmt.Sprintf("%s (%s)", info.GitVersion, strings.Join(details, ", "))
}

// servedPrefix starts the build metadata of a served version.
const servedPrefix = "+federation."

// notInBuildMetadata are the characters semver build metadata cannot hold.
var (
	notInBuildMetadata = regexp.MustCompile(`[^0-9A-Za-z.-]+`)
	dots               = regexp.MustCompile(`\.{2,}`)
)

// Served is the gitVersion the federation apiserver's /version reports:
// Kubernetes' version, whose major and minor kubectl compares with its own
// (its skew warning), with the federation's version as semver build
// metadata, e.g. v1.36.3+federation.v0.4.0-3-g56e1a36-dirty, as
// distributions do (v1.30.2+k3s1). kubectl parses it as semver; build
// metadata never changes what the version compares as.
func Served() string {
	meta := notInBuildMetadata.ReplaceAllString(Get().GitVersion, "-")
	// Semver identifiers are never empty: no leading, trailing or double dots.
	meta = strings.Trim(dots.ReplaceAllString(meta, "."), ".")
	if meta == "" {
		meta = "unknown"
	}
	return "v" + Kubernetes + servedPrefix + meta
}

// FromServed is the federation's version inside a served gitVersion, and
// whether it holds one (another server's /version does not).
func FromServed(gitVersion string) (string, bool) {
	_, v, ok := strings.Cut(gitVersion, servedPrefix)
	return v, ok
}
