/* virtio_console.h: virtio-console with named ports, each a stream between the guest and a host fd. */
#ifndef RINGVM_VIRTIO_CONSOLE_H
#define RINGVM_VIRTIO_CONSOLE_H

#include <stdbool.h>

#include "devices/console/vcon_ctrl.h"
#include "devices/virtio/uring.h"

/*
 * A multiport virtio-console (virtio 1.x 5.3) whose ports are one-way byte streams to host file
 * descriptors: `ringvm run` gives the guest command's stdin, stdout and stderr one port each
 * (guest/protocol.h). Queues (5.3.2): port 0 receiveq 0 / transmitq 1, control receiveq 2 /
 * transmitq 3, port N receiveq 2N+2 / transmitq 2N+3; each is served by its own queue worker
 * (devices/virtio/worker.h), which does the port's host I/O through its io_uring:
 *
 *   host -> guest port (stdin): a receive buffer the guest posted gets one readv() of the host fd;
 *     only while the guest has the port open (Linux drops data that arrives on a closed port), one
 *     read at a time so that bytes stay in order. Buffers are not taken otherwise: the host reads
 *     only as much as the guest gave room for. EOF is a used buffer of length 0 (Linux's read()
 *     of the port then returns 0); the port takes nothing after it, or, for a port with
 *     sticky_eof, answers every later buffer empty too.
 *   guest -> host port (stdout, stderr): each transmit buffer is written whole (short writes
 *     continued, one buffer at a time), then given back; a slow host reader therefore leaves the
 *     guest's queue full and its writer waiting. When the write fails (EPIPE: the reader is gone)
 *     the guest is told PORT_OPEN(0) (its poll() sees POLLHUP) and later buffers are dropped.
 *     When the guest closes the port, the host fd is closed once everything written before the
 *     close is out: the host reader sees EOF.
 *   A non-blocking host fd answering EAGAIN is waited for with a poll, not retried in a loop.
 *
 * Memory stays bounded: the device holds no data of its own, only the guest's buffers in flight.
 * The control queues follow vcon_ctrl.h; a control message is answered at once (Linux spins
 * until its control buffers come back). Threads: each queue's worker; shared port state is under
 * the device's lock; the drain waiter (vcon_drain) reads atomics.
 */

struct vcon_dev;
struct virtio_dev;

/* One port. */
struct vcon_port_config {
	const char *name; /* what the guest reads in /sys/class/virtio-ports/vportNpM/name */
	int fd;		  /* the host side; the device works on its own duplicate */
	bool to_guest;	  /* host fd -> guest (the guest reads the port), else guest -> host fd */
	bool sticky_eof;  /* to_guest: after EOF every receive buffer comes back empty at once, so
			     each read() of the port returns 0 as on a pipe whose writer left (the
			     command reads the stdin port itself: guest/stdio.c); else the port
			     takes nothing after its one empty buffer */
};

/* What a console queue's io_uring may do (virtio_console.c lists the opcodes and why); set on
   every console device. */
extern const struct uring_rules vcon_ring_rules;

/*
 * Create the device with ports[0 .. nr) (1 <= nr <= VCON_MAX_PORTS), duplicating each fd
 * (close-on-exec). It is on no bus yet (vcon_virtio_dev for a transport). 0 or -errno (-EINVAL:
 * bad count or fd).
 */
__attribute__((warn_unused_result)) int vcon_create(const struct vcon_port_config *ports,
						    unsigned int nr, struct vcon_dev **out);

/* The device's virtio side, for a transport; valid until vcon_destroy(). */
struct virtio_dev *vcon_virtio_dev(struct vcon_dev *d);

/*
 * Wait until every guest -> host port has written out all the guest queued before this call
 * (the guest has stopped: `ringvm run` calls it after the command's status arrived, so its last
 * output is not lost). Returns 0 when done or when the driver never started the device;
 * -EINTR when abort_fd (>= 0) became readable; -ETIMEDOUT when for stall_ms no bytes moved and,
 * if patient, no write was waiting on the host fd either (a worker that stopped serving: a broken
 * ring). Patient: a write that waits for a slow reader is waited for, however long; impatient
 * (ringvm was asked to stop): a reader that takes nothing for stall_ms is given up on.
 */
__attribute__((warn_unused_result)) int vcon_drain(struct vcon_dev *d, int abort_fd,
						   unsigned int stall_ms, bool patient);

/*
 * The guest -> host ports' progress, for a caller that watches for a stuck reader: *moved, the
 * bytes written out so far (counted per transmit buffer, when it is all out); *writing, whether
 * a write is waiting on a host fd now. Any thread (atomics).
 */
void vcon_output_progress(struct vcon_dev *d, uint64_t *moved, bool *writing);

/* Whether the guest has port i open now (its last PORT_OPEN said 1). Any thread. */
bool vcon_port_guest_open(struct vcon_dev *d, unsigned int i);

/* Close the duplicated fds, free. Only the backend: the transport must already be destroyed (its
   workers stopped). NULL ok. */
void vcon_destroy(struct vcon_dev *d);

#endif
