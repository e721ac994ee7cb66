/* tree.h: remove a test's scratch directory tree, header only. */
#ifndef RINGVM_TREE_H
#define RINGVM_TREE_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static inline int tree_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	(void)remove(path); /* what cannot go stays; the caller sees it in the result */
	return 0;
}

/* Remove dir and everything under it, depth first, never following a link or crossing into
   another mount. 0 when dir is gone (or never was), or -errno. */
static inline int tree_remove(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (nftw(dir, tree_remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0)
		return errno ? -errno : -EIO;
	return lstat(dir, &st) == 0 ? -ENOTEMPTY : 0;
}

/* A test's clean-up: tree_remove, and a TAP comment naming what stayed and why. */
static inline int tree_discard(const char *dir)
{
	int err = tree_remove(dir);

	if (err)
		printf("# could not remove %s: %s\n", dir, strerror(-err));
	return err;
}

#endif
