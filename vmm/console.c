/* console.c: COM1's host side: output to a descriptor (a panic line, until pvpanic binds), raw terminal input. */
#define _GNU_SOURCE
#include "console.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "vmm/layout.h"
#include "vmm/machine.h"
#include "vmm/seccomp.h"

/* printk's panic line; panic() raises the console log level first, so it shows even when quiet. */
static const char panic_marker[] = "Kernel panic - not syncing";
#define CONSOLE_ESCAPE 0x01 /* Ctrl-A */

static void console_tx(void *opaque, const uint8_t *buf, size_t len)
{
	struct console *c = opaque;
	/* Once the guest's pvpanic driver is bound, panics are known through it: the text could
	   come from any program writing to the console. Before, only the kernel writes here. */
	for (size_t i = 0; i < len && !atomic_load(&c->vm->pvpanic_bound); i++) {
		if (buf[i] == (uint8_t)panic_marker[c->panic_match])
			c->panic_match++;
		else
			c->panic_match = buf[i] == (uint8_t)panic_marker[0] ? 1 : 0;
		if (c->panic_match == sizeof(panic_marker) - 1) {
			atomic_store(&c->panicked, true);
			c->panic_match = 0;
		}
	}
	while (len && c->out_fd >= 0) {
		ssize_t n = write(c->out_fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* output closed: the guest keeps running, its console is lost */
		buf += n;
		len -= (size_t)n;
	}
}

static void console_irq(void *opaque, int level)
{
	struct console *c = opaque;
	(void)vm_irq_line(c->vm, LAYOUT_GSI_COM1, level);
}

int console_create(struct console *c, struct vm *vm, int in_fd, int out_fd, bool raw)
{
	memset(c, 0, sizeof(*c));
	c->vm = vm;
	c->out_fd = out_fd;
	c->in_fd = -1;
	struct uart_host host = { .tx = console_tx, .irq = console_irq, .opaque = c };
	uart_init(&c->uart, &host);
	int ret = vm_register_pio(vm, LAYOUT_PORT_COM1, 8, &uart8250_ops, &c->uart);
	if (ret)
		return ret;
	if (in_fd < 0 || !isatty(in_fd))
		return 0;
	c->in_fd = in_fd;
	if (raw && tcgetattr(in_fd, &c->saved) == 0) {
		struct termios t = c->saved;
		cfmakeraw(&t);
		t.c_oflag |= OPOST | ONLCR;
		if (tcsetattr(in_fd, TCSANOW, &t) < 0)
			return -errno;
		c->raw = true;
	}
	return 0;
}

/* Ctrl-A x quits, Ctrl-A Ctrl-A sends one Ctrl-A; like QEMU's -serial mon:stdio. */
static size_t console_filter(struct console *c, uint8_t *buf, size_t len)
{
	size_t out = 0;
	if (!c->raw)
		return len; /* cooked: the host's line discipline already handled the keys */
	for (size_t i = 0; i < len; i++) {
		if (c->escape) {
			c->escape = false;
			if (buf[i] == 'x') {
				vm_request_stop(c->vm, VM_STOP_HOST, 0, "stopped from the console (Ctrl-A x)");
				return out;
			}
			buf[out++] = buf[i];
		} else if (buf[i] == CONSOLE_ESCAPE) {
			c->escape = true;
		} else {
			buf[out++] = buf[i];
		}
	}
	return out;
}

static void *console_input_thread(void *arg)
{
	struct console *c = arg;
	uint8_t buf[256];
	(void)pthread_setname_np(pthread_self(), "console");
	/* Before the first byte is read; the VM does not run without it (the vCPUs wait at the gate
	   until every thread confined itself, and this one ends the run if it cannot). */
	int err = c->confine ? seccomp_confine(c->confine) : 0;
	if (err) {
		vm_request_stop(c->vm, VM_STOP_ERROR, 0, "console: seccomp: %s", strerror(-err));
		return NULL;
	}
	for (;;) {
		struct pollfd p[2] = { { c->in_fd, POLLIN, 0 }, { c->vm->stop_efd, POLLIN, 0 } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		ssize_t n = read(c->in_fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break; /* terminal closed: stop reading, the guest runs on */
		size_t len = console_filter(c, buf, (size_t)n);
		if (uart_receive(&c->uart, buf, len) < len)
			break;
	}
	return NULL;
}

int console_start(struct console *c, const struct seccomp_confinement *confine)
{
	if (c->in_fd < 0)
		return 0;
	c->confine = confine;
	int ret = pthread_create(&c->input_thread, NULL, console_input_thread, c);
	if (ret)
		return -ret;
	c->input_started = true;
	return 0;
}

void console_destroy(struct console *c)
{
	if (c->input_started) {
		uart_close(&c->uart);
		pthread_join(c->input_thread, NULL);
		c->input_started = false;
	}
	if (c->raw) {
		tcsetattr(c->in_fd, TCSANOW, &c->saved);
		c->raw = false;
	}
}
