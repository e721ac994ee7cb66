/* init.c: ringvm's PID 1: mount, load modules, run the ringvm.cmd= command, hand its status to the VMM. */
#define _GNU_SOURCE
#include "guest/cmdline.h"
#include "guest/drain.h"
#include "guest/fs.h"
#include "guest/launch.h"
#include "guest/protocol.h"
#include "guest/say.h"
#include "guest/stdio.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* x86 COMMAND_LINE_SIZE is 2048; leave room for kernels built with more. */
#define INIT_CMDLINE_MAX 8192
/* Each ARG takes at least one byte and one separator. */
#define INIT_MAX_ARGS (INIT_CMDLINE_MAX / 2 + 2)
/* Status for "PID 1 could not even start the command" (malformed parameter, failed mount, no /proc). */
#define INIT_STATUS_BAD_REQUEST 125
/* How long the virtio-console ports may take to show their names after the module loaded. */
#define INIT_PORTS_TIMEOUT_MS 10000

/* The command's environment, working directory and user (ringvm.env=, .cwd=, .user=). */
static struct launch init_launch;

/* A power request from busybox's halt/poweroff/reboot (without -f): the RB_* command, or 0. */
static volatile sig_atomic_t init_power_request;

/*
 * The kernel opens /dev/console as fds 0-2 for PID 1 if the node exists when it starts init; if it
 * did not, fill the gaps so that messages (and the shell) have somewhere to go.
 */
static void init_console_fds(void)
{
	bool missing = false;
	int fd;

	for (int i = 0; i <= STDERR_FILENO; i++)
		if (fcntl(i, F_GETFD) < 0 && errno == EBADF)
			missing = true;
	if (!missing)
		return;
	fd = open("/dev/console", O_RDWR | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) {
		/* 5:1 is the console's device number (TTYAUX_MAJOR, linux/major.h). */
		if (mkdir("/dev", 0755) < 0 && errno != EEXIST)
			return;
		if (mknod("/dev/console", S_IFCHR | 0600, makedev(5, 1)) < 0)
			return;
		fd = open("/dev/console", O_RDWR | O_NOCTTY);
	}
	if (fd < 0)
		return;
	for (int i = 0; i <= STDERR_FILENO; i++)
		if (i != fd && fcntl(i, F_GETFD) < 0 && errno == EBADF)
			dup2(fd, i);
	if (fd > STDERR_FILENO)
		close(fd);
}

/* Read a whole small file into buf, NUL-terminated. Returns its length or -errno (-E2BIG: too long). */
static int __attribute__((warn_unused_result)) init_read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			close(fd);
			return -err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == size - 1) {
			close(fd);
			return -E2BIG;
		}
	}
	close(fd);
	buf[len] = '\0';
	return (int)len;
}

/*
 * Load /lib/modules/load.order: one path per line, relative to /lib/modules, dependencies first
 * (guest/kmod-closure.sh wrote it). A module that fails is reported and skipped: the command may
 * not need it, and a boot that stops here would tell the user less.
 */
static void init_load_modules(void)
{
	static char list[16384];
	int len = init_read_file("/lib/modules/load.order", list, sizeof(list));
	char *line, *save = NULL;

	if (len == -ENOENT) {
		say_info("no /lib/modules/load.order: no modules to load");
		return;
	}
	if (len < 0) {
		say("cannot read /lib/modules/load.order: %s", strerror(-len));
		return;
	}
	for (line = strtok_r(list, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char path[512];
		int fd;

		if (line[0] == '#' || line[0] == '\0')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "/lib/modules/%s", line) >= sizeof(path)) {
			say("module path too long: %s", line);
			continue;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			say("cannot open module %s: %s", path, strerror(errno));
			continue;
		}
		if (syscall(SYS_finit_module, fd, "", 0) == 0)
			say_info("loaded %s", line);
		else if (errno == EEXIST)
			say_info("%s is already loaded", line);
		else
			say("cannot load module %s: %s", line, strerror(errno));
		close(fd);
	}
}

