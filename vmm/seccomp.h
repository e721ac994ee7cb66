/* seccomp.h: the system calls ringvm may make once the guest runs; anything else ends the process. */
#ifndef RINGVM_SECCOMP_H
#define RINGVM_SECCOMP_H

#include <stdbool.h>

enum seccomp_mode {
	SECCOMP_MODE_KILL, /* default: a call outside the list kills ringvm (SIGSYS, core) */
	SECCOMP_MODE_LOG,  /* RINGVM_SECCOMP=log: allowed, but logged by the kernel (audit) */
	SECCOMP_MODE_OFF,  /* RINGVM_SECCOMP=off: no filter (debugging only) */
};

/* The mode RINGVM_SECCOMP asks for (kill when unset or unknown). */
enum seccomp_mode seccomp_mode_from_env(void);

/*
 * Install the filter on every thread of the process (SECCOMP_FILTER_FLAG_TSYNC); threads created
 * later inherit it. Called once by ringvm_run() after setup, before the first vCPU runs, so that
 * setup (opening files, creating the VM) is not constrained. 0 or -errno.
 */
__attribute__((warn_unused_result)) int seccomp_install(enum seccomp_mode mode);

/* The same, and with gdb also what the --gdb stub needs (vmm/gdb_stub.h): accept4, send, shutdown
   and the vCPU state ioctls. Without --gdb none of these is allowed. */
__attribute__((warn_unused_result)) int seccomp_install_gdb(enum seccomp_mode mode, bool gdb);

#endif
