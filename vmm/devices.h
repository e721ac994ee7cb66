/* devices.h: the virtio devices a config asks for (--disk, --share), created, started and stopped together. */
#ifndef RINGVM_DEVICES_H
#define RINGVM_DEVICES_H

#include <stddef.h>

#include "vmm/ringvm.h"

struct vm;
struct blk_dev;
struct virtio_fs;
struct fs_config;

#define RINGVM_MAX_DISKS 16
#define RINGVM_MAX_SHARES 8 /* --share, plus --root */

struct ringvm_devices {
	struct blk_dev *disks[RINGVM_MAX_DISKS];
	unsigned int nr_disks;
	struct virtio_fs *shares[RINGVM_MAX_SHARES];
	struct fs_config *share_cfgs[RINGVM_MAX_SHARES]; /* what the guest's PID 1 must mount */
	unsigned int nr_shares;
	int root_share; /* index into shares of --root, or -1 */
};

/* Parse each spec, open its backing, create the device on the VM. -errno with a one-line err. */
__attribute__((warn_unused_result)) int ringvm_devices_create(struct ringvm_devices *d, struct vm *vm,
							      const struct ringvm_config *cfg, char *err,
							      size_t errlen);
/* Before the vCPUs run. */
__attribute__((warn_unused_result)) int ringvm_devices_start(struct ringvm_devices *d);
/* After the vCPUs stopped: queue workers drain and exit. */
void ringvm_devices_stop(struct ringvm_devices *d);
void ringvm_devices_destroy(struct ringvm_devices *d);

#endif
