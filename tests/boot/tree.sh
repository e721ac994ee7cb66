#!/bin/bash
# tree.sh: `ringvm run --kernel TREE` and `ringvm kconfig` on the host, with a stand-in tree whose
# "kernel" is a firmware payload (PVH vmlinux): the image is found, the .config checked (and refused
# in one line naming what is missing), the initramfs made and reused, --root / added. The real
# kernel tree boots in the lab (tests/integration/tree.sh). Env: RINGVM, FIRMWARE_DIR. TAP.
set -u
cd "$(dirname "$0")/../.." || exit 1
ringvm=${RINGVM:-build/ringvm}
fw=${FIRMWARE_DIR:-build/firmware}
export RINGVM_ALLOW_PVM=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ringvm-tree.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
n=0
fails=0
check() { # check NAME 'SHELL EXPRESSION'
	n=$((n + 1))
	if eval "$2"; then
		echo "ok $n - $1"
	else
		fails=$((fails + 1))
		echo "not ok $n - $1 (status $rc; stdout: $(tail -c 300 "$tmp/out"); stderr: $(tail -c 500 "$tmp/err"))"
	fi
}
run() { timeout 60 "$ringvm" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null; rc=$?; }

"$ringvm" kconfig >"$tmp/frag"
rc=$?
: >"$tmp/out"
cp "$tmp/frag" "$tmp/err"
check "ringvm kconfig prints the fragment" \
	'[ "$rc" = 0 ] && grep -qx CONFIG_ACPI=y "$tmp/frag" && grep -qx CONFIG_VIRTIO_FS=y "$tmp/frag" && grep -qx CONFIG_SERIAL_8250_CONSOLE=y "$tmp/frag"'

# A stand-in tree: .config = the fragment, the "kernel" a PVH payload that exits 42.
tree=$tmp/linux
mkdir -p "$tree/include/config"
grep '^CONFIG_' "$tmp/frag" | grep -v '^CONFIG_MODULES=' >"$tree/.config"
echo 6.1.0-standin >"$tree/include/config/kernel.release"
run run --kernel "$tree" -- true
check "a tree without bzImage or vmlinux is refused in one line" \
	'[ "$rc" = 125 ] && grep -q "neither arch/x86/boot/bzImage nor vmlinux" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ]'
