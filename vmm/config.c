/* config.c: the public configuration's defaults and its checks, before anything touches the host. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/blk/blk.h"
#include "devices/fs/virtio_fs.h"
#include "include/ringvm.h"
#include "vmm/fail.h"
#include "vmm/layout.h"

/* Every device gets an interrupt line of its own (vmm/layout.h). */
_Static_assert(LAYOUT_GSI_VIRTIO_COUNT >= RINGVM_MAX_DEVICES && LAYOUT_VIRTIO_MMIO_MAX >= RINGVM_MAX_DEVICES,
	       "interrupt lines and MMIO windows");

const char *ringvm_version(void)
{
	return RINGVM_VERSION_STRING;
}

void ringvm_config_init(struct ringvm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpus = 1;
	cfg->memory = 512ULL << 20;
	cfg->console.in_fd = STDIN_FILENO;
	cfg->console.out_fd = STDOUT_FILENO;
	cfg->seccomp = true;
	cfg->drop_privileges = true;
}

int vmm_fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

static int check_disks(const struct ringvm_config *cfg, char *err, size_t errlen)
{
	if (cfg->nr_disks == 0)
		return 0;
	struct blk_config *bc = malloc(sizeof(*bc)); /* 4 KiB: off the stack; only its checks matter */
	if (!bc)
		return vmm_fail(err, errlen, -ENOMEM, "out of memory");
	int ret = 0;
	const char *why;
	for (unsigned int i = 0; i < cfg->nr_disks && !ret; i++) {
		const struct ringvm_disk *d = &cfg->disks[i];
		if (blk_config_from(d, bc, &why))
			ret = vmm_fail(err, errlen, -EINVAL, "disk %s: %s", d->path ? d->path : "", why);
	}
	free(bc);
	return ret;
}

/* The shares (and the root, last) as the devices will see them: tags and mount points unique. */
static int check_shares(const struct ringvm_config *cfg, char *err, size_t errlen)
{
	unsigned int n = cfg->nr_shares + (cfg->root.host_dir ? 1 : 0);
	if (n == 0)
		return 0;
	struct fs_config *fc = calloc(n, sizeof(*fc));
	if (!fc)
		return vmm_fail(err, errlen, -ENOMEM, "out of memory");
	int ret = 0;
	const char *why;
	for (unsigned int i = 0; i < n && !ret; i++) {
		const struct ringvm_share *s = i < cfg->nr_shares ? &cfg->shares[i] : NULL;
		if (s && fs_config_from(s, &fc[i], &why))
			ret = vmm_fail(err, errlen, -EINVAL, "share %s:%s: %s",
					  s->host_dir ? s->host_dir : "", s->guest_dir ? s->guest_dir : "", why);
		else if (!s && fs_config_root(&cfg->root, &fc[i], &why))
			ret = vmm_fail(err, errlen, -EINVAL, "root %s: %s", cfg->root.host_dir, why);
		for (unsigned int j = 0; j < i && !ret; j++) {
			if (!strcmp(fc[j].tag, fc[i].tag))
				ret = vmm_fail(err, errlen, -EINVAL,
						  "share %s:%s: tag '%s' is already used by another share "
						  "(give it a tag)",
						  fc[i].host_dir, fc[i].guest_dir, fc[i].tag);
			else if (!strcmp(fc[j].guest_dir, fc[i].guest_dir))
				ret = vmm_fail(err, errlen, -EINVAL, "share %s:%s: %s is already a mount point",
						  fc[i].host_dir, fc[i].guest_dir, fc[i].guest_dir);
		}
	}
	free(fc);
	return ret;
}

int ringvm_config_check(const struct ringvm_config *cfg, char *err, size_t errlen)
{
	if (!cfg->kernel || !cfg->kernel[0])
		return vmm_fail(err, errlen, -EINVAL, "no kernel given");
	if (cfg->cpus < 1 || cfg->cpus > RINGVM_MAX_CPUS)
		return vmm_fail(err, errlen, -EINVAL, "cpus must be between 1 and %d", RINGVM_MAX_CPUS);
	if (cfg->memory < RINGVM_MIN_MEMORY || cfg->memory > RINGVM_MAX_MEMORY || cfg->memory % 4096)
		return vmm_fail(err, errlen, -EINVAL,
				   "memory must be a multiple of 4K between 64M and 1T");
	if (cfg->argc && !cfg->argv)
		return vmm_fail(err, errlen, -EINVAL, "argc is %u but argv is NULL", cfg->argc);
	for (unsigned int i = 0; i < cfg->argc; i++)
		if (!cfg->argv[i])
			return vmm_fail(err, errlen, -EINVAL, "argv[%u] is NULL", i);
	if ((cfg->nr_disks && !cfg->disks) || (cfg->nr_shares && !cfg->shares))
		return vmm_fail(err, errlen, -EINVAL, "nr_disks or nr_shares counts a NULL array");
	/* Compared one by one: a sum of two counts could wrap. */
	if (cfg->nr_disks > RINGVM_MAX_DEVICES || cfg->nr_shares > RINGVM_MAX_DEVICES ||
	    cfg->nr_disks + cfg->nr_shares + (cfg->root.host_dir ? 1 : 0) > RINGVM_MAX_DEVICES)
		return vmm_fail(err, errlen, -E2BIG,
				   "at most %d devices (disks, shares and the root together)",
				   RINGVM_MAX_DEVICES);
	if (cfg->fs_limits.fds > RINGVM_MAX_FS_LIMIT || cfg->fs_limits.dir_buffers > RINGVM_MAX_FS_LIMIT)
		return vmm_fail(err, errlen, -EINVAL, "fs_limits: fds and dir_buffers must be 0..2^30");
	if (cfg->console.in_fd < -1 || cfg->console.out_fd < -1)
		return vmm_fail(err, errlen, -EINVAL, "console: a descriptor is below -1");
	int ret = check_disks(cfg, err, errlen);
	return ret ? ret : check_shares(cfg, err, errlen);
}

int ringvm_exit_code(const struct ringvm_result *res)
{
	switch (res->end) {
	case RINGVM_END_EXIT_STATUS:
	case RINGVM_END_STOPPED: /* 128 + the signal that stopped it, or 0 for Ctrl-A x */
		return res->status;
	case RINGVM_END_POWEROFF:
	case RINGVM_END_RESET:
		return 0;
	case RINGVM_END_PANIC:
	case RINGVM_END_CRASH:
		return RINGVM_EXIT_CRASH;
	case RINGVM_END_ERROR:
		break;
	}
	return RINGVM_EXIT_ERROR;
}
