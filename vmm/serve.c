/* serve.c: ringvm serve: one device on a vhost-user socket, front-ends served one after another. */
#define _GNU_SOURCE
#include "include/ringvm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/blk/blk.h"
#include "devices/fs/virtio_fs.h"
#include "devices/vhost_user/vu_backend.h"
#include "vmm/fail.h"
#include "vmm/privilege.h"
#include "vmm/seccomp.h"

/* The device being served, whichever kind. */
struct serve_dev {
	struct virtio_fs *fs;
	struct fs_config fs_cfg;
	struct blk_dev *blk;
	struct blk_config blk_cfg;
};

void ringvm_serve_config_init(struct ringvm_serve_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->device = RINGVM_SERVE_FS;
	cfg->listen_fd = -1;
	cfg->stop_fd = -1;
	cfg->seccomp = true;
	cfg->drop_privileges = true;
}

static int serve_create_fs(const struct ringvm_serve_config *cfg, struct serve_dev *d, char *err,
			   size_t errlen)
{
	if (!cfg->share.host_dir)
		return vmm_fail(err, errlen, -EINVAL, "serve fs: --shared-dir DIR is required");
	/* The front-end (QEMU's vhost-user-fs tag= property) names the file system and where it is
	   mounted, not us. */
	struct ringvm_share s = cfg->share;
	s.guest_dir = "/";
	s.tag = "ringvm";
	const char *why;
	int ret = fs_config_from(&s, &d->fs_cfg, &why);
	if (ret)
		return vmm_fail(err, errlen, ret, "--shared-dir %s: %s", s.host_dir, why);
	ret = virtio_fs_create(&d->fs_cfg, &d->fs);
	if (ret)
		return vmm_fail(err, errlen, ret, "--shared-dir %s: %s", s.host_dir, strerror(-ret));
	return 0;
}

static int serve_create_blk(const struct ringvm_serve_config *cfg, struct serve_dev *d, char *err,
			    size_t errlen)
{
	if (!cfg->disk.path)
		return vmm_fail(err, errlen, -EINVAL, "serve blk: --disk SPEC is required");
	const char *why;
	int ret = blk_config_from(&cfg->disk, &d->blk_cfg, &why);
	if (ret)
		return vmm_fail(err, errlen, ret, "--disk %s: %s", cfg->disk.path, why);
	ret = blk_create(&d->blk_cfg, 1, &d->blk);
	if (ret)
		return vmm_fail(err, errlen, ret, "--disk %s: %s", d->blk_cfg.path, blk_strerror(ret));
	return 0;
}

static void serve_destroy_dev(struct serve_dev *d)
{
	virtio_fs_destroy(d->fs);
	blk_destroy(d->blk);
}

/*
 * A listening socket at path. A socket file nobody listens on any more (a previous server that was
 * killed) is replaced; a live one, or any other kind of file, is refused.
 */
static int serve_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path))
		return vmm_fail(err, errlen, -ENAMETOOLONG,
				  "--socket %s: path too long for a Unix socket (%zu bytes at most)",
				  path, sizeof(a.sun_path) - 1);
	memcpy(a.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return vmm_fail(err, errlen, -errno, "socket: %s", strerror(errno));
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			close(fd);
			return vmm_fail(err, errlen, -EEXIST,
					  "--socket %s: exists and is not a socket", path);
		}
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
			close(fd);
			return vmm_fail(err, errlen, -EADDRINUSE,
					  "--socket %s: another server is listening there", path);
		}
		(void)unlink(path); /* stale: bind() below reports what is still wrong */
	}
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 1) < 0) {
		int e = errno;
		close(fd);
		return vmm_fail(err, errlen, -e, "--socket %s: %s", path, strerror(e));
	}
	return fd;
}

