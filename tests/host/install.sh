#!/bin/sh
# install.sh: `make install` into a DESTDIR, then the example built against that tree with pkg-config,
# dynamically and statically (install-boot.sh boots both: that part needs a /dev/kvm). Also: only
# ringvm_* exported, soname, man page, uninstall, CC/CFLAGS/WERROR. No VM here.
# Env: B (build folder, default build). TAP output.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../support/tap.sh"

dest=$tmp/stage
prefix=/usr/local
lib=$dest$prefix/lib
version=$(sed -n 's/^#define RINGVM_VERSION_STRING "\(.*\)"$/\1/p' include/ringvm.h)
part() { sed -n "s/^#define RINGVM_VERSION_$1 \([0-9]*\)$/\1/p" include/ringvm.h; }
major=$(part MAJOR)
check "the header's RINGVM_VERSION_STRING $version is MAJOR.MINOR.PATCH ($major.$(part MINOR).$(part PATCH))" \
	[ "$version" = "$major.$(part MINOR).$(part PATCH)" ]

if make -s --no-print-directory install PREFIX=$prefix DESTDIR="$dest" >"$tmp/install.log" 2>&1; then
	pass "make install PREFIX=$prefix DESTDIR=..."
else
	fail "make install: $(tail -n 5 "$tmp/install.log")"
fi
missing=""
for f in bin/ringvm lib/libringvm.a "lib/libringvm.so.$version" "lib/libringvm.so.$major" lib/libringvm.so \
	include/ringvm.h lib/pkgconfig/ringvm.pc share/man/man1/ringvm.1; do
	[ -e "$dest$prefix/$f" ] || missing="$missing $f"
