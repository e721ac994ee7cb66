/* proto.h: a device protocol (FUSE for virtio-fs, virtio-blk requests): op <-> buffers in guest memory. */
#ifndef BENCH_PROTO_H
#define BENCH_PROTO_H

#include "tests/bench/device/bench.h"

/*
 * encode: write slot->op as the device expects it into the slot's header/data buffers and describe
 * the chain (readable segments first) in segs (room for DVQ_SLOT_DESCS); -EOPNOTSUPP for an op the
 * protocol has no request for.
 * decode: check the device's reply (the used length it reported and what it wrote) and fill
 * slot->res. A malformed reply (wrong unique, lengths that do not add up, an unknown status) is a
 * broken back-end: -EPROTO with the reason in the job's error; an error the device reports for the
 * request itself (FUSE error, blk IOERR) is res.err, for the workload to judge.
 * Both run on the job's thread.
 */
struct proto_ops {
	const char *name;
	int (*encode)(struct job *j, struct slot *s, struct dvq_seg *segs, unsigned int *n);
	int (*decode)(struct job *j, struct slot *s, uint32_t used_len);
};

extern const struct proto_ops fuse_proto;
extern const struct proto_ops blk_proto;

#endif
