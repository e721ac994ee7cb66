/* ringvm.h: the ringvm library: boot a Linux guest on KVM, run one command in it, report how it ended. */
#ifndef RINGVM_H
#define RINGVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit statuses of the ringvm CLI other than the guest command's own. */
#define RINGVM_EXIT_ERROR 125 /* ringvm could not start or run the guest (bad input, host failure) */
#define RINGVM_EXIT_CRASH 123 /* the guest crashed: kernel panic, triple fault, KVM internal error */
#define RINGVM_EXIT_TIMEOUT 124 /* the run took longer than its timeout (as timeout(1) says) */

/* How long a command has to end after a forwarded signal before ringvm stops the guest (docker's). */
#define RINGVM_STOP_TIMEOUT_MS 10000

/* How the command's standard streams reach it (ringvm_config.stdio). */
enum ringvm_tty {
	RINGVM_TTY_AUTO = 0, /* a tty when stdio[0] is a terminal, else streams */
	RINGVM_TTY_ON,	     /* the serial console, as an interactive terminal (-t) */
	RINGVM_TTY_OFF,	     /* streams, even from a terminal (-T) */
};

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
	/*
	 * The command's stdin, stdout and stderr on the host (default 0, 1, 2). Without a tty they
	 * reach the command as they are, through virtio-console ports: byte-exact, EOF and EPIPE as on
	 * pipes, flow control both ways (devices/console/virtio_console.h); the serial console (the
	 * kernel's messages with verbose, a panic, PID 1's errors) then goes to stdio[2], never into
	 * stdout. With a tty, and for the shell (no command), the serial console is the terminal:
	 * input from stdio[0] when it is one, output to stdio[1]. A closed fd counts as /dev/null.
	 */
	int stdio[3];
	enum ringvm_tty tty; /* RINGVM_TTY_AUTO (default): a tty when stdio[0] is a terminal */
	/* How the command runs (guest/launch.h). env: NAME=VALUE entries over the guest's small
	   default environment (PATH, HOME, TERM); workdir: absolute, default "/"; user: uid and gid,
	   no supplementary groups. */
	char *const *env;
	int nr_env;
	const char *workdir;	/* NULL: "/" */
	bool set_user;
	uint32_t uid, gid;
	unsigned int timeout_s; /* > 0: the run is stopped after this many seconds (RINGVM_END_TIMEOUT) */
	/*
	 * handle_signals: SIGINT, SIGTERM and SIGHUP sent to the process are ringvm's (the CLI sets
	 * this). With a command, each is forwarded to the command's process group in the guest (on a
	 * virtio-console port of its own, guest/sigfwd.h; a tty included), and the guest is stopped
	 * (RINGVM_END_STOPPED, status 128 + the first signal's number) when the command has not ended
	 * stop_timeout_ms after the first one, or when the command's output has not been read for a
	 * few seconds since (a reader that went quiet must not keep ringvm alive). A signal stops the
	 * guest at once (128+N) for the shell, with stop_timeout_ms 0, and while the guest's PID 1 is
	 * not listening (still booting, or a kernel without virtio_console).
	 */
	bool handle_signals;
	unsigned int stop_timeout_ms; /* default RINGVM_STOP_TIMEOUT_MS */
	const char *gdb;     /* --gdb tcp:HOST:PORT|unix:PATH: a gdb stub (vmm/gdb_stub.h); NULL: none */
	bool gdb_wait;       /* --gdb-wait: the vCPUs wait for the debugger before their first instruction */
	bool seccomp;        /* ringvm_run() confines every thread it makes, and the calling thread
			      * itself, each to its role's list (vmm/seccomp.h; default true; a runtime
			      * that goes on using the calling thread for other work may opt out) */
	bool drop_privileges; /* ringvm_run() drops every capability the shares do not need and sets
			       * no_new_privs before any thread starts (vmm/privilege.h; default true) */
};

/* Defaults: 1 vCPU, 512 MiB, stdio 0/1/2 with the tty decided by stdio[0], no command, seccomp on,
   stop timeout RINGVM_STOP_TIMEOUT_MS. */
void ringvm_config_init(struct ringvm_config *cfg);

