/* uring.c: create a queue worker's io_uring disabled, restrict it to its device's rules, enable it. */
#define _GNU_SOURCE
#include "devices/virtio/uring.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Raw io_uring_register(2): Debian's liburing 2.3 declares io_uring_register_restrictions() and
   io_uring_enable_rings() but its shared library does not export them. */
static int uring_register(int ring_fd, unsigned int op, void *arg, unsigned int nr)
{
	return syscall(__NR_io_uring_register, ring_fd, op, arg, nr) < 0 ? -errno : 0;
}

/* The restrictions of a disabled ring: rules' opcodes and flags plus the worker's own opcodes. */
static int uring_seal(struct io_uring *ring, const struct uring_rules *rules)
{
	struct io_uring_restriction res[URING_MAX_OPS + 4];
	unsigned int n = 0;

	if (rules->nr_ops > URING_MAX_OPS || (rules->nr_ops && !rules->ops))
		return -EINVAL;
	memset(res, 0, sizeof(res));
	for (unsigned int i = 0; i < rules->nr_ops; i++) {
		res[n].opcode = IORING_RESTRICTION_SQE_OP;
		res[n++].sqe_op = rules->ops[i];
	}
	res[n].opcode = IORING_RESTRICTION_SQE_OP;
	res[n++].sqe_op = IORING_OP_READ; /* the worker: kick and stop eventfds */
	res[n].opcode = IORING_RESTRICTION_SQE_OP;
	res[n++].sqe_op = IORING_OP_WRITE; /* the worker: the interrupt eventfd (irqfd, call fd) */
	res[n].opcode = IORING_RESTRICTION_SQE_OP;
	res[n++].sqe_op = IORING_OP_ASYNC_CANCEL; /* the worker: requests in flight at a stop */
	res[n].opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED;
	res[n++].sqe_flags = rules->sqe_flags;
	/* No IORING_RESTRICTION_REGISTER_OP entry: once enabled, every register operation fails. */
	int err = uring_register(ring->ring_fd, IORING_REGISTER_RESTRICTIONS, res, n);
	if (!err)
		err = uring_register(ring->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0);
	return err;
}

bool uring_rules_allow(const struct uring_rules *rules, uint8_t op)
{
	if (!rules)
		return true;
	for (unsigned int i = 0; i < rules->nr_ops; i++)
		if (rules->ops[i] == op)
			return true;
	return false;
}

/*
 * COOP_TASKRUN: when a request's I/O or a kick's read ends, io_uring runs its completion in the
 * ring's thread; without this flag it interrupts that thread if it is running (an inter-processor
 * interrupt) instead of waiting for it to enter the kernel, which a worker does within microseconds
 * (it submits, reads and writes eventfds through system calls, and sleeps in io_uring_enter). On
 * this project's PVM host each such interrupt cost ~20 us of the worker's CPU (perf: 77 % of its
 * time in pvm_irq_enable under eventfd_read's task work). Measured natively, 4 KiB cached reads
 * at depth 1 with polling off, alternating: 33-37k -> 138-143k IOPS, 26-30 -> 6.2-6.8 us of CPU per
 * request; O_DIRECT at depth 16 on virtio-blk (completions that end while the worker works): 120-128k
 * -> 131-138k IOPS. TASKRUN_FLAG: the ring says when completions are owed (uring_cq_owed).
 */
int uring_create(struct io_uring *ring, unsigned int sq_entries, unsigned int cq_entries,
		 const struct uring_rules *rules)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP | IORING_SETUP_COOP_TASKRUN |
		  IORING_SETUP_TASKRUN_FLAG | (rules ? IORING_SETUP_R_DISABLED : 0);
	p.cq_entries = cq_entries;
	int err = io_uring_queue_init_params(sq_entries, ring, &p);
	if (err < 0)
		return err;
	if (rules) {
		err = uring_seal(ring, rules);
		if (err) {
			io_uring_queue_exit(ring);
			return err;
		}
	}
	return 0;
}
