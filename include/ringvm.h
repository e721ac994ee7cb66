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
 * their layout changes the major version.
 */
#define RINGVM_VERSION_MAJOR 0
#define RINGVM_VERSION_MINOR 2
#define RINGVM_VERSION_PATCH 0
#define RINGVM_VERSION_STRING "0.2.0"
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

/* Limits, checked by ringvm_config_check(). */
#define RINGVM_MAX_CPUS 255                /* xAPIC IDs; 255 is the broadcast ID */
#define RINGVM_MIN_MEMORY (64ULL << 20)
#define RINGVM_MAX_MEMORY (1ULL << 40)
#define RINGVM_MAX_DEVICES 16  /* disks + shares + root together: one interrupt line each */
#define RINGVM_MAX_QUEUES 16   /* request queues of one disk or share */
#define RINGVM_MAX_POLL_US 1000 /* a disk worker spinning longer than this costs more than a wakeup */
#define RINGVM_DISK_ID_MAX 20  /* virtio-blk GET_ID: 20 bytes */
#define RINGVM_TAG_MAX 36      /* virtio-fs tag: 36 bytes */
#define RINGVM_MAX_FS_LIMIT (1ULL << 30)

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
	unsigned int poll_us; /* queue workers busy-poll this long before sleeping, 0..1000
				 (default 0: off) */
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

/* The guest's serial console, which carries the command's stdout and stderr both. */
struct ringvm_console {
	int in_fd;  /* forwarded to the guest when it is a terminal, else the command reads EOF;
		       -1: none (default: 0, standard input) */
	int out_fd; /* where the console's bytes go; -1: dropped (default: 1, standard output) */
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
	bool verbose;        /* the guest kernel's messages on the console, ringvm's on stderr
				(default off) */
	bool handle_signals; /* SIGINT/SIGTERM/SIGHUP stop the guest during ringvm_run() (the CLI sets
				this; default off: the embedder's signals are left alone) */
	bool seccomp;        /* ringvm_run() confines the whole process, for good, to the system
				calls in vmm/seccomp.c (default on; a runtime doing other work in
				its process, or running several VMs, turns it off) */
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

/*
 * Run the guest until it ends, on the calling thread (vCPUs and queue workers get their own). 0
 * with *res saying how it ended, or -errno when it could not start (then *res is filled too, as
 * RINGVM_END_ERROR, and err says why). Once per ringvm_create(); a second call is -EALREADY.
 * ringvm kicks its vCPU threads with SIGUSR1: it installs its own handler for it, and blocks it
 * on the calling thread while it runs (the caller's signal mask is given back on return).
 */
__attribute__((warn_unused_result)) int ringvm_run(struct ringvm *vm, struct ringvm_result *res, char *err,
						   size_t errlen);

/*
 * Make a running guest stop (RINGVM_END_STOPPED, status 0): ringvm_run() returns soon after. Any
 * thread, at any time between ringvm_create() and ringvm_destroy(); a stop that comes before
 * ringvm_run() ends the run as soon as it starts. Not async-signal-safe.
 */
void ringvm_stop(struct ringvm *vm);

/* Free everything the VM holds: threads, fds, guest memory. After ringvm_run() or instead of it;
   NULL ok. Not while ringvm_run() runs on another thread (ringvm_stop() it first). */
void ringvm_destroy(struct ringvm *vm);

/* The CLI's exit status for a result: the command's status, 0, RINGVM_EXIT_CRASH or _ERROR. */
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

struct ringvm_serve_config {
	enum ringvm_serve_device device;
	const char *socket;	/* Unix socket path to create and listen on (a stale socket there
				   is replaced, any other file refused) */
	int listen_fd;		/* instead of socket: an already listening socket (libvirt's --fd);
				   -1 (default): none */
	struct ringvm_share share; /* RINGVM_SERVE_FS: host_dir required; guest_dir and tag are
				      ignored (the front-end names the file system) */
	struct ringvm_disk disk;   /* RINGVM_SERVE_BLK: path required; queues 0 means 1 */
	bool seccomp;	     /* confine the process once listening (default true; vmm/seccomp.c) */
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
