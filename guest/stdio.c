/* stdio.c: PID 1 relays the command's pipes to the virtio-console ports while it waits for it. */
#define _GNU_SOURCE
#include "guest/stdio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <linux/netlink.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest/protocol.h"
#include "guest/say.h"
#include "guest/sigfwd.h"
#include "guest/vport.h"

#define STDIO_SYS_DIR "/sys/class/virtio-ports"
#define STDIO_DRIVER_DIR "/sys/bus/virtio/drivers/virtio_console"
/*
 * The command's pipes. Their size bounds what a splice sends to a port: one chain of up to 32 pages
 * (the VMM takes 128 segments per chain, devices/console/virtio_console.c), so the port's 128
 * buffers pin at most 16 MiB of the guest's memory while the host side is slow. Measured in the lab
 * on a quiet host: 64 KiB pipes moved stdout at 0.49x a virtio-fs read, 128 KiB ones 0.68x.
 */
#define STDIO_PIPE_SIZE (32 * 4096)

int stdio_shell_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

int stdio_setup(struct stdio_relay *r, unsigned int timeout_ms, bool streams)
{
	static const char *const names[4] = { RINGVM_PORT_STDIN, RINGVM_PORT_STDOUT, RINGVM_PORT_STDERR,
					      RINGVM_PORT_SIGNAL };
	static const int flags[4] = { O_RDONLY | O_NONBLOCK, O_WRONLY | O_NONBLOCK, O_WRONLY | O_NONBLOCK,
				      O_RDONLY | O_NONBLOCK };
	/* Without the streams, only the signal port (the last): the others are "closed" (-1). */
	unsigned int first = streams ? 0 : 3;
	int ports[4] = { -1, -1, -1, -1 }, err;

	if (access(STDIO_DRIVER_DIR, F_OK) != 0)
		return -ENODEV;
	/* The port names come with uevents: wait for those rather than on short sleeps. */
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int uevents = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			     NETLINK_KOBJECT_UEVENT);
	if (uevents >= 0 && bind(uevents, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
		close(uevents);
		uevents = -1;
	}
	err = vport_open_by_name(STDIO_SYS_DIR, "/dev", names + first, flags + first, ports + first,
				 4 - first, timeout_ms, uevents);
	if (uevents >= 0)
		close(uevents);
	if (err)
		return err;
	if (!streams) {
		for (int i = 0; i < 3; i++) {
			r->child_fds[i] = -1;
			relay_init(&r->s[i], -1, -1); /* done from the start */
		}
		r->signal_fd = ports[3];
		return 0;
	}
	err = stdio_wire(r, ports);
	if (err)
		for (int j = 0; j < 4; j++)
			close(ports[j]);
	return err;
}

int stdio_wire(struct stdio_relay *r, const int ports[4])
{
	int pipes[3][2], err;

	/*
	 * stdin: the port itself is the command's fd 0, blocking. A relay would copy each byte twice
	 * more on the guest's vCPU (port -> PID 1 -> pipe), and the port already reads as a pipe
	 * does: what the host sent, then 0 once the host's stdin ended; the command closing it (or
	 * exiting) closes the guest's side, which the host sees. Measured in the lab: through the
	 * relay, `sha256sum` of stdin ran at 0.46-0.58x of the same bytes read over virtio-fs.
	 * PID 1 closes its own copy once the command has it (stdio_run).
	 */
	if (fcntl(ports[0], F_SETFL, 0) < 0)
		return -errno;
	for (int i = 1; i < 3; i++) {
		if (pipe2(pipes[i], O_CLOEXEC) < 0) {
			err = -errno;
			for (int j = 1; j < i; j++) {
				close(pipes[j][0]);
				close(pipes[j][1]);
			}
			return err;
		}
	}
	/* stdout, stderr: command -> pipe -> port. */
	r->child_fds[0] = ports[0];
	r->child_fds[1] = pipes[1][1];
	r->child_fds[2] = pipes[2][1];
	/* Larger than Linux's default 64 KiB: fewer, longer chains per byte. */
	for (int i = 1; i < 3; i++)
		(void)fcntl(pipes[i][0], F_SETPIPE_SZ, STDIO_PIPE_SIZE); /* else the default stays */
	(void)fcntl(pipes[1][0], F_SETFL, O_NONBLOCK);
	(void)fcntl(pipes[2][0], F_SETFL, O_NONBLOCK);
	relay_init(&r->s[0], -1, -1); /* nothing to relay: done from the start */
	relay_init(&r->s[1], pipes[1][0], ports[1]);
	relay_init(&r->s[2], pipes[2][0], ports[2]);
	relay_use_splice(&r->s[1]);
	relay_use_splice(&r->s[2]);
	r->signal_fd = ports[3];
	return 0;
}

