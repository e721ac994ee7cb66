/* seccomp.c: the allow-list of each thread role of a running ringvm, each call with who needs it. */
#define _GNU_SOURCE
#include "vmm/seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * How the lists were made: every thread of ringvm run and ringvm serve was traced (strace -f) from
 * its confinement on, through the tests that drive it natively (tests/boot: firmware payloads that
 * hammer every register, blk and FUSE request; tests/unit/test_vu_*: a vhost-user front-end), and
 * the code paths no test reaches were read (each virtio-fs operation in devices/fs/, teardown,
 * error messages). A call is listed under the one role that makes it; glibc's wrappers name the
 * system call they really make (fstat() is newfstatat, poll() is poll, usleep() clock_nanosleep).
 */

/* Every role: what any thread does in glibc and in our shared code after its setup. */
static const int common_calls[] = {
	SCMP_SYS(brk), SCMP_SYS(munmap), SCMP_SYS(madvise), SCMP_SYS(mremap), /* malloc, free,
			  thread stacks; mmap and mprotect below, never executable */
	SCMP_SYS(futex),                          /* mutexes, condition variables (queue workers'
						     start/stop handshake), joins */
	SCMP_SYS(write),                          /* one-line errors on stderr; eventfds: interrupts
						     (irqfd, call fd), stops, the console */
	SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(restart_syscall), /* masks
			  around waits and thread exit, the vCPU kick and SIGBUS handlers */
	SCMP_SYS(sigaltstack),                    /* the sanitizer runtime, at thread exit */
	SCMP_SYS(clock_gettime), SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep), /* timeouts,
			  bounded waits (vDSO, unless the clock source makes it a call) */
	SCMP_SYS(gettid), SCMP_SYS(getpid),       /* raise()/abort(), pthread_kill */
	SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity), SCMP_SYS(getrandom), /* malloc's
			  arenas and tcache, spin locks */
	SCMP_SYS(exit), SCMP_SYS(exit_group),     /* a thread ends (teardown), the process ends */
};

/* SECCOMP_ROLE_CONTROL: ringvm run's main thread (ringvm_wait, teardown) and console input. */
static const int control_calls[] = {
	SCMP_SYS(poll), SCMP_SYS(ppoll), /* ringvm_wait (stop eventfd, signalfd); console input */
	SCMP_SYS(read),                  /* the signalfd, the terminal */
	SCMP_SYS(close),                 /* teardown: eventfds, rings, disk images, a share's fds */
};

/* SECCOMP_ROLE_VCPU: KVM_RUN (ioctl below) and what the emulated registers do. */
static const int vcpu_calls[] = {
	SCMP_SYS(close), /* a virtio-fs reset (Status 0) closes every fd the guest had open */
};

/* SECCOMP_ROLE_WORKER (and WORKER_FS): the queue loop. */
static const int worker_calls[] = {
	SCMP_SYS(io_uring_enter), /* submit, and sleep for kicks, completions and the stop */
};

/* SECCOMP_ROLE_WORKER on top of worker_calls: virtio-blk's transfers made on the thread on local
   storage (devices/blk/blk.c, blk_rw_inline); its ring may READV and WRITEV any fd anyway. */
static const int blk_calls[] = {
	SCMP_SYS(preadv2), SCMP_SYS(pwritev2),
};

/* SECCOMP_ROLE_WORKER_CONSOLE on top of worker_calls (devices/console/virtio_console.c). Its host
   I/O (readv, writev, poll of the ports' fds) goes through the sealed ring; eventfd writes (waking
   another queue's worker, the drain waiter) are common. No vhost-user: no SIGBUS guard. */
static const int console_calls[] = {
	SCMP_SYS(close), /* the guest closed an output port: its host fd, so the reader sees EOF */
};

