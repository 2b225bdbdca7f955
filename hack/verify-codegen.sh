#!/usr/bin/env bash
# Fails when the generated code is not what hack/update-codegen.sh makes
# from the current sources: it regenerates into a copy of the module and
# compares the zz_generated.* files.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT

tar -C "$root" --exclude=.git --exclude=.cache -cf - . | tar -C "$copy" -xf -
"$copy/hack/update-codegen.sh"

status=0
while IFS= read -r file; do
	if ! diff -u "$root/$file" "$copy/$file"; then
		status=1
	fi
done < <(cd "$copy" && find . -name 'zz_generated.*' -not -path './.git/*' | sort)
while IFS= read -r file; do
	if [[ ! -e "$copy/$file" ]]; then
		echo "$file is generated no more: remove it"
		status=1
	fi
done < <(cd "$root" && find . -name 'zz_generated.*' -not -path './.git/*' | sort)
if [[ $status -ne 0 ]]; then
	echo "Generated code is out of date: run hack/update-codegen.sh" >&2
fi
exit $status
