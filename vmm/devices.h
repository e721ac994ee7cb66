/* devices.h: the VM's virtio devices, one kind after another from a table of device kinds, each on its own virtio-mmio transport. */
#ifndef RINGVM_DEVICES_H
#define RINGVM_DEVICES_H

#include <stddef.h>

#include "devices/kind.h"
#include "include/ringvm.h"
#include "vmm/seccomp.h"

struct vm;
struct virtio_mmio;
struct priv_need;
struct kcmdline;

/* Every device the VM can hold: the configured ones (RINGVM_MAX_DEVICES, checked by
   ringvm_config_check) and the command's streams. */
#define RINGVM_DEVICES_SLOTS (RINGVM_MAX_DEVICES + 1)

/* One created device: its kind, the kind's own handle, its transport and its workers' confinement. */
struct ringvm_device {
	const struct device_kind *kind;
	void *dev;
	struct virtio_mmio *transport;
	struct seccomp_confinement confine; /* role from the kind; mode set by start */
};

/*
 * Each device is created by its kind (it knows nothing of buses), then attached here on a
 * virtio-mmio transport. Devices are listed in attach order (the guest numbers disks by it); their
 * transports are destroyed before any device: their workers' in-flight I/O still uses the
 * device's backend.
 */
struct ringvm_devices {
	const struct device_kind *const *kinds; /* the table they were made from */
	unsigned int nr_kinds;
	struct device_kind_ctx ctx; /* what they were made from (see ringvm_devices_create) */
	struct ringvm_device dev[RINGVM_DEVICES_SLOTS];
	unsigned int n;
};

/*
 * For a config that passed ringvm_config_check(): every kind of kinds[0..nr_kinds) in turn (the
 * real table is devices/kinds.c's device_kinds), its prepare, then each of its instances created
 * and attached to vm on a virtio-mmio transport; windows go out in that order. ctx is copied into
 * d; what it points to need only stay valid until the last ringvm_devices_guest_cmdline() (no other
 * call reads it). Returns 0, or -errno with a one-line err and every device and transport
 * created so far destroyed (the VM keeps the MMIO windows it handed out; it is not going to run).
 * More devices than RINGVM_DEVICES_SLOTS: -E2BIG, nothing created.
 */
__attribute__((warn_unused_result)) int ringvm_devices_create(struct ringvm_devices *d, struct vm *vm,
							      const struct device_kind *const *kinds,
							      unsigned int nr_kinds,
							      const struct device_kind_ctx *ctx, char *err,
							      size_t errlen);

/* Instance i of kind (its own handle), or NULL when there is none. */
void *ringvm_devices_find(const struct ringvm_devices *d, const struct device_kind *kind, unsigned int i);

/* What the created devices need from the host kernel (vmm/privilege.h), from each kind's priv_need. */
void ringvm_devices_priv_need(const struct ringvm_devices *d, struct priv_need *need);

/*
 * Append what the guest's PID 1 must do for the devices (each kind's guest_cmdline, in table
 * order) to out. 0, or -E2BIG with the one-line reason in err.
 */
__attribute__((warn_unused_result)) int ringvm_devices_guest_cmdline(const struct ringvm_devices *d,
								     struct kcmdline *out, char *err,
								     size_t errlen);

/*
 * Make every queue's worker (thread and sealed io_uring), each thread confined in mode with its
 * kind's role. After the capabilities are dropped (threads inherit them), before the vCPUs run and
 * before the caller's own confinement. 0 or -errno.
 */
__attribute__((warn_unused_result)) int ringvm_devices_start(struct ringvm_devices *d,
							     enum seccomp_mode mode);
struct virtio_core;
/* The i-th device's virtio core, NULL past the last: for walks over every device's queues (the
   state report, vmm/state_report.h). Any thread while the devices live. */
struct virtio_core *ringvm_devices_core(struct ringvm_devices *d, unsigned int i);

/* After the vCPUs stopped: every transport first (its workers drain), then the devices, last made
   first. Safe on a zeroed or already destroyed set. */
void ringvm_devices_destroy(struct ringvm_devices *d);

#endif