enum ringvm_end {
	RINGVM_END_EXIT_STATUS, /* the command exited; status holds its exit status */
	RINGVM_END_POWEROFF,    /* the guest powered off without reporting a status */
	RINGVM_END_RESET,       /* the guest rebooted */
	RINGVM_END_PANIC,       /* the guest kernel panicked */
	RINGVM_END_CRASH,       /* triple fault or a KVM error */
	RINGVM_END_STOPPED,     /* stopped from the host (signal, ringvm_stop, Ctrl-A x) */
	RINGVM_END_ERROR,       /* ringvm failed while the guest ran */
	RINGVM_END_TIMEOUT,     /* timeout_s ran out; the guest was stopped */
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

/*
 * True when the command's streams go through virtio-console: ringvm reads and writes duplicates
 * of stdio[0..2] from its own threads, and closes its stdout duplicate when the command closes its
 * stdout. A caller that keeps its own stdio[1] open delays the EOF the reader sees until it closes
 * it (the CLI points its fd 1 at /dev/null).
 */
bool ringvm_streams(const struct ringvm *vm);

/* Whether a VM made from cfg would carry the command's streams (a command, and no terminal: tty
   RINGVM_TTY_OFF, or AUTO with stdio[0] not a terminal); what ringvm_streams() then says. */
bool ringvm_config_wants_streams(const struct ringvm_config *cfg);

/*
 * Run the guest until it ends. Returns 0 with *res filled, or -errno if it could not start. With
 * cfg->seccomp the calling thread is confined (SECCOMP_ROLE_CONTROL) from before the guest's first
 * instruction to the end of the process: afterwards it may still ringvm_destroy(), print and exit.
 */
__attribute__((warn_unused_result)) int ringvm_run(struct ringvm *vm, struct ringvm_result *res);

/* Ask a running guest to stop (any thread, async-signal-safe it is not). */
void ringvm_stop(struct ringvm *vm);

void ringvm_destroy(struct ringvm *vm);

/* The CLI's exit status for a result: the command's status, 0, RINGVM_EXIT_CRASH, _TIMEOUT or
   _ERROR. */
int ringvm_exit_code(const struct ringvm_result *res);

/*
 * ringvm serve: one of ringvm's devices served over vhost-user to another VMM (QEMU, Cloud
 * Hypervisor, a benchmark driver) instead of booting a guest: a drop-in for virtiofsd and
 * qemu-storage-daemon's vhost-user-blk export. One front-end at a time; when it disconnects the
 * device is reset and the next connection is accepted (devices/vhost_user/vu_backend.h).
 */
enum ringvm_serve_device {
	RINGVM_SERVE_FS,  /* virtio-fs over shared_dir */
	RINGVM_SERVE_BLK, /* virtio-blk over disk */
};

/* ringvm serve's default busy-poll ceiling (see ringvm_serve_config.poll_us; measured in
   tests/bench/device: it saves the worker's wake-up when the driver answers within it). */
#define RINGVM_SERVE_POLL_US 50
#define RINGVM_SERVE_MAX_POLL_US 1000

struct ringvm_serve_config {
	enum ringvm_serve_device device;
	const char *socket;	/* Unix socket path to create and listen on (a stale socket there
				   is replaced, any other file refused) */
	int listen_fd;		/* instead of socket: an already listening socket (libvirt's --fd);
				   -1: none */
	/* virtio-fs */
	const char *shared_dir; /* required for RINGVM_SERVE_FS */
	unsigned int queues;	/* request queues 1..16 (default 1) */
	const char *cache;	/* "auto" (default), "always" or "never" */
	bool readonly;
	bool allow_direct_io;	/* a front-end's O_DIRECT opens are O_DIRECT on the host (default
				   off: dropped, the host page cache serves; virtiofsd's option) */
	/* virtio-blk: a --disk spec, PATH[,readonly][,direct=on|off][,queues=N][,id=S][,poll_us=N] */
	const char *disk;
	/* Both: the queue workers' busy-poll ceiling in microseconds (0..RINGVM_SERVE_MAX_POLL_US; 0 =
	   never poll); the window adapts below it (devices/virtio/pace.h). A --disk spec's poll_us=
	   wins over it. Default RINGVM_SERVE_POLL_US. */
	unsigned int poll_us;
	bool seccomp;	     /* confine the calling thread and the queue workers once listening
			        (default true; vmm/seccomp.h) */
	bool drop_privileges; /* keep only the capabilities the share needs, no_new_privs (default
				 true; vmm/privilege.h), before the first thread */
	bool handle_signals; /* SIGINT/SIGTERM/SIGHUP end the server (the CLI sets this) */
	int stop_fd;	     /* without handle_signals: readable -> the server ends; -1: never */
};

/* Defaults: no device chosen (fs), 1 queue, cache auto, seccomp on, capabilities dropped, no
   signals, no stop_fd. */
void ringvm_serve_config_init(struct ringvm_serve_config *cfg);

/*
 * Create the device, listen, confine, then serve front-ends one after another until stopped (a
 * handled signal, or stop_fd). Returns 0 when stopped, or -errno with a one-line reason in err
 * (no newline) when it could not start. The socket path is removed at the end.
 */
__attribute__((warn_unused_result)) int ringvm_serve(const struct ringvm_serve_config *cfg, char *err,
						     size_t errlen);

#endif
