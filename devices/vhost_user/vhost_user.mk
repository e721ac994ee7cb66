# devices/vhost_user: the vhost-user back-end transport (ringvm serve). Included by devices/devices.mk.

# The message decoder (pure), the memory table, socket I/O and the connection state machine.
VU_SRCS := devices/vhost_user/vu_decode.c devices/vhost_user/vu_mem.c devices/vhost_user/vu_io.c \
	devices/vhost_user/vu_backend.c
LIB_SRCS += $(VU_SRCS)
