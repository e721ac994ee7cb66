/* blk_req.c: parse a virtio-blk request chain into an action, validating every guest value once. */
#include "devices/blk/blk_req.h"

#include <endian.h>
#include <string.h>

/* 5.2.6: struct virtio_blk_req starts with le32 type, le32 reserved (ioprio), le64 sector. */
#define BLK_HDR_SIZE sizeof(struct virtio_blk_outhdr)

/* [sector, sector + sectors) inside the disk, written so that nothing can overflow. */
static bool blk_in_range(const struct blk_limits *lim, uint64_t sector, uint64_t sectors)
{
	return sector <= lim->capacity && sectors <= lim->capacity - sector;
}

static void blk_fail(struct blk_req *out, uint8_t status)
{
	out->action = BLK_ACT_STATUS;
	out->status = status;
}

static void blk_parse_rw(const struct vq_chain *chain, const struct blk_limits *lim,
			 uint64_t sector, struct blk_req *out)
{
	bool in = out->type == VIRTIO_BLK_T_IN;
	/* Data lies in one direction only; the status byte is the writer's last byte. */
	uint64_t data = in ? chain->writable_len - 1 : chain->readable_len - BLK_HDR_SIZE;
	bool wrong_dir = in ? chain->readable_len != BLK_HDR_SIZE : chain->writable_len != 1;
	if (wrong_dir || data % BLK_SECTOR_SIZE)
		return blk_fail(out, VIRTIO_BLK_S_IOERR);
	if (!in && lim->readonly)
		return blk_fail(out, VIRTIO_BLK_S_IOERR);
	if (!blk_in_range(lim, sector, data / BLK_SECTOR_SIZE))
		return blk_fail(out, VIRTIO_BLK_S_IOERR);
	out->action = in ? BLK_ACT_READ : BLK_ACT_WRITE;
	out->offset = sector * BLK_SECTOR_SIZE; /* sector <= capacity: cannot overflow */
	out->len = data;
}

static void blk_parse_range(const struct vq_chain *chain, const struct blk_limits *lim,
			    struct blk_req *out)
{
	bool discard = out->type == VIRTIO_BLK_T_DISCARD;
	if (chain->writable_len != 1 ||
	    vq_reader_remaining(&out->rd) != sizeof(struct virtio_blk_discard_write_zeroes))
		return blk_fail(out, VIRTIO_BLK_S_IOERR);
	struct virtio_blk_discard_write_zeroes seg;
	if (vq_reader_read(&out->rd, &seg, sizeof(seg)))
		return blk_fail(out, VIRTIO_BLK_S_IOERR);
	uint64_t sector = le64toh(seg.sector);
	uint32_t sectors = le32toh(seg.num_sectors);
	uint32_t flags = le32toh(seg.flags);
	/* 5.2.6.2: UNMAP on discard, or any reserved flag, is UNSUPP. */
	if (flags & ~(uint32_t)VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP ||
	    (discard && (flags & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP)))
		return blk_fail(out, VIRTIO_BLK_S_UNSUPP);
	if (lim->readonly)
		return blk_fail(out, VIRTIO_BLK_S_IOERR);
	uint32_t max = discard ? lim->max_discard_sectors : lim->max_zeroes_sectors;
	if (sectors > max || !blk_in_range(lim, sector, sectors))
		return blk_fail(out, VIRTIO_BLK_S_IOERR);
	out->action = discard ? BLK_ACT_DISCARD : BLK_ACT_WRITE_ZEROES;
	out->offset = sector * BLK_SECTOR_SIZE;
	out->len = (uint64_t)sectors * BLK_SECTOR_SIZE;
	out->unmap = flags & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP;
}

void blk_req_parse(const struct vq_chain *chain, const struct blk_limits *lim, struct blk_req *out)
{
	memset(out, 0, sizeof(*out));
	vq_reader_init(&out->rd, chain);
	vq_writer_init(&out->wr, chain);
	if (chain->writable_len == 0) {
		out->action = BLK_ACT_NO_STATUS;
		return;
	}
	struct virtio_blk_outhdr hdr;
	if (vq_reader_read(&out->rd, &hdr, sizeof(hdr)))
		return blk_fail(out, VIRTIO_BLK_S_IOERR);
	out->type = le32toh(hdr.type);
	uint64_t sector = le64toh(hdr.sector);

	switch (out->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		return blk_parse_rw(chain, lim, sector, out);
	case VIRTIO_BLK_T_FLUSH:
		if (chain->readable_len != BLK_HDR_SIZE)
			return blk_fail(out, VIRTIO_BLK_S_IOERR);
		out->action = BLK_ACT_FLUSH;
		return;
	case VIRTIO_BLK_T_GET_ID:
		if (chain->readable_len != BLK_HDR_SIZE)
			return blk_fail(out, VIRTIO_BLK_S_IOERR);
		out->action = BLK_ACT_GET_ID;
		out->len = chain->writable_len - 1 < VIRTIO_BLK_ID_BYTES ? chain->writable_len - 1
									 : VIRTIO_BLK_ID_BYTES;
		return;
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		return blk_parse_range(chain, lim, out);
	default:
		return blk_fail(out, VIRTIO_BLK_S_UNSUPP);
	}
}

uint32_t blk_req_status(struct blk_req *req, uint8_t status, uint32_t data_written)
{
	size_t left = vq_writer_remaining(&req->wr);
	if (left == 0)
		return data_written; /* BLK_ACT_NO_STATUS: the caller must not get here */
	if (vq_writer_skip(&req->wr, left - 1) || vq_writer_write(&req->wr, &status, 1))
		return data_written;
	return data_written + 1;
}
