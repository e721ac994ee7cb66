/* ringvm.h: libringvm, the public API: boot a Linux guest on KVM, run one command in it, report how it ended. */
#ifndef RINGVM_H
#define RINGVM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Versions. The macros are the header's; ringvm_version() is the loaded library's. The library's
 * soname is libringvm.so.RINGVM_VERSION_MAJOR: the structs below are part of its ABI, so changing
 * their layout changes the major version (and the version node of dist/libringvm.map, RINGVM_<major>;
 * dist/abi-sizes records the structs' sizes for the major, tests/host/install.sh compares them);
 * a new function raises the minor, a fix the patch. 1.0.0: struct ringvm_config gained the run
 * settings (launch, timeout, gdb, signals) and struct ringvm_disk poll_us_set since 0.2.0.
 */
#define RINGVM_VERSION_MAJOR 1
#define RINGVM_VERSION_MINOR 0
#define RINGVM_VERSION_PATCH 0
#define RINGVM_VERSION_STRING "1.0.0"
/* "MAJOR.MINOR.PATCH" of the library actually linked. */
const char *ringvm_version(void);

/*
 * Errors. Every function that can fail returns 0, or a negative errno value, and then writes one
 * line saying what went wrong (no newline, NUL-terminated, cut to fit) into err[errlen]; err may be
 * NULL when errlen is 0. RINGVM_ERR_MAX bytes always hold the whole line.
 */
#define RINGVM_ERR_MAX 512

/* Exit statuses of the ringvm CLI other than the guest command's own. */
#define RINGVM_EXIT_ERROR 125 /* ringvm could not start or run the guest (bad input, host failure) */
#define RINGVM_EXIT_CRASH 123 /* the guest crashed: kernel panic, triple fault, KVM internal error */
#define RINGVM_EXIT_TIMEOUT 124 /* the run took longer than its timeout (as timeout(1) says) */

/* Limits, checked by ringvm_config_check(). */
#define RINGVM_MAX_CPUS 255                /* xAPIC IDs; 255 is the broadcast ID */
#define RINGVM_MIN_MEMORY (64ULL << 20)
#define RINGVM_MAX_MEMORY (1ULL << 40)
#define RINGVM_MAX_DEVICES 16  /* disks + shares + root together: one interrupt line each */
#define RINGVM_MAX_QUEUES 16   /* request queues of one disk or share */
#define RINGVM_MAX_POLL_US 1000 /* a disk worker spinning longer than this costs more than a wakeup */
#define RINGVM_MAX_ENV 256     /* ringvm_config.env entries */
#define RINGVM_DISK_ID_MAX 20  /* virtio-blk GET_ID: 20 bytes */
#define RINGVM_TAG_MAX 36      /* virtio-fs tag: 36 bytes */
#define RINGVM_MAX_FS_LIMIT (1ULL << 30)

/* How long a command has to end after a forwarded signal before ringvm stops the guest (docker's). */
#define RINGVM_STOP_TIMEOUT_MS 10000

/*
 * A virtio-blk disk over a host file or block device. The guest sees /dev/vda, /dev/vdb, ... in
 * the order of ringvm_config.disks. A zeroed struct holds every default; path is required.
 */
struct ringvm_disk {
	const char *path;     /* regular file or block device; must be writable unless readonly */
	bool readonly;        /* the guest's writes fail (default: read-write) */
	bool direct;          /* O_DIRECT on the host, with a buffered fallback for unaligned
				 requests (default: the host's page cache) */
	unsigned int queues;  /* 1..RINGVM_MAX_QUEUES; 0 (default): one per vCPU, at most 16 */
	const char *id;       /* what GET_ID answers: 1..20 printable ASCII characters without
				 spaces; NULL (default): derived from the path */
	unsigned int poll_us; /* queue workers busy-poll up to this long (microseconds) before
				 sleeping, 0..RINGVM_MAX_POLL_US; 0 = never. Used when non-zero
				 or when poll_us_set */
	bool poll_us_set;     /* poll_us holds a choice even when 0. Unset with poll_us 0
				 (default): ringvm_run's disks do not poll, ringvm_serve's disk
				 takes ringvm_serve_config.poll_us (default RINGVM_SERVE_POLL_US) */
};

enum ringvm_cache {
	RINGVM_CACHE_AUTO = 0, /* default: short timeouts, page cache kept while the file is unchanged */
	RINGVM_CACHE_ALWAYS,   /* long timeouts, page cache always kept: only ringvm changes the files */
	RINGVM_CACHE_NEVER,    /* every access reaches the host */
};

enum ringvm_xattr {
	RINGVM_XATTR_USER = 0, /* default: user.* and the POSIX ACLs */
	RINGVM_XATTR_NONE,     /* no extended attributes */
	RINGVM_XATTR_SECURITY, /* user + security.* (SELinux labels, file capabilities) */
	RINGVM_XATTR_ALL,      /* every namespace (trusted.* and security.* only by guest root) */
};

/*
 * A host directory over virtio-fs, mounted by the guest's PID 1 at guest_dir. A zeroed struct holds
 * every default; host_dir and guest_dir are required. README "What a guest gets through a share"
 * says what each switch allows.
 */
struct ringvm_share {
	const char *host_dir;  /* an existing directory, not on a pseudo file system (/proc...) */
	const char *guest_dir; /* absolute path in the guest; one share per mount point */
	const char *tag;       /* the virtio-fs tag: 1..36 printable characters, no ':' ',' or
				  spaces, unique; NULL (default): guest_dir without its leading '/',
				  other '/' as '_', cut to 36 ("root" for "/") */
	bool readonly;         /* every change fails with EROFS (default: read-write) */
	enum ringvm_cache cache;
	unsigned int queues;   /* request queues 1..RINGVM_MAX_QUEUES; 0 (default): 1 */
	bool dev;              /* the guest may create device nodes (default: EPERM) */
	bool suid;             /* setuid/setgid bits are kept (default: stripped) */
	bool allow_direct_io;  /* a guest O_DIRECT open is O_DIRECT on the host (default: dropped) */
	enum ringvm_xattr xattr;
};

/* The guest's root file system over virtio-fs (tag "root") instead of the initramfs alone. */
struct ringvm_root {
	const char *host_dir; /* NULL (default): no root share */
	bool writable;        /* false (default): read-only under a tmpfs overlay; true: writes go
				 through to host_dir */
};

/*
 * What all shares together may hold on the host (README "Host resources"). Process-wide: the last
 * ringvm_create() with a non-zero value sets it for every VM of the process.
 */
struct ringvm_fs_limits {
	uint64_t fds;         /* inodes the guest holds + open files, 1..2^30; 0 (default): the fd
				 limit less 1024, at most 2^20 */
	uint64_t dir_buffers; /* 8 KiB directory read-ahead buffers, 1..2^30; 0 (default): 2048 */
};

/* How the command's standard streams reach it (ringvm_console.tty). */
enum ringvm_tty {
	RINGVM_TTY_AUTO = 0, /* default: a tty when stdio[0] is a terminal, else streams */
	RINGVM_TTY_ON,	     /* the serial console, as an interactive terminal (-t) */
	RINGVM_TTY_OFF,	     /* streams, even from a terminal (-T) */
};

/*
 * The command's stdin, stdout and stderr on the host, and the guest's serial console. Without a
 * tty they reach the command as they are, through virtio-console ports: byte-exact, EOF and EPIPE
 * as on pipes, flow control both ways (devices/console/virtio_console.h); the serial console (the
 * kernel's messages with verbose, a panic, PID 1's errors) then goes to stdio[2], never into
 * stdout. With a tty, and for the shell (no command), the serial console is the terminal: input
 * from stdio[0] when it is one, output to stdio[1]. A closed or negative fd counts as /dev/null.
 */
struct ringvm_console {
	int stdio[3];        /* default 0, 1, 2 */
	enum ringvm_tty tty; /* default RINGVM_TTY_AUTO */
};

/*
 * How the command runs in the guest (guest/launch.h). A zeroed struct holds every default; any of
 * it needs a command (ringvm_config.argc > 0).
 */
struct ringvm_launch {
	const char *const *env; /* NAME=VALUE entries over the guest's small default environment
				   (PATH, HOME, TERM); nr_env of them, at most RINGVM_MAX_ENV */
	unsigned int nr_env;
	const char *workdir;    /* absolute; NULL (default): "/" */
	bool set_user;          /* run as uid and gid (no supplementary groups); default: root */
	uint32_t uid, gid;      /* not 4294967295 */
};

struct ringvm_config {
	const char *kernel;  /* bzImage or PVH vmlinux; required */
	const char *initrd;  /* initramfs; NULL (default): none */
	const char *cmdline; /* appended to ringvm's kernel command line; NULL (default): nothing */
	unsigned int cpus;   /* 1..RINGVM_MAX_CPUS (default 1) */
	uint64_t memory;     /* bytes, a multiple of 4 KiB in [RINGVM_MIN_MEMORY, RINGVM_MAX_MEMORY]
				(default 512 MiB) */
	const char *const *argv; /* the command the guest's PID 1 runs and whose status ends the run */
	unsigned int argc;       /* 0 (default): an interactive shell on the console */
	const struct ringvm_disk *disks;   /* nr_disks of them (default none) */
	unsigned int nr_disks;
	const struct ringvm_share *shares; /* nr_shares of them (default none) */
	unsigned int nr_shares;
	struct ringvm_root root;
	struct ringvm_fs_limits fs_limits;
	struct ringvm_console console;
	struct ringvm_launch launch;
	unsigned int timeout_s; /* > 0: the run is stopped after this many seconds
				   (RINGVM_END_TIMEOUT); 0 (default): never */
	const char *gdb;     /* a gdb stub on tcp:HOST:PORT or unix:PATH (vmm/gdb_stub.h); NULL
				(default): none */
	bool gdb_wait;       /* with gdb: the vCPUs wait for the debugger before their first
				instruction */
	bool verbose;        /* the guest kernel's messages on the console, ringvm's on stderr
				(default off) */
	/*
	 * handle_signals: SIGINT, SIGTERM and SIGHUP sent to the process during ringvm_run() are
	 * ringvm's (the CLI sets this; default off: the embedder's signals are left alone). With a
	 * command, each is forwarded to the command's process group in the guest (on a
	 * virtio-console port of its own, guest/sigfwd.h; a tty included), and the guest is stopped
	 * (RINGVM_END_STOPPED, status 128 + the first signal's number) when the command has not ended
	 * stop_timeout_ms after the first one, or when the command's output has not been read for
	 * 2 s since (a reader that went quiet must not keep ringvm alive). A signal stops the guest
	 * at once (128+N) for the shell, with stop_timeout_ms 0, and while the guest's PID 1 is not
	 * listening (still booting, or a kernel without virtio_console). SIGUSR2 is ringvm's too: it
	 * writes the state report (every virtqueue's and vCPU's state as "ringvm-state:" lines, README
	 * "Tests") on stderr, or appended to the file RINGVM_STATE_LOG names, and the guest goes on.
	 * Without handle_signals, an embedder forwards signals itself with ringvm_signal(), with the
	 * same effect.
	 */
	bool handle_signals;
	unsigned int stop_timeout_ms; /* with handle_signals or ringvm_signal(), see above; 0: a
					 signal stops the guest at once (default
					 RINGVM_STOP_TIMEOUT_MS, 10 s) */
	bool seccomp;        /* ringvm_run() confines every thread it makes, and the calling thread
				itself, for good, each to its role's list (vmm/seccomp.h; default
				on; a runtime that goes on using the calling thread for other
				work, or running several VMs, turns it off) */
	bool drop_privileges; /* ringvm_run() drops, for good, every capability the shares do not
				 need and sets no_new_privs, before its first thread (default on) */
};

/* Fill cfg with the defaults written next to each field above. */
void ringvm_config_init(struct ringvm_config *cfg);

/*
 * Check cfg without touching the host: required fields, ranges, tags and mount points unique, the
 * number of devices. 0 or -EINVAL (-E2BIG for too many devices) with the reason in err.
 */
__attribute__((warn_unused_result)) int ringvm_config_check(const struct ringvm_config *cfg, char *err,
							    size_t errlen);

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
	int status;        /* RINGVM_END_EXIT_STATUS: the command's status (128+N: killed by signal
			      N); RINGVM_END_STOPPED: 128 + the signal that stopped it, or 0 */
	char message[160]; /* one line: what happened */
	/* Boot timing, CLOCK_MONOTONIC nanoseconds (0: not reached): the first KVM_RUN, PID 1 starting
	 * (guest/protocol.h RINGVM_BOOT_PORT), the end of the run. */
	uint64_t t_first_run;
	uint64_t t_init;
	uint64_t t_end;
};

