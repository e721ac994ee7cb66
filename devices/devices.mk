# devices: virtio transport, rings, per-queue workers, and each device in its own folder.
# Their tests are registered in tests/ (tests/unit/unit.mk, tests/fuzz/fuzz.mk).
VIRTIO_SRCS := devices/virtio/virtq.c devices/virtio/chain.c devices/virtio/uring.c \
	devices/virtio/worker.c devices/virtio/worker_life.c devices/virtio/pace.c \
	devices/virtio/core.c devices/virtio/mmio.c devices/virtio/xfer.c devices/virtio/virtq_state.c
# The table of device kinds (kind.h, built from the list in kinds.h).
LIB_SRCS += $(VIRTIO_SRCS) devices/kinds.c
include devices/vhost_user/vhost_user.mk

# Each kind's folder, in devices/kinds.h's order (its X(NAME) lines): devices/NAME/NAME.mk adds the
# kind's sources to LIB_SRCS, its CLI part to CLI_KIND_SRCS and the guest kernel modules its
# driver needs to KIND_GUEST_MODULES (guest/guest.mk puts them in the initramfs, in this order).
DEVICE_KIND_NAMES := $(shell sed -n 's/^[[:space:]]*X(\([a-z0-9_]*\)).*/\1/p' devices/kinds.h)
KIND_GUEST_MODULES :=
include $(foreach k,$(DEVICE_KIND_NAMES),devices/$(k)/$(k).mk)

# The kinds' CLI parts join the CLI (vmm/vmm.mk) once every folder has added its own.
CLI_SRCS += $(CLI_KIND_SRCS)
