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
