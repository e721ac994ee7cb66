/* fs.c: PID 1's filesystems: /proc, /sys, /dev and scratch tmpfs, the ringvm.root= switch, the shares. */
#define _GNU_SOURCE
#include "guest/fs.h"

#include "guest/mounts.h"
#include "guest/protocol.h"
#include "guest/say.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

/* ringvm.root= is assembled here in the initramfs, then moved onto "/". */
#define FS_ROOT_STAGE "/ringvm/root"
/* Read-only root: the share itself, and the tmpfs holding the overlay's upper and work dirs. */
#define FS_ROOT_LOWER "/ringvm/lower"
#define FS_ROOT_SCRATCH "/ringvm/rw"

/* True if something is already mounted on path (its device differs from its parent's). */
static bool fs_is_mountpoint(const char *path)
{
	char parent[256];
	struct stat self, up;

	snprintf(parent, sizeof(parent), "%s/..", path);
	if (stat(path, &self) < 0 || stat(parent, &up) < 0)
		return false;
	return self.st_dev != up.st_dev;
}

struct fs_mount {
	const char *target, *fstype, *data;
	unsigned long flags;
	mode_t mode;
};

static const struct fs_mount fs_proc_mount = { "/proc", "proc", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC,
						 0555 };
static const struct fs_mount fs_mounts[] = {
	{ "/sys", "sysfs", NULL, MS_NOSUID | MS_NODEV | MS_NOEXEC, 0555 },
	{ "/dev", "devtmpfs", "mode=0755", MS_NOSUID, 0755 },
	{ "/dev/pts", "devpts", "gid=5,mode=0620,ptmxmode=0666", MS_NOSUID | MS_NOEXEC, 0755 },
	{ "/dev/shm", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV, 01777 },
};
/* Mounted again, fresh, in a ringvm.root= root. */
static const struct fs_mount fs_scratch_mounts[] = {
	{ "/run", "tmpfs", "mode=0755", MS_NOSUID | MS_NODEV, 0755 },
	{ "/tmp", "tmpfs", "mode=1777", MS_NOSUID | MS_NODEV, 01777 },
};

/*
 * Mount one filesystem; one that is already there (set up by whoever started us) is left alone. A
 * failure is reported, not fatal: the command may not need that filesystem.
 */
static void fs_mount_one(const struct fs_mount *m)
{
	if (mkdir(m->target, m->mode) < 0 && errno != EEXIST) {
		say("cannot create %s: %s", m->target, strerror(errno));
		return;
	}
	if (fs_is_mountpoint(m->target)) {
		say_info("%s is already mounted", m->target);
		return;
	}
	if (mount(m->fstype, m->target, m->fstype, m->flags, m->data) < 0) {
		say("cannot mount %s on %s: %s", m->fstype, m->target, strerror(errno));
		return;
	}
	say_info("mounted %s on %s", m->fstype, m->target);
}

/* The /dev entries that devtmpfs does not make but scripts expect. */
static void fs_dev_links(void)
{
	static const char *const links[][2] = {
		{ "/proc/self/fd", "/dev/fd" },
		{ "/proc/self/fd/0", "/dev/stdin" },
		{ "/proc/self/fd/1", "/dev/stdout" },
		{ "/proc/self/fd/2", "/dev/stderr" },
	};

	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlink(links[i][0], links[i][1]) < 0 && errno != EEXIST)
			say("cannot link %s: %s", links[i][1], strerror(errno));
}

void fs_mount_proc(void)
{
	fs_mount_one(&fs_proc_mount);
}

void fs_mount_boot(void)
{
	for (size_t i = 0; i < sizeof(fs_mounts) / sizeof(fs_mounts[0]); i++)
		fs_mount_one(&fs_mounts[i]);
	for (size_t i = 0; i < sizeof(fs_scratch_mounts) / sizeof(fs_scratch_mounts[0]); i++)
		fs_mount_one(&fs_scratch_mounts[i]);
	fs_dev_links();
}

