/* fuse_host_mount.c: test tool: serve the passthrough server over the host's /dev/fuse (no VM needed). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "devices/fs/fs_server.h"

/*
 * usage: fuse_host_mount HOSTDIR MOUNTPOINT [THREADS] [ro] [auto|always|never]
 *
 * Mounts MOUNTPOINT as a FUSE file system served by the same code the virtio-fs device runs, so the
 * host kernel's own FUSE client (and any POSIX test suite) can exercise every operation. The FUSE
 * messages are those of virtio-fs; only the carrier differs (read()/write() on /dev/fuse instead
 * of descriptor chains, so READ and WRITE take the server's synchronous path). Runs until the mount
 * goes away (umount MOUNTPOINT). Root only.
 */

static struct fs_server srv;
static int fuse_fd;

#define FHM_BUF (FS_MAX_IO + 64 * 1024)

static void *fhm_loop(void *arg)
{
	uint8_t *in = malloc(FHM_BUF), *out = malloc(FHM_BUF);

	(void)arg;
	if (!in || !out)
		goto out;
	for (;;) {
		struct fuse_decode_ctx ctx;
		struct fuse_req r;
		ssize_t n = read(fuse_fd, in, FHM_BUF);
		size_t len;
		int err;

		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == ENOENT))
			continue; /* ENOENT: the request was interrupted before we read it */
		if (n <= 0)
			break; /* ENODEV: unmounted */
		fs_server_decode_ctx(&srv, &ctx);
		err = fuse_decode(in, (size_t)n, (size_t)n, &ctx, &r);
		if (err) {
			if (!fuse_decode_has_header((size_t)n) || fuse_opcode_no_reply(r.hdr.opcode))
				continue;
			len = fs_reply_error(out, r.hdr.unique, err);
		} else {
			len = fs_dispatch(&srv, &r, in, (size_t)n, out, FHM_BUF);
		}
		if (len && write(fuse_fd, out, len) < 0 && errno == ENODEV)
			break;
	}
out:
	free(in);
	free(out);
	return NULL;
}

int main(int argc, char **argv)
{
	enum fs_cache cache = FS_CACHE_AUTO;
	bool ro = false;
	unsigned int threads = 4, i;
	pthread_t tid[64];
	char opts[256];
	int err;

	if (argc < 3) {
		fprintf(stderr, "usage: %s HOSTDIR MOUNTPOINT [THREADS] [ro] [auto|always|never]\n",
			argv[0]);
		return 2;
	}
	for (i = 3; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "ro"))
			ro = true;
		else if (!strcmp(argv[i], "always"))
			cache = FS_CACHE_ALWAYS;
		else if (!strcmp(argv[i], "never"))
			cache = FS_CACHE_NEVER;
		else if (!strcmp(argv[i], "auto"))
			cache = FS_CACHE_AUTO;
		else
			threads = (unsigned int)atoi(argv[i]);
	}
	if (threads < 1 || threads > 64)
		threads = 4;
	err = fs_server_create(&srv, argv[1], ro, cache, 1 << 16);
	if (err) {
		fprintf(stderr, "fuse_host_mount: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0) {
		perror("fuse_host_mount: /dev/fuse");
		return 1;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,default_permissions,allow_other", fuse_fd);
	if (mount("ringvm-fs", argv[2], "fuse.ringvm", MS_NOSUID | MS_NODEV, opts) < 0) {
		perror("fuse_host_mount: mount");
		return 1;
	}
	for (i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, fhm_loop, NULL))
			return 1;
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	fs_server_destroy(&srv);
	return 0;
}
