/* ringvm.h: the ringvm library: boot a Linux guest on KVM, run one command in it, report how it ended. */
#ifndef RINGVM_H
#define RINGVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses of the ringvm CLI other than the guest command's own. */
#define RINGVM_EXIT_ERROR 125 /* ringvm could not start or run the guest (bad input, host failure) */
#define RINGVM_EXIT_CRASH 123 /* the guest crashed: kernel panic, triple fault, KVM internal error */

struct ringvm_config {
	const char *kernel;  /* bzImage or PVH vmlinux; required */
	const char *initrd;  /* NULL: none */
	const char *cmdline; /* appended to ringvm's kernel command line; NULL: nothing */
	unsigned int cpus;   /* 1..255 */
	uint64_t memory;     /* bytes, at least 64 MiB, a multiple of 4 KiB */
	char *const *argv;   /* the command PID 1 runs; argc 0: an interactive shell */
	int argc;
	const char *const *disks; /* --disk specs: PATH[,readonly][,queues=N][,direct=on|off][,id=S] */
	unsigned int nr_disks;
	const char *const *shares; /* --share specs: HOSTDIR:GUESTDIR[,readonly][,cache=..][,tag=..][,queues=N] */
	unsigned int nr_shares;
	const char *root;    /* --root HOSTDIR[,rw]: the guest's root over virtio-fs; NULL: initramfs */
	const char *fs_limits; /* --fs-limits fds=N,dir_buffers=N for all shares; NULL: defaults */
	bool verbose;        /* guest kernel messages on the console */
	int console_in;      /* forwarded to the guest when it is a terminal; -1: none */
	int console_out;     /* the guest console's bytes */
	bool handle_signals; /* SIGINT/SIGTERM/SIGHUP stop the guest (the CLI sets this) */
	const char *gdb;     /* --gdb tcp:HOST:PORT|unix:PATH: a gdb stub (vmm/gdb_stub.h); NULL: none */
	bool gdb_wait;       /* --gdb-wait: the vCPUs wait for the debugger before their first instruction */
	bool seccomp;        /* ringvm_run() confines the whole process with vmm/seccomp.c's list
			      * (default true; a runtime doing other work in-process may opt out) */
	bool drop_privileges; /* ringvm_run() drops every capability the shares do not need and sets
			       * no_new_privs before any thread starts (vmm/privilege.h; default true) */
};

/* Defaults: 1 vCPU, 512 MiB, stdin/stdout console, no command, seccomp on. */
void ringvm_config_init(struct ringvm_config *cfg);

enum ringvm_end {
	RINGVM_END_EXIT_STATUS, /* the command exited; status holds its exit status */
	RINGVM_END_POWEROFF,    /* the guest powered off without reporting a status */
	RINGVM_END_RESET,       /* the guest rebooted */
	RINGVM_END_PANIC,       /* the guest kernel panicked */
	RINGVM_END_CRASH,       /* triple fault or a KVM error */
	RINGVM_END_STOPPED,     /* stopped from the host (signal, ringvm_stop, Ctrl-A x) */
	RINGVM_END_ERROR,       /* ringvm failed while the guest ran */
};

struct ringvm_result {
	enum ringvm_end end;
	int status;
	char message[160]; /* one line: what happened */
	/* Boot timing, CLOCK_MONOTONIC nanoseconds (0: not reached): the first KVM_RUN, PID 1 starting
	 * (guest/protocol.h RINGVM_BOOT_PORT), the end of the run. */
	uint64_t t_first_run;
	uint64_t t_init;
	uint64_t t_end;
};

struct ringvm;

/*
 * Build the machine: validate cfg, load the kernel and initrd, create devices. On failure returns
 * -errno and writes a one-line reason to err (no newline).
 */
__attribute__((warn_unused_result)) int ringvm_create(const struct ringvm_config *cfg, struct ringvm **out,
						      char *err, size_t errlen);

/* With cfg->gdb: where the stub listens ("tcp:127.0.0.1:1234", "unix:PATH"); else NULL. */
const char *ringvm_gdb_address(const struct ringvm *vm);

/* Run the guest until it ends. Returns 0 with *res filled, or -errno if it could not start. */
__attribute__((warn_unused_result)) int ringvm_run(struct ringvm *vm, struct ringvm_result *res);

/* Ask a running guest to stop (any thread, async-signal-safe it is not). */
void ringvm_stop(struct ringvm *vm);

void ringvm_destroy(struct ringvm *vm);

/* The CLI's exit status for a result: the command's status, 0, RINGVM_EXIT_CRASH or _ERROR. */
int ringvm_exit_code(const struct ringvm_result *res);

#endif
