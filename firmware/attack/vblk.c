/* vblk.c: virtio-blk requests (virtio 1.x 5.2.6) for the attack payloads. */
#include "firmware/attack/vblk.h"

#include "firmware/attack/rt.h"

void vblk_restart(struct vblk *b, uint16_t size)
{
	uint64_t offered = vdev_features(&b->d);
	uint64_t want = (1ULL << VIRTIO_RING_F_INDIRECT_DESC) | (1ULL << VIRTIO_BLK_F_FLUSH) |
			(1ULL << VIRTIO_BLK_F_DISCARD) | (1ULL << VIRTIO_BLK_F_WRITE_ZEROES) |
			(1ULL << VIRTIO_BLK_F_RO);
	vdev_start(&b->d, offered & want, &b->q, 1, size);
}

void vblk_open(struct vblk *b, unsigned int nth, uint16_t size)
{
	vdev_find(2 /* VIRTIO_ID_BLOCK */, nth, &b->d);
	b->ro = vdev_features(&b->d) & (1ULL << VIRTIO_BLK_F_RO);
	vblk_restart(b, size);
	b->capacity = (uint64_t)vreg(&b->d, VIRTIO_MMIO_CONFIG) |
		      (uint64_t)vreg(&b->d, VIRTIO_MMIO_CONFIG + 4) << 32;
	CHECK(b->capacity == IMG_SECTORS, "capacity is not the image's", b->capacity);
}

uint8_t vblk_req(struct vblk *b, uint32_t type, uint64_t sector, void *data, uint32_t len,
		 uint32_t *used)
{
	struct virtio_blk_outhdr *h = rt_alloc(sizeof(*h), 16);
	uint8_t *status = rt_alloc(1, 1);
	h->type = type;
	h->sector = sector;
	*status = VBLK_NO_STATUS;
	struct vbuf bufs[3] = { { h, sizeof(*h), false } };
	unsigned int n = 1;
	if (len)
		bufs[n++] = (struct vbuf){ data, len, type == VIRTIO_BLK_T_IN ||
						      type == VIRTIO_BLK_T_GET_ID };
	bufs[n++] = (struct vbuf){ status, 1, true };
	uint32_t u = dq_roundtrip(&b->q, bufs, n);
	if (used)
		*used = u;
	return *(volatile uint8_t *)status;
}

void vblk_expect_image(struct vblk *b, uint64_t sector, unsigned int n)
{
	uint8_t *buf = rt_alloc(512u * n, 512);
	uint32_t used;
	uint8_t st = vblk_req(b, VIRTIO_BLK_T_IN, sector, buf, 512u * n, &used);
	CHECK(st == VIRTIO_BLK_S_OK, "legitimate read failed", st);
	CHECK(used == 512u * n + 1, "read used length", used);
	for (uint32_t i = 0; i < 512u * n; i++)
		CHECK(buf[i] == img_byte(sector * 512 + i), "read returned wrong bytes at", i);
}

uint8_t vblk_range(struct vblk *b, uint32_t type, uint64_t sector, uint32_t n, uint32_t flags)
{
	struct virtio_blk_discard_write_zeroes *seg = rt_alloc(sizeof(*seg), 16);
	seg->sector = sector;
	seg->num_sectors = n;
	seg->flags = flags;
	struct virtio_blk_outhdr *h = rt_alloc(sizeof(*h), 16);
	uint8_t *status = rt_alloc(1, 1);
	h->type = type;
	*status = VBLK_NO_STATUS;
	struct vbuf bufs[3] = { { h, sizeof(*h), false }, { seg, sizeof(*seg), false },
				{ status, 1, true } };
	dq_roundtrip(&b->q, bufs, 3);
	return *(volatile uint8_t *)status;
}

void vblk_still_works(struct vblk *b)
{
	CHECK(!(vreg(&b->d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET),
	      "device unexpectedly needs reset", vreg(&b->d, VIRTIO_MMIO_STATUS));
	vblk_expect_image(b, 3, 2);
}

void vblk_expect_needs_reset(struct vblk *b, uint16_t size)
{
	CHECK(vdev_wait_status(&b->d, VIRTIO_CONFIG_S_NEEDS_RESET, 5000),
	      "no NEEDS_RESET after a driver bug", vreg(&b->d, VIRTIO_MMIO_STATUS));
	vblk_restart(b, size);
	vblk_still_works(b);
}
