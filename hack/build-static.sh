#!/usr/bin/env bash
# Builds static binaries of the federation for one platform into a folder,
# for the image (build/image.sh) and the release archives (hack/release.sh):
#   hack/build-static.sh OUT_DIR GOOS/GOARCH all|kubefed
# "all" is kubefed, federation-apiserver, federation-controller-manager, federation-agent,
# federation-dns (the CoreDNS build in ./dns) and etcd (the version of our
# go.mod's tool line, the one the apiserver embeds). CGO is off, so every
# binary runs without a libc (FROM scratch); -trimpath and the last
# commit's time as the build date make the same tree give the same
# binaries; -s -w drop the symbol table and DWARF (stack traces stay).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 3 ] || [[ "$2" != */* ]] || [[ "$3" != all && "$3" != kubefed ]]; then
  echo "usage: $0 OUT_DIR GOOS/GOARCH all|kubefed" >&2
  exit 2
fi
out=$1 platform=$2 set=$3
export CGO_ENABLED=0 GOOS=${platform%/*} GOARCH=${platform#*/}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH
ldflags="-s -w $(hack/version-ldflags.sh)"
go=${GO:-go}
mkdir -p "$out"
if [ "$set" = kubefed ]; then
  "$go" build -trimpath -ldflags "$ldflags" -o "$out/" ./kubefed
  exit 0
fi
"$go" build -trimpath -ldflags "$ldflags" -o "$out/" ./kubefed ./federation-apiserver ./federation-controller-manager ./federation-agent
"$go" build -trimpath -ldflags "$ldflags" -o "$out/federation-dns" ./dns
"$go" build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
