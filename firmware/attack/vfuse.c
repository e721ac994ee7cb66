/* vfuse.c: FUSE over virtio-fs (virtio 1.2 5.11) from the attack payloads: requests and proofs. */
#include "firmware/attack/vfuse.h"

#include "firmware/attack/rt.h"

#define FS_QSIZE 64

void vfs_open(struct vfs *f)
{
	struct dq qs[2];
	vdev_find(26 /* VIRTIO_ID_FS */, 0, &f->d);
	vdev_start(&f->d, 0, qs, 2, FS_QSIZE);
	f->hiprio = qs[0];
	f->rq = qs[1];
	f->hiprio.d = f->rq.d = &f->d;
	f->unique = 1;
}

uint32_t vfs_send(struct vfs *f, uint32_t opcode, uint64_t nodeid, const void *body, uint32_t blen,
		  const void *extra, uint32_t elen, void *out, uint32_t ocap, uint32_t hdr_len)
{
	uint32_t len = (uint32_t)sizeof(struct fuse_in_header) + blen + elen;
	uint8_t *req = rt_alloc(len, 8);
	struct fuse_in_header *h = (struct fuse_in_header *)req;
	h->len = hdr_len ? hdr_len : len;
	h->opcode = opcode;
	h->unique = f->unique++;
	h->nodeid = nodeid;
	memcpy(req + sizeof(*h), body, blen);
	memcpy(req + sizeof(*h) + blen, extra, elen);
	struct vbuf bufs[2] = { { req, len, false }, { out, ocap, true } };
	return dq_roundtrip(&f->rq, bufs, ocap ? 2 : 1);
}

int vfs_call(struct vfs *f, uint32_t opcode, uint64_t nodeid, const void *body, uint32_t blen,
	     const void *extra, uint32_t elen, void *out, uint32_t cap)
{
	uint64_t unique = f->unique;
	uint32_t used = vfs_send(f, opcode, nodeid, body, blen, extra, elen, out, cap, 0);
	const struct fuse_out_header *oh = out;
	CHECK(used >= sizeof(*oh), "reply shorter than a header", used);
	CHECK(oh->len == used, "reply length differs from used length", oh->len);
	CHECK(oh->unique == unique, "reply for another request", oh->unique);
	CHECK(oh->error <= 0 && oh->error > -4096, "reply error out of range", (uint32_t)oh->error);
	return oh->error;
}

void vfs_init(struct vfs *f)
{
	struct fuse_init_in in = { .major = FUSE_KERNEL_VERSION, .minor = 36,
				   .max_readahead = 0x20000,
				   .flags = FUSE_ASYNC_READ | FUSE_BIG_WRITES | FUSE_INIT_EXT |
					    FUSE_MAX_PAGES | FUSE_DO_READDIRPLUS };
	uint8_t *out = rt_alloc(256, 8);
	int err = vfs_call(f, FUSE_INIT, 0, &in, sizeof(in), 0, 0, out, 256);
	CHECK(err == 0, "INIT failed", -err);
	const struct fuse_init_out *io = (const void *)(out + sizeof(struct fuse_out_header));
	CHECK(io->major == FUSE_KERNEL_VERSION && io->minor == 36, "INIT version", io->minor);
}

int vfs_lookup(struct vfs *f, uint64_t parent, const char *name, struct fuse_entry_out *e)
{
	uint8_t *out = rt_alloc(256, 8);
	int err = vfs_call(f, FUSE_LOOKUP, parent, 0, 0, name, (uint32_t)strlen(name) + 1, out, 256);
	if (!err && e)
		memcpy(e, out + sizeof(struct fuse_out_header), sizeof(*e));
	return err;
}

uint64_t vfs_open_fh(struct vfs *f, uint64_t nodeid, bool dir)
{
	struct fuse_open_in in = { .flags = 0 /* O_RDONLY */ };
	uint8_t *out = rt_alloc(256, 8);
	int err = vfs_call(f, dir ? FUSE_OPENDIR : FUSE_OPEN, nodeid, &in, sizeof(in), 0, 0, out, 256);
	CHECK(err == 0, "OPEN failed", -err);
	return ((const struct fuse_open_out *)(out + sizeof(struct fuse_out_header)))->fh;
}

int vfs_read(struct vfs *f, uint64_t nodeid, uint64_t fh, uint64_t off, uint32_t size, void *buf)
{
	struct fuse_read_in in = { .fh = fh, .offset = off, .size = size };
	uint32_t cap = (uint32_t)sizeof(struct fuse_out_header) + size;
	uint8_t *out = rt_alloc(cap, 8);
	int err = vfs_call(f, FUSE_READ, nodeid, &in, sizeof(in), 0, 0, out, cap);
	if (err)
		return err;
	uint32_t n = ((const struct fuse_out_header *)out)->len - (uint32_t)sizeof(struct fuse_out_header);
	memcpy(buf, out + sizeof(struct fuse_out_header), n);
	return (int)n;
}

uint64_t vfs_prove_hello(struct vfs *f)
{
	struct fuse_entry_out e;
	vfs_init(f);
	CHECK(vfs_lookup(f, FUSE_ROOT_ID, "hello.txt", &e) == 0, "LOOKUP hello.txt failed", 0);
	CHECK(e.attr.size == sizeof(SHARE_HELLO) - 1, "hello.txt size", e.attr.size);
	uint64_t fh = vfs_open_fh(f, e.nodeid, false);
	char buf[64];
	int n = vfs_read(f, e.nodeid, fh, 0, sizeof(buf), buf);
	CHECK(n == sizeof(SHARE_HELLO) - 1 && !memcmp(buf, SHARE_HELLO, (size_t)n),
	      "READ of hello.txt returned something else", (uint64_t)n);
	return e.nodeid;
}

void vfs_still_works(struct vfs *f)
{
	struct fuse_entry_out e;
	CHECK(!(vreg(&f->d, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET),
	      "device unexpectedly needs reset", vreg(&f->d, VIRTIO_MMIO_STATUS));
	CHECK(vfs_lookup(f, FUSE_ROOT_ID, "hello.txt", &e) == 0, "LOOKUP after the attack", 0);
	uint8_t *out = rt_alloc(256, 8);
	struct fuse_getattr_in gi = { 0 };
	CHECK(vfs_call(f, FUSE_GETATTR, e.nodeid, &gi, sizeof(gi), 0, 0, out, 256) == 0,
	      "GETATTR after the attack", 0);
}
