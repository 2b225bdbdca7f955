#!/usr/bin/env bash
# Builds the release archives into _output/release/VERSION/ (make release),
# one per platform, federation-VERSION-OS-ARCH.tar.gz, and SHA256SUMS:
# kubefed for every platform of PLATFORMS; the control plane's binaries
# (federation-apiserver, federation-controller-manager, federation-dns,
# etcd) too for those of SERVER_PLATFORMS, beside kubefed, which finds them
# there (kubefed init --local works from the unpacked folder). VERSION is
# hack/version.sh (git describe). Each archive holds one folder of its own name with the
# binaries, LICENSE and CHANGELOG.md; archives are reproducible (sorted,
# owner 0, the last commit's time as every mtime and build date).
set -euo pipefail
cd "$(dirname "$0")/.."
PLATFORMS=${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64}
SERVER_PLATFORMS=${SERVER_PLATFORMS:-linux/amd64 linux/arm64}
version=$(hack/version.sh)
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}
export SOURCE_DATE_EPOCH
dest=_output/release/$version
work=_output/release/.work
rm -rf "$dest" "$work"
mkdir -p "$dest" "$work"

# archive NAME all|kubefed PLATFORM: builds the binaries for PLATFORM into
# a folder NAME and packs it.
archive() {
  local name=$1 binaries=$2 platform=$3
  echo "$name: $binaries for $platform"
  hack/build-static.sh "$work/$name" "$platform" "$binaries"
  cp LICENSE CHANGELOG.md "$work/$name/"
  tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -cf - "$name" |
    gzip -n -9 >"$dest/$name.tar.gz"
}
for p in $PLATFORMS; do
  binaries=kubefed
  case " $SERVER_PLATFORMS " in *" $p "*) binaries=all ;; esac
  archive "federation-$version-${p%/*}-${p#*/}" "$binaries" "$p"
done
rm -rf "$work"
(cd "$dest" && sha256sum -- *.tar.gz >SHA256SUMS)
echo "release $version in $dest:"
ls -l "$dest"
