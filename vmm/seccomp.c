/* seccomp.c: the allow-lists of a running ringvm: the VMM (vCPUs, workers, console) and the vhost-user server. */
#define _GNU_SOURCE
#include "vmm/seccomp.h"

#include <errno.h>
#include <linux/kvm.h>
#include <sched.h>
#include <stdbool.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>

/*
 * Why one list rather than one per thread: queue workers are created on the vCPU thread that writes
 * DRIVER_OK and inherit its filter, so a per-role vCPU filter would have to allow everything a worker
 * does anyway. What the list leaves out is what matters: no execve, no sockets, no ptrace or
 * process_vm_*, no mount, no module or BPF loading, no new memfd or KVM objects, no namespace changes
 * beyond CLONE_FS (which the virtio-fs workers need for their own umask).
 */
static const int allowed[] = {
	/* I/O on descriptors ringvm already holds: console, eventfds, disk images, shared dirs. */
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64),
	SCMP_SYS(pwrite64), SCMP_SYS(preadv), SCMP_SYS(pwritev), SCMP_SYS(preadv2),
	SCMP_SYS(pwritev2), SCMP_SYS(lseek), SCMP_SYS(close), SCMP_SYS(fcntl), SCMP_SYS(dup),
	SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(eventfd2),
	/* io_uring: each queue worker's ring (its SQEs run in kernel workers, not under this filter). */
	SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
	/* Memory: malloc, thread stacks, teardown of guest RAM. */
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect), SCMP_SYS(madvise), SCMP_SYS(mremap),
	SCMP_SYS(brk),
	/* Threads: workers start on DRIVER_OK; joins and condition variables. */
	SCMP_SYS(clone), SCMP_SYS(clone3), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
	SCMP_SYS(futex), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(gettid), SCMP_SYS(getpid),
	SCMP_SYS(tgkill), SCMP_SYS(sched_yield), SCMP_SYS(sched_getaffinity), SCMP_SYS(getrandom),
	SCMP_SYS(membarrier),
	/* Signals: the vCPU kick, the stop signals through signalfd, blocked masks in workers. */
	SCMP_SYS(rt_sigaction), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(sigaltstack),
	SCMP_SYS(signalfd4), SCMP_SYS(restart_syscall),
	/* Time. */
	SCMP_SYS(clock_gettime), SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),
	/* virtio-fs: every file operation is relative to a directory fd under the share (openat2). */
	SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(newfstatat), SCMP_SYS(fstat), SCMP_SYS(statx),
	SCMP_SYS(fstatfs), SCMP_SYS(getdents64), SCMP_SYS(mkdirat), SCMP_SYS(mknodat),
	SCMP_SYS(unlinkat), SCMP_SYS(renameat2), SCMP_SYS(linkat), SCMP_SYS(symlinkat),
	SCMP_SYS(readlinkat), SCMP_SYS(fchmod), SCMP_SYS(fchmodat), SCMP_SYS(fchown),
	SCMP_SYS(fchownat), SCMP_SYS(ftruncate), SCMP_SYS(fallocate), SCMP_SYS(fsync),
	SCMP_SYS(fdatasync), SCMP_SYS(syncfs), SCMP_SYS(utimensat), SCMP_SYS(faccessat),
	SCMP_SYS(faccessat2), SCMP_SYS(copy_file_range), SCMP_SYS(fgetxattr), SCMP_SYS(fsetxattr),
	SCMP_SYS(flistxattr), SCMP_SYS(fremovexattr), SCMP_SYS(getxattr), SCMP_SYS(setxattr),
	SCMP_SYS(listxattr), SCMP_SYS(removexattr), SCMP_SYS(lgetxattr), SCMP_SYS(lsetxattr),
	SCMP_SYS(llistxattr), SCMP_SYS(lremovexattr),
	/* virtio-fs credentials: act as the guest caller, per thread. */
	SCMP_SYS(setfsuid), SCMP_SYS(setfsgid), SCMP_SYS(setgroups), SCMP_SYS(umask), SCMP_SYS(capget),
	SCMP_SYS(capset),
	SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
	SCMP_SYS(getrlimit), SCMP_SYS(prlimit64),
};

