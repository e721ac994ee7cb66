# guest: what runs inside the VM (kernel fetched from Debian, PID 1, initramfs).
#
# The guest's files live in build/guest whatever SAN says: PID 1 is built with musl-gcc, not with the
# sanitizers, and the kernel does not depend on how ringvm is compiled.

GUEST_DIR := $(BUILD_ROOT)/guest
GUEST_KERNEL_DIR := $(GUEST_DIR)/kernel
GUEST_KERNEL := $(GUEST_KERNEL_DIR)/vmlinuz
GUEST_VMLINUX := $(GUEST_KERNEL_DIR)/vmlinux
GUEST_INIT := $(GUEST_DIR)/init
# lz4 is the fastest format for the kernel to unpack (see guest/mkinitramfs.sh); gzip|zstd|xz|none work.
# The name does not say which: ringvm looks for initramfs.img next to its binary (vmm/main.c).
GUEST_COMPRESS := lz4
GUEST_INITRD := $(GUEST_DIR)/initramfs.img
# Their dependencies (virtio, virtio_ring) come along through guest/kmod-closure.sh. Each device kind's
# own come from its folder's fragment (KIND_GUEST_MODULES, devices/NAME/NAME.mk). pvpanic_mmio comes
# first: from the moment it binds, a panic is reported through it (arch/x86/legacy.c).
GUEST_MODULES := pvpanic_mmio virtio_mmio $(KIND_GUEST_MODULES)
# The list as a file, rewritten only when it changes: the initramfs depends on it, wherever the
# list was written.
GUEST_MODULES_LIST := $(GUEST_DIR)/modules.list
$(GUEST_MODULES_LIST): guest-modules-changed
	@mkdir -p $(dir $@)
	$(Q)echo '$(GUEST_MODULES)' | cmp -s - $@ || echo '$(GUEST_MODULES)' >$@
.PHONY: guest-modules-changed
# PID 1: console, modules and the command (init.c), its messages (say.c), its mounts (fs.c, mounts.c),
# the command's streams over virtio-console (stdio.c, relay.c, vport.c), its environment, directory and
# user (launch.c).
GUEST_INIT_SRCS := guest/init.c guest/drain.c guest/say.c guest/fs.c guest/mounts.c guest/cmdline.c \
	guest/stdio.c guest/relay.c guest/vport.c guest/launch.c guest/sigfwd.c

# The encoder is the VMM's, the decoder PID 1's: one implementation for both ends (likewise the signal
# port's byte).
LIB_SRCS += guest/cmdline.c guest/sigfwd.c
DEPS_PKGS += musl-tools busybox-static cpio kmod lz4 linux-libc-dev
ALL_TARGETS += $(GUEST_KERNEL) $(GUEST_VMLINUX) $(GUEST_INITRD)

# fetch-kernel.sh makes vmlinuz and version together, and does nothing when both exist.
$(GUEST_KERNEL_DIR)/version: | $(DEPS_STAMP)
	@$(if $(Q),echo "  FETCH   $(GUEST_KERNEL_DIR)")
	$(Q)guest/fetch-kernel.sh cloud-amd64 $(GUEST_KERNEL_DIR)

$(GUEST_KERNEL): | $(GUEST_KERNEL_DIR)/version
	$(Q)test -f $@

$(GUEST_VMLINUX): $(GUEST_KERNEL_DIR)/version guest/extract-vmlinux.sh
	@$(if $(Q),echo "  UNZIP   $@")
	$(Q)guest/extract-vmlinux.sh $(GUEST_KERNEL) $@ >/dev/null

# musl brings no kernel headers: PID 1 gets the kernel's uapi (linux/, asm/, asm-generic/ from
# Debian's linux-libc-dev) through links of their own, never the rest of glibc's /usr/include.
GUEST_UAPI := $(GUEST_DIR)/uapi
$(GUEST_UAPI)/.linked: | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(Q)ln -sfn /usr/include/linux $(GUEST_UAPI)/linux && \
		ln -sfn /usr/include/$(shell gcc -dumpmachine)/asm $(GUEST_UAPI)/asm && \
		ln -sfn /usr/include/asm-generic $(GUEST_UAPI)/asm-generic && touch $@

$(GUEST_INIT): $(GUEST_INIT_SRCS) guest/drain.h guest/say.h guest/fs.h guest/mounts.h guest/cmdline.h guest/protocol.h \
		guest/stdio.h guest/relay.h guest/vport.h guest/launch.h guest/sigfwd.h $(GUEST_UAPI)/.linked | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  MUSLCC  $@")
	$(Q)musl-gcc -static -Os -s -std=gnu11 $(WARNINGS) -I. -isystem $(GUEST_UAPI) -o $@ $(GUEST_INIT_SRCS)