/* Accept and serve front-ends until stop_fd is readable. 0, or -errno when accept() fails. */
static int serve_loop(struct vu_backend *b, int listen_fd, int stop_fd)
{
	for (;;) {
		struct pollfd p[2] = { { listen_fd, POLLIN, 0 }, { stop_fd, POLLIN, 0 } };
		int n = poll(p, stop_fd >= 0 ? 2 : 1, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (stop_fd >= 0 && (p[1].revents & POLLIN))
			return 0;
		int conn = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
				continue;
			return -errno;
		}
		if (vu_backend_serve(b, conn, stop_fd) == -EINTR)
			return 0;
	}
}

int ringvm_serve(const struct ringvm_serve_config *cfg, char *err, size_t errlen)
{
	struct serve_dev d;
	memset(&d, 0, sizeof(d));
	if (!cfg->socket && cfg->listen_fd < 0)
		return vmm_fail(err, errlen, -EINVAL, "--socket PATH is required");
	/* Signals are taken through a signalfd from the start: one that arrives while we set up
	   ends the server cleanly (socket removed) instead of killing it half way. */
	sigset_t sigs, old;
	sigemptyset(&sigs);
	int stop_fd = cfg->stop_fd, sig_fd = -1;
	if (cfg->handle_signals) {
		sigaddset(&sigs, SIGINT);
		sigaddset(&sigs, SIGTERM);
		sigaddset(&sigs, SIGHUP);
		pthread_sigmask(SIG_BLOCK, &sigs, &old);
		sig_fd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
		if (sig_fd < 0) {
			int e = errno;
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			return vmm_fail(err, errlen, -e, "signalfd: %s", strerror(e));
		}
		stop_fd = sig_fd;
	}
	int ret = cfg->device == RINGVM_SERVE_BLK ? serve_create_blk(cfg, &d, err, errlen)
						   : serve_create_fs(cfg, &d, err, errlen);
	if (ret)
		goto out_dev;
	struct virtio_dev *vdev = d.blk ? blk_virtio_dev(d.blk) : virtio_fs_virtio_dev(d.fs);
	struct vu_backend *b;
	ret = vu_backend_create(vdev, cfg->socket ? cfg->socket : "(fd)", &b);
	if (ret) {
		vmm_fail(err, errlen, ret, "vhost-user back-end: %s", strerror(-ret));
		goto out_dev;
	}
	int listen_fd = cfg->listen_fd >= 0 ? cfg->listen_fd : serve_listen(cfg->socket, err, errlen);
	if (listen_fd < 0) {
		ret = listen_fd;
		goto out_backend;
	}

	/* Before the first thread (queue workers start with the first ring): no capability beyond
	   what a share needs (vmm/privilege.h), no_new_privs. */
	if (cfg->drop_privileges) {
		struct priv_need need = {
			.share = d.fs != NULL,
			.share_writable = d.fs && !d.fs_cfg.readonly,
		};
		ret = priv_drop(priv_keep_mask(&need));
		if (ret) {
			vmm_fail(err, errlen, ret, "dropping capabilities: %s", strerror(-ret));
			goto out_listen;
		}
	}
	/* From here on the process only serves front-ends: lock the set of system calls down. */
	if (cfg->seccomp && (ret = seccomp_install_role(seccomp_mode_from_env(),
						       SECCOMP_ROLE_SERVE)) != 0) {
		ret = vmm_fail(err, errlen, ret < 0 ? ret : -EPERM, "seccomp: %s",
				 strerror(ret < 0 ? -ret : EPERM));
		goto out_listen;
	}
	ret = serve_loop(b, listen_fd, stop_fd);
	if (ret)
		vmm_fail(err, errlen, ret, "accept: %s", strerror(-ret));

out_listen:
	if (cfg->listen_fd < 0) {
		close(listen_fd);
		(void)unlinkat(AT_FDCWD, cfg->socket, 0);
	}
out_backend:
	vu_backend_destroy(b);
out_dev:
	serve_destroy_dev(&d);
	if (sig_fd >= 0) {
		/* Take the signal that stopped us, or restoring the mask would deliver it again and
		   its default action would turn a clean stop into a kill. */
		struct signalfd_siginfo si;
		while (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
		}
		close(sig_fd);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return ret;
}