cp "$fw/exit.elf" "$tree/vmlinux"
run run --kernel "$tree" --verbose -- true
# (With a command, the serial console is ringvm's stderr: stdout is the command's own.)
check "a tree boots its vmlinux (through PVH)" '[ "$rc" = 42 ] && grep -q "hello from firmware" "$tmp/err"'
check "--root / is the default for a tree" 'grep -q "ringvm.root=" "$tmp/err"'
cache=$(ls -d "$tmp"/cache/ringvm/trees/*linux 2>/dev/null | head -n1)
check "its initramfs is made in the cache, with ringvm's PID 1" \
	'[ -n "$cache" ] && [ -s "$cache/initramfs.img" ] && cpio -t <"$cache/initramfs.img" 2>/dev/null | grep -qx init'
stamp=$(stat -c %.9Y "$cache/initramfs.img" 2>/dev/null)
run run --kernel "$tree" -- true
check "... and reused while the tree is unchanged" '[ "$rc" = 42 ] && [ "$(stat -c %.9Y "$cache/initramfs.img")" = "$stamp" ]'
touch "$tree/.config"
run run --kernel "$tree" -- true
check "... and made again when the tree changed" '[ "$rc" = 42 ] && [ "$(stat -c %.9Y "$cache/initramfs.img")" != "$stamp" ]'
run run --kernel "$tree" --root "$tmp,rw" --verbose -- true
check "with another --root, the tree is shared at its own path" \
	'[ "$rc" = 42 ] && grep -q "ringvm.mount=" "$tmp/err" && grep -qF "$tree" "$tmp/err"'

# Missing options: refused before anything boots, in one line naming each.
grep -v -e '^CONFIG_ACPI=' -e '^CONFIG_VIRTIO_FS=' -e '^CONFIG_VIRTIO_BLK=' -e '^CONFIG_MODULES=' "$tmp/frag" |
	grep '^CONFIG_' >"$tree/.config"
echo "CONFIG_SERIAL_8250=m" >>"$tree/.config"
sed -i '/^CONFIG_SERIAL_8250=y/d' "$tree/.config"
run run --kernel "$tree" -- true
check "a .config without ACPI, virtio-fs and a built-in 8250 is refused in one line naming them" \
	'[ "$rc" = 125 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q "CONFIG_ACPI=y" "$tmp/err" && grep -q "CONFIG_VIRTIO_FS=y" "$tmp/err" && grep -q "CONFIG_SERIAL_8250=y" "$tmp/err" && ! grep -q "CONFIG_VIRTIO_BLK" "$tmp/err"'
run run --kernel "$tree" --disk "$tree/.config,readonly" -- true
check "with --disk, virtio-blk is asked for too" '[ "$rc" = 125 ] && grep -q "CONFIG_VIRTIO_BLK=y" "$tmp/err"'
rm "$tree/.config"
run run --kernel "$tree" -- true
check "no .config and no embedded configuration: refused in one line" \
	'[ "$rc" = 125 ] && grep -q "no .config" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ]'
# Without .config, the configuration built into the image, read by the tree's own extract-ikconfig
# (a stand-in here that checks it is given the image).
mkdir -p "$tree/scripts"
printf '#!/bin/sh
[ "$1" = "%s" ] && cat "%s"
' "$tree/vmlinux" "$tmp/frag" >"$tree/scripts/extract-ikconfig"
chmod +x "$tree/scripts/extract-ikconfig"
run run --kernel "$tree" -- true
check "without .config, the image's embedded configuration (scripts/extract-ikconfig) is checked" '[ "$rc" = 42 ]'
printf '#!/bin/sh
echo CONFIG_64BIT=y
' >"$tree/scripts/extract-ikconfig"
run run --kernel "$tree" -- true
check "... and an embedded configuration that lacks options is refused like a .config" \
	'[ "$rc" = 125 ] && grep -q "CONFIG_ACPI=y" "$tmp/err"'
rm "$tree/scripts/extract-ikconfig"

# kconfig --apply runs the tree's own merge_config.sh in the tree, with .config and the fragment.
mkdir -p "$tree/scripts/kconfig"
cat >"$tree/scripts/kconfig/merge_config.sh" <<'EOF'
#!/bin/sh
# stand-in: record how it was called, and merge by concatenation
echo "$PWD $*" >merge.log
cat "$@" >.config.new && mv .config.new .config
EOF
chmod +x "$tree/scripts/kconfig/merge_config.sh"
echo "CONFIG_EXISTING=y" >"$tree/.config"
run kconfig --apply "$tree"
check "kconfig --apply: the tree's merge_config.sh, in the tree, on .config and the fragment" \
	'[ "$rc" = 0 ] && [ "$(cut -d" " -f1,2 "$tree/merge.log")" = "$tree $tree/.config" ] && grep -qx CONFIG_EXISTING=y "$tree/.config" && grep -qx CONFIG_ACPI=y "$tree/.config"'
printf '#!/bin/sh\necho CONFIG_64BIT=y >.config\n' >"$tree/scripts/kconfig/merge_config.sh"
run kconfig --apply "$tree"
check "kconfig --apply says what the merged .config still lacks" '[ "$rc" = 1 ] && grep -q "still lacks CONFIG_ACPI=y" "$tmp/err"'
run kconfig --apply "$tmp/nowhere"
check "kconfig --apply on a missing tree: one line, 125" '[ "$rc" = 125 ] && [ "$(wc -l <"$tmp/err")" = 1 ]'
run kconfig --bogus
check "kconfig with a bad option: 125" '[ "$rc" = 125 ]'

echo "1..$n"
[ "$fails" = 0 ]
