/* kind.h: a device kind (virtio-blk disks, virtio-fs shares, ...): everything the machine needs to know of it, in one table. */
#ifndef RINGVM_DEVICE_KIND_H
#define RINGVM_DEVICE_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include "vmm/seccomp.h"

struct ringvm_config;
struct virtio_dev;
struct priv_need;
struct kcmdline;
struct console_streams;
struct kconfig_option;

/*
 * What a VM hands its devices at creation: the public config (each kind reads its own part of it),
 * the machine's size, and what ringvm_create() set up beyond the config (the command's streams).
 */
struct device_kind_ctx {
	const struct ringvm_config *cfg;
	unsigned int nr_cpus;                   /* vCPUs: a default for queue counts */
	const struct console_streams *streams;  /* devices/console/console_kind.h; NULL: none */
};

/*
 * One kind of device. vmm/devices.c creates the instances of every kind in the table's order
 * (devices/kinds.h lists them), each on a virtio-mmio transport of its own, so the order of the
 * table and of instances within a kind is the order the guest finds them in (vda, vdb, ...). A kind's entry is
 * a `static const`-like `const struct device_kind NAME_kind` defined in its own folder; nothing
 * outside that folder and the table knows the kind. Ops marked optional may be NULL. Setup-time
 * calls come from ringvm_create()'s thread; none is called once the VM runs.
 */
struct device_kind {
	const char *name;        /* "blk", "fs", ... (logs, tests) */
	enum seccomp_role role;  /* what its queue workers are confined to (vmm/seccomp.h) */
	/* How many instances ctx asks for (reads counts only, never the arrays they count);
	   ringvm_config_check() bounds the sum over all kinds by RINGVM_MAX_DEVICES. */
	unsigned int (*count)(const struct device_kind_ctx *ctx);
	/*
	 * Optional: check the kind's part of cfg (arrays present, each entry's rules, what must be
	 * unique) without touching the host, for ringvm_config_check(), after the counts passed.
	 * 0 or -EINVAL with the one-line reason, naming the entry, in err.
	 */
	int (*check)(const struct ringvm_config *cfg, char *err, size_t errlen);
	/* Optional: once per VM before its first instance (even with none), for process-wide
	   settings the config carries. */
	void (*prepare)(const struct device_kind_ctx *ctx);
	/*
	 * Create instance i (0 <= i < count): open its backing, make the device, not on any bus yet.
	 * 0 with *dev (the kind's own handle) and *vdev (its virtio side, valid until destroy) set, or
	 * -errno with the one-line reason in err and nothing left behind.
	 */
	int (*create)(const struct device_kind_ctx *ctx, unsigned int i, void **dev, struct virtio_dev **vdev,
		      char *err, size_t errlen);
	/* Attaching dev (made from ctx) on its transport failed with ret: say so in err, naming the
	   instance. */
	void (*attach_error)(const struct device_kind_ctx *ctx, void *dev, int ret, char *err, size_t errlen);
	/* Free dev. Its transport is already gone (its workers drained) or never was. */
	void (*destroy)(void *dev);
	/* Optional: add what dev needs from the host kernel (capabilities, vmm/privilege.h) to need. */
	void (*priv_need)(const void *dev, struct priv_need *need);
	/*
	 * Optional: what the guest's PID 1 must do for devs[0..n) (n > 0, this kind's instances in
	 * order): the ringvm.* parameters of guest/protocol.h (mounts, streams) appended to out.
	 * 0 or -E2BIG; the caller reports a line too long, naming what_too_long.
	 */
	int (*guest_cmdline)(const struct device_kind_ctx *ctx, void *const *devs, unsigned int n,
			     struct kcmdline *out);
	const char *what_too_long; /* with guest_cmdline: "too many shares", ... */

	/*
	 * Optional: the host paths cfg's instances of this kind open, for `ringvm run --jail`, which
	 * binds each into the jail's root (vmm/jail.c): add(arg, path, readonly) for each (a relative
	 * path is the caller's cwd's), returning add's first error as it is. A path the jail cannot
	 * hold is -EINVAL with the one-line reason, naming the option, in err. cfg passed
	 * ringvm_config_check().
	 */
	int (*host_paths)(const struct ringvm_config *cfg, int (*add)(void *arg, const char *path, bool readonly),
			  void *arg, char *err, size_t errlen);

	/*
	 * The kernel options its devices need in the guest (vmm/kconfig.h: `ringvm kconfig` prints
	 * them after the machine's, a `--kernel TREE` must provide the ones a run uses), and which of
	 * them cfg uses: 0 when cfg makes none of its devices, else KCONFIG_USED with the bits of the
	 * rows whose `when` names a part of the kind cfg uses. Reads cfg's counts and flags only.
	 * A kind whose devices need nothing beyond the machine's virtio-mmio still answers
	 * kconfig_uses, so that the machine asks for virtio-mmio.
	 */
	const struct kconfig_option *kconfig;
	unsigned int nr_kconfig;
	unsigned int (*kconfig_uses)(const struct ringvm_config *cfg);
};

/* The kinds ringvm builds, in attach order (devices/kinds.h's list), and how many. */
extern const struct device_kind *const device_kinds[];
extern const unsigned int nr_device_kinds;

#endif
