/* workload.h: what each slot asks next, and what each reply must be. */
#ifndef BENCH_WORKLOAD_H
#define BENCH_WORKLOAD_H

#include "tests/bench/device/bench.h"

/*
 * wl_next: fill s->op with the slot's next request (random or sequential I/O on the data file, or the
 * next step of a metadata chain: LOOKUP -> GETATTR -> OPEN -> READ -> RELEASE, or CREATE -> WRITE ->
 * SETATTR -> RELEASE -> FORGET), poisoning read buffers and filling write buffers with the pattern.
 * wl_done: check s->res against what the request must have produced (no error, full length, the
 * pattern on reads, the attributes asked for) and advance the slot's chain. A wrong reply fails the
 * job (job_fail) and the run.
 * Both run on the job's thread; the state they use is the slot's and the job's.
 */
void wl_next(struct job *j, struct slot *s);
__attribute__((warn_unused_result)) int wl_done(struct job *j, struct slot *s);

/* Name of file number i of the tree (under directory wl_tree_dir(i)), into buf of OP_NAME_MAX. */
void wl_tree_name(char *buf, uint32_t i);
uint32_t wl_tree_dir(uint32_t i);
void wl_tree_dir_name(char *buf, uint32_t d);

#endif
