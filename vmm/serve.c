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
#include <unistd.h>

#include "devices/blk/blk.h"
#include "devices/fs/virtio_fs.h"
#include "devices/vhost_user/vu_backend.h"
#include "vmm/errmsg.h"
#include "vmm/privilege.h"
#include "vmm/seccomp.h"
#include "vmm/unix_sock.h"

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
	cfg->poll_us = RINGVM_SERVE_POLL_US;
	cfg->seccomp = true;
	cfg->drop_privileges = true;
}

static int serve_create_fs(const struct ringvm_serve_config *cfg, struct serve_dev *d, char *err,
			   size_t errlen)
{
	if (!cfg->share.host_dir)
		return errmsg(err, errlen, -EINVAL, "serve fs: --shared-dir DIR is required");
	/* The front-end (QEMU's vhost-user-fs tag= property) names the file system and where it is
	   mounted, not us. */
	struct ringvm_share s = cfg->share;
	s.guest_dir = "/";
	s.tag = "ringvm";
	const char *why;
	int ret = fs_config_from(&s, &d->fs_cfg, &why);
	if (ret)
		return errmsg(err, errlen, ret, "--shared-dir %s: %s", s.host_dir, why);
	if (cfg->poll_us > RINGVM_MAX_POLL_US)
		return errmsg(err, errlen, -EINVAL, "--poll-us must be 0..%d", RINGVM_MAX_POLL_US);
	d->fs_cfg.poll_us = cfg->poll_us;
	ret = virtio_fs_create(&d->fs_cfg, &d->fs);
	if (ret)
		return errmsg(err, errlen, ret, "--shared-dir %s: %s", s.host_dir, strerror(-ret));
	return 0;
}

static int serve_create_blk(const struct ringvm_serve_config *cfg, struct serve_dev *d, char *err,
			    size_t errlen)
{
	if (!cfg->disk.path)
		return errmsg(err, errlen, -EINVAL, "serve blk: --disk SPEC is required");
	const char *why;
	int ret = blk_config_from(&cfg->disk, &d->blk_cfg, &why);
	if (ret)
		return errmsg(err, errlen, ret, "--disk %s: %s", cfg->disk.path, why);
	if (cfg->poll_us > RINGVM_MAX_POLL_US)
		return errmsg(err, errlen, -EINVAL, "--poll-us must be 0..%d", RINGVM_MAX_POLL_US);
	d->blk_cfg.poll_us = blk_disk_poll_us(&cfg->disk, cfg->poll_us); /* the disk's own choice wins */
	ret = blk_create(&d->blk_cfg, 1, &d->blk);
	if (ret)
		return errmsg(err, errlen, ret, "--disk %s: %s", d->blk_cfg.path, blk_strerror(ret));
	return 0;
}

static void serve_destroy_dev(struct serve_dev *d)
{
	virtio_fs_destroy(d->fs);
	blk_destroy(d->blk);
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
	int sock_dir = -1;
	const char *sock_name = NULL;
	struct serve_dev d;
	memset(&d, 0, sizeof(d));
	if (!cfg->socket && cfg->listen_fd < 0)
		return errmsg(err, errlen, -EINVAL, "--socket PATH is required");
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
			return errmsg(err, errlen, -e, "signalfd: %s", strerror(e));
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
		errmsg(err, errlen, ret, "vhost-user back-end: %s", strerror(-ret));
		goto out_dev;
	}
	int listen_fd = cfg->listen_fd >= 0 ? cfg->listen_fd : unix_listen("--socket ", cfg->socket, err, errlen);
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
			errmsg(err, errlen, ret, "dropping capabilities: %s", strerror(-ret));
			goto out_listen;
		}
	}
	/*
	 * Every queue's worker now, each confined to its device's role as it is made; then this
	 * thread, which from here on only serves front-ends (vmm/seccomp.h). The socket file is
	 * removed at exit through its directory's fd, the one unlinkat the filter lets through.
	 */
	enum seccomp_mode mode = cfg->seccomp ? seccomp_mode_from_env() : SECCOMP_MODE_OFF;
	struct seccomp_confinement worker = {
		mode, d.fs ? SECCOMP_ROLE_WORKER_FS : SECCOMP_ROLE_WORKER, -1 };
	ret = vu_backend_prepare(b, seccomp_confine_hook, &worker);
	if (ret) {
		errmsg(err, errlen, ret, "queue workers: %s", strerror(-ret));
		goto out_listen;
	}
	if (cfg->listen_fd < 0) {
		sock_dir = unix_sock_dir(cfg->socket, &sock_name);
		if (sock_dir < 0) {
			ret = errmsg(err, errlen, sock_dir, "--socket %s: its directory: %s",
					 cfg->socket, strerror(-sock_dir));
			goto out_listen;
		}
	}
	struct seccomp_confinement self = { mode, SECCOMP_ROLE_SERVE, sock_dir };
	ret = seccomp_confine(&self);
	if (ret) {
		ret = errmsg(err, errlen, ret < 0 ? ret : -EPERM, "seccomp: %s",
				 strerror(ret < 0 ? -ret : EPERM));
		goto out_listen;
	}
	ret = serve_loop(b, listen_fd, stop_fd);
	if (ret)
		errmsg(err, errlen, ret, "accept: %s", strerror(-ret));

out_listen:
	if (cfg->listen_fd < 0) {
		close(listen_fd);
		if (sock_dir >= 0)
			(void)unlinkat(sock_dir, sock_name, 0);
		else
			(void)unlinkat(AT_FDCWD, cfg->socket, 0); /* not confined yet */
	}
	if (sock_dir >= 0)
		close(sock_dir);
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