/* SECCOMP_ROLE_WORKER_FS on top of worker_calls: the FUSE operations served inline (devices/fs). */
static const int fs_calls[] = {
	/* Names, beneath the share, one component at a time; reopening through /proc/self/fd. */
	SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(close),
	/* Attributes: GETATTR, LOOKUP, STATFS, the pseudo-file-system check, ACCESS. */
	SCMP_SYS(newfstatat), SCMP_SYS(fstatfs), SCMP_SYS(faccessat2), SCMP_SYS(readlinkat),
	SCMP_SYS(faccessat), /* glibc's faccessat() where the kernel has no faccessat2 */
	/* READDIR(PLUS), LSEEK and directory streams. */
	SCMP_SYS(getdents64), SCMP_SYS(lseek),
	/* MKDIR, MKNOD, CREATE, SYMLINK, LINK, UNLINK, RMDIR, RENAME(2). */
	SCMP_SYS(mkdirat), SCMP_SYS(mknodat), SCMP_SYS(symlinkat), SCMP_SYS(linkat),
	SCMP_SYS(unlinkat), SCMP_SYS(renameat2),
	/* SETATTR: mode, owner, size, times; FALLOCATE; COPY_FILE_RANGE. */
	SCMP_SYS(fchmod), SCMP_SYS(fchmodat), SCMP_SYS(fchownat),
	SCMP_SYS(ftruncate), SCMP_SYS(utimensat), SCMP_SYS(fallocate), SCMP_SYS(copy_file_range),
	/* FSYNC of a directory handle, SYNCFS. */
	SCMP_SYS(fsync), SCMP_SYS(fdatasync), SCMP_SYS(syncfs),
	/* READ/WRITE on files the ring cannot serve (-EOPNOTSUPP: served on the thread, xfer.c). */
	SCMP_SYS(preadv2), SCMP_SYS(pwritev2),
	/* GETXATTR, SETXATTR, LISTXATTR, REMOVEXATTR (by /proc/self/fd path or on an open fd);
	   killpriv on write. */
	SCMP_SYS(getxattr), SCMP_SYS(setxattr), SCMP_SYS(listxattr), SCMP_SYS(removexattr),
	SCMP_SYS(fgetxattr), SCMP_SYS(fremovexattr),
	/* Each request as its caller: fsuid/fsgid, the file system capabilities back (fs_creds.c),
	   the caller's umask for CREATE/MKNOD/MKDIR. */
	SCMP_SYS(setfsuid), SCMP_SYS(setfsgid), SCMP_SYS(capget), SCMP_SYS(capset),
	SCMP_SYS(umask),
};

/* SECCOMP_ROLE_SERVE: ringvm serve's connection thread (vu_backend.c, serve.c). */
static const int serve_calls[] = {
	SCMP_SYS(poll), SCMP_SYS(ppoll), /* the listening socket, the connection, the stop fd */
	SCMP_SYS(accept4),               /* the next front-end, after the previous one left */
	SCMP_SYS(recvmsg),               /* a message and its SCM_RIGHTS fds (regions, eventfds) */
	SCMP_SYS(sendmsg),               /* replies */
	SCMP_SYS(read),                  /* the signalfd */
	SCMP_SYS(close),                 /* fds of messages, regions, a disconnected session */
	SCMP_SYS(dup3),                  /* SET_VRING_CALL: the front-end's eventfd onto the ring's
					    fixed call fd number, which its worker writes */
};

/* SECCOMP_ROLE_GDB: the stub's thread (gdb_stub.c), serving one debugger at a time. */
static const int gdb_calls[] = {
	SCMP_SYS(poll),     /* its wake eventfd, the VM's stop eventfd, the socket; a full send buffer */
	SCMP_SYS(read),     /* the wake eventfd, the debugger's bytes */
	SCMP_SYS(accept4),  /* the next debugger, on the socket that listens since setup */
	SCMP_SYS(sendto),   /* replies: send(MSG_NOSIGNAL), so a debugger that left is no SIGPIPE */
	SCMP_SYS(shutdown), /* drop a debugger that stopped reading */
	SCMP_SYS(close),    /* the connection, at detach and at the end */
};

/* ioctl requests (masked to 32 bits: the request is an int, however the caller widened it). */
static const unsigned long vcpu_ioctls[] = {
	KVM_RUN,      /* the vCPU */
	KVM_IRQ_LINE, /* the UART's interrupt, raised by a register write */
	/* The state report (SIGUSR2, vmm/vcpu_state.c): each vCPU reads its own state, read-only. */
	KVM_GET_MP_STATE, KVM_GET_REGS, KVM_GET_MSRS, KVM_GET_LAPIC,
	KVM_GET_VCPU_EVENTS, /* also the gdb role's: the guest's own exception, injected again */
};
/* SECCOMP_ROLE_VCPU_GDB on top of vcpu_ioctls: a debug exit that was the guest's own (its int3,
   a #DB its own debug registers raised) is given back to it (gdb_arch_reinject). */
static const unsigned long vcpu_gdb_ioctls[] = {
	KVM_GET_DEBUGREGS, KVM_SET_DEBUGREGS,     /* the DR6 the guest's #DB handler reads */
	KVM_SET_VCPU_EVENTS, /* the exception, injected again (read with vcpu_ioctls' GET) */
};
/* SECCOMP_ROLE_GDB: a parked vCPU's state, on its fd (made before), while nothing runs. */
static const unsigned long gdb_ioctls[] = {
	KVM_GET_REGS, KVM_SET_REGS,   /* general registers (g, G, p, P), the pc of a jump */
	KVM_GET_SREGS, KVM_SET_SREGS, /* segments, control registers: also the page walk */
	KVM_GET_FPU, KVM_SET_FPU,     /* x87 and SSE registers */
	KVM_SET_GUEST_DEBUG,          /* breakpoints, watchpoints, single step, on resume */
};
static const unsigned long control_ioctls[] = {
	KVM_IRQ_LINE,                         /* console input raises the UART's interrupt */
	KVM_IOEVENTFD, KVM_IRQFD,             /* teardown removes the transports' eventfds */
	KVM_GET_IRQCHIP,                      /* the state report (SIGUSR2): PICs and IOAPIC */
	TCGETS, TCSETS, TCSETSW, TCSETSF,     /* the console: isatty, raw mode restored at exit */
	TIOCGWINSZ,
};