struct ringvm;

/*
 * Build the machine: check cfg (ringvm_config_check), load the kernel and initrd, create the
 * devices and vCPUs. cfg and everything it points to need only live until this returns. 0 with
 * *out set, or -errno with the reason in err and nothing left behind.
 */
__attribute__((warn_unused_result)) int ringvm_create(const struct ringvm_config *cfg, struct ringvm **out,
						      char *err, size_t errlen);

/* With cfg->gdb: where the stub listens ("tcp:127.0.0.1:1234", "unix:PATH"); else NULL. */
const char *ringvm_gdb_address(const struct ringvm *vm);

/*
 * True when the command's streams go through virtio-console: ringvm reads and writes duplicates
 * of console.stdio[0..2] from its own threads, and closes its stdout duplicate when the command
 * closes its stdout. A caller that keeps its own stdio[1] open delays the EOF the reader sees until
 * it closes it (the CLI points its fd 1 at /dev/null).
 */
bool ringvm_streams(const struct ringvm *vm);

/* Whether a VM made from cfg would carry the command's streams (a command, and no terminal: tty
   RINGVM_TTY_OFF, or AUTO with stdio[0] not a terminal); what ringvm_streams() then says. */
bool ringvm_config_wants_streams(const struct ringvm_config *cfg);

