/* console_kind.c: the command's streams as a device kind: one virtio-console, and the parameter that tells PID 1 to use it. */
#include "devices/console/console_kind.h"

#include <string.h>

#include "devices/console/virtio_console.h"
#include "guest/protocol.h"
#include "vmm/errmsg.h"
#include "vmm/kcmdline.h"
#include "vmm/kconfig.h"
#include "include/ringvm.h"

static unsigned int console_kind_count(const struct device_kind_ctx *ctx)
{
	return ctx->streams ? 1 : 0;
}

/* Creating or attaching the device failed (dev unused: ctx says which of the two it carries). */
static void console_kind_attach_error(const struct device_kind_ctx *ctx, void *dev, int ret, char *err,
				      size_t errlen)
{
	errmsg(err, errlen, ret, "the command's %s (virtio-console): %s",
	       ctx->streams->streams ? "standard streams" : "signal port", strerror(-ret));
}

static int console_kind_create(const struct device_kind_ctx *ctx, unsigned int i, void **dev,
			       struct virtio_dev **vdev, char *err, size_t errlen)
{
	const struct console_streams *s = ctx->streams;
	const struct vcon_port_config ports[4] = {
		{ RINGVM_PORT_STDIN, s->fds[0], true, true }, /* the command's own fd 0: EOF sticks */
		{ RINGVM_PORT_STDOUT, s->fds[1], false, false },
		{ RINGVM_PORT_STDERR, s->fds[2], false, false },
		{ RINGVM_PORT_SIGNAL, s->signal_fd, true, false },
	};
	struct vcon_dev *d;
	/* Without streams the signal port alone (port 0). */
	int ret = s->streams ? vcon_create(ports, 4, &d) : vcon_create(ports + 3, 1, &d);
	if (ret) {
		console_kind_attach_error(ctx, NULL, ret, err, errlen);
		return ret;
	}
	*dev = d;
	*vdev = vcon_virtio_dev(d);
	return 0;
}

static void console_kind_destroy(void *dev)
{
	vcon_destroy(dev);
}

/* Streams: PID 1 wires the command to the ports. A tty: the signal port alone. */
static int console_kind_guest_cmdline(const struct device_kind_ctx *ctx, void *const *devs, unsigned int n,
				      struct kcmdline *out)
{
	return kcmdline_add(out, " %s%s", ctx->streams->streams ? RINGVM_CMDLINE_STDIO : RINGVM_CMDLINE_SIGNALS,
			    RINGVM_STDIO_VIRTIO);
}

/* The streams need the driver; the signal port alone (a terminal) is PID 1's extra, done without. */
static const struct kconfig_option console_kind_kconfig[] = {
	{ "VIRTIO_CONSOLE", KCONFIG_NEED_YM, 0, "a command's stdin, stdout and stderr without a terminal" },
};

static unsigned int console_kind_kconfig_uses(const struct ringvm_config *cfg)
{
	return ringvm_config_wants_streams(cfg) ? KCONFIG_USED : 0;
}

const struct device_kind console_kind = {
	.name = "console",
	.role = SECCOMP_ROLE_WORKER_CONSOLE,
	.count = console_kind_count,
	.create = console_kind_create,
	.attach_error = console_kind_attach_error,
	.destroy = console_kind_destroy,
	.guest_cmdline = console_kind_guest_cmdline,
	.what_too_long = "the command's streams",
	.kconfig = console_kind_kconfig,
	.nr_kconfig = sizeof(console_kind_kconfig) / sizeof(console_kind_kconfig[0]),
	.kconfig_uses = console_kind_kconfig_uses,
};