done
check "every file is installed under DESTDIR$prefix${missing:+ (missing:$missing)}" [ -z "$missing" ]
outside=$(cd "$dest" && find . -mindepth 1 ! -path ".$prefix" ! -path ".$prefix/*" ! -path ./usr | head -n 3)
check "nothing outside DESTDIR$prefix${outside:+ ($outside)}" [ -z "$outside" ]
soname=$(readelf -d "$lib/libringvm.so.$version" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
check "soname is libringvm.so.\$RINGVM_VERSION_MAJOR, libringvm.so.$major (got $soname)" \
	[ "$soname" = "libringvm.so.$major" ]
# Every exported function carries the major's version node (dist/libringvm.map).
nodes=$(nm -D --defined-only "$lib/libringvm.so.$version" | awk '$2 == "T" { sub(/^[^@]*@@?/, "", $3); print $3 }' |
	sort -u | tr '\n' ' ')
check "every exported function is versioned RINGVM_$major (got: $nodes)" [ "$nodes" = "RINGVM_$major " ]
# The public structs' sizes, from the installed header, are the ones recorded for this major: a
# struct that grew without a new major would break the programs built against the soname.
if tests/support/abi_sizes.sh "$dest$prefix/include" >"$tmp/abi" 2>"$tmp/abi.err"; then
	grep -v '^#' dist/abi-sizes >"$tmp/abi.want"
	check "the installed header's struct sizes are dist/abi-sizes' for major $major ($(diff "$tmp/abi.want" "$tmp/abi" | grep '^[<>]' | tr '\n' ' '))" \
		cmp -s "$tmp/abi.want" "$tmp/abi"
else
	fail "tests/support/abi_sizes.sh: $(head -c 300 "$tmp/abi.err")"
fi

# The exported symbols are exactly the functions the header declares.
nm -D --defined-only "$lib/libringvm.so.$version" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
	sort >"$tmp/exported"
grep -o '\bringvm_[a-z_]*(' include/ringvm.h | tr -d '(' | sort -u >"$tmp/declared"
check "libringvm.so exports exactly the header's $(wc -l <"$tmp/declared") functions ($(tr '\n' ' ' <"$tmp/exported"))" \
	cmp -s "$tmp/exported" "$tmp/declared"
others=$(nm -D --defined-only "$lib/libringvm.so.$version" | awk '$2 != "A" { print $3 }' | grep -v '^ringvm_' | head -n 3)
check "no other symbol is exported${others:+ ($others)}" [ -z "$others" ]

# pkg-config from the staged tree only.
# PKG_CONFIG_PATH comes first (liburing & co. stay found); /usr/local/include is a system
# directory to pkgconf, which would drop it from --cflags.
export PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
pcv=$(pkg-config --modversion ringvm 2>&1)
check "pkg-config --modversion ringvm is the header's $version (got $pcv)" [ "$pcv" = "$version" ]
cflags=$(pkg-config --cflags ringvm) libs=$(pkg-config --libs ringvm)
check "pkg-config points into the staged tree ($cflags $libs)" \
	sh -c 'case "$1 $2" in *"$3$4/include"*"$3$4/lib"*) exit 0 ;; esac; exit 1' _ "$cflags" "$libs" "$dest" "$prefix"

# The example, copied out of the source tree so that only the installed header can be found.
cp examples/boot.c "$tmp/boot.c"
# shellcheck disable=SC2086
if (cd "$tmp" && ${CC:-cc} -Wall -Wextra -Werror $cflags boot.c $libs -o boot) >"$tmp/cc.log" 2>&1; then
	pass "examples/boot.c builds against the installed tree with pkg-config"
else
	fail "examples/boot.c does not build: $(head -c 400 "$tmp/cc.log")"
fi
resolved=$(LD_LIBRARY_PATH=$lib ldd "$tmp/boot" 2>/dev/null | sed -n 's/.*libringvm.so[^ ]* => \([^ ]*\).*/\1/p')
check "the example loads the installed libringvm.so ($resolved)" [ "$resolved" = "$lib/libringvm.so.$major" ]
# A library error needs no KVM: the kernel is read before /dev/kvm is opened.
out=$(LD_LIBRARY_PATH=$lib timeout 30 "$tmp/boot" /nonexistent/vmlinuz none 2>&1)
rc=$?
check "the example reports a library error in one line with status 125 ($out)" \
	sh -c '[ "$1" = 125 ] && [ "$(printf "%s\n" "$2" | wc -l)" = 1 ] && printf "%s" "$2" | grep -q "cannot read kernel /nonexistent/vmlinuz"' _ "$rc" "$out"
# Static linking against the installed archive: no libringvm.so needed at run time.
# shellcheck disable=SC2086
if (cd "$tmp" && ${CC:-cc} $cflags boot.c -Wl,-Bstatic -lringvm -Wl,-Bdynamic $(pkg-config --static --libs ringvm | sed 's/-lringvm//') \
	-o boot-static) >"$tmp/cc.log" 2>&1; then
	check "the example links statically with libringvm.a (no libringvm.so needed)" \
		sh -c '! readelf -d "$1" | grep -q libringvm' _ "$tmp/boot-static"
else
	fail "static link against libringvm.a: $(head -c 400 "$tmp/cc.log")"
fi
# Booting them needs a /dev/kvm: install-boot.sh does, with both examples and the installed
# libraries kept here (on a host without /dev/kvm it runs in the KVM lab, after this script).
kept=${B:-build}/install-example
rm -rf "$kept" && mkdir -p "$kept/lib" && cp -a "$lib"/libringvm.so* "$kept/lib/" &&
	cp "$tmp/boot" "$tmp/boot-static" "$kept/" 2>/dev/null
check "the examples and the installed libringvm.so are kept in $kept for install-boot.sh" \
	sh -c '[ -x "$1/boot" ] && [ -x "$1/boot-static" ] && [ -e "$1/lib/libringvm.so.$2" ]' _ "$kept" "$major"

page=$(MANWIDTH=100 man -l "$dest$prefix/share/man/man1/ringvm.1" 2>/dev/null)
check "ringvm(1) renders and names the run, serve and exit status sections" \
	sh -c 'printf "%s" "$1" | grep -q "ringvm - boot a Linux guest" && printf "%s" "$1" | grep -q "RUN OPTIONS" &&
		printf "%s" "$1" | grep -q "EXIT STATUS"' _ "$page"
"$dest$prefix/bin/ringvm" --version >"$tmp/v" 2>&1
check "the installed CLI says version $version" grep -qx "ringvm $version" "$tmp/v"

make -s --no-print-directory uninstall PREFIX=$prefix DESTDIR="$dest" >/dev/null 2>&1
left=$(find "$dest" ! -type d | head -n 3)
check "make uninstall removes every installed file${left:+ (left: $left)}" [ -z "$left" ]

# The build honours CC, CFLAGS, CPPFLAGS, LDFLAGS and WERROR (dry runs: nothing is built).
cmd=$(make -n -B --no-print-directory V=1 CC=my-cc CFLAGS=-Ofast-x CPPFLAGS=-DFROM_CPPFLAGS WERROR=0 \
	build/obj/vmm/config.o 2>&1 | grep 'my-cc')
check "make uses CC, CFLAGS and CPPFLAGS and drops -Werror with WERROR=0" \
	sh -c 'case "$1" in *-Werror*) exit 1 ;; esac; case "$1" in *-Ofast-x*) ;; *) exit 1 ;; esac
		case "$1" in *-DFROM_CPPFLAGS*) exit 0 ;; esac; exit 1' _ "$cmd"
cmd=$(make -n -B --no-print-directory V=1 LDFLAGS=-Wl,--from-ldflags build/ringvm 2>&1 | grep -- '-o build/ringvm')
check "make links with LDFLAGS" sh -c 'case "$1" in *--from-ldflags*) exit 0 ;; esac; exit 1' _ "$cmd"
cmd=$(make -n -B --no-print-directory V=1 build/obj/vmm/config.o 2>&1 | grep ' -c ')
check "the default build has -Werror" sh -c 'case "$1" in *-Werror*) exit 0 ;; esac; exit 1' _ "$cmd"

echo "1..$n"
[ "$fails" = 0 ]
