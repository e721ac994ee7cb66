/* fs_creds.c: each request acts on the host as its guest caller (fsuid/fsgid), per worker thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "devices/fs/fs_ops.h"

/*
 * setfsuid/setfsgid are per-thread on Linux (glibc does not broadcast them to other threads, unlike
 * setuid), so each queue worker switches its own filesystem identity per request. We remember the
 * current one to skip the system calls when consecutive requests come from the same user.
 *
 * Who checks permissions: the guest kernel. Linux mounts virtio-fs with default_permissions, so it
 * has already judged every request with the caller's full credentials, supplementary groups
 * included; FUSE carries only uid and gid, so the host kernel, judging again as fsuid/fsgid with
 * no groups, refuses what a supplementary group allows (opening a group-readable file, creating in
 * a group-writable directory, chgrp to another of one's groups) and strips setgid where the caller
 * is a member. So a non-root caller keeps the filesystem capabilities that only repeat the guest's
 * judgement (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID): the host acts with the caller's
 * ownership (new inodes, quotas) and the guest's verdict. Moving fsuid away from 0 drops them
 * (with CAP_MKNOD and the rest, which stay dropped); they are raised again in the effective set.
 * This gives a guest nothing it did not have: the uid in a request is whatever the guest kernel
 * says, root included. What the host still decides is where a name leads (openat2 beneath the
 * share) and read-only shares. Setuid/setgid are not cleared by the host on our writes and
 * truncates (CAP_FSETID): the guest asks for that explicitly (FUSE_HANDLE_KILLPRIV_V2).
 */
#define FS_CREDS_CAPS                                                                              \
	((1u << CAP_CHOWN) | (1u << CAP_DAC_OVERRIDE) | (1u << CAP_FOWNER) | (1u << CAP_FSETID))
#define FS_CREDS_FSETID (1u << CAP_FSETID)

/*
 * CAP_FSETID and a guest writer without it. Linux asks us to kill setuid, setgid and
 * security.capability before such a writer's data lands (FUSE_WRITE_KILL_SUIDGID). The host
 * kernel does exactly that inside the write when the writing thread lacks CAP_FSETID and acts as
 * the caller (its fsgid decides setgid without group execute), and for nothing when there is
 * nothing to kill (it remembers that per inode). Done by hand it is an fstat and an fgetxattr per
 * WRITE, ~40 % of a 4 KiB cached write's time here. So such a write made on this thread drops
 * CAP_FSETID from its effective set and leaves it dropped while such writes keep coming: a stream
 * of them costs no system call. Everything else takes it back first: every request that enters
 * credentials (fs_creds_enter: chmod, create and truncate keep setgid by it) and every write
 * without the flag. io_uring runs a request with the credentials of its submit, which comes after
 * the worker has queued a whole slice; so while any write of this thread is queued on its ring
 * (fs_ring_writes), a write made here does not drop CAP_FSETID (a queued write would run without
 * it) and the caller kills by hand.
 */
static __thread int fs_thread_ready;
static __thread uint32_t fs_cur_uid, fs_cur_gid;
static __thread bool fs_fsetid_dropped; /* CAP_FSETID out of the effective set, by us */
static __thread unsigned int fs_ring_writes; /* this thread's writes queued on its ring */
/* This thread's capability sets as we last read or set them; stale after any setfsuid. */
static __thread struct __user_cap_data_struct fs_caps[_LINUX_CAPABILITY_U32S_3];
static __thread bool fs_caps_known;

int fs_thread_prepare(struct fs_server *s)
{
	if (fs_thread_ready)
		return 0;
	/* Our own umask: the guest kernel already applied the caller's (no FUSE_DONT_MASK), so
	   modes must reach the host unmasked; unsharing the fs struct keeps this thread-local. */
	if (unshare(CLONE_FS) < 0)
		return -errno;
	umask(0);
	if (s->as_root) {
		/* Raw system call: glibc's setgroups() would change every thread of the VMM. */
		if (syscall(SYS_setgroups, 0, NULL) < 0)
			return -errno;
	}
	fs_cur_uid = (uint32_t)geteuid();
	fs_cur_gid = (uint32_t)getegid();
	fs_thread_ready = 1;
	return 0;
}

