/* fuzz_virtq.c: libFuzzer target: the chain walker and the Reader/Writer over a ring made of fuzz bytes. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tests/fuzz/fuzz_ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Byte 0 picks the ring features and the hop budget; the rest is a ring (fuzz_ring.h). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fuzz_ring f;
	if (size < 1)
		return 0;
	uint64_t features = 0;
	if (data[0] & 1)
		features |= 1ULL << VIRTIO_RING_F_EVENT_IDX;
	if (data[0] & 2)
		features |= 1ULL << VIRTIO_RING_F_INDIRECT_DESC;
	if (fuzz_ring_setup(&f, data + 1, size - 1, features, (data[0] >> 2) % (FZ_QSIZE + 2)) < 0)
		return 0;
	struct virtq *vqp = &f.vq;
	struct iovec iov[FZ_QSIZE];
	struct vq_chain chain = { .iov = iov };
	for (int round = 0; round < 2 * FZ_QSIZE; round++) {
		int r = vq_pop(vqp, &chain);
		if (r == 0 || r == -EPROTO)
			break;
		if (r < 0) {
			vq_push(vqp, chain.head, 0);
			continue;
		}
		struct vq_reader rd;
		struct vq_writer wr;
		vq_reader_init(&rd, &chain);
		vq_writer_init(&wr, &chain);
		uint8_t buf[64];
		struct iovec out[FZ_QSIZE];
		unsigned int nr;
		/* Drain the reader in uneven pieces, alternating copies and iov hand-outs. */
		for (size_t step = 1; vq_reader_remaining(&rd); step = step * 3 % 61 + 1) {
			size_t n =
				step < vq_reader_remaining(&rd) ? step : vq_reader_remaining(&rd);
			if (step & 1) {
				if (vq_reader_read(&rd, buf, n))
					__builtin_trap();
			} else if (vq_reader_iov(&rd, n, out, FZ_QSIZE, &nr) == 0) {
				if (vq_iov_len(out, nr) != n)
					__builtin_trap();
			} else if (vq_reader_skip(&rd, n)) {
				__builtin_trap();
			}
		}
		memset(buf, 0xa5, sizeof(buf));
		while (vq_writer_remaining(&wr)) {
			size_t n = vq_writer_remaining(&wr) < 17 ? vq_writer_remaining(&wr) : 17;
			if (vq_writer_write(&wr, buf, n))
				__builtin_trap();
		}
		if (wr.written != chain.writable_len)
			__builtin_trap();
		vq_push(vqp, chain.head, (uint32_t)wr.written);
		if (round & 1) {
			vq_publish(vqp);
			(void)vq_should_notify(vqp);
			(void)vq_enable_kicks(vqp, true);
		}
	}
	vq_publish(vqp);
	(void)vq_should_notify(vqp);
	return 0;
}
