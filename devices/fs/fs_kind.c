/* fs_kind.c: virtio-fs as a device kind: the root (when given), then each share, and the mounts the guest makes of them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/fs/fs_budget.h"
#include "devices/fs/virtio_fs.h"
#include "devices/kind.h"
#include "guest/protocol.h"
#include "include/ringvm.h"
#include "vmm/errmsg.h"
#include "vmm/kcmdline.h"
#include "vmm/kconfig.h"
#include "vmm/privilege.h"

/* A share as the table holds it: the device and the checked config the guest's PID 1 mounts. */
struct fs_kind_share {
	struct virtio_fs *fs;
	bool root;
	struct fs_config cfg;
};

static unsigned int fs_kind_count(const struct device_kind_ctx *ctx)
{
	return ctx->cfg->nr_shares + (ctx->cfg->root.host_dir != NULL);
}

/* The shares (and the root, last) as the devices will see them: tags and mount points unique. */
static int fs_kind_check(const struct ringvm_config *cfg, char *err, size_t errlen)
{
	if (cfg->nr_shares && !cfg->shares)
		return errmsg(err, errlen, -EINVAL, "nr_shares counts a NULL array");
	unsigned int n = cfg->nr_shares + (cfg->root.host_dir ? 1 : 0);
	if (n == 0)
		return 0;
	struct fs_config *fc = calloc(n, sizeof(*fc));
	if (!fc)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	int ret = 0;
	const char *why;
	for (unsigned int i = 0; i < n && !ret; i++) {
		const struct ringvm_share *s = i < cfg->nr_shares ? &cfg->shares[i] : NULL;
		if (s && fs_config_from(s, &fc[i], &why))
			ret = errmsg(err, errlen, -EINVAL, "share %s:%s: %s", s->host_dir ? s->host_dir : "",
				     s->guest_dir ? s->guest_dir : "", why);
		else if (!s && fs_config_root(&cfg->root, &fc[i], &why))
			ret = errmsg(err, errlen, -EINVAL, "root %s: %s", cfg->root.host_dir, why);
		for (unsigned int j = 0; j < i && !ret; j++) {
			if (!strcmp(fc[j].tag, fc[i].tag))
				ret = errmsg(err, errlen, -EINVAL,
					     "share %s:%s: tag '%s' is already used by another share (give it a tag)",
					     fc[i].host_dir, fc[i].guest_dir, fc[i].tag);
			else if (!strcmp(fc[j].guest_dir, fc[i].guest_dir))
				ret = errmsg(err, errlen, -EINVAL, "share %s:%s: %s is already a mount point",
					     fc[i].host_dir, fc[i].guest_dir, fc[i].guest_dir);
		}
	}
	free(fc);
	return ret;
}

/* The limits all shares share are the process's: set them whenever a config names them. */
static void fs_kind_prepare(const struct device_kind_ctx *ctx)
{
	const struct ringvm_fs_limits *l = &ctx->cfg->fs_limits;
	if (l->fds || l->dir_buffers) {
		struct fs_limits lim = { .max_fds = (size_t)l->fds, .max_dir_buffers = (size_t)l->dir_buffers };
		fs_budget_configure(&lim);
	}
}

static void fs_kind_attach_error(const struct device_kind_ctx *ctx, void *dev, int ret, char *err, size_t errlen)
{
	const struct fs_kind_share *s = dev;
	if (s->root)
		errmsg(err, errlen, ret, "root %s: %s", s->cfg.host_dir, strerror(-ret));
	else
		errmsg(err, errlen, ret, "share %s:%s: %s", s->cfg.host_dir, s->cfg.guest_dir, strerror(-ret));
}

/* Instance 0 is the root when the config has one; the shares follow in config order. */
static int fs_kind_create(const struct device_kind_ctx *ctx, unsigned int i, void **dev,
			  struct virtio_dev **vdev, char *err, size_t errlen)
{
	const struct ringvm_config *cfg = ctx->cfg;
	struct fs_kind_share *s = calloc(1, sizeof(*s)); /* two 4 KiB paths: off the stack */
	if (!s)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	s->root = cfg->root.host_dir && i == 0;
	const char *why = NULL;
	int ret = s->root ? fs_config_root(&cfg->root, &s->cfg, &why)
			  : fs_config_from(&cfg->shares[i - (cfg->root.host_dir != NULL)], &s->cfg, &why);
	if (ret) {
		errmsg(err, errlen, ret, "%s: %s", s->root ? "root" : "share", why);
		free(s);
		return ret;
	}
	ret = virtio_fs_create(&s->cfg, &s->fs);
	if (ret) {
		fs_kind_attach_error(ctx, s, ret, err, errlen);
		free(s);
		return ret;
	}
	*dev = s;
	*vdev = virtio_fs_virtio_dev(s->fs);
	return 0;
}

