/* seccomp.h: the system calls ringvm may make once the guest runs; anything else ends the process. */
#ifndef RINGVM_SECCOMP_H
#define RINGVM_SECCOMP_H

enum seccomp_mode {
	SECCOMP_MODE_KILL, /* default: a call outside the list kills ringvm (SIGSYS, core) */
	SECCOMP_MODE_LOG,  /* RINGVM_SECCOMP=log: allowed, but logged by the kernel (audit) */
	SECCOMP_MODE_OFF,  /* RINGVM_SECCOMP=off: no filter (debugging only) */
};

/* The mode RINGVM_SECCOMP asks for (kill when unset or unknown). */
enum seccomp_mode seccomp_mode_from_env(void);

/* What the process does once confined. */
enum seccomp_role {
	SECCOMP_ROLE_VM,    /* ringvm run: vCPUs (KVM ioctls), queue workers, the console */
	SECCOMP_ROLE_VM_GDB, /* ringvm run --gdb: the VM role and the stub (vmm/gdb_stub.h): accept4,
				send, shutdown on its socket and the vCPU state and debug ioctls */
	SECCOMP_ROLE_SERVE, /* ringvm serve: the vhost-user socket (accept, recvmsg with fds,
			       sendmsg) and queue workers; no KVM */
};

/*
 * Install the filter on every thread of the process (SECCOMP_FILTER_FLAG_TSYNC); threads created
 * later inherit it. Called once by ringvm_run() after setup, before the first vCPU runs, so that
 * setup (opening files, creating the VM) is not constrained; seccomp_install() is the VM role.
 * ringvm_serve() installs the serve role after it listens, before the first connection.
 * 0 or -errno.
 */
__attribute__((warn_unused_result)) int seccomp_install_role(enum seccomp_mode mode,
							     enum seccomp_role role);
__attribute__((warn_unused_result)) int seccomp_install(enum seccomp_mode mode);

#endif
