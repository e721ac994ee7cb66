/* config.c: the public configuration's defaults and its checks, before anything touches the host. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/kind.h"
#include "include/ringvm.h"
#include "vmm/errmsg.h"
#include "vmm/layout.h"

/* Every device gets an interrupt line of its own (vmm/layout.h): the configured ones, and the
   command's streams' virtio-console. */
_Static_assert(LAYOUT_GSI_VIRTIO_COUNT >= RINGVM_MAX_DEVICES + 1 && LAYOUT_VIRTIO_MMIO_MAX >= RINGVM_MAX_DEVICES + 1,
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
	cfg->console.stdio[0] = STDIN_FILENO;
	cfg->console.stdio[1] = STDOUT_FILENO;
	cfg->console.stdio[2] = STDERR_FILENO;
	cfg->console.tty = RINGVM_TTY_AUTO;
	cfg->stop_timeout_ms = RINGVM_STOP_TIMEOUT_MS;
	cfg->seccomp = true;
	cfg->drop_privileges = true;
}

/* The launch settings a guest can take: NAME=VALUE entries, an absolute directory, real ids. */
static int check_launch(const struct ringvm_config *cfg, char *err, size_t errlen)
{
	const struct ringvm_launch *l = &cfg->launch;
	if (l->nr_env > RINGVM_MAX_ENV || (l->nr_env && !l->env))
		return errmsg(err, errlen, -EINVAL, "env: at most %d entries, in a non-NULL array",
			      RINGVM_MAX_ENV);
	for (unsigned int i = 0; i < l->nr_env; i++) {
		const char *e = l->env[i], *eq = e ? strchr(e, '=') : NULL;
		if (!eq || eq == e)
			return errmsg(err, errlen, -EINVAL, "--env %s: want NAME=VALUE", e ? e : "(null)");
	}
	if (l->workdir && l->workdir[0] != '/')
		return errmsg(err, errlen, -EINVAL, "--workdir %s: the directory must be absolute",
			      l->workdir);
	if (l->set_user && (l->uid == UINT32_MAX || l->gid == UINT32_MAX))
		return errmsg(err, errlen, -EINVAL, "--user: 4294967295 is not a usable id");
	if ((l->nr_env || l->workdir || l->set_user) && cfg->argc == 0)
		return errmsg(err, errlen, -EINVAL,
			      "--env, --workdir and --user apply to a COMMAND (none given)");
	return 0;
}

int ringvm_config_check(const struct ringvm_config *cfg, char *err, size_t errlen)
{
	if (!cfg->kernel || !cfg->kernel[0])
		return errmsg(err, errlen, -EINVAL, "no kernel given");
	if (cfg->cpus < 1 || cfg->cpus > RINGVM_MAX_CPUS)
		return errmsg(err, errlen, -EINVAL, "cpus must be between 1 and %d", RINGVM_MAX_CPUS);
	if (cfg->memory < RINGVM_MIN_MEMORY || cfg->memory > RINGVM_MAX_MEMORY || cfg->memory % 4096)
		return errmsg(err, errlen, -EINVAL,
				   "memory must be a multiple of 4K between 64M and 1T");
	if (cfg->argc && !cfg->argv)
		return errmsg(err, errlen, -EINVAL, "argc is %u but argv is NULL", cfg->argc);
	for (unsigned int i = 0; i < cfg->argc; i++)
		if (!cfg->argv[i])
			return errmsg(err, errlen, -EINVAL, "argv[%u] is NULL", i);
	/* Each kind's count against what is left: a sum of counts could wrap. */
	const struct device_kind_ctx ctx = { .cfg = cfg };
	unsigned int devices = 0;
	for (unsigned int k = 0; k < nr_device_kinds; k++) {
		unsigned int n = device_kinds[k]->count(&ctx);
		if (n > RINGVM_MAX_DEVICES - devices)
			return errmsg(err, errlen, -E2BIG,
				      "at most %d devices (disks, shares and the root together)",
				      RINGVM_MAX_DEVICES);
		devices += n;
	}
	if (cfg->fs_limits.fds > RINGVM_MAX_FS_LIMIT || cfg->fs_limits.dir_buffers > RINGVM_MAX_FS_LIMIT)
		return errmsg(err, errlen, -EINVAL, "fs_limits: fds and dir_buffers must be 0..2^30");
	for (int i = 0; i < 3; i++)
		if (cfg->console.stdio[i] < -1)
			return errmsg(err, errlen, -EINVAL, "console: stdio[%d] is below -1", i);
	if (cfg->console.tty > RINGVM_TTY_OFF)
		return errmsg(err, errlen, -EINVAL, "console: tty must be auto, on or off");
	if (cfg->gdb_wait && !cfg->gdb)
		return errmsg(err, errlen, -EINVAL, "--gdb-wait needs --gdb");
	int ret = check_launch(cfg, err, errlen);
	for (unsigned int k = 0; k < nr_device_kinds && !ret; k++)
		if (device_kinds[k]->check)
			ret = device_kinds[k]->check(cfg, err, errlen);
	return ret;
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
	case RINGVM_END_TIMEOUT:
		return RINGVM_EXIT_TIMEOUT;
	case RINGVM_END_ERROR:
		break;
	}
	return RINGVM_EXIT_ERROR;
}
