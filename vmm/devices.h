/* devices.h: the virtio devices a config asks for (disks, shares, root, the command's streams), created and destroyed together. */
#ifndef RINGVM_DEVICES_H
#define RINGVM_DEVICES_H

#include <stddef.h>

#include "include/ringvm.h"
#include "vmm/seccomp.h"

struct vm;
struct blk_dev;
struct virtio_fs;
struct fs_config;
struct virtio_mmio;
struct vcon_dev;

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
	int root_share; /* index into shares of --root, or -1 */
	struct vcon_dev *stdio; /* the command's streams (virtio-console), or NULL */
	/* Disks, shares and root, then the command's streams. */
	struct virtio_mmio *transports[RINGVM_MAX_DEVICES + 1];
	/* Each transport's queue workers' confinement (role by device kind), set by start. */
	struct seccomp_confinement confine[RINGVM_MAX_DEVICES + 1];
	unsigned int nr_transports;
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
/*
 * The command's stdin, stdout and stderr as the virtio-console ports guest/protocol.h names
 * (RINGVM_PORT_*), and the signal port reading signal_fd (guest/sigfwd.h), on a virtio-mmio
 * transport after the other devices; with fds NULL (a tty) the signal port alone, as port 0. The
 * fds are duplicated. Returns 0 or -errno with a one-line
 * err (nothing created).
 */
__attribute__((warn_unused_result)) int ringvm_devices_add_stdio(struct ringvm_devices *d,
								  struct vm *vm, const int fds[3],
								  int signal_fd, char *err,
								  size_t errlen);

struct priv_need;
/* What the created shares need from the host kernel (vmm/privilege.h). */
void ringvm_devices_priv_need(const struct ringvm_devices *d, struct priv_need *need);

/*
 * Make every queue's worker (thread and sealed io_uring), each thread confined in mode with its
 * device's role (SECCOMP_ROLE_WORKER for disks, SECCOMP_ROLE_WORKER_FS for shares,
 * SECCOMP_ROLE_WORKER_CONSOLE for the command's streams). After the capabilities are dropped
 * (threads inherit them), before the vCPUs run and before the caller's own confinement. 0 or
 * -errno.
 */
__attribute__((warn_unused_result)) int ringvm_devices_start(struct ringvm_devices *d,
							     enum seccomp_mode mode);
struct virtio_core;
/* The i-th device's virtio core, NULL past the last: for walks over every device's queues (the
   state report, vmm/state_report.h). Any thread while the devices live. */
struct virtio_core *ringvm_devices_core(struct ringvm_devices *d, unsigned int i);

/* After the vCPUs stopped: every transport first (its workers drain), then the devices' backends.
   Safe on a zeroed or already destroyed set. */
void ringvm_devices_destroy(struct ringvm_devices *d);

#endif