/*
 * For a command, PID 1 leads the console's session (the command gets its own process group in the
 * foreground, see init_exec_child). Not the other way round: when a session leader exits, the kernel
 * hangs up its controlling terminal, and a hangup discards what is still queued for the UART, the
 * command's last lines. PID 1 outlives the command and drains that queue before it reports the
 * status. SIGTTOU and SIGTTIN are ignored so that PID 1, in a background group of its own session,
 * may still use the terminal (the kernel would otherwise retry such a call for ever: init cannot be
 * stopped). The interactive shell keeps a session of its own (its last lines are its prompt).
 */
static void init_console_session(int fd)
{
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	if (getsid(0) != getpid() && setsid() < 0)
		say("setsid: %s", strerror(errno));
	if (fd >= 0 && isatty(fd) && ioctl(fd, TIOCSCTTY, 0) < 0)
		say("cannot make /dev/console the controlling tty: %s", strerror(errno));
}

/* Console line discipline: raw for a command (its bytes reach the host unchanged), cooked for a shell. */
static int __attribute__((warn_unused_result)) init_console_mode(int fd, bool raw)
{
	struct termios t;

	if (tcgetattr(fd, &t) < 0)
		return -errno;
	if (raw) {
		cfmakeraw(&t);
	} else {
		t.c_iflag |= ICRNL | IXON | BRKINT;
		t.c_iflag &= ~(tcflag_t)(INLCR | IGNCR);
		t.c_oflag |= OPOST | ONLCR;
		t.c_lflag |= ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | ISIG | IEXTEN;
	}
	/* No modem lines to wait for on the VMM's UART. */
	t.c_cflag |= CLOCAL | CREAD;
	if (tcsetattr(fd, TCSANOW, &t) < 0)
		return -errno;
	return 0;
}

/*
 * Wait until the tty layer has handed every queued byte to the UART: the VMM stops the guest the
 * moment the status byte arrives, so anything still queued would be lost. As long as bytes keep
 * leaving, however slowly; a queue that stopped moving is given up on (guest/drain.h).
 */
static void init_console_drain(int fd)
{
	const struct timespec tick = { 0, DRAIN_TICK_MS * 1000000L };
	struct drain d;
	enum drain_step step;

	drain_init(&d);
	for (;;) {
		int queued;

		if (ioctl(fd, TIOCOUTQ, &queued) < 0)
			queued = -1;
		step = drain_sample(&d, queued);
		if (step != DRAIN_WAIT)
			break;
		nanosleep(&tick, NULL);
	}
	if (step == DRAIN_STUCK) {
		/* Without blocking: this line would queue behind the bytes that do not move. */
		int flags = fcntl(STDERR_FILENO, F_GETFL);

		if (flags >= 0)
			(void)fcntl(STDERR_FILENO, F_SETFL, flags | O_NONBLOCK);
		say("console output stopped moving with %d bytes still queued; they are lost", d.low);
		if (flags >= 0)
			(void)fcntl(STDERR_FILENO, F_SETFL, flags);
	}
}

/* Hand status to the VMM (guest/protocol.h); power off if nothing listens on the port. */
static void __attribute__((noreturn)) init_finish(int status, int console)
{
	init_console_drain(console >= 0 ? console : STDERR_FILENO);
	sync();
	if (ioperm(RINGVM_EXIT_PORT, 1, 1) == 0) {
		outb((unsigned char)status, RINGVM_EXIT_PORT);
		say_info("status %d: nothing stopped the VM at the exit port; powering off", status);
	} else {
		say_info("status %d: no access to the exit port (%s); powering off", status, strerror(errno));
	}
	reboot(RB_POWER_OFF);
	say("power-off failed: %s", strerror(errno));
	for (;;)
		pause();
}

static void init_on_power_signal(int sig)
{
	/* busybox halt/poweroff/reboot signal PID 1 with USR1/USR2/TERM; a VM has no use for halt. */
	init_power_request = sig == SIGTERM ? RB_AUTOBOOT : RB_POWER_OFF;
}

