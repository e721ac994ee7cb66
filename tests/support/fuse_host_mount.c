/* fuse_host_mount.c: test tool: serve a host directory through ringvm's FUSE server on /dev/fuse (no VM). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/host_fuse.h"

/*
 * usage: fuse_host_mount HOSTDIR MOUNTPOINT [THREADS] [ro] [auto|always|never] [dev] [suid] [xattr=all]
 *
 * Mounts MOUNTPOINT as a FUSE file system served by the same code the virtio-fs device runs
 * (tests/support/host_fuse.h), so the host kernel's own FUSE client (and any POSIX test suite) can
 * exercise every operation. Runs until the mount goes away (umount MOUNTPOINT). Root only.
 */
int main(int argc, char **argv)
{
	struct hf_options opt = { .cache = FS_CACHE_AUTO, .threads = 4 };
	struct host_fuse *hf;
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: %s HOSTDIR MOUNTPOINT [THREADS] [ro] [auto|always|never] [dev] [suid] [xattr=all]\n",
			argv[0]);
		return 2;
	}
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "ro"))
			opt.readonly = true;
		else if (!strcmp(argv[i], "always"))
			opt.cache = FS_CACHE_ALWAYS;
		else if (!strcmp(argv[i], "never"))
			opt.cache = FS_CACHE_NEVER;
		else if (!strcmp(argv[i], "auto"))
			opt.cache = FS_CACHE_AUTO;
		else if (!strcmp(argv[i], "dev"))
			opt.allow_dev = true;
		else if (!strcmp(argv[i], "suid"))
			opt.allow_suid = true;
		else if (!strcmp(argv[i], "xattr=all"))
			opt.xattr_all = true;
		else
			opt.threads = (unsigned int)atoi(argv[i]);
	}
	if (opt.threads < 1 || opt.threads > 64)
		opt.threads = 4;
	err = hf_mount(argv[1], argv[2], &opt, &hf);
	if (err) {
		fprintf(stderr, "fuse_host_mount: %s on %s: %s\n", argv[1], argv[2], strerror(-err));
		return 1;
	}
	hf_wait(hf);
	return 0;
}
