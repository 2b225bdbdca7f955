#!/usr/bin/env bash
# Prints the federation's version, as `git describe --tags --always --dirty`
# would: the release tag (v0.1.0), or the commits since it and the commit
# (v0.1.0-3-g56e1a36), and -dirty for a changed tree. A clone without tags
# gets the same from the tree: VERSION holds the last release, and the
# commit that last changed VERSION is that release's. Outside a git
# checkout it prints nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
git rev-parse --git-dir >/dev/null 2>&1 || exit 0
if git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null; then
  exit 0
fi
release=$(cat VERSION 2>/dev/null || true)
since=$(git log -1 --format=%H -- VERSION 2>/dev/null || true)
if [ -z "$release" ] || [ -z "$since" ]; then
  git describe --tags --always --dirty
  exit 0
fi
version=$release
commits=$(git rev-list --count "$since..HEAD")
if [ "$commits" -gt 0 ]; then
  version="$release-$commits-g$(git rev-parse --short HEAD)"
fi
git update-index -q --refresh >/dev/null 2>&1 || true
git diff-index --quiet HEAD -- || version="$version-dirty"
echo "$version"
