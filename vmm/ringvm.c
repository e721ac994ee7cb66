/* ringvm.c: the library's front door: build a machine from a config, run it, say how it ended. */
#define _GNU_SOURCE
#include "include/ringvm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "devices/console/console_kind.h"
#include "devices/console/virtio_console.h"
#include "guest/protocol.h"
#include "guest/sigfwd.h"
#include "vmm/console.h"
#include "vmm/devices.h"
#include "vmm/errmsg.h"
#include "vmm/gdb_stub.h"
#include "vmm/image.h"
#include "vmm/kcmdline.h"
#include "vmm/machine.h"
#include "vmm/privilege.h"
#include "vmm/seccomp.h"
#include "vmm/state_report.h"

/* How long a panicking kernel may keep printing before ringvm ends the run itself. */
#define RINGVM_PANIC_GRACE_MS 3000
/* At the end, how long the command's output may make no progress (and wait on nothing) before
   ringvm stops waiting for it: only a stream whose queue worker died stalls that long. */
#define RINGVM_DRAIN_STALL_MS 5000
/* After a forwarded signal: how long the command's output may wait on a reader that takes nothing
   before ringvm stops the guest (or, after the command ended, gives up writing it out). */
#define RINGVM_UNREAD_STOP_MS 2000

/* What ringvm_run() needs of the config: the config itself need not outlive ringvm_create(). */
struct ringvm_run_opts {
	bool handle_signals;
	bool seccomp;
	bool drop_privileges;
	unsigned int timeout_s;
	unsigned int stop_timeout_ms;
};

struct ringvm {
	struct ringvm_run_opts opts;
	struct vm vm;
	bool vm_created;
	struct console console;
	bool console_created;
	struct ringvm_devices devices;
	bool ran; /* ringvm_run() was called: once per VM */
	struct seccomp_confinement confine_vcpu, confine_control; /* used by their threads */
	bool streams; /* the command's stdio goes through virtio-console (ringvm_streams) */
	bool timed_out; /* ringvm_wait stopped the run at opts.timeout_s */
	int signal_port[2]; /* pipe: ringvm_wait writes forwarded signals, the signal port reads */
	struct console_streams console_streams; /* what the console kind makes its device of */
	struct vcon_dev *stdio; /* that device (the command's streams, or the signal port alone), or NULL */
	unsigned int signal_port_id; /* the signal port's number on stdio */
	int forwarded;	    /* the first signal forwarded to the command, or 0 */
	int signal_req[2];  /* pipe: ringvm_signal() writes a signal's number, ringvm_wait reads it */
	struct gdb_stub *gdb; /* cfg->gdb */
	struct state_report report; /* SIGUSR2 (vmm/state_report.h) */
	int state_fd; /* where its lines go: stderr, or RINGVM_STATE_LOG's file (ours to close) */
};

/* ringvm.env=, ringvm.cwd= and ringvm.user= (guest/protocol.h), when asked for. 0 or -E2BIG. */
static int append_launch(const struct ringvm_launch *l, struct kcmdline *c)
{
	int ret = 0;
	if (l->nr_env > 0)
		ret = kcmdline_add_argv(c, RINGVM_CMDLINE_ENV, l->env, (int)l->nr_env);
	if (!ret && l->workdir)
		ret = kcmdline_add_argv(c, RINGVM_CMDLINE_CWD, &l->workdir, 1);
	if (!ret && l->set_user)
		ret = kcmdline_add(c, " %s%u:%u", RINGVM_CMDLINE_USER, l->uid, l->gid);
	return ret;
}

/* Room for any command line this builds; the kernel's own limit is checked after. */
#define RINGVM_CMDLINE_BUF 65536