const char *seccomp_role_name(enum seccomp_role role)
{
	static const char *const names[SECCOMP_NR_ROLES] = {
		[SECCOMP_ROLE_CONTROL] = "control", [SECCOMP_ROLE_VCPU] = "vcpu",
		[SECCOMP_ROLE_WORKER] = "worker", [SECCOMP_ROLE_WORKER_FS] = "worker-fs",
		[SECCOMP_ROLE_SERVE] = "serve", [SECCOMP_ROLE_WORKER_CONSOLE] = "worker-console",
		[SECCOMP_ROLE_VCPU_GDB] = "vcpu-gdb", [SECCOMP_ROLE_GDB] = "gdb",
	};
	return (unsigned int)role < SECCOMP_NR_ROLES ? names[role] : "?";
}

enum seccomp_mode seccomp_mode_from_env(void)
{
	const char *v = getenv("RINGVM_SECCOMP");
	if (v && strcmp(v, "off") == 0)
		return SECCOMP_MODE_OFF;
	if (v && strcmp(v, "log") == 0)
		return SECCOMP_MODE_LOG;
#if defined(__SANITIZE_ADDRESS__)
	/*
	 * LeakSanitizer checks at exit from a helper process it clones and that ptraces us; killing
	 * that helper would hang the exit. The sanitizer build logs instead of killing; the optimized
	 * build, which every integration test also runs, keeps the default.
	 */
	if (!v)
		return SECCOMP_MODE_LOG;
#endif
	return SECCOMP_MODE_KILL;
}

static int sc_allow_all(scmp_filter_ctx ctx, const int *calls, size_t n)
{
	int ret = 0;
	for (size_t i = 0; i < n && !ret; i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, calls[i], 0);
	return ret;
}

static int sc_allow_ioctls(scmp_filter_ctx ctx, const unsigned long *reqs, size_t n)
{
	int ret = 0;
	for (size_t i = 0; i < n && !ret; i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, reqs[i]));
	return ret;
}

/* What every role gets beyond common_calls: calls allowed only with some arguments. */
static int sc_common_args(scmp_filter_ctx ctx)
{
	/* Memory, never executable: no new code can be mapped or made runnable. */
	int ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				   SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				       SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	/* Signals only within ringvm: the vCPU kick (pthread_kill), abort(). */
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				       SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid()));
	/* Reading our own limits (the sanitizer runtime); never setting one. */
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2,
				       SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A2(SCMP_CMP_EQ, 0));
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(getrlimit), 0);
	return ret;
}

/*
 * Refusals with an error instead of the default action. Kill mode only: log mode lets everything
 * through (the sanitizer build's leak checker opens /proc from a thread it clones at exit).
 *   - clone3: glibc's pthread_create tries it first; ENOSYS, whatever asks (clone, which it falls
 *     back to, is in no list).
 *   - open/openat, in roles that open nothing: EACCES rather than kill. glibc's malloc opens
 *     /proc/sys/vm/overcommit_memory once per process, in whichever thread first shrinks a thread
 *     arena's heap (check_may_shrink_heap), and does without it when the open fails; any other
 *     open is refused all the same.
 */
static int sc_refusals(scmp_filter_ctx ctx, const struct seccomp_confinement *c)
{
	if (c->mode != SECCOMP_MODE_KILL)
		return 0;
	int ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (!ret && c->role != SECCOMP_ROLE_WORKER_FS)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(openat), 0);
	if (!ret && c->role != SECCOMP_ROLE_WORKER_FS)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(open), 0);
	return ret;
}

/*
 * Threads that touch vhost-user memory (queue workers, serve's connection thread): the SIGBUS
 * guard's handler puts SIGBUS back to its default action when the fault is not in a region
 * (vu_mem.c), so the retried access kills the process as SIGBUS. No other signal's action.
 */
static int sc_allow_sigbus_reset(scmp_filter_ctx ctx)
{
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1,
				SCMP_A0(SCMP_CMP_EQ, SIGBUS));
}