/*
 * Run the guest until it ends, on the calling thread (vCPUs and queue workers get their own). 0
 * with *res saying how it ended, or -errno when it could not start (then *res is filled too, as
 * RINGVM_END_ERROR, and err says why). Once per ringvm_create(); a second call is -EALREADY.
 * ringvm kicks its vCPU threads with SIGUSR1: it installs its own handler for it, and blocks it
 * (and SIGPIPE: a reader going away is an EPIPE to handle) on the calling thread while it runs
 * (the caller's signal mask is given back on return). With cfg->seccomp the calling thread is
 * confined (SECCOMP_ROLE_CONTROL) from before the guest's first instruction to the end of the
 * process: afterwards it may still ringvm_destroy(), print and exit.
 */
__attribute__((warn_unused_result)) int ringvm_run(struct ringvm *vm, struct ringvm_result *res, char *err,
						   size_t errlen);

/*
 * Make a running guest stop (RINGVM_END_STOPPED, status 0): ringvm_run() returns soon after. Any
 * thread, at any time between ringvm_create() and ringvm_destroy(); a stop that comes before
 * ringvm_run() ends the run as soon as it starts. Not async-signal-safe.
 */
void ringvm_stop(struct ringvm *vm);

/*
 * Send signal signo (SIGINT, SIGTERM or SIGHUP) to the command, as the CLI forwards the signals it
 * gets (handle_signals, above): to the command's process group in the guest, then the guest is
 * stopped (RINGVM_END_STOPPED, status 128 + the first signal's number) when the command has not
 * ended stop_timeout_ms later or its output waits 2 s on a reader that takes nothing; at once for
 * the shell, with stop_timeout_ms 0, or while the guest's PID 1 is not listening yet (a signal
 * sent before ringvm_run() is kept and acted on when the run starts, i.e. during the boot). For
 * an embedder that leaves handle_signals off and forwards its own signals, or sends its own.
 * Thread-safe and async-signal-safe (an atomic load and a write(); errno is kept), so a signal
 * handler may call it; any time between ringvm_create() and ringvm_destroy(). Returns 0 (the
 * signal is on its way: how the command takes it shows in ringvm_run()'s result), -EINVAL for
 * another signal or a NULL vm, -ESRCH once the run is ending or over (the command has ended, or
 * the guest was stopped), -EAGAIN when thousands of signals are still waiting to be handled.
 */