static int build_cmdline(const struct ringvm *r, const struct ringvm_config *cfg, size_t max, char *out,
			 size_t outlen, char *err, size_t errlen)
{
	struct kcmdline c;
	kcmdline_init(&c, out, outlen);
	/* panic=-1: a panicking kernel reboots at once, and ringvm reports the panic. */
	int ret = kcmdline_add(&c, "%s panic=-1 %s", arch_cmdline_base(),
			       /* loglevel=1, not 0: console_verbose() on panic leaves a 0 alone. */
			       cfg->verbose ? "loglevel=7 ringvm.verbose=1" : "loglevel=1");

	/* For kernels built with CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES; Debian's find them in ACPI. */
	for (unsigned int i = 0; i < r->vm.nr_virtio_mmio && !ret; i++) {
		const struct acpi_mmio_dev *d = &r->vm.virtio_mmio[i];
		ret = kcmdline_add(&c, " virtio_mmio.device=%llu@0x%llx:%u", (unsigned long long)d->size,
				   (unsigned long long)d->base, d->gsi);
	}
	if (!ret && cfg->cmdline && *cfg->cmdline)
		ret = kcmdline_add(&c, " %s", cfg->cmdline);
	/* A command without streams on a terminal reads the console; otherwise EOF, not a hang. */
	if (!ret && !r->streams && cfg->argc > 0 && (cfg->console.stdio[0] < 0 || !isatty(cfg->console.stdio[0])))
		ret = kcmdline_add(&c, " %snull", RINGVM_CMDLINE_STDIN);
	if (ret)
		return errmsg(err, errlen, -E2BIG, "kernel command line too long");
	if (append_launch(&cfg->launch, &c))
		return errmsg(err, errlen, -E2BIG, "kernel command line too long (the environment, "
						   "working directory or user)");
	/* What each device kind tells PID 1: mounts, the streams. */
	ret = ringvm_devices_guest_cmdline(&r->devices, &c, err, errlen);
	if (ret)
		return ret;
	if (cfg->argc > 0 && kcmdline_add_argv(&c, RINGVM_CMDLINE_CMD, cfg->argv, (int)cfg->argc))
		return errmsg(err, errlen, -E2BIG, "the command is too long for the kernel command line");
	if (c.len > max)
		return errmsg(err, errlen, -E2BIG,
				"kernel command line too long: %zu bytes, this kernel takes at most %zu (shorten "
				"the command or --cmdline)",
				c.len, max);
	return 0;
}

/*
 * What the console kind makes its device of (r->console_streams): the command's streams (a closed
 * stdio fd is /dev/null, whose fd goes to *null_fd for the caller to close once the device holds
 * its duplicates) and the signal port; with streams false (the command on a tty) the signal port
 * alone. 0 or -errno with err set.
 */
