/* fs_creds.c: each request acts on the host as its guest caller (fsuid/fsgid), per worker thread. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "devices/fs/fs_ops.h"

/*
 * setfsuid/setfsgid are per-thread on Linux (glibc does not broadcast them to other threads, unlike
 * setuid), so each queue worker switches its own filesystem identity per request. We remember the
 * current one to skip the system calls when consecutive requests come from the same user. Moving
 * fsuid away from 0 also drops the filesystem capabilities (CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID,
 * CAP_MKNOD...) from this thread, so the host kernel checks permissions exactly as for that user,
 * and clears setuid/setgid on its writes and truncates as it would for that user.
 */
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

int fs_creds_enter(struct fs_server *s, uint32_t uid, uint32_t gid)
{
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
		fs_cur_uid = uid;
	}
	return 0;
}
