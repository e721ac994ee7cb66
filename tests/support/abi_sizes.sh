#!/bin/sh
# abi_sizes.sh HEADER_DIR: print the ABI facts of <ringvm.h> found in HEADER_DIR, one per line:
# "major N", then "struct NAME SIZE ALIGN" for every public struct, in the header's order. Compared
# with dist/abi-sizes by tests/host/install.sh: a struct whose size changed while the major did
# not breaks every program built against the installed soname. CC from the environment.
set -eu
dir=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# printf '%s\n', not echo: dash's echo would turn the C's \n into a line break.
{
	printf '%s\n' '#include <stdalign.h>' '#include <stdio.h>' '#include <ringvm.h>' 'int main(void) {' \
		'	printf("major %d\n", RINGVM_VERSION_MAJOR);'
	sed -n 's/^struct \(ringvm_[a-z_]*\) {$/\1/p' "$dir/ringvm.h" | while read -r s; do
		printf '%s\n' "	printf(\"struct $s %zu %zu\\n\", sizeof(struct $s), alignof(struct $s));"
	done
	printf '%s\n' '	return 0;' '}'
} >"$tmp/abi.c"
${CC:-cc} -std=gnu11 -I"$dir" -o "$tmp/abi" "$tmp/abi.c"
"$tmp/abi"