static int ringvm_prepare_streams(struct ringvm *r, const struct ringvm_config *cfg, bool streams,
				  int *null_fd, char *err, size_t errlen)
{
	struct console_streams *s = &r->console_streams;

	/* Non-blocking: ringvm_wait never waits to forward a signal (the device polls its end). */
	if (pipe2(r->signal_port, O_CLOEXEC | O_NONBLOCK) < 0)
		return errmsg(err, errlen, -errno, "the signal port's pipe: %s", strerror(errno));
	r->signal_port_id = streams ? 3 : 0;
	s->streams = streams;
	s->signal_fd = r->signal_port[0];
	for (int i = 0; i < 3; i++) {
		s->fds[i] = streams ? cfg->console.stdio[i] : -1;
		if (!streams || (s->fds[i] >= 0 && fcntl(s->fds[i], F_GETFD) >= 0))
			continue;
		if (*null_fd < 0 && (*null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
			return errmsg(err, errlen, -errno, "/dev/null: %s", strerror(errno));
		s->fds[i] = *null_fd;
	}
	return 0;
}

bool ringvm_config_wants_streams(const struct ringvm_config *cfg)
{
	const struct ringvm_console *c = &cfg->console;
	if (cfg->argc == 0 || c->tty == RINGVM_TTY_ON)
		return false;
	return c->tty == RINGVM_TTY_OFF || c->stdio[0] < 0 || !isatty(c->stdio[0]);
}

static int ringvm_build(struct ringvm *r, const struct ringvm_config *cfg, char *err, size_t errlen)
{
	struct img kernel = { .fd = -1 }, initrd = { .fd = -1 };
	struct arch_boot *boot = NULL;
	char *cmdline = NULL;
	int ret = ringvm_config_check(cfg, err, errlen);
	if (ret)
		return ret;

	ret = img_open(cfg->kernel, &kernel);
	if (ret)
		return errmsg(err, errlen, ret, "cannot read kernel %s: %s", cfg->kernel,
			    ret == -ENODATA ? "empty file" : strerror(-ret));
	if (cfg->initrd) {
		ret = img_open(cfg->initrd, &initrd);
		if (ret) {
			ret = errmsg(err, errlen, ret, "cannot read initrd %s: %s", cfg->initrd,
				   ret == -ENODATA ? "empty file" : strerror(-ret));
			goto out;
		}
	}
	if (access("/dev/kvm", F_OK) != 0) {
		ret = errmsg(err, errlen, -ENODEV, "no /dev/kvm: this host offers no KVM");
		goto out;
	}

	const char *why;
	ret = vm_create(&r->vm, cfg->memory, cfg->cpus, &why);
	if (ret) {
		ret = errmsg(err, errlen, ret, "%s: %s", why, strerror(-ret));
		goto out;
	}
	r->vm_created = true;
	r->vm.verbose = cfg->verbose;
	r->streams = ringvm_config_wants_streams(cfg);

	ret = arch_kernel_load(&r->vm, &kernel, &boot);
	if (ret == -ENOEXEC) {
		ret = errmsg(err, errlen, ret, "%s is neither a bzImage nor an ELF vmlinux", cfg->kernel);
		goto out;
	} else if (ret == -ENOMEM) {
		ret = errmsg(err, errlen, ret, "kernel %s does not fit in %llu MiB of guest memory",
			       cfg->kernel, (unsigned long long)(cfg->memory >> 20));
		goto out;
	} else if (ret == -EINVAL) {
		ret = errmsg(err, errlen, ret,
			       "kernel %s is corrupt or unsupported (needs a 64-bit bzImage or a PVH vmlinux)",
			       cfg->kernel);
		goto out;
	} else if (ret) {
		ret = errmsg(err, errlen, ret, "cannot read kernel %s: %s", cfg->kernel,
			     ret == -EIO ? "it changed while being read, or an I/O error" : strerror(-ret));
		goto out;
	}
	/* What the kernel loads is in guest RAM now: its file is done with. */
	img_close(&kernel);
	if (initrd.fd >= 0) {
		ret = arch_initrd_load(&r->vm, boot, &initrd);
		if (ret == -ENOMEM) {
			ret = errmsg(err, errlen, ret,
				     "initrd %s (%llu MiB) does not fit in guest memory next to the kernel",
				     cfg->initrd, (unsigned long long)(initrd.size >> 20));
			goto out;
		} else if (ret) {
			ret = errmsg(err, errlen, ret, "cannot read initrd %s: %s", cfg->initrd,
				     ret == -EIO ? "it changed while being read, or an I/O error" : strerror(-ret));
			goto out;
		}
		img_close(&initrd);
	}

	/* The serial console: the terminal for a tty or the shell; with streams, only what the
	   kernel and PID 1 have to say, on stderr. */
	if (r->streams)
		ret = console_create(&r->console, &r->vm, -1, cfg->console.stdio[2], false);
	else
		ret = console_create(&r->console, &r->vm, cfg->console.stdio[0], cfg->console.stdio[1],
				     cfg->argc == 0);
	if (ret) {
		ret = errmsg(err, errlen, ret, "console: %s", strerror(-ret));
		goto out;
	}
	r->console_created = true;
	ret = arch_machine_init(&r->vm);
	if (ret) {
		ret = errmsg(err, errlen, ret, "machine devices: %s", strerror(-ret));
		goto out;
	}
	/* The command's streams, or for a tty the signal port alone (signals handled by ringvm, and
	   ringvm_signal()'s). */
	struct device_kind_ctx ctx = { .cfg = cfg, .nr_cpus = r->vm.nr_cpus };
	int null_fd = -1;
	if (r->streams || (cfg->argc > 0 && cfg->stop_timeout_ms > 0)) {
		ret = ringvm_prepare_streams(r, cfg, r->streams, &null_fd, err, errlen);
		ctx.streams = &r->console_streams;
	}
	if (!ret)
		ret = ringvm_devices_create(&r->devices, &r->vm, device_kinds, nr_device_kinds, &ctx, err,
					    errlen);
	if (null_fd >= 0)
		close(null_fd); /* the device has its own duplicates */
	if (ret)
		goto out;
	r->stdio = ringvm_devices_find(&r->devices, &console_kind, 0);
	/* Last of the checks, so that mistakes in the user's input are reported first. */
	const char *unfit = arch_host_unfit();
	if (unfit) {
		ret = errmsg(err, errlen, -ENOTSUP, "%s", unfit);
		goto out;
	}

	cmdline = malloc(RINGVM_CMDLINE_BUF);
	if (!cmdline) {
		ret = errmsg(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	ret = build_cmdline(r, cfg, arch_cmdline_max(boot), cmdline, RINGVM_CMDLINE_BUF, err, errlen);
	if (ret)
		goto out;
	ret = arch_boot_describe(&r->vm, boot, cmdline, err, errlen);
	if (ret)
		goto out;
	if (cfg->verbose)
		fprintf(stderr, "ringvm: kernel command line: %s\n", cmdline);

	ret = vcpus_create(&r->vm, &why);
	if (!ret) {
		why = "the boot vCPU's registers";
		ret = arch_boot_vcpu(boot, r->vm.vcpus[0].fd);
	}
	if (ret) {
		ret = errmsg(err, errlen, ret, "setting up vCPUs: %s: %s", why, strerror(-ret));
		goto out;
	}
	if (cfg->gdb) {
		ret = gdb_stub_create(&r->vm, cfg->gdb, cfg->gdb_wait, &r->gdb, err, errlen);
		if (ret)
			goto out;
		r->vm.gdb = r->gdb;
	}
	ret = 0;
out:
	free(cmdline);
	arch_boot_free(boot);
	img_close(&kernel);
	img_close(&initrd);
	return ret;
}

int ringvm_create(const struct ringvm_config *cfg, struct ringvm **out, char *err, size_t errlen)
{
	struct ringvm *r = calloc(1, sizeof(*r));
	if (!r)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	r->opts = (struct ringvm_run_opts){ .handle_signals = cfg->handle_signals,
					    .seccomp = cfg->seccomp,
					    .drop_privileges = cfg->drop_privileges,
					    .timeout_s = cfg->timeout_s,
					    .stop_timeout_ms = cfg->stop_timeout_ms };
	r->signal_port[0] = r->signal_port[1] = -1;
	r->state_fd = STDERR_FILENO;
	r->signal_req[0] = r->signal_req[1] = -1;
	/* Non-blocking: ringvm_signal() never waits (it may run in a signal handler). */
	if (pipe2(r->signal_req, O_CLOEXEC | O_NONBLOCK) < 0) {
		int ret = errmsg(err, errlen, -errno, "the signal requests' pipe: %s", strerror(errno));
		ringvm_destroy(r);
		return ret;
	}
	int ret = ringvm_build(r, cfg, err, errlen);
	if (ret) {
		ringvm_destroy(r);
		return ret;
	}
	*out = r;
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Hand signal sig to the guest's PID 1 (guest/sigfwd.h). False when the run has no signal port,
 * forwards nothing (stop_timeout_ms 0), PID 1 does not have the port open (still booting, or it
 * could not open it: nobody would pass the signal on), or the port's pipe is full.
 */
static bool ringvm_forward(struct ringvm *r, int sig)
{
	int byte = sigfwd_encode(sig);
	unsigned char c = (unsigned char)byte;

	if (r->signal_port[1] < 0 || r->opts.stop_timeout_ms == 0 || byte < 0 ||
	    !vcon_port_guest_open(r->stdio, r->signal_port_id))
		return false;
	return write(r->signal_port[1], &c, 1) == 1;
}

/*
 * After a forwarded signal: the stop timeout, and the command's output waiting on a reader that
 * takes nothing (which no signal inside the guest can cure). Stops the run when either is due.
 */
struct ringvm_after_signal {
	uint64_t stop_at;	/* now_ms() deadline */
	uint64_t moved;		/* output progress last seen (vcon_output_progress) */
	uint64_t unread_since;	/* since when it has not moved while a write waited */
};

static void ringvm_check_after_signal(struct ringvm *r, struct ringvm_after_signal *a)
{
	uint64_t now = now_ms(), moved;
	bool writing;

	if (now >= a->stop_at) {
		vm_request_stop(&r->vm, VM_STOP_HOST, 128 + r->forwarded,
				"stopped: the command did not end within %u ms of signal %d",
				r->opts.stop_timeout_ms, r->forwarded);
		return;
	}
	vcon_output_progress(r->stdio, &moved, &writing);
	if (!writing || moved != a->moved) {
		a->moved = moved;
		a->unread_since = now;
	} else if (now - a->unread_since >= RINGVM_UNREAD_STOP_MS) {
		vm_request_stop(&r->vm, VM_STOP_HOST, 128 + r->forwarded,
				"stopped by signal %d: the command's output is not being read", r->forwarded);
	}
}

/* Signal sig came (handled, or ringvm_signal()): forward it, or stop the run when it cannot be. */
static void ringvm_on_signal(struct ringvm *r, int sig, struct ringvm_after_signal *after)
{
	if (!ringvm_forward(r, sig)) {
		vm_request_stop(&r->vm, VM_STOP_HOST, 128 + sig, "stopped by signal %d", sig);
		return;
	}
	/* The first signal starts the clock; later ones are forwarded too. */
	if (!r->forwarded) {
		r->forwarded = sig;
		after->stop_at = now_ms() + r->opts.stop_timeout_ms;
		after->unread_since = now_ms();
		after->moved = UINT64_MAX;
	}
}

/*
 * Wait for the end of the run; signals (when handled, and ringvm_signal()'s), the timeout and a
 * panicking kernel end it too.
 */
static void ringvm_wait(struct ringvm *r, int sig_fd)
{
	uint64_t panic_seen = 0;
	uint64_t deadline = r->opts.timeout_s ? now_ms() + (uint64_t)r->opts.timeout_s * 1000 : 0;
	struct ringvm_after_signal after = { 0 };
	while (!atomic_load(&r->vm.stopping)) {
		if (deadline && now_ms() >= deadline) {
			r->timed_out = true;
			vm_request_stop(&r->vm, VM_STOP_HOST, RINGVM_EXIT_TIMEOUT, "timed out after %u s",
					r->opts.timeout_s);
			break;
		}
		if (r->forwarded)
			ringvm_check_after_signal(r, &after);
		int wait_ms = state_report_poll(&r->report, &r->vm, &r->devices);
		struct pollfd p[3] = { { r->vm.stop_efd, POLLIN, 0 },
				       { r->signal_req[0], POLLIN, 0 },
				       { sig_fd, POLLIN, 0 } };
		int n = poll(p, sig_fd >= 0 ? 3 : 2, wait_ms >= 0 && wait_ms < 250 ? wait_ms : 250);
		if (n < 0 && errno != EINTR)
			break;
		if (sig_fd >= 0 && (p[2].revents & POLLIN)) {
			struct signalfd_siginfo si;
			int sig = read(sig_fd, &si, sizeof(si)) == sizeof(si) ? (int)si.ssi_signo : 0;
			if (sig == SIGUSR2) {
				/* Not for the guest: what every queue and vCPU holds, for the operator. */
				state_report_begin(&r->report, &r->vm, &r->devices, r->state_fd);
			} else if (sig) {
				ringvm_on_signal(r, sig, &after);
			}
		}
		unsigned char req[16];
		ssize_t got = (p[1].revents & POLLIN) ? read(r->signal_req[0], req, sizeof(req)) : 0;
		for (ssize_t i = 0; i < got && !atomic_load(&r->vm.stopping); i++)
			ringvm_on_signal(r, req[i], &after); /* ringvm_signal() checked each */
		if (atomic_load(&r->console.panicked)) {
			if (!panic_seen)
				panic_seen = now_ms();
			else if (now_ms() - panic_seen > RINGVM_PANIC_GRACE_MS)
				vm_request_stop(&r->vm, VM_STOP_PANIC, 0, "guest kernel panic");
		}
	}
}

static void ringvm_fill_result(struct ringvm *r, struct ringvm_result *res)
{
	struct vm *vm = &r->vm;
	enum vm_stop_reason reason = vm->stop_reason;
	memset(res, 0, sizeof(*res));
	snprintf(res->message, sizeof(res->message), "%s", vm->stop_why);
	res->t_first_run = vm->t_first_run;
	res->t_init = atomic_load(&vm->t_init);
	res->t_end = vm_now_ns();
	/* A panicking kernel reboots (panic=-1) or stops: either way, report the panic. */
	if (atomic_load(&r->console.panicked) &&
	    (reason == VM_STOP_RESET || reason == VM_STOP_POWEROFF || reason == VM_STOP_CRASH ||
	     reason == VM_STOP_PANIC)) {
		res->end = RINGVM_END_PANIC;
		snprintf(res->message, sizeof(res->message), "guest kernel panic");
		return;
	}
	switch (reason) {
	case VM_STOP_EXIT_STATUS:
		res->end = RINGVM_END_EXIT_STATUS;
		res->status = vm->stop_status;
		break;
	case VM_STOP_POWEROFF:
		res->end = RINGVM_END_POWEROFF;
		break;
	case VM_STOP_RESET:
		res->end = RINGVM_END_RESET;
		break;
	case VM_STOP_PANIC:
		res->end = RINGVM_END_PANIC;
		break;
	case VM_STOP_CRASH:
		res->end = RINGVM_END_CRASH;
		break;
	case VM_STOP_HOST:
		/* The timeout's own request, unless something else stopped the run first. */
		res->end = r->timed_out && vm->stop_status == RINGVM_EXIT_TIMEOUT ? RINGVM_END_TIMEOUT
										    : RINGVM_END_STOPPED;
		res->status = vm->stop_status;
		break;
	case VM_STOP_NONE:
	case VM_STOP_ERROR:
		res->end = RINGVM_END_ERROR;
		break;
	}
}

/*
 * The guest ended by itself (the command's status, a power-off): what the command wrote last may
 * still be queued on the stdout and stderr ports. Write it out first, however slow the reader,
 * unless a signal says stop: a new one, or one forwarded before, after which a reader that takes
 * nothing for RINGVM_UNREAD_STOP_MS is given up on.
 */
static void ringvm_drain_streams(struct ringvm *r, int sig_fd)
{
	enum vm_stop_reason why = r->vm.stop_reason;

	if (!r->stdio ||
	    (why != VM_STOP_EXIT_STATUS && why != VM_STOP_POWEROFF && why != VM_STOP_RESET))
		return;
	bool patient = !r->forwarded;
	int ret = vcon_drain(r->stdio, sig_fd,
			     patient ? RINGVM_DRAIN_STALL_MS : RINGVM_UNREAD_STOP_MS, patient);
	if (ret == -ETIMEDOUT && patient)
		fprintf(stderr, "ringvm: the command's last output could not be written out (its "
				"virtio-console queue stopped)\n");
	else if (ret == -ETIMEDOUT)
		fprintf(stderr, "ringvm: the command's last output is not being read; dropped\n");
}

/*
 * The state report's lines go to stderr, or appended to the file RINGVM_STATE_LOG names (opened
 * now: a confined thread opens nothing). A file that cannot be opened: one line, then stderr.
 */
static void ringvm_state_log_open(struct ringvm *r)
{
	const char *path = getenv("RINGVM_STATE_LOG");
	if (!path || !*path)
		return;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "ringvm: RINGVM_STATE_LOG %s: %s; the state report goes to stderr\n",
			path, strerror(errno));
		return;
	}
	r->state_fd = fd;
}

bool ringvm_streams(const struct ringvm *r)
{
	return r->streams;
}

int ringvm_run(struct ringvm *r, struct ringvm_result *res, char *err, size_t errlen)
{
	if (r->ran) {
		memset(res, 0, sizeof(*res));
		res->end = RINGVM_END_ERROR;
		snprintf(res->message, sizeof(res->message), "this VM has already run");
		return errmsg(err, errlen, -EALREADY, "%s", res->message);
	}
	r->ran = true;
	int sig_fd = -1;
	sigset_t sigs, block, old;
	sigemptyset(&sigs);
	if (r->opts.handle_signals) {
		sigaddset(&sigs, SIGINT);
		sigaddset(&sigs, SIGTERM);
		sigaddset(&sigs, SIGHUP);
		sigaddset(&sigs, SIGUSR2); /* the state report */
		ringvm_state_log_open(r);
	}
	/* The kick signal is unblocked only on vCPU threads; every other thread inherits this mask.
	   SIGPIPE stays blocked everywhere: a reader going away is an EPIPE to handle, never the end
	   of ringvm (nor of a program embedding it). */
	block = sigs;
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	if (r->opts.handle_signals)
		sig_fd = signalfd(-1, &sigs, SFD_CLOEXEC);

	/* Before the first thread (capabilities are per thread; every later one inherits these):
	   nothing beyond what the shares need, no_new_privs. */
	int ret = 0;
	if (r->opts.drop_privileges) {
		struct priv_need need;
		ringvm_devices_priv_need(&r->devices, &need);
		ret = priv_drop(priv_keep_mask(&need));
	}
	/*
	 * Every thread confines itself to its role once its setup is over (vmm/seccomp.h): the queue
	 * workers as they are made, the console's input thread, the gdb stub's thread, the vCPUs,
	 * which then wait at the start gate, and last this thread; only then does the guest run its
	 * first instruction.
	 */
	enum seccomp_mode mode = r->opts.seccomp ? seccomp_mode_from_env() : SECCOMP_MODE_OFF;
	r->confine_vcpu = (struct seccomp_confinement){
		mode, r->gdb ? SECCOMP_ROLE_VCPU_GDB : SECCOMP_ROLE_VCPU, -1 };
	r->confine_control = (struct seccomp_confinement){ mode, SECCOMP_ROLE_CONTROL, -1 };
	if (!ret)
		ret = ringvm_devices_start(&r->devices, mode);
	if (!ret)
		ret = console_start(&r->console, &r->confine_control);
	if (!ret && r->gdb)
		ret = gdb_stub_start(r->gdb, mode);
	if (!ret)
		ret = vcpus_start(&r->vm, &r->confine_vcpu);
	if (!ret)
		ret = seccomp_confine(&r->confine_control);
	if (!ret)
		vcpus_go(&r->vm);
	if (ret)
		vm_request_stop(&r->vm, VM_STOP_ERROR, 0, "could not start: %s", strerror(-ret));
	else
		ringvm_wait(r, sig_fd);

	state_report_finish(&r->report, &r->vm, &r->devices);
	if (r->gdb) {
		/* A debugger waiting on the guest hears how it ended; parked vCPUs are let go. */
		ringvm_fill_result(r, res);
		gdb_stub_finish(r->gdb, ringvm_exit_code(res));
	}
	vcpus_stop(&r->vm);
	ringvm_drain_streams(r, sig_fd);
	console_destroy(&r->console);
	ringvm_fill_result(r, res);
	if (ret)
		errmsg(err, errlen, ret, "%s", res->message);
	if (sig_fd >= 0)
		close(sig_fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

const char *ringvm_gdb_address(const struct ringvm *r)
{
	return r->gdb ? gdb_stub_address(r->gdb) : NULL;
}

void ringvm_stop(struct ringvm *r)
{
	vm_request_stop(&r->vm, VM_STOP_HOST, 0, "stopped by the host");
}

int ringvm_signal(struct ringvm *r, int signo)
{
	/* Async-signal-safe: an atomic load and a write(); errno is the interrupted code's. */
	int saved = errno, ret = 0;
	unsigned char c = (unsigned char)signo;

	if (!r || sigfwd_encode(signo) < 0)
		return -EINVAL;
	if (atomic_load(&r->vm.stopping))
		return -ESRCH;
	if (write(r->signal_req[1], &c, 1) != 1)
		ret = errno == EAGAIN ? -EAGAIN : -errno;
	errno = saved;
	return ret;
}

void ringvm_destroy(struct ringvm *r)
{
	if (!r)
		return;
	if (r->vm_created)
		vcpus_stop(&r->vm);
	gdb_stub_destroy(r->gdb);
	ringvm_devices_destroy(&r->devices);
	if (r->console_created) {
		console_destroy(&r->console);
		uart_destroy(&r->console.uart);
	}
	if (r->vm_created)
		vm_destroy(&r->vm);
	for (int i = 0; i < 2; i++) {
		if (r->signal_port[i] >= 0)
			close(r->signal_port[i]);
		if (r->signal_req[i] >= 0)
			close(r->signal_req[i]);
	}
	/* After the devices: no worker is left that could still answer a report into it. */
	if (r->state_fd != STDERR_FILENO)
		close(r->state_fd);
	free(r);
}
