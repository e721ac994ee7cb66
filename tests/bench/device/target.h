/* target.h: moving a slot's request to the peer and back (a virtqueue, or the host's io_uring). */
#ifndef BENCH_TARGET_H
#define BENCH_TARGET_H

#include "tests/bench/device/bench.h"

/* How long a request may stay unanswered before the run calls the back-end hung. */
#define TARGET_TIMEOUT_MS 20000

/*
 * Give each of the job's `depth` slots its buffers in b->mem, and the job its queue: a vring handed to
 * the back-end (vu_start_queue) for vhost-user peers, an io_uring of its own for the host peer.
 * Called by the main thread before the job threads start. 0 or negative errno.
 */
__attribute__((warn_unused_result)) int target_job_init(struct bench *b, struct job *j);
void target_job_destroy(struct job *j);

/*
 * Send one op on the job's queue and wait for its reply (setup requests: INIT, LOOKUP, OPEN, a final
 * FLUSH), using slot 0, which must be idle. The reply is decoded into slot 0's res; the caller checks
 * res.err. 0 or a negative errno (transport or protocol failure, with the job's error set).
 */
__attribute__((warn_unused_result)) int target_sync(struct job *j, const struct op *op,
						    struct op_result *res);

/*
 * The job thread's loop: keep every slot busy until b->stop, counting and timing the replies that
 * arrive inside [b->t_start, b->t_end), checking every reply, then wait for the last replies.
 * Returns 0, or the job's error (also in j->err / j->errmsg).
 */
int target_job_run(struct job *j);

#endif
