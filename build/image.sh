#!/usr/bin/env bash
# Builds the federation's image with podman (no Docker daemon): the static
# binaries into _output/image (hack/build-static.sh), then FROM scratch
# (build/Containerfile). Tagged IMAGE:VERSION (git describe) and IMAGE:dev.
# Building the same tree again reuses every layer.
#   IMAGE=localhost/federation build/image.sh
set -euo pipefail
cd "$(dirname "$0")/.."
image=${IMAGE:-localhost/federation}
if ! command -v podman >/dev/null 2>&1; then
  echo "make image needs podman (and runc): install them with: apt-get install -y podman runc" >&2
  exit 1
fi
version=$(hack/version.sh)
version=${version:-v0.0.0-unknown}
revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)
out=_output/image
# One build at a time: tests may build the image at once.
mkdir -p _output
exec 9>_output/image.lock
flock 9
hack/build-static.sh "$out" "linux/$(${GO:-go} env GOARCH)" all
cp LICENSE "$out/LICENSE"
# crun fails on these machines; runc works, with cgroupfs (no systemd).
podman --runtime runc --cgroup-manager=cgroupfs build \
  --file build/Containerfile \
  --build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
  --tag "$image:$version" --tag "$image:dev" \
  "$out" >&2
# The reference last, alone on stdout (test/podmanenv reads it).
echo "$image:$version"