static void init_power_signals(void)
{
	static const int sigs[] = { SIGUSR1, SIGUSR2, SIGTERM };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = init_on_power_signal; /* no SA_RESTART: the wait loop must see EINTR */
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			say("sigaction(%d): %s", sigs[i], strerror(errno));
}

static int init_stdin_null; /* ringvm.stdin=null on the kernel command line */

/*
 * In the child: a command gets its own process group, in the foreground of the console PID 1 holds
 * (job control, /dev/tty and Ctrl-C reach the command, not PID 1); the shell (own_session) leads a
 * new session with the console as its controlling tty. Its fds 0-2 are the console, or with `streams`
 * (ringvm.stdio=virtio) the pipes PID 1 relays to the ports. Then its user, directory and
 * environment (guest/launch.h), then exec. Never returns.
 */
static void __attribute__((noreturn)) init_exec_child(char *const argv[], bool own_session,
						      const int *streams)
{
	sigset_t none;
	int fd, err;

	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (own_session ? setsid() < 0 : setpgid(0, 0) < 0)
		say("%s: %s", own_session ? "setsid" : "setpgid", strerror(errno));
	fd = open("/dev/console", O_RDWR);
	if (fd < 0) {
		say("cannot open /dev/console: %s", strerror(errno));
	} else if (own_session) {
		/* Opening /dev/console never makes it the controlling tty; TIOCSCTTY does. */
		if (ioctl(fd, TIOCSCTTY, 0) < 0)
			say("cannot make /dev/console the controlling tty: %s", strerror(errno));
	} else {
		/* Still ignoring SIGTTOU (PID 1's setting): a background group may take the terminal. */
		if (isatty(fd) && tcsetpgrp(fd, getpid()) < 0)
			say("cannot give the console to the command: %s", strerror(errno));
	}
	if (fd >= 0) {
		for (int i = 0; i <= STDERR_FILENO; i++)
			if (fd != i && dup2(streams ? streams[i] : fd, i) < 0)
				say("dup2: %s", strerror(errno));
		if (fd > STDERR_FILENO)
			close(fd);
	}
	signal(SIGTTOU, SIG_DFL);
	signal(SIGTTIN, SIG_DFL);
	/* ringvm.stdin=null: the host forwards no input, so give the command an EOF, not a silent tty. */
	if (init_stdin_null) {
		fd = open("/dev/null", O_RDONLY);
		if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
			say("cannot open /dev/null as stdin: %s", strerror(errno));
		if (fd > STDERR_FILENO)
			close(fd);
	}
	{
		const char *what;

		err = launch_apply(&init_launch, &what);
		if (err < 0) {
			say("cannot run %s: %s: %s", argv[0], what, strerror(-err));
			_exit(INIT_STATUS_BAD_REQUEST);
		}
	}
	/* execvp searches the caller's PATH, so the environment must be the command's before the call. */
	environ = init_launch.envp;
	execvp(argv[0], argv);
	err = errno;
	say("cannot run %s: %s", argv[0], strerror(err));
	/* Like a shell: 127 when there is no such command, 126 when it cannot be executed. */
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* A wait was interrupted by a signal: carry out a power request (busybox halt/poweroff/reboot). */
static void init_on_signal(void)
{
	if (init_power_request == 0)
		return;
	say_info("power request from a signal");
	sync();
	reboot(init_power_request);
	say("reboot: %s", strerror(errno));
	init_power_request = 0;
}

/* Reap every child (orphans are ours too) until the one we started ends; returns its shell status. */
static int init_wait_for(pid_t child)
{
	for (;;) {
		int st;
		pid_t pid = waitpid(-1, &st, 0);

		if (pid < 0 && errno == EINTR) {
			init_on_signal();
			continue;
		}
		if (pid < 0) {
			say("waitpid: %s", strerror(errno));
			return 255;
		}
		if (pid == child && stdio_shell_status(st) >= 0)
			return stdio_shell_status(st);
	}
}

/* Whether the kernel command line has key (e.g. "ringvm.stdio=") with the value "virtio". */
static bool init_param_is_virtio(const char *cmdline, const char *key)
{
	char mode[16];

	return cmdline_find_param(cmdline, key, mode, sizeof(mode)) >= 0 &&
	       strcmp(mode, RINGVM_STDIO_VIRTIO) == 0;
}

/*
 * ringvm.stdio=virtio: the command's streams are the virtio-console ports, through pipes PID 1
 * relays. Returns true when set up; false (said why) to fall back to the console with stdin at
 * EOF: the host's stdin cannot reach the command then, its output lands on the host's stderr.
 */
static bool init_streams(const char *cmdline, struct stdio_relay *relay)
{
	int err;

	if (!init_param_is_virtio(cmdline, RINGVM_CMDLINE_STDIO))
		return false;
	err = stdio_setup(relay, INIT_PORTS_TIMEOUT_MS, true);
	if (err == 0)
		return true;
	say("the command's stdin, stdout and stderr cannot be the virtio-console ports (%s): using the "
	    "console, stdin at EOF",
	    err == -ENODEV ? "no virtio_console driver" : strerror(-err));
	init_stdin_null = 1;
	return false;
}

/*
 * ringvm.signals=virtio: the command is on the console (a tty), and the signals the host forwards
 * come on the signal port alone. Returns true when it is open (PID 1 then waits in stdio_run);
 * false (said why) to wait without: the host then stops the guest itself.
 */
static bool init_signals(const char *cmdline, struct stdio_relay *relay)
{
	if (!init_param_is_virtio(cmdline, RINGVM_CMDLINE_SIGNALS))
		return false;
	int err = stdio_setup(relay, INIT_PORTS_TIMEOUT_MS, false);
	if (err == 0)
		return true;
	/* A kernel without virtio_console (a build tree may be one) is not worth a line on a tty. */
	if (err == -ENODEV)
		say_info("no virtio_console driver: signals sent to ringvm stop the guest");
	else
		say("signals sent to ringvm cannot reach the command (the signal port: %s)",
		    strerror(-err));
	return false;
}

/* Find ringvm.cmd= and decode it into argv. Returns argc, 0 if absent, or -errno (reported). */
static int __attribute__((warn_unused_result)) init_parse_command(const char *cmdline, char *argv[],
								  size_t maxargs)
{
	static char value[INIT_CMDLINE_MAX];
	int n = cmdline_find_param(cmdline, RINGVM_CMDLINE_CMD, value, sizeof(value));

	if (n == -ENOENT)
		return 0;
	if (n >= 0)
		n = cmdline_decode_argv(value, argv, maxargs);
	if (n == -EINVAL)
		say("malformed " RINGVM_CMDLINE_CMD " (want comma-separated %%XX-encoded args, an empty "
		    "one as a lone %%)");
	else if (n < 0)
		say(RINGVM_CMDLINE_CMD " is too long: %s", strerror(-n));
	return n;
}

/* Find ringvm.root= and ringvm.mount= and have them mounted. Returns 0 or -errno (reported). */
static int __attribute__((warn_unused_result)) init_requested_mounts(const char *cmdline)
{
	static char root[INIT_CMDLINE_MAX], shares[INIT_CMDLINE_MAX];
	int root_len = cmdline_find_param(cmdline, RINGVM_CMDLINE_ROOT, root, sizeof(root));
	int shares_len = cmdline_find_param(cmdline, RINGVM_CMDLINE_MOUNT, shares, sizeof(shares));

	/* A value cannot outgrow the command line it came from: only -ENOENT is expected. */
	if ((root_len < 0 && root_len != -ENOENT) || (shares_len < 0 && shares_len != -ENOENT)) {
		say(RINGVM_CMDLINE_ROOT " or " RINGVM_CMDLINE_MOUNT " is too long");
		return -ENAMETOOLONG;
	}
	return fs_root_and_shares(root_len >= 0 ? root : NULL, shares_len >= 0 ? shares : NULL);
}

int main(void)
{
	static char cmdline[INIT_CMDLINE_MAX], *cmd_argv[INIT_MAX_ARGS];
	static char *shell_argv[] = { "/bin/sh", "-l", NULL };
	static struct stdio_relay relay;
	char flag[8]; /* the value of a short ringvm.* switch */
	int len, argc, console, err, status;
	bool streams = false, relayed = false; /* relayed: PID 1 waits in stdio_run */
	sigset_t chld;
	pid_t child;

	init_console_fds();
	/* "init reached" for `ringvm run --timing`; access dropped again so children do not inherit it. */
	if (ioperm(RINGVM_BOOT_PORT, 1, 1) == 0) {
		outb(1, RINGVM_BOOT_PORT);
		(void)ioperm(RINGVM_BOOT_PORT, 1, 0);
	}
	umask(022);
	fs_mount_proc();
	len = init_read_file("/proc/cmdline", cmdline, sizeof(cmdline));
	if (len < 0) {
		say("cannot read /proc/cmdline: %s", strerror(-len));
		init_finish(INIT_STATUS_BAD_REQUEST, -1);
	}
	init_stdin_null = cmdline_find_param(cmdline, RINGVM_CMDLINE_STDIN, flag, sizeof(flag)) == 4 &&
			  !strcmp(flag, "null");
	say_verbose = cmdline_find_param(cmdline, RINGVM_CMDLINE_VERBOSE, flag, sizeof(flag)) == 1 &&
		      flag[0] == '1';
	{
		const char *why;

		if (launch_parse(&init_launch, cmdline, &why) < 0) {
			say("%s", why);
			init_finish(INIT_STATUS_BAD_REQUEST, -1);
		}
	}
	fs_mount_boot();
	init_load_modules();

	argc = init_parse_command(cmdline, cmd_argv, INIT_MAX_ARGS);
	if (argc < 0)
		init_finish(INIT_STATUS_BAD_REQUEST, -1);
	/* After the modules: virtiofs and overlay are among them. */
	if (init_requested_mounts(cmdline) < 0)
		init_finish(INIT_STATUS_BAD_REQUEST, -1);
	init_power_signals();
	/* A reader of a stream going away is an EPIPE to PID 1's relay, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	if (argc > 0)
		streams = init_streams(cmdline, &relay);
	relayed = streams || (argc > 0 && init_signals(cmdline, &relay));
	console = open("/dev/console", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (console < 0)
		say("cannot open /dev/console: %s", strerror(errno));
	else if ((err = init_console_mode(console, argc > 0)) < 0)
		say("cannot set the console mode: %s", strerror(-err));
	if (argc > 0)
		init_console_session(console);
	if (argc > 0) {
		say_info("running %s (%d args)", cmd_argv[0], argc);
	} else {
		say_info("no %s: interactive shell", RINGVM_CMDLINE_CMD);
	}

	/* The relay learns of the command's end through a signalfd: SIGCHLD blocked before it can come. */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (relayed)
		sigprocmask(SIG_BLOCK, &chld, NULL);
	child = fork();
	if (child < 0) {
		say("fork: %s", strerror(errno));
		init_finish(INIT_STATUS_BAD_REQUEST, console);
	}
	if (child == 0)
		init_exec_child(argc > 0 ? cmd_argv : shell_argv, argc == 0,
				streams ? relay.child_fds : NULL);
	/* A command's child does the same: whichever runs first, the group exists before anyone
	   relies on it. (Not for the shell: setsid() fails for a process group leader.) */
	if (argc > 0)
		(void)setpgid(child, child);
	status = relayed ? stdio_run(&relay, child, init_on_signal) : init_wait_for(child);
	say_info("%s exited with status %d", argc > 0 ? cmd_argv[0] : "the shell", status);
	init_finish(status, console);
}
