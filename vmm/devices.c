/* devices.c: create the configured virtio devices and attach each on virtio-mmio, in config order. */
#include "vmm/devices.h"
#include "vmm/privilege.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/blk/blk.h"
#include "devices/console/virtio_console.h"
#include "devices/fs/fs_budget.h"
#include "devices/fs/virtio_fs.h"
#include "devices/virtio/mmio.h"
#include "vmm/errmsg.h"
#include "guest/protocol.h"
#include "vmm/machine.h"

/* Put a created device on a virtio-mmio transport of the VM; windows go out in call order. Its
   queue workers will be confined to role. */
static int devices_attach(struct ringvm_devices *d, struct vm *vm, struct virtio_dev *vdev,
			  enum seccomp_role role)
{
	int ret = virtio_mmio_create(vm, vdev, &d->transports[d->nr_transports]);
	if (ret == 0)
		d->confine[d->nr_transports++].role = role;
	return ret;
}

static int disk_create(struct ringvm_devices *d, struct vm *vm, const struct ringvm_disk *disk,
		       char *err, size_t errlen)
{
	struct blk_config *cfg = malloc(sizeof(*cfg)); /* 4 KiB path: off the stack */
	if (!cfg)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	const char *why;
	int ret = blk_config_from(disk, cfg, &why);
	if (ret) {
		errmsg(err, errlen, ret, "disk %s: %s", disk->path ? disk->path : "", why);
		goto out;
	}
	struct blk_dev *blk;
	ret = blk_create(cfg, vm->nr_cpus, &blk);
	if (ret)
		goto err_msg;
	ret = devices_attach(d, vm, blk_virtio_dev(blk), SECCOMP_ROLE_WORKER);
	if (ret)
		goto err_blk;
	d->disks[d->nr_disks++] = blk;
	goto out;

err_blk:
	blk_destroy(blk);
err_msg:
	errmsg(err, errlen, ret, "disk %s: %s", cfg->path, blk_strerror(ret));
out:
	free(cfg);
	return ret;
}

/* A share, or with root set the guest's root (share is then NULL). */
static int share_create(struct ringvm_devices *d, struct vm *vm, const struct ringvm_share *share,
			const struct ringvm_root *root, char *err, size_t errlen)
{
	struct fs_config *fc = calloc(1, sizeof(*fc));
	if (!fc)
		return errmsg(err, errlen, -ENOMEM, "out of memory");
	d->share_cfgs[d->nr_shares] = fc;
	const char *why = NULL;
	int ret = root ? fs_config_root(root, fc, &why) : fs_config_from(share, fc, &why);
	if (ret)
		return errmsg(err, errlen, ret, "%s: %s", root ? "root" : "share", why);
	struct virtio_fs *fs;
	ret = virtio_fs_create(fc, &fs);
	if (ret)
		goto err_msg;
	ret = devices_attach(d, vm, virtio_fs_virtio_dev(fs), SECCOMP_ROLE_WORKER_FS);
	if (ret)
		goto err_fs;
	d->shares[d->nr_shares] = fs;
	if (root)
		d->root_share = (int)d->nr_shares;
	d->nr_shares++;
	return 0;

err_fs:
	virtio_fs_destroy(fs);
err_msg:
	if (root)
		return errmsg(err, errlen, ret, "root %s: %s", fc->host_dir, strerror(-ret));
	return errmsg(err, errlen, ret, "share %s:%s: %s", fc->host_dir, fc->guest_dir, strerror(-ret));
}