int ringvm_signal(struct ringvm *vm, int signo);

/* Free everything the VM holds: threads, fds, guest memory. After ringvm_run() or instead of it;
   NULL ok. Not while ringvm_run() runs on another thread (ringvm_stop() it first). Guest memory
   that a request abandoned on a hung file system may still copy into is released but its
   addresses stay reserved, inaccessible (README: "Requests that never complete"). */
void ringvm_destroy(struct ringvm *vm);

/* The CLI's exit status for a result: the command's status, 0, RINGVM_EXIT_CRASH, _TIMEOUT or
   _ERROR. */
int ringvm_exit_code(const struct ringvm_result *res);

/*
 * ringvm serve: one of ringvm's devices served over vhost-user to another VMM (QEMU, Cloud
 * Hypervisor, a benchmark driver) instead of booting a guest: a drop-in for virtiofsd and
 * qemu-storage-daemon's vhost-user-blk export. One front-end at a time; when it disconnects the
 * device is reset and the next connection is accepted.
 */
enum ringvm_serve_device {
	RINGVM_SERVE_FS,  /* virtio-fs over share */
	RINGVM_SERVE_BLK, /* virtio-blk over disk */
};

/* ringvm serve's default busy-poll ceiling (see ringvm_serve_config.poll_us; measured in
   tests/bench/device: it saves the worker's wake-up when the driver answers within it). */
