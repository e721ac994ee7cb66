/* uring.h: a queue worker's io_uring, sealed: only the opcodes and SQE flags its device declared. */
#ifndef RINGVM_URING_H
#define RINGVM_URING_H

#include <stdbool.h>
#include <stdint.h>

#include <liburing.h>

/*
 * Why rings are sealed (Firecracker's model): an SQE is executed by the kernel on behalf of the
 * ring, not as a system call of the submitting thread, so seccomp never sees it. A ring that could
 * take any opcode would hand whoever controls a worker thread OPENAT, SOCKET, CONNECT, SENDMSG, ...
 * whatever that thread's seccomp filter says. So every worker ring is created with
 * IORING_SETUP_R_DISABLED, limited with IORING_REGISTER_RESTRICTIONS to
 *
 *   - the opcodes its device declared (struct uring_rules, in the device's folder: blk.c, virtio_fs.c),
 *   - the worker's own three: IORING_OP_READ (the kick and stop eventfds), IORING_OP_WRITE (the
 *     interrupt eventfd: an 8-byte write the worker's seccomp filter allows as write(2) anyway)
 *     and IORING_OP_ASYNC_CANCEL (the stop cancels what is in flight),
 *   - the SQE flags the device declared (none for ringvm's devices),
 *   - no io_uring_register(2) operation at all (no registered files, buffers, eventfds, no second
 *     set of restrictions),
 *
 * then enabled (IORING_REGISTER_ENABLE_RINGS). The kernel answers a refused SQE with a CQE whose
 * result is -EACCES, and a refused io_uring_register(2) with EACCES. Rings are made before the
 * process is confined (the seccomp filters deny io_uring_setup) and reused across device resets.
 */

/* The most opcodes a device may declare. */
#define URING_MAX_OPS 16

/* What a device's queues submit. Static const data in the device's folder. */
struct uring_rules {
	const uint8_t *ops;   /* IORING_OP_* the device's handle()/complete() put in SQEs */
	unsigned int nr_ops;  /* at most URING_MAX_OPS */
	uint8_t sqe_flags;    /* IOSQE_* the device sets; 0 = none */
};

/*
 * Create ring with sq_entries submission and cq_entries completion entries (clamped to the kernel's
 * limits), sealed to rules (plus the worker's READ, WRITE and ASYNC_CANCEL) and enabled. rules NULL: an
 * unrestricted ring (test devices only: every device of ringvm declares its rules). 0 or -errno;
 * on failure nothing is left open.
 */
__attribute__((warn_unused_result)) int uring_create(struct io_uring *ring, unsigned int sq_entries,
						     unsigned int cq_entries,
						     const struct uring_rules *rules);

/*
 * Completions the kernel holds for this ring until its thread next enters the kernel: I/O or a
 * kick that ended while the thread ran in user space, which rings made here (COOP_TASKRUN, uring.c)
 * are not interrupted for. A busy-poll looks at this as well as at the completion queue; liburing's
 * peek enters the kernel for them when it finds the queue empty.
 */
static inline bool uring_cq_owed(const struct io_uring *ring)
{
	return IO_URING_READ_ONCE(*ring->sq.kflags) & IORING_SQ_TASKRUN;
}

/* A ring sealed to rules may submit op: rules declare it, or rules is NULL (unrestricted). */
bool uring_rules_allow(const struct uring_rules *rules, uint8_t op);

#endif
