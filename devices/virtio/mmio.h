/* mmio.h: the virtio-mmio version 2 transport (virtio 1.x section 4.2), modern devices only. */
#ifndef RINGVM_MMIO_H
#define RINGVM_MMIO_H

#include <stdint.h>

#include "devices/virtio/virtio.h"
#include "vmm/vm.h"

/*
 * The transport owns the register file (4.2.2) and maps it onto the virtio core (core.h), which
 * owns the status state machine, feature negotiation (VIRTIO_F_VERSION_1 required: a driver that
 * does not accept it gets FEATURES_OK refused), the config generation and the queue workers
 * (started at DRIVER_OK, stopped and drained at reset). Here: the per-queue registers (locked once
 * DRIVER_OK is set), the interrupt status/ACK pair and its irqfd, one ioeventfd per queue on
 * QueueNotify (datamatch = queue index).
 *
 * Register accesses come from vCPU threads and are serialised by a per-transport mutex; workers only
 * touch the interrupt status (atomic) and the core's atomic status.
 *
 * When the driver breaks the protocol (a broken ring, an activate() refusal), the core logs the
 * rule on stderr, the status gets VIRTIO_CONFIG_S_NEEDS_RESET and a configuration change interrupt
 * is sent (2.1.2); the device stays silent until the driver writes 0 to Status.
 */
struct virtio_mmio;

/*
 * Take a window and GSI with vm_alloc_virtio_mmio(), register the window with vm_register_mmio(),
 * create the irqfd and one ioeventfd per queue. dev must stay valid until virtio_mmio_destroy().
 * Setup time only (before vCPUs run). Returns 0 or -errno (everything undone).
 */
__attribute__((warn_unused_result)) int virtio_mmio_create(struct vm *vm, struct virtio_dev *dev,
							    struct virtio_mmio **out);

/*
 * Make every queue's worker now (virtio_core_prepare: its thread, confined by confine(opaque), and
 * its sealed io_uring), so that the running VM needs neither io_uring_setup nor clone. After
 * virtio_mmio_create, before the vCPUs run and before the process is confined. 0 or -errno.
 */
__attribute__((warn_unused_result)) int virtio_mmio_prepare(struct virtio_mmio *t,
							    int (*confine)(void *), void *opaque);

/* Stop and end the workers (draining in-flight I/O), unregister the eventfds, free. NULL ok. After the vCPUs
 * stopped: the MMIO window stays registered on the bus but must no longer be accessed. */
void virtio_mmio_destroy(struct virtio_mmio *t);

struct virtio_core;
/* The device model the transport carries (for the state report: virtio_core_state_request). */
struct virtio_core *virtio_mmio_core(struct virtio_mmio *t);

/* The window base and GSI (for logs and tests). */
uint64_t virtio_mmio_base(const struct virtio_mmio *t);
uint32_t virtio_mmio_gsi(const struct virtio_mmio *t);

#endif