/*
 * ringvm serve only, on top of the list above (the vhost-user connection thread): one front-end at a
 * time on an already listening socket.
 */
static const int allowed_serve[] = {
	SCMP_SYS(accept4),  /* the next front-end, after the previous one disconnected */
	SCMP_SYS(recvmsg),  /* a message and its SCM_RIGHTS fds (memory regions, eventfds) */
	SCMP_SYS(sendmsg),  /* replies */
};

/* ioctl: only the KVM calls of a running VM and the terminal calls of the console. */
static const unsigned long allowed_ioctls[] = {
	KVM_RUN, KVM_IRQ_LINE, KVM_IOEVENTFD, KVM_IRQFD, TCGETS, TCSETS, TCSETSW, TCSETSF, TIOCGWINSZ,
};

/*
 * --gdb only, on top of the lists above: the stub's thread takes one debugger at a time on the
 * socket it opened before the filter, and reads and sets vCPU state while the vCPUs are parked.
 */
static const int allowed_gdb[] = {
	SCMP_SYS(accept4), /* the next debugger, on the already listening socket */
	SCMP_SYS(sendto),  /* replies: send(MSG_NOSIGNAL), so a debugger that hung up is no SIGPIPE */
	SCMP_SYS(shutdown), /* drop a debugger that stopped reading */
};
static const unsigned long allowed_gdb_ioctls[] = {
	KVM_GET_REGS, KVM_SET_REGS,	      /* general registers (g, G, p, P) */
	KVM_GET_SREGS, KVM_SET_SREGS,	      /* segments, control registers: also the page walk */
	KVM_GET_FPU, KVM_SET_FPU,	      /* x87 and SSE registers */
	KVM_SET_GUEST_DEBUG,		      /* breakpoints, watchpoints, single step */
	KVM_GET_VCPU_EVENTS, KVM_SET_VCPU_EVENTS, /* give the guest back its own int3 / #DB */
	KVM_GET_DEBUGREGS, KVM_SET_DEBUGREGS,	  /* ... with the DR6 its handler reads */
};

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

int seccomp_install(enum seccomp_mode mode)
{
	return seccomp_install_role(mode, SECCOMP_ROLE_VM);
}

int seccomp_install_role(enum seccomp_mode mode, enum seccomp_role role)
{
	if (mode == SECCOMP_MODE_OFF)
		return 0;
	scmp_filter_ctx ctx =
		seccomp_init(mode == SECCOMP_MODE_LOG ? SCMP_ACT_LOG : SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return -ENOMEM;
	int ret = 0;
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]) && !ret; i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
	/* prctl only to name a thread (queue workers are "vqN"). */
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				       SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	/* unshare only for CLONE_FS: a worker's private umask and cwd, nothing else. */
	if (!ret)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unshare), 1,
				       SCMP_A0(SCMP_CMP_EQ, CLONE_FS));
	for (size_t i = 0; role == SECCOMP_ROLE_SERVE &&
			   i < sizeof(allowed_serve) / sizeof(allowed_serve[0]) && !ret; i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed_serve[i], 0);
	/* Masked: the request is a 32-bit number, however the caller widened it. The serve role
	   has no VM and no console: no ioctl at all. */
	bool vm = role == SECCOMP_ROLE_VM || role == SECCOMP_ROLE_VM_GDB;
	bool gdb = role == SECCOMP_ROLE_VM_GDB;
	for (size_t i = 0; vm &&
			   i < sizeof(allowed_ioctls) / sizeof(allowed_ioctls[0]) && !ret; i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, allowed_ioctls[i]));
	for (size_t i = 0; gdb && i < sizeof(allowed_gdb) / sizeof(allowed_gdb[0]) && !ret; i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed_gdb[i], 0);
	for (size_t i = 0; gdb && i < sizeof(allowed_gdb_ioctls) / sizeof(allowed_gdb_ioctls[0]) && !ret; i++)
		ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				       SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, allowed_gdb_ioctls[i]));
	if (!ret)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!ret)
		ret = seccomp_load(ctx);
	seccomp_release(ctx);
	return ret;
}
