/* setup.h: bringing a peer up for a run (vhost-user handshake, FUSE INIT and lookups) and down. */
#ifndef BENCH_SETUP_H
#define BENCH_SETUP_H

#include "tests/bench/device/bench.h"

/* Exit status of the driver when the peer cannot do what the run asks (too few queues). */
#define SETUP_UNSUPPORTED 3

/*
 * Connect, negotiate, read the config space, share memory, start one queue per job (plus virtio-fs's
 * hiprio queue), then the workload's own setup requests on job 0's queue: FUSE INIT, LOOKUP and OPEN
 * of the data file, LOOKUP of the tree's directories or the untar directories. For the host peer:
 * open the file. Fills b->jobv (b->jobs entries). 0, -EOPNOTSUPP when the peer offers fewer queues
 * than the run has jobs, or another negative errno; the reason is printed on stderr.
 * Called by the main thread.
 */
__attribute__((warn_unused_result)) int setup_peer(struct bench *b);

/*
 * After the jobs: a FLUSH for write workloads, then GET_VRING_BASE on every queue, checked against
 * what we made available (every request consumed). 0 or negative errno (printed).
 */
__attribute__((warn_unused_result)) int teardown_peer(struct bench *b);

/* Release what setup_peer() made (queues, job slots, the connection, the host file); safe after a
   failed or partial setup. */
void setup_free(struct bench *b);

#endif
