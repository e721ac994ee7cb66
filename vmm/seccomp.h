/* seccomp.h: one seccomp filter per thread role; once a thread is confined, anything else ends ringvm. */
#ifndef RINGVM_SECCOMP_H
#define RINGVM_SECCOMP_H

enum seccomp_mode {
	SECCOMP_MODE_KILL, /* default: a call outside the list kills ringvm (SIGSYS, core) */
	SECCOMP_MODE_LOG,  /* RINGVM_SECCOMP=log: allowed, but logged by the kernel (audit) */
	SECCOMP_MODE_OFF,  /* RINGVM_SECCOMP=off: no filter (debugging only) */
};

/* The mode RINGVM_SECCOMP asks for (kill when unset or unknown; log in the sanitizer build). */
enum seccomp_mode seccomp_mode_from_env(void);

/*
 * Who a thread is. Each role's list (seccomp.c, every call with who needs it) holds only what that
 * thread does once its setup is over. Common to all: memory (never executable), futex, signals
 * masks and returns, time, write, ending the thread or the process, tgkill within the process.
 * Denied to all: clone (threads and rings are all made before anything is confined), clone3
 * (answered ENOSYS), io_uring_setup and io_uring_register (the rings exist and are sealed), exec,
 * sockets, namespaces, ptrace, mount, BPF, module loading, new KVM objects.
 */
enum seccomp_role {
	SECCOMP_ROLE_CONTROL,	/* ringvm run's main thread and console input thread: wait for the
				   end (poll, signalfd), the terminal, teardown (close, KVM eventfd
				   removal) */
	SECCOMP_ROLE_VCPU,	/* a vCPU thread: KVM_RUN and the device registers it serves (status
				   writes start/stop queue workers, reset closes a share's fds) */
	SECCOMP_ROLE_WORKER,	/* a queue worker whose device does its I/O through its sealed
				   io_uring (virtio-blk): io_uring_enter, the interrupt eventfd, and
				   preadv2/pwritev2 for transfers made on the thread */
	SECCOMP_ROLE_WORKER_FS, /* a virtio-fs queue worker: WORKER plus the file system calls of the
				   FUSE operations it serves inline, on fds under the share */
	SECCOMP_ROLE_SERVE,	/* ringvm serve's connection thread: one front-end's messages (recvmsg
				   with fds, sendmsg), its memory regions (mmap), accept */
	SECCOMP_ROLE_WORKER_CONSOLE, /* a virtio-console queue worker (the command's streams): WORKER
					plus close, for the host side of a port the guest closed */
	SECCOMP_ROLE_VCPU_GDB,	/* a vCPU thread under --gdb: VCPU plus giving the guest back its own
				   #DB or #BP (vCPU events, debug registers) */
	SECCOMP_ROLE_GDB,	/* --gdb's stub thread (vmm/gdb_stub.h): one debugger at a time on the
				   socket made before (accept, poll, read, send, shutdown, close), the
				   parked vCPUs' registers and debug controls, the socket file at exit */
};

#define SECCOMP_NR_ROLES 8

/* The role's name ("vcpu", "worker-fs", ...), for messages and tests. */
const char *seccomp_role_name(enum seccomp_role role);

/* A thread's confinement. */
struct seccomp_confinement {
	enum seccomp_mode mode;
	enum seccomp_role role;
	int unlink_dirfd; /* SERVE and GDB only: the directory fd unlinkat may name (their Unix
			     socket's, removed at exit), -1 for none; other roles never unlink
			     outside a share */
};

/*
 * Confine the calling thread (only it: no TSYNC; threads it creates afterwards would inherit the
 * filter, but no role may create one) to c->role's list. SECCOMP_MODE_OFF: nothing. Called by each
 * thread itself at the end of its setup: vCPU threads before their first KVM_RUN, queue workers
 * after the device's thread_init (devices/virtio/worker.h), the console input thread before it
 * reads, the main thread once every other thread is confined; ringvm serve's main thread after
 * the workers are made. 0 or -errno.
 */
__attribute__((warn_unused_result)) int seccomp_confine(const struct seccomp_confinement *c);

/* seccomp_confine(c) with c a struct seccomp_confinement *: the hook queue workers take. */
__attribute__((warn_unused_result)) int seccomp_confine_hook(void *c);

#endif
