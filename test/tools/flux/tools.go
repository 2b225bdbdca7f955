//go:build tools

// Package tools pins Flux's source-controller and kustomize-controller, the
// GitOps engine the gitops e2e suite drives the federation with. Their own
// go.mod files replace their api modules with ./api, which rules out
// `go install`; here the published api modules of the same release stand
// in, and their other replace rules are copied below in go.mod.
package tools

import (
	_ "github.com/fluxcd/kustomize-controller"
	_ "github.com/fluxcd/source-controller"
)
