/* vu_backend.h: a virtio device served to one vhost-user front-end at a time over a Unix socket. */
#ifndef RINGVM_VU_BACKEND_H
#define RINGVM_VU_BACKEND_H

#include <stdint.h>

#include "devices/virtio/virtio.h"

/*
 * The vhost-user back-end ("slave") transport: the front-end (QEMU, Cloud Hypervisor, the
 * benchmark's driver) owns guest memory and the virtio transport the guest sees; over the socket
 * it hands us its memory (SET_MEM_TABLE fds), each ring's addresses and size, a kick eventfd we
 * read and a call eventfd we write. The device (devices/blk, devices/fs) runs unchanged on the
 * virtio core (devices/virtio/core.h), one io_uring worker per started ring.
 *
 * Offered: virtio features of the device + VERSION_1, EVENT_IDX, INDIRECT_DESC, and
 * VHOST_USER_F_PROTOCOL_FEATURES; protocol features MQ, REPLY_ACK, CONFIG, RESET_DEVICE.
 *
 * Ring states (vhost-user.rst "Ring states"): a ring starts once it has a size, addresses inside
 * the memory table, a kick eventfd and is enabled (rings start disabled when
 * VHOST_USER_F_PROTOCOL_FEATURES was negotiated, until SET_VRING_ENABLE 1; enabled at once
 * otherwise). GET_VRING_BASE stops it: its worker drains every request in flight, the next avail
 * index is returned, the kick fd is dropped (a new SET_VRING_KICK starts it again, from
 * SET_VRING_BASE's index). A disabled ring is stopped the same way (a block or file-system request
 * cannot be processed "without side effects"). SET_VRING_KICK or SET_MEM_TABLE on a running ring
 * stops and restarts it around the change (a table a running ring would not fit in, outside it or
 * misaligned where it is mapped, is refused before anything changes); SET_VRING_NUM/ADDR/BASE on a
 * running ring are refused.
 *
 * Errors: every message is checked by vu_decode() and then against the connection's state. A
 * refused message is logged on stderr (one line: socket, request, reason); if REPLY_ACK was
 * negotiated and the message asked for a reply, the reply says failure and the connection goes on;
 * otherwise the connection is closed. A bad header, a stalled or cut message, a front-end that
 * stops reading replies, or a SIGBUS in its memory (vu_mem.h) closes it too.
 *
 * Disconnect (or any close): every worker stops and drains, the device is reset (virtio-fs forgets
 * the FUSE session: the next front-end must INIT again), memory is unmapped, every fd the front-end
 * gave is closed, and all negotiated state is forgotten. The next connection starts from scratch,
 * like a new device: ringvm keeps no in-flight state across connections (no INFLIGHT_SHMFD).
 *
 * Threads: vu_backend_serve() runs on one thread (the connection thread) and is the only caller of
 * the core; queue workers only raise interrupts and errors through the call/err eventfds, which a
 * per-queue mutex protects against being swapped mid-write.
 */

struct vu_backend;

/*
 * Bind dev (not on any other transport) to a new back-end. `name` (e.g. the socket path) appears
 * in messages. Installs the process-wide SIGBUS guard (vu_mem.h). Returns 0 or -errno.
 */
__attribute__((warn_unused_result)) int vu_backend_create(struct virtio_dev *dev, const char *name,
							  struct vu_backend **out);

/*
 * Make every queue's worker now (virtio_core_prepare: its thread, confined by confine(opaque), and
 * its sealed io_uring), so that serving needs neither io_uring_setup nor clone. Before the process
 * is confined. 0 or -errno.
 */
__attribute__((warn_unused_result)) int vu_backend_prepare(struct vu_backend *b, int (*confine)(void *),
							   void *opaque);

/*
 * Serve the front-end connected on sock until it disconnects, is dropped for an error, or stop_fd
 * (-1: none) becomes readable. Then everything the connection set up is torn down (see above) and
 * sock is closed. Returns 0 (the front-end closed the connection), -EINTR (stop_fd), or -EPROTO
 * (we dropped it; the reason was logged).
 */
int vu_backend_serve(struct vu_backend *b, int sock, int stop_fd);

/* Unbind the device and free. Not while vu_backend_serve() runs. NULL ok. */
void vu_backend_destroy(struct vu_backend *b);

#endif
