// Package openapi holds the generated OpenAPI definitions of the types this
// project serves that Kubernetes does not generate: the federation group
// and extensions/v1beta1. Regenerate with hack/update-codegen.sh.
package openapi