static bool fs_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* mkdir -p: create every missing directory on the way to path. Returns 0 or -errno. */
static int __attribute__((warn_unused_result)) fs_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		/* An existing name answers EEXIST before EROFS: a read-only parent is fine if it has it. */
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		buf[i] = path[i];
	}
	return fs_is_dir(path) ? 0 : -ENOTDIR;
}

static int __attribute__((warn_unused_result)) fs_mount_virtiofs(const char *tag, const char *target,
								 bool read_only)
{
	if (mount(tag, target, "virtiofs", read_only ? MS_RDONLY : 0, NULL) < 0) {
		int err = errno;

		/* virtiofs answers EINVAL for a tag that no device has, which says little on its own. */
		say("cannot mount virtio-fs share '%s' on %s: %s%s", tag, target, strerror(err),
		    err == EINVAL ? " (is there a virtio-fs device with that tag?)" : "");
		return -err;
	}
	say_info("mounted virtio-fs share '%s' on %s%s", tag, target, read_only ? " read-only" : "");
	return 0;
}

/*
 * Move one of PID 1's filesystems, with everything mounted below it, into the staged root; one that
 * is not mounted (any more) at path is skipped. Only a root under the overlay may get a missing mount
 * point: a writable share is the host's directory, and PID 1 creates nothing there. Without one, an
 * optional filesystem stays behind, out of sight; a required one ends the boot.
 */
static int __attribute__((warn_unused_result)) fs_move_into_root(const char *path, bool required,
								 bool may_create)
{
	char target[64];

	snprintf(target, sizeof(target), FS_ROOT_STAGE "%s", path);
	if (!fs_is_mountpoint(path))
		return 0; /* it failed to mount at boot (reported then), or moved with its parent */
	if (!fs_is_dir(target) && (!may_create || mkdir(target, 0755) < 0)) {
		say("the root has no %s directory to move %s onto%s", path, path,
		    required ? "" : ": left behind");
		return required ? -ENOENT : 0;
	}
	if (mount(path, target, NULL, MS_MOVE, NULL) < 0) {
		int err = errno;

		say("cannot move %s into the new root: %s", path, strerror(err));
		return -err;
	}
	return 0;
}

