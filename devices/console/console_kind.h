/* console_kind.h: the command's streams (virtio-console) as a device kind, and what the VM hands it. */
#ifndef RINGVM_CONSOLE_KIND_H
#define RINGVM_CONSOLE_KIND_H

#include <stdbool.h>

#include "devices/kind.h"

/*
 * The command's stdin, stdout and stderr on the host and the signal port's read end
 * (guest/sigfwd.h), as ringvm_create() prepared them (device_kind_ctx.streams). Without streams
 * (the command on a tty) the device carries the signal port alone, as port 0; with them the three
 * streams as the ports guest/protocol.h names (RINGVM_PORT_*) and the signal port as port 3. The
 * device works on duplicates of every fd.
 */
struct console_streams {
	bool streams;
	int fds[3]; /* with streams; else unused */
	int signal_fd;
};

/* One device when ctx->streams is set, none otherwise; ringvm_run() finds it with
   ringvm_devices_find(). */
extern const struct device_kind console_kind;

#endif
