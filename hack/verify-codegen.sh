#!/usr/bin/env bash
# Fails when the generated code is not what hack/update-codegen.sh makes
# from the current sources: it regenerates into a copy of the module (with
# the generated files removed first, so stale ones show) and compares.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT

tar -C "$root" --exclude=.git --exclude=.cache --exclude=.run --exclude=./bin -cf - . | tar -C "$copy" -xf -
find "$copy" -name 'zz_generated.*' -delete
rm -rf "$copy/pkg/generated/clientset" "$copy/pkg/generated/listers" "$copy/pkg/generated/informers"
"$copy/hack/update-codegen.sh"

status=0
diff -ru "$root/pkg/generated" "$copy/pkg/generated" || status=1
generated() { (cd "$1" && find . -name 'zz_generated.*' -not -path './pkg/generated/*' | sort); }
if ! diff <(generated "$root") <(generated "$copy"); then
	echo "The set of zz_generated files differs (< committed, > generated)" >&2
	status=1
fi
while IFS= read -r file; do
	[[ -e "$copy/$file" ]] && { diff -u "$root/$file" "$copy/$file" || status=1; }
done < <(generated "$root")
if [[ $status -ne 0 ]]; then
	echo "Generated code is out of date: run hack/update-codegen.sh" >&2
fi
exit $status