static void stdio_close_signals(struct stdio_relay *r)
{
	if (r->signal_fd >= 0)
		close(r->signal_fd);
	r->signal_fd = -1;
}

/* The host sent signals: to the command's process group (its pid: it called setpgid(0, 0)). */
static void stdio_forward_signals(struct stdio_relay *r, pid_t child, short revents)
{
	int n = sigfwd_deliver(r->signal_fd, child);

	/* A hangup with nothing to read would wake every poll from now on. */
	if (n == 0 && (revents & (POLLHUP | POLLERR)))
		n = -EPIPE;
	if (n > 0)
		say_info("forwarded %d signal%s to the command", n, n == 1 ? "" : "s");
	if (n < 0) {
		if (n != -EPIPE)
			say("the signal port: %s; signals no longer reach the command", strerror(-n));
		stdio_close_signals(r);
	}
}

/* Reap every child that ended; true (with *status) when `child` was one of them. */
static bool stdio_reap(pid_t child, int *status)
{
	bool ended = false;
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if (pid == child && stdio_shell_status(st) >= 0) {
			*status = stdio_shell_status(st);
			ended = true;
		}
	}
	return ended;
}

int stdio_run(struct stdio_relay *r, pid_t child, void (*on_signal)(void))
{
	sigset_t chld;
	bool ended = false;
	int status = 255;

	for (int i = 0; i < 3; i++)
		if (r->child_fds[i] >= 0)
			close(r->child_fds[i]);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		say("signalfd: %s", strerror(errno));
	for (;;) {
		if (ended && relay_done(&r->s[0]) && relay_done(&r->s[1]) && relay_done(&r->s[2]))
			break;
		struct pollfd p[8] = { { sfd, POLLIN, 0 } };
		for (int i = 0; i < 3; i++)
			relay_events(&r->s[i], &p[1 + 2 * i]);
		p[7] = (struct pollfd){ r->signal_fd, POLLIN, 0 };
		/* Without a signalfd, look for the child now and then. */
		if (poll(p, 8, sfd < 0 ? 100 : -1) < 0) {
			if (errno == EINTR && on_signal)
				on_signal();
			continue;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			}
		}
		/* Before reaping: a signal that came with the command's end finds its group gone (ESRCH). */
		if (r->signal_fd >= 0 && (p[7].revents & (POLLIN | POLLHUP | POLLERR)))
			stdio_forward_signals(r, child, p[7].revents);
		if (!ended && stdio_reap(child, &status)) {
			ended = true;
			relay_finish(&r->s[0], false);
			relay_finish(&r->s[1], true);
			relay_finish(&r->s[2], true);
			stdio_close_signals(r); /* nobody left to signal */
		} else if (ended) {
			(void)stdio_reap(child, &status); /* orphans */
		}
		for (int i = 0; i < 3; i++)
			relay_step(&r->s[i], &p[1 + 2 * i]);
	}
	if (sfd >= 0)
		close(sfd);
	stdio_close_signals(r);
	return status;
}
