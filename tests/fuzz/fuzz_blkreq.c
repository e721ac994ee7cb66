/* fuzz_blkreq.c: libFuzzer target: the virtio-blk request parser on chains made of fuzz bytes. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "devices/blk/blk_req.h"
#include "tests/fuzz/fuzz_ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Byte 0: read-only, indirect, huge capacity; bytes 1-2: capacity in sectors; then a ring
 * (fuzz_ring.h) whose data area holds the headers, segments and payloads. Every popped chain is
 * parsed, then served the way blk.c does, minus the file.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_ring f;
	if (size < 3)
		return 0;
	uint64_t features = (data[0] & 2) ? 1ULL << VIRTIO_RING_F_INDIRECT_DESC : 0;
	if (fuzz_ring_setup(&f, data + 3, size - 3, features, 0) < 0)
		return 0;
	struct virtq *vqp = &f.vq;
	struct blk_limits lim = {
		.capacity = (uint64_t)data[1] | (uint64_t)data[2] << 8,
		.readonly = data[0] & 1,
		.max_discard_sectors = 64,
		.max_zeroes_sectors = 64,
	};
	if (data[0] & 4)
		lim.capacity = UINT64_MAX / 512;

	struct iovec iov[FZ_QSIZE], io_iov[FZ_QSIZE];
	struct vq_chain chain = { .iov = iov };
	for (int round = 0; round < 2 * FZ_QSIZE; round++) {
		int r = vq_pop(vqp, &chain);
		if (r == 0 || r == -EPROTO)
			break;
		if (r < 0)
			continue;
		struct blk_req req;
		blk_req_parse(&chain, &lim, &req);
		unsigned int nr = 0;
		uint32_t data_written = 0;
		switch (req.action) {
		case BLK_ACT_NO_STATUS:
			continue;
		case BLK_ACT_READ:
			if (req.offset + req.len < req.offset ||
			    req.offset + req.len > lim.capacity * BLK_SECTOR_SIZE)
				__builtin_trap(); /* the range check let something out */
			if (vq_writer_iov(&req.wr, req.len, io_iov, FZ_QSIZE, &nr))
				__builtin_trap();
			data_written = (uint32_t)req.len;
			break;
		case BLK_ACT_WRITE:
			if (req.offset + req.len > lim.capacity * BLK_SECTOR_SIZE || lim.readonly)
				__builtin_trap();
			if (vq_reader_iov(&req.rd, req.len, io_iov, FZ_QSIZE, &nr))
				__builtin_trap();
			break;
		case BLK_ACT_GET_ID:
			if (req.len > VIRTIO_BLK_ID_BYTES ||
			    vq_writer_write(&req.wr, "fuzz-id-0123456789ab", req.len))
				__builtin_trap();
			data_written = (uint32_t)req.len;
			break;
		case BLK_ACT_DISCARD:
		case BLK_ACT_WRITE_ZEROES:
			if (req.offset + req.len > lim.capacity * BLK_SECTOR_SIZE || lim.readonly)
				__builtin_trap();
			break;
		default:
			break;
		}
		uint32_t used = blk_req_status(&req, VIRTIO_BLK_S_OK, data_written);
		if (used != data_written + 1)
			__builtin_trap();
		vq_push(vqp, chain.head, used);
	}
	vq_publish(vqp);
	return 0;
}
