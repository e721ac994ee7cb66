# devices/console: virtio-console, its ports as the guest command's standard streams. Included by
# devices/devices.mk after VIRTIO_SRCS and VIRTIO_FAKES are defined.
CONSOLE_SRCS := devices/console/vcon_ctrl.c devices/console/virtio_console.c
LIB_SRCS += $(CONSOLE_SRCS) devices/console/console_kind.c
KIND_GUEST_MODULES += virtio_console

UNIT_TESTS += vcon_ctrl virtio_console
test_vcon_ctrl_SRCS := devices/console/vcon_ctrl.c devices/console/test_vcon_ctrl.c
# The workers run confined (kill mode) to their role, as in ringvm: vmm/seccomp.c.
test_virtio_console_SRCS := $(CONSOLE_SRCS) $(VIRTIO_SRCS) $(VIRTIO_FAKES) tests/support/mmio_driver.c \
	vmm/seccomp.c devices/console/test_virtio_console.c