/* fstat() of an fd we hold (glibc: newfstatat(fd, "", AT_EMPTY_PATH)), not of a path. */
static int sc_allow_fstat(scmp_filter_ctx ctx)
{
	int ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat), 1,
				   SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH));
	return ret ? ret : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fstat), 0);
}

/* A Unix socket's file, removed at exit: in its own directory (dirfd) only; -1: no unlink. */
static int sc_allow_unlink_in(scmp_filter_ctx ctx, int dirfd)
{
	if (dirfd < 0)
		return 0;
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unlinkat), 1,
				SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)dirfd));
}

#define SC_N(a) (sizeof(a) / sizeof((a)[0]))

/* The role's rules on top of the common ones. */
static int sc_role_rules(scmp_filter_ctx ctx, const struct seccomp_confinement *c)
{
	int ret;
	switch (c->role) {
	case SECCOMP_ROLE_CONTROL:
		ret = sc_allow_all(ctx, control_calls, SC_N(control_calls));
		if (!ret)
			ret = sc_allow_fstat(ctx); /* stdio's first use of stdout/stderr */
		return ret ? ret : sc_allow_ioctls(ctx, control_ioctls, SC_N(control_ioctls));
	case SECCOMP_ROLE_VCPU:
	case SECCOMP_ROLE_VCPU_GDB:
		ret = sc_allow_all(ctx, vcpu_calls, SC_N(vcpu_calls));
		if (!ret)
			ret = sc_allow_ioctls(ctx, vcpu_ioctls, SC_N(vcpu_ioctls));
		if (!ret && c->role == SECCOMP_ROLE_VCPU_GDB)
			ret = sc_allow_ioctls(ctx, vcpu_gdb_ioctls, SC_N(vcpu_gdb_ioctls));
		return ret;
	case SECCOMP_ROLE_WORKER:
		ret = sc_allow_all(ctx, worker_calls, SC_N(worker_calls));
		if (!ret)
			ret = sc_allow_all(ctx, blk_calls, SC_N(blk_calls));
		return ret ? ret : sc_allow_sigbus_reset(ctx);
	case SECCOMP_ROLE_WORKER_CONSOLE:
		ret = sc_allow_all(ctx, worker_calls, SC_N(worker_calls));
		return ret ? ret : sc_allow_all(ctx, console_calls, SC_N(console_calls));
	case SECCOMP_ROLE_WORKER_FS:
		ret = sc_allow_all(ctx, worker_calls, SC_N(worker_calls));
		if (!ret)
			ret = sc_allow_sigbus_reset(ctx);
		if (!ret)
			ret = sc_allow_all(ctx, fs_calls, SC_N(fs_calls));
		/* O_NONBLOCK off again after an open that must not block (fs_common.c). */
		if (!ret)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
					       SCMP_A1(SCMP_CMP_EQ, F_GETFL));
		if (!ret)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(fcntl), 1,
					       SCMP_A1(SCMP_CMP_EQ, F_SETFL));
		return ret;
	case SECCOMP_ROLE_SERVE:
		ret = sc_allow_all(ctx, serve_calls, SC_N(serve_calls));
		if (!ret)
			ret = sc_allow_sigbus_reset(ctx);
		if (!ret)
			ret = sc_allow_fstat(ctx); /* region fds (their size), eventfds (their kind) */
		return ret ? ret : sc_allow_unlink_in(ctx, c->unlink_dirfd);
	case SECCOMP_ROLE_GDB:
		ret = sc_allow_all(ctx, gdb_calls, SC_N(gdb_calls));
		if (!ret)
			ret = sc_allow_ioctls(ctx, gdb_ioctls, SC_N(gdb_ioctls));
		return ret ? ret : sc_allow_unlink_in(ctx, c->unlink_dirfd);
	}
	return -EINVAL;
}

int seccomp_confine(const struct seccomp_confinement *c)
{
	if (c->mode == SECCOMP_MODE_OFF)
		return 0;
	if ((unsigned int)c->role >= SECCOMP_NR_ROLES)
		return -EINVAL;
	scmp_filter_ctx ctx =
		seccomp_init(c->mode == SECCOMP_MODE_LOG ? SCMP_ACT_LOG : SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	int ret = sc_allow_all(ctx, common_calls, SC_N(common_calls));
	if (!ret)
		ret = sc_common_args(ctx);
	if (!ret)
		ret = sc_role_rules(ctx, c);
	if (!ret)
		ret = sc_refusals(ctx, c);
	/* No SCMP_FLTATR_CTL_TSYNC: the filter is this thread's; every thread installs its own. */
	if (!ret)
		ret = seccomp_load(ctx);
	seccomp_release(ctx);
	return ret;
}

int seccomp_confine_hook(void *c)
{
	return seccomp_confine(c);
}