/* Mount the ringvm.root= share at FS_ROOT_STAGE, under a tmpfs overlay when read-only. */
static int __attribute__((warn_unused_result)) fs_stage_root(const struct mnt_root *root)
{
	static const char overlay_opts[] = "lowerdir=" FS_ROOT_LOWER ",upperdir=" FS_ROOT_SCRATCH
					   "/upper,workdir=" FS_ROOT_SCRATCH "/work";
	int err = fs_mkdir_p(FS_ROOT_STAGE, 0755);

	if (err == 0 && root->read_only)
		err = fs_mkdir_p(FS_ROOT_LOWER, 0755);
	if (err == 0 && root->read_only)
		err = fs_mkdir_p(FS_ROOT_SCRATCH, 0755);
	if (err < 0) {
		say("cannot create the staging directories under /ringvm: %s", strerror(-err));
		return err;
	}
	if (!root->read_only)
		return fs_mount_virtiofs(root->tag, FS_ROOT_STAGE, false);
	err = fs_mount_virtiofs(root->tag, FS_ROOT_LOWER, true);
	if (err < 0)
		return err;
	if (mount("tmpfs", FS_ROOT_SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0 ||
	    mkdir(FS_ROOT_SCRATCH "/upper", 0755) < 0 || mkdir(FS_ROOT_SCRATCH "/work", 0755) < 0) {
		err = errno;
		say("cannot set up the tmpfs for the root's overlay: %s", strerror(err));
		return -err;
	}
	if (mount("overlay", FS_ROOT_STAGE, "overlay", 0, overlay_opts) < 0) {
		err = errno;
		say("cannot mount the overlay on the read-only root: %s", strerror(err));
		return -err;
	}
	say_info("root '%s' is read-only under a tmpfs overlay", root->tag);
	return 0;
}

/*
 * ringvm.root=: stage the share, move /dev, /proc and /sys into it, make it "/" the way switch_root
 * does (the initramfs is rootfs, which cannot be pivoted away from), then give it fresh /run and
 * /tmp where it has those directories. Returns 0 or -errno (reported); on failure the boot is over,
 * so nothing is undone.
 */
static int __attribute__((warn_unused_result)) fs_switch_root(const struct mnt_root *root)
{
	/* Moving /dev takes /dev/pts and /dev/shm along; they move alone only if /dev was not mounted. */
	static const struct {
		const char *path;
		bool required;
	} moved[] = {
		{ "/dev", true }, { "/dev/pts", false }, { "/dev/shm", false }, { "/proc", true }, { "/sys", true },
	};
	int err = fs_stage_root(root);

	for (size_t i = 0; err == 0 && i < sizeof(moved) / sizeof(moved[0]); i++)
		err = fs_move_into_root(moved[i].path, moved[i].required, root->read_only);
	if (err < 0)
		return err;
	/* The initramfs's own /run and /tmp would be out of sight from now on: free them. */
	for (size_t i = 0; i < sizeof(fs_scratch_mounts) / sizeof(fs_scratch_mounts[0]); i++)
		(void)umount2(fs_scratch_mounts[i].target, MNT_DETACH);
	if (chdir(FS_ROOT_STAGE) < 0 || mount(".", "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0 ||
	    chdir("/") < 0) {
		err = errno;
		say("cannot make the virtio-fs share '%s' the root: %s", root->tag, strerror(err));
		return -err;
	}
	say_info("switched to the root '%s'", root->tag);
	for (size_t i = 0; i < sizeof(fs_scratch_mounts) / sizeof(fs_scratch_mounts[0]); i++) {
		const struct fs_mount *m = &fs_scratch_mounts[i];

		if (!fs_is_dir(m->target)) {
			say_info("the root has no %s: no tmpfs there", m->target);
			continue;
		}
		/* Unconditionally: what the host has on its /tmp must not be the guest's scratch space. */
		if (mount(m->fstype, m->target, m->fstype, m->flags, m->data) < 0) {
			err = errno;
			say("cannot mount %s on %s in the new root: %s", m->fstype, m->target, strerror(err));
			return -err;
		}
	}
	return 0;
}

/* ringvm.mount=: mkdir -p each PATH, then mount its share there, in order. Returns 0 or -errno (reported). */
static int __attribute__((warn_unused_result)) fs_mount_shares(const struct mnt_share *shares, int count)
{
	for (int i = 0; i < count; i++) {
		int err = fs_mkdir_p(shares[i].path, 0755);

		if (err < 0) {
			say("cannot create %s for virtio-fs share '%s': %s", shares[i].path, shares[i].tag,
			    strerror(-err));
			return err;
		}
		err = fs_mount_virtiofs(shares[i].tag, shares[i].path, shares[i].read_only);
		if (err < 0)
			return err;
	}
	return 0;
}

int fs_root_and_shares(char *root_value, char *shares_value)
{
	static struct mnt_share shares[MNT_MAX_SHARES];
	struct mnt_root root;
	const char *why = "";
	int nshares = 0, err;

	if (root_value != NULL && (err = mnt_parse_root(root_value, &root, &why)) < 0) {
		say("malformed " RINGVM_CMDLINE_ROOT ": %s (want TAG,ro or TAG,rw)", why);
		return err;
	}
	if (shares_value != NULL &&
	    (nshares = mnt_parse_shares(shares_value, shares, MNT_MAX_SHARES, &why)) < 0) {
		say("malformed " RINGVM_CMDLINE_MOUNT ": %s (want TAG,PATH,MODE,... with MODE ro or rw)", why);
		return nshares;
	}
	if (root_value != NULL && (err = fs_switch_root(&root)) < 0)
		return err;
	return fs_mount_shares(shares, nshares);
}