#define RINGVM_SERVE_POLL_US 50

struct ringvm_serve_config {
	enum ringvm_serve_device device;
	const char *socket;	/* Unix socket path to create and listen on (a stale socket there
				   is replaced, any other file refused) */
	int listen_fd;		/* instead of socket: an already listening socket (libvirt's --fd);
				   -1 (default): none */
	struct ringvm_share share; /* RINGVM_SERVE_FS: host_dir required; guest_dir and tag are
				      ignored (the front-end names the file system) */
	struct ringvm_disk disk;   /* RINGVM_SERVE_BLK: path required; queues 0 means 1 */
	/* Both: the queue workers' busy-poll ceiling in microseconds (0..RINGVM_MAX_POLL_US; 0 =
	   never poll); the window adapts below it (devices/virtio/pace.h). A disk's own poll_us
	   wins over it when set (non-zero, or poll_us_set: 0 too). Default RINGVM_SERVE_POLL_US. */
	unsigned int poll_us;
	bool seccomp;	     /* confine the calling thread and the queue workers once listening
				(default true; vmm/seccomp.h) */
	bool drop_privileges; /* keep only the capabilities the share needs, no_new_privs (default
				 true), before the first thread */
	bool handle_signals; /* SIGINT/SIGTERM/SIGHUP end the server (the CLI sets this) */
	int stop_fd;	     /* without handle_signals: readable -> the server ends; -1: never */
};

/* Defaults: fs, no socket, a zeroed share and disk, seccomp on, capabilities dropped, no
   signals, no stop_fd. */
void ringvm_serve_config_init(struct ringvm_serve_config *cfg);

/*
 * Create the device, listen, confine, then serve front-ends one after another until stopped (a
 * handled signal, or stop_fd). Returns 0 when stopped, or -errno with the reason in err when it
 * could not start. The socket path is removed at the end.
 */
__attribute__((warn_unused_result)) int ringvm_serve(const struct ringvm_serve_config *cfg, char *err,
						     size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
