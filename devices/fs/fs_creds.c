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

static __thread int fs_thread_ready;
static __thread uint32_t fs_cur_uid, fs_cur_gid;

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

/* Raise FS_CREDS_CAPS (those we are permitted) in this thread's effective set. */
static int fs_creds_raise_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, d) < 0)
		return -errno;
	d[0].effective |= FS_CREDS_CAPS & d[0].permitted;
	/* pid 0: this thread only (capabilities are per thread, like fsuid). */
	if (syscall(SYS_capset, &hdr, d) < 0)
		return -errno;
	return 0;
}

int fs_creds_enter(struct fs_server *s, uint32_t uid, uint32_t gid)
{
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
		if ((uint32_t)syscall(SYS_setfsuid, -1) != uid)
			return -EPERM;
		/* From 0 to another uid the kernel dropped the filesystem capabilities (between two
		   other uids it leaves them; back to 0 it restores them all). */
		if (fs_cur_uid == 0) {
			err = fs_creds_raise_caps();
			if (err) {
				syscall(SYS_setfsuid, 0); /* a known state: 0, every capability back */
				fs_cur_uid = 0;
				return err;
			}
		}
		fs_cur_uid = uid;
	}
	return 0;
}