static void fs_kind_destroy(void *dev)
{
	struct fs_kind_share *s = dev;
	virtio_fs_destroy(s->fs);
	free(s);
}

static void fs_kind_priv_need(const void *dev, struct priv_need *need)
{
	const struct fs_kind_share *s = dev;
	need->share = true;
	if (!s->cfg.readonly) {
		need->share_writable = true;
		need->share_dev |= s->cfg.dev;
	}
}

/* ringvm.root=TAG,MODE and ringvm.mount=TAG,DIR,MODE,... for the guest's PID 1 (guest/protocol.h). */
static int fs_kind_guest_cmdline(const struct device_kind_ctx *ctx, void *const *devs, unsigned int n,
				 struct kcmdline *out)
{
	const char *argv[3 * RINGVM_MAX_DEVICES];
	int argc = 0;
	for (unsigned int i = 0; i < n; i++) {
		const struct fs_kind_share *s = devs[i];
		const char *mode = s->cfg.readonly ? "ro" : "rw";
		if (s->root) {
			const char *root[2] = { s->cfg.tag, mode };
			int ret = kcmdline_add_argv(out, RINGVM_CMDLINE_ROOT, root, 2);
			if (ret)
				return ret;
			continue;
		}
		if (argc + 3 > (int)(sizeof(argv) / sizeof(argv[0])))
			return -E2BIG;
		argv[argc++] = s->cfg.tag;
		argv[argc++] = s->cfg.guest_dir;
		argv[argc++] = mode;
	}
	return argc ? kcmdline_add_argv(out, RINGVM_CMDLINE_MOUNT, argv, argc) : 0;
}

/* Every shared directory, the root last; a share of / would bind the whole host into the jail. */
static int fs_kind_host_paths(const struct ringvm_config *cfg, int (*add)(void *arg, const char *path, bool readonly),
			      void *arg, char *err, size_t errlen)
{
	int ret = 0;
	for (unsigned int i = 0; i < cfg->nr_shares + (cfg->root.host_dir ? 1 : 0) && !ret; i++) {
		bool root = i == cfg->nr_shares;
		const char *dir = root ? cfg->root.host_dir : cfg->shares[i].host_dir;
		bool readonly = root ? !cfg->root.writable : cfg->shares[i].readonly;
		if (!strcmp(dir, "/"))
			return errmsg(err, errlen, -EINVAL, "%s /: a share of / leaves nothing outside the jail",
				      root ? "--root" : "--share");
		ret = add(arg, dir, readonly);
	}
	return ret;
}

/* A part of the kind only some configs use: a read-only root, under PID 1's tmpfs overlay. */
#define FS_KCONFIG_OVERLAY (KCONFIG_USED << 1)

static const struct kconfig_option fs_kind_kconfig[] = {
	{ "FUSE_FS", KCONFIG_NEED_YM, 0, "virtio-fs speaks FUSE" },
	{ "VIRTIO_FS", KCONFIG_NEED_YM, 0, "--share and --root" },
	{ "OVERLAY_FS", KCONFIG_NEED_YM, FS_KCONFIG_OVERLAY, "a writable layer over a read-only --root" },
};

static unsigned int fs_kind_kconfig_uses(const struct ringvm_config *cfg)
{
	if (!cfg->nr_shares && !cfg->root.host_dir)
		return 0;
	return KCONFIG_USED | (cfg->root.host_dir && !cfg->root.writable ? FS_KCONFIG_OVERLAY : 0);
}

const struct device_kind fs_kind = {
	.name = "fs",
	.role = SECCOMP_ROLE_WORKER_FS,
	.count = fs_kind_count,
	.check = fs_kind_check,
	.prepare = fs_kind_prepare,
	.create = fs_kind_create,
	.attach_error = fs_kind_attach_error,
	.destroy = fs_kind_destroy,
	.priv_need = fs_kind_priv_need,
	.guest_cmdline = fs_kind_guest_cmdline,
	.what_too_long = "too many shares",
	.host_paths = fs_kind_host_paths,
	.kconfig = fs_kind_kconfig,
	.nr_kconfig = sizeof(fs_kind_kconfig) / sizeof(fs_kind_kconfig[0]),
	.kconfig_uses = fs_kind_kconfig_uses,
};
