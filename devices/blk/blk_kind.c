/* blk_kind.c: virtio-blk as a device kind: one disk per ringvm_config.disks entry, vda, vdb, ... in order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/blk/blk.h"
#include "devices/kind.h"
#include "include/ringvm.h"
#include "vmm/errmsg.h"
#include "vmm/kconfig.h"

/* A disk as the table holds it: the device, and its path for messages after create. */
struct blk_kind_disk {
	struct blk_dev *blk;
	char path[];
};

static unsigned int blk_kind_count(const struct device_kind_ctx *ctx)
{
	return ctx->cfg->nr_disks;
}

/* Each disk's own rules (blk_config_from), named with its path. */
static int blk_kind_check(const struct ringvm_config *cfg, char *err, size_t errlen)
{
	if (cfg->nr_disks == 0)
		return 0;
	if (!cfg->disks)
		return errmsg(err, errlen, -EINVAL, "nr_disks counts a NULL array");
	struct blk_config *bc = malloc(sizeof(*bc)); /* 4 KiB: off the stack; only its checks matter */
	if (!bc)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	int ret = 0;
	const char *why;
	for (unsigned int i = 0; i < cfg->nr_disks && !ret; i++) {
		const struct ringvm_disk *d = &cfg->disks[i];
		if (blk_config_from(d, bc, &why))
			ret = errmsg(err, errlen, -EINVAL, "disk %s: %s", d->path ? d->path : "", why);
	}
	free(bc);
	return ret;
}

static int blk_kind_create(const struct device_kind_ctx *ctx, unsigned int i, void **dev,
			   struct virtio_dev **vdev, char *err, size_t errlen)
{
	const struct ringvm_disk *disk = &ctx->cfg->disks[i];
	struct blk_config *cfg = malloc(sizeof(*cfg)); /* 4 KiB path: off the stack */
	if (!cfg)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	const char *why;
	int ret = blk_config_from(disk, cfg, &why);
	if (ret) {
		errmsg(err, errlen, ret, "disk %s: %s", disk->path ? disk->path : "", why);
		goto out;
	}
	size_t len = strlen(cfg->path) + 1;
	struct blk_kind_disk *d = malloc(sizeof(*d) + len);
	if (!d) {
		ret = errmsg(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(d->path, cfg->path, len);
	ret = blk_create(cfg, ctx->nr_cpus, &d->blk);
	if (ret) {
		errmsg(err, errlen, ret, "disk %s: %s", cfg->path, blk_strerror(ret));
		free(d);
		goto out;
	}
	*dev = d;
	*vdev = blk_virtio_dev(d->blk);
out:
	free(cfg);
	return ret;
}

static void blk_kind_attach_error(const struct device_kind_ctx *ctx, void *dev, int ret, char *err, size_t errlen)
{
	const struct blk_kind_disk *d = dev;
	errmsg(err, errlen, ret, "disk %s: %s", d->path, blk_strerror(ret));
}

static void blk_kind_destroy(void *dev)
{
	struct blk_kind_disk *d = dev;
	blk_destroy(d->blk);
	free(d);
}

/* Each disk's image (or block device), as writable as the disk. */
static int blk_kind_host_paths(const struct ringvm_config *cfg, int (*add)(void *arg, const char *path, bool readonly),
			       void *arg, char *err, size_t errlen)
{
	(void)err;
	(void)errlen;
	int ret = 0;
	for (unsigned int i = 0; i < cfg->nr_disks && !ret; i++)
		ret = add(arg, cfg->disks[i].path, cfg->disks[i].readonly);
	return ret;
}

static const struct kconfig_option blk_kind_kconfig[] = {
	{ "BLOCK", KCONFIG_NEED_Y, 0, "--disk" },
	{ "BLK_DEV", KCONFIG_NEED_Y, 0, "--disk" },
	{ "VIRTIO_BLK", KCONFIG_NEED_YM, 0, "--disk" },
};

static unsigned int blk_kind_kconfig_uses(const struct ringvm_config *cfg)
{
	return cfg->nr_disks ? KCONFIG_USED : 0;
}

/* Disks need nothing from the host kernel once their files are open; the guest's kernel finds
   them on virtio-mmio by itself. */
const struct device_kind blk_kind = {
	.name = "blk",
	.role = SECCOMP_ROLE_WORKER,
	.count = blk_kind_count,
	.check = blk_kind_check,
	.create = blk_kind_create,
	.attach_error = blk_kind_attach_error,
	.destroy = blk_kind_destroy,
	.host_paths = blk_kind_host_paths,
	.kconfig = blk_kind_kconfig,
	.nr_kconfig = sizeof(blk_kind_kconfig) / sizeof(blk_kind_kconfig[0]),
	.kconfig_uses = blk_kind_kconfig_uses,
};
