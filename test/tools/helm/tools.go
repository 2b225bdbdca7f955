//go:build tools

// Package tools pins Helm v3, the real client the helm e2e suite installs
// charts into the federation with.
package tools

import _ "helm.sh/helm/v3/cmd/helm"
