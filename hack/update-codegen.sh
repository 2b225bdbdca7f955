#!/usr/bin/env bash
# Regenerates the generated code: deepcopy functions of the federation API
# types and the OpenAPI definitions of the types Kubernetes does not
# generate (the federation group and extensions/v1beta1).
# The generators are the module's tools (see the tool block of go.mod).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module="github.com/federation-v1/federation"
cd "$root"

go tool deepcopy-gen \
	--go-header-file hack/boilerplate.go.txt \
	--output-file zz_generated.deepcopy.go \
	"$module/pkg/apis/federation/v1beta1"

go tool openapi-gen \
	--go-header-file hack/boilerplate.go.txt \
	--output-dir "$root/pkg/generated/openapi" \
	--output-pkg "$module/pkg/generated/openapi" \
	--output-file zz_generated.openapi.go \
	--output-model-name-file zz_generated.model_name.go \
	--report-filename /dev/null \
	--readonly-pkg k8s.io/api/extensions/v1beta1 \
	--readonly-pkg k8s.io/apimachinery/pkg/apis/meta/v1 \
	"$module/pkg/apis/federation/v1beta1" \
	k8s.io/api/extensions/v1beta1

# Typed clientset, listers and informers of the federation group, for the
# controller manager and kubefed.
go tool client-gen \
	--go-header-file hack/boilerplate.go.txt \
	--clientset-name versioned \
	--input-base "" \
	--input "$module/pkg/apis/federation/v1beta1" \
	--output-dir "$root/pkg/generated/clientset" \
	--output-pkg "$module/pkg/generated/clientset"

go tool lister-gen \
	--go-header-file hack/boilerplate.go.txt \
	--output-dir "$root/pkg/generated/listers" \
	--output-pkg "$module/pkg/generated/listers" \
	"$module/pkg/apis/federation/v1beta1"

go tool informer-gen \
	--go-header-file hack/boilerplate.go.txt \
	--versioned-clientset-package "$module/pkg/generated/clientset/versioned" \
	--listers-package "$module/pkg/generated/listers" \
	--output-dir "$root/pkg/generated/informers" \
	--output-pkg "$module/pkg/generated/informers" \
	"$module/pkg/apis/federation/v1beta1"
