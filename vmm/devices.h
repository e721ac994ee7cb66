/* devices.h: the virtio devices a config asks for (disks, shares, root), created and destroyed together. */
#ifndef RINGVM_DEVICES_H
#define RINGVM_DEVICES_H

#include <stddef.h>

#include "include/ringvm.h"

struct vm;
struct blk_dev;
struct virtio_fs;
struct fs_config;
struct virtio_mmio;


/*
 * Each device is created on its own (it knows nothing of buses), then attached here on a
 * virtio-mmio transport. Transports are listed in attach order (the guest numbers disks by it) and
 * destroyed before any device: their workers' in-flight I/O still uses the device's backend.
 */
struct ringvm_devices {
	struct blk_dev *disks[RINGVM_MAX_DEVICES];
	unsigned int nr_disks;
	struct virtio_fs *shares[RINGVM_MAX_DEVICES];
	struct fs_config *share_cfgs[RINGVM_MAX_DEVICES]; /* what the guest's PID 1 must mount */
	unsigned int nr_shares;
	struct virtio_mmio *transports[RINGVM_MAX_DEVICES];
	unsigned int nr_transports;
	int root_share; /* index into shares of --root, or -1 */
};

/*
 * For a config that passed ringvm_config_check(): open each device's backing, create the device
 * and attach it to the VM on a virtio-mmio transport, disks first (vda, vdb, ... in config
 * order), then the root, then the shares; set the process-wide fs limits (devices/fs/fs_budget.h).
 * Returns 0, or -errno with a one-line err and every device and transport created so far
 * destroyed (the VM keeps the MMIO windows it handed out; it is not going to run).
 */
__attribute__((warn_unused_result)) int ringvm_devices_create(struct ringvm_devices *d, struct vm *vm,
							      const struct ringvm_config *cfg, char *err,
							      size_t errlen);
struct priv_need;
/* What the created shares need from the host kernel (vmm/privilege.h). */
void ringvm_devices_priv_need(const struct ringvm_devices *d, struct priv_need *need);

/* Queue workers start when the guest's driver sets DRIVER_OK (devices/virtio/core.c) and stop
   when their transport is destroyed: there is no start or stop of the set. */
/* After the vCPUs stopped: every transport first (its workers drain), then the devices' backends.
   Safe on a zeroed or already destroyed set. */
void ringvm_devices_destroy(struct ringvm_devices *d);

#endif