int ringvm_devices_create(struct ringvm_devices *d, struct vm *vm, const struct ringvm_config *cfg,
			  char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->root_share = -1;
	if (cfg->nr_disks + cfg->nr_shares + (cfg->root.host_dir != NULL) > RINGVM_MAX_DEVICES) {
		return errmsg(err, errlen, -E2BIG, "at most %d devices (disks, shares and the root together)",
				RINGVM_MAX_DEVICES);
	}
	if (cfg->fs_limits.fds || cfg->fs_limits.dir_buffers) {
		struct fs_limits lim = { .max_fds = (size_t)cfg->fs_limits.fds,
					 .max_dir_buffers = (size_t)cfg->fs_limits.dir_buffers };
		fs_budget_configure(&lim);
	}
	int ret = 0;
	for (unsigned int i = 0; i < cfg->nr_disks && !ret; i++)
		ret = disk_create(d, vm, &cfg->disks[i], err, errlen);
	if (!ret && cfg->root.host_dir)
		ret = share_create(d, vm, NULL, &cfg->root, err, errlen);
	for (unsigned int i = 0; i < cfg->nr_shares && !ret; i++)
		ret = share_create(d, vm, &cfg->shares[i], NULL, err, errlen);
	if (ret)
		ringvm_devices_destroy(d);
	return ret;
}

int ringvm_devices_add_stdio(struct ringvm_devices *d, struct vm *vm, const int fds[3],
			     int signal_fd, char *err, size_t errlen)
{
	const struct vcon_port_config ports[4] = {
		{ RINGVM_PORT_STDIN, fds ? fds[0] : -1, true },
		{ RINGVM_PORT_STDOUT, fds ? fds[1] : -1, false },
		{ RINGVM_PORT_STDERR, fds ? fds[2] : -1, false },
		{ RINGVM_PORT_SIGNAL, signal_fd, true },
	};
	/* Without streams the signal port alone (port 0). */
	int ret = fds ? vcon_create(ports, 4, &d->stdio) : vcon_create(ports + 3, 1, &d->stdio);
	if (ret == 0) {
		ret = devices_attach(d, vm, vcon_virtio_dev(d->stdio), SECCOMP_ROLE_WORKER_CONSOLE);
		if (ret) {
			vcon_destroy(d->stdio);
			d->stdio = NULL;
		}
	}
	if (ret)
		snprintf(err, errlen, "the command's %s (virtio-console): %s",
			 fds ? "standard streams" : "signal port", strerror(-ret));
	return ret;
}

void ringvm_devices_priv_need(const struct ringvm_devices *d, struct priv_need *need)
{
	memset(need, 0, sizeof(*need));
	for (unsigned int i = 0; i < d->nr_shares; i++) {
		need->share = true;
		if (!d->share_cfgs[i]->readonly) {
			need->share_writable = true;
			need->share_dev |= d->share_cfgs[i]->dev;
		}
	}
}

int ringvm_devices_start(struct ringvm_devices *d, enum seccomp_mode mode)
{
	/* Queues start serving when the guest's driver sets DRIVER_OK (devices/virtio/core.c), on
	   workers made here, while threads and rings may still be made. */
	int ret = 0;
	for (unsigned int i = 0; i < d->nr_transports && !ret; i++) {
		d->confine[i].mode = mode;
		d->confine[i].unlink_dirfd = -1;
		ret = virtio_mmio_prepare(d->transports[i], seccomp_confine_hook, &d->confine[i]);
	}
	return ret;
}

void ringvm_devices_destroy(struct ringvm_devices *d)
{
	/* Transports first: destroying one stops its queue workers, whose in-flight I/O still uses
	   the device's backend (file, inode table). */
	for (unsigned int i = 0; i < d->nr_transports; i++)
		virtio_mmio_destroy(d->transports[i]);
	d->nr_transports = 0;
	for (unsigned int i = 0; i < RINGVM_MAX_DEVICES; i++) {
		blk_destroy(d->disks[i]);
		d->disks[i] = NULL;
	}
	d->nr_disks = 0;
	for (unsigned int i = 0; i < RINGVM_MAX_DEVICES; i++) {
		virtio_fs_destroy(d->shares[i]);
		free(d->share_cfgs[i]);
		d->shares[i] = NULL;
		d->share_cfgs[i] = NULL;
	}
	d->nr_shares = 0;
	d->root_share = -1;
	vcon_destroy(d->stdio);
	d->stdio = NULL;
}

struct virtio_core *ringvm_devices_core(struct ringvm_devices *d, unsigned int i)
{
	return i < d->nr_transports ? virtio_mmio_core(d->transports[i]) : NULL;
}
