#!/usr/bin/env bash
# Prints the -ldflags that give the federation's binaries their version
# (pkg/version), as Kubernetes' hack/lib/version.sh does for its own:
# hack/version.sh (git describe, or the tree's VERSION), the commit, the tree state and
# the build date. Outside a git checkout it prints nothing, and the
# binaries say v0.0.0-unknown. With SOURCE_DATE_EPOCH set (make image and
# make release set the last commit's time) the build date is that time, so
# that building the same tree twice gives the same binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
git rev-parse --git-dir >/dev/null 2>&1 || exit 0
pkg=github.com/federation-v1/federation/pkg/version
describe=$(hack/version.sh)
state=clean
case "$describe" in *-dirty) state=dirty ;; esac
echo "-X $pkg.gitVersion=$describe -X $pkg.gitCommit=$(git rev-parse HEAD) -X $pkg.gitTreeState=$state -X $pkg.buildDate=$(date -u ${SOURCE_DATE_EPOCH:+--date=@$SOURCE_DATE_EPOCH} +%Y-%m-%dT%H:%M:%SZ)"