/* Raise `raise` (those we are permitted) and lower `lower` in this thread's effective set. */
static int fs_caps_effective(uint32_t raise, uint32_t lower)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	if (!fs_caps_known && syscall(SYS_capget, &hdr, fs_caps) < 0)
		return -errno;
	fs_caps_known = true;
	fs_caps[0].effective = (fs_caps[0].effective | (raise & fs_caps[0].permitted)) & ~lower;
	/* pid 0: this thread only (capabilities are per thread, like fsuid). */
	if (syscall(SYS_capset, &hdr, fs_caps) < 0) {
		fs_caps_known = false;
		return -errno;
	}
	return 0;
}

/* Act as uid:gid, with CAP_FSETID or without it (fsetid). */
static int fs_creds_switch(struct fs_server *s, uint32_t uid, uint32_t gid, bool fsetid)
{
	uint32_t fsetid_off = fsetid ? 0 : FS_CREDS_FSETID;
	int err;

	if (!s->as_root)
		return 0;
	/* (uid_t)-1 means "no change" to setfsuid: never let a guest value mean that. */
	if (uid == (uint32_t)-1 || gid == (uint32_t)-1)
		return -EPERM;
	if (gid != fs_cur_gid) {
		/* setfsgid reports the previous id, not errors: ask again to see whether it took. */
		syscall(SYS_setfsgid, gid);
		if ((uint32_t)syscall(SYS_setfsgid, -1) != gid)
			return -EPERM;
		fs_cur_gid = gid;
	}
	if (uid != fs_cur_uid) {
		syscall(SYS_setfsuid, uid);
		fs_caps_known = false;
		if ((uint32_t)syscall(SYS_setfsuid, -1) != uid)
			return -EPERM;
		if (fs_cur_uid == 0) {
			/* From 0 to another uid the kernel dropped the filesystem capabilities
			   (between two other uids it leaves them). */
			err = fs_caps_effective(FS_CREDS_CAPS & ~fsetid_off, fsetid_off);
			if (err) {
				syscall(SYS_setfsuid, 0); /* a known state: 0, every capability back */
				fs_cur_uid = 0;
				fs_fsetid_dropped = false;
				return err;
			}
			fs_fsetid_dropped = !fsetid;
		} else if (uid == 0) {
			/* Back to 0 it restored every permitted one, CAP_FSETID too. */
			fs_fsetid_dropped = false;
		}
		fs_cur_uid = uid;
	}
	if (fs_fsetid_dropped == !fsetid)
		return 0;
	err = fs_caps_effective(FS_CREDS_FSETID & ~fsetid_off, fsetid_off);
	if (err)
		return err;
	fs_fsetid_dropped = !fsetid;
	return 0;
}

int fs_creds_enter(struct fs_server *s, uint32_t uid, uint32_t gid)
{
	return fs_creds_switch(s, uid, gid, true);
}

int fs_creds_fsetid_keep(struct fs_server *s)
{
	if (!fs_fsetid_dropped)
		return 0;
	return fs_creds_switch(s, fs_cur_uid, fs_cur_gid, true);
}

int fs_creds_write_here(struct fs_server *s, uint32_t uid, uint32_t gid, bool kill)
{
	int err;

	if (!kill || !s->as_root || fs_ring_writes)
		return fs_creds_fsetid_keep(s);
	err = fs_creds_switch(s, uid, gid, false);
	return err ? err : FS_CREDS_KERNEL_KILLS;
}

void fs_write_queued(void)
{
	fs_ring_writes++;
}

void fs_write_ended(void)
{
	fs_ring_writes--;
}
