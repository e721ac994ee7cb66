# devices/console: virtio-console, its ports as the guest command's standard streams. Included by
# devices/devices.mk.
CONSOLE_SRCS := devices/console/vcon_ctrl.c devices/console/virtio_console.c
LIB_SRCS += $(CONSOLE_SRCS) devices/console/console_kind.c
KIND_GUEST_MODULES += virtio_console
# Its (empty) part in the CLI only: the kinds' CLI table has a line for every kind.
CLI_KIND_SRCS += devices/console/console_cli.c