$(GUEST_INITRD): $(GUEST_INIT) $(GUEST_KERNEL_DIR)/version guest/mkinitramfs.sh guest/kmod-closure.sh \
		guest/guest.mk $(GUEST_MODULES_LIST)
	@$(if $(Q),echo "  CPIO    $@")
	$(Q)COMPRESS=$(GUEST_COMPRESS) guest/mkinitramfs.sh $(GUEST_INIT) $(GUEST_KERNEL_DIR) $@ \
		$(GUEST_MODULES) >/dev/null

# PID 1 run for real, without a kernel: in user, PID, mount and network namespaces, chrooted into
# the tree guest/mkinitramfs.sh staged next to the archive (TAP). Needs unprivileged user namespaces;
# never loads a module or powers off.
.PHONY: guest-smoke
guest-smoke: $(GUEST_INITRD)
	tests/host/guest-init.sh $(GUEST_INITRD).d

# The real kernel and initramfs under QEMU (TCG here), PID 1's status through QEMU's isa-debug-exit
# on the exit port (TAP, ~1 min). Checks the guest side of the protocol without ringvm.
.PHONY: guest-boot-qemu
guest-boot-qemu: $(GUEST_KERNEL) $(GUEST_INITRD)
	tests/host/guest-boot-qemu.sh $(GUEST_KERNEL) $(GUEST_INITRD)

# The bookworm-backports kernel (6.12): its virtiofs driver spreads requests over several queues.
# `make guest-bpo` builds it for tests/integration/fs_mq.sh (`make test` does). Modules come .ko.xz
# and are unpacked.
GUEST_BPO_KERNEL_DIR := $(GUEST_DIR)/kernel-bpo
GUEST_BPO_KERNEL := $(GUEST_BPO_KERNEL_DIR)/vmlinuz
GUEST_BPO_INITRD := $(GUEST_DIR)/initramfs-bpo.img
.PHONY: guest-bpo
guest-bpo: $(GUEST_BPO_KERNEL) $(GUEST_BPO_INITRD)

$(GUEST_BPO_KERNEL_DIR)/version: | $(DEPS_STAMP)
	@$(if $(Q),echo "  FETCH   $(GUEST_BPO_KERNEL_DIR)")
	$(Q)guest/fetch-kernel.sh cloud-amd64 $(GUEST_BPO_KERNEL_DIR) bookworm-backports

$(GUEST_BPO_KERNEL): | $(GUEST_BPO_KERNEL_DIR)/version
	$(Q)test -f $@

$(GUEST_BPO_INITRD): $(GUEST_INIT) $(GUEST_BPO_KERNEL_DIR)/version guest/mkinitramfs.sh \
		guest/kmod-closure.sh guest/guest.mk $(GUEST_MODULES_LIST)
	@$(if $(Q),echo "  CPIO    $@")
	$(Q)COMPRESS=$(GUEST_COMPRESS) guest/mkinitramfs.sh $(GUEST_INIT) $(GUEST_BPO_KERNEL_DIR) $@ \
		$(GUEST_MODULES) >/dev/null

# ringvm run --kernel TREE runs tree-initramfs.sh from next to its binary (vmm/main.c finds
# build/guest/ from build/ringvm and build/san/ringvm alike), with the two scripts it calls.
GUEST_TREE_TOOLS := $(addprefix $(GUEST_DIR)/,mkinitramfs.sh kmod-closure.sh)
ALL_TARGETS += $(GUEST_TREE_TOOLS) $(GUEST_DIR)/tree-initramfs.sh
$(GUEST_TREE_TOOLS): $(GUEST_DIR)/%.sh: guest/%.sh
	@mkdir -p $(dir $@)
	$(Q)install -m 0755 $< $@
# tree-initramfs.sh gets the device kinds' boot modules (KIND_GUEST_MODULES) written in: a tree's
# cache (vmm/cli_tree.c) is keyed on the installed script, so a new kind's modules rebuild it.
$(GUEST_DIR)/tree-initramfs.sh: guest/tree-initramfs.sh $(GUEST_MODULES_LIST)
	@mkdir -p $(dir $@)
	$(Q)sed 's|@KIND_GUEST_MODULES@|$(KIND_GUEST_MODULES)|' $< >$@.tmp && chmod 0755 $@.tmp && mv $@.tmp $@

# make ktree: a small kernel build tree (Debian's linux-source, tinyconfig + ringvm's fragment, a few
# modules) for the tests of --kernel TREE (tests/integration/tree.sh) and make bench-devloop; kept in
# build/ktree/linux and rebuilt only when the package or ringvm's fragment changes.
KTREE_DIR := $(BUILD_ROOT)/ktree
DEPS_PKGS += flex bison libelf-dev bc
.PHONY: ktree
ktree: $(BUILD_ROOT)/ringvm | $(DEPS_STAMP)
	@$(if $(Q),echo "  KTREE   $(KTREE_DIR)/linux")
	$(Q)guest/build-ktree.sh $(BUILD_ROOT)/ringvm $(KTREE_DIR)

guest: $(GUEST_KERNEL) $(GUEST_VMLINUX) $(GUEST_INITRD)
.PHONY: guest
