/* case_fuse.c: attacks on the FUSE server behind virtio-fs: decoding, names, handles, sizes. */
#include "firmware/attack/cases.h"
#include "firmware/attack/rt.h"
#include "firmware/attack/vfuse.h"

#define EIO 5
#define EBADF 9
#define EINVAL 22
#define ENOSYS 38
#define ESTALE 116
#define ENAMETOOLONG 36
#define EPROTO 71
#define HDR ((uint32_t)sizeof(struct fuse_out_header))

static void open_fs(struct vfs *f)
{
	vfs_open(f);
	vfs_prove_hello(f);
}

/* open_fs, then hello.txt looked up (*node) and opened read-only: returns the fh. */
static uint64_t open_hello(struct vfs *f, uint64_t *node)
{
	struct fuse_entry_out e;
	open_fs(f);
	CHECK(vfs_lookup(f, FUSE_ROOT_ID, "hello.txt", &e) == 0, "LOOKUP hello.txt", 0);
	*node = e.nodeid;
	return vfs_open_fh(f, e.nodeid, false);
}

static uint8_t *reply(void)
{
	return rt_alloc(4096 + HDR, 8);
}

void case_fuse_before_init(void)
{
	struct vfs f;
	vfs_open(&f);
	struct fuse_getattr_in gi = { 0 };
	CHECK(vfs_call(&f, FUSE_GETATTR, FUSE_ROOT_ID, &gi, sizeof(gi), 0, 0, reply(), 256) == -EIO,
	      "GETATTR before INIT", 0);
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "hello.txt", NULL) == -EIO, "LOOKUP before INIT", 0);
	struct fuse_read_in ri = { .fh = 0, .size = 100 };
	int err = vfs_call(&f, FUSE_READ, FUSE_ROOT_ID, &ri, sizeof(ri), 0, 0, reply(), 256);
	CHECK(err == -EIO || err == -EBADF, "READ before INIT", -err);
	struct fuse_open_in oi = { 0 };
	CHECK(vfs_call(&f, FUSE_OPENDIR, FUSE_ROOT_ID, &oi, sizeof(oi), 0, 0, reply(), 256) == -EIO,
	      "OPENDIR before INIT", 0);
	vfs_prove_hello(&f);
	vfs_still_works(&f);
}

/* fuse_in_header.len that disagrees with the bytes the chain carries. */
void case_fuse_lying_len(void)
{
	struct vfs f;
	open_fs(&f);
	static const uint32_t deltas[] = { 1, 0xffffffffu, 4096, 0x80000000u };
	for (unsigned int i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
		uint8_t *out = reply();
		uint64_t unique = f.unique;
		uint32_t used = vfs_send(&f, FUSE_LOOKUP, FUSE_ROOT_ID, 0, 0, "hello.txt", 10, out,
					 256, 40 + 10 + deltas[i]);
		const struct fuse_out_header *oh = (const void *)out;
		CHECK(used == HDR && oh->error == -EINVAL && oh->unique == unique,
		      "a lying length was not refused", i);
	}
	static const uint32_t lens[] = { 0, 1, 39, 40, 49 };
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint8_t *out = reply();
		uint32_t used = vfs_send(&f, FUSE_LOOKUP, FUSE_ROOT_ID, 0, 0, "hello.txt", 10, out,
					 256, lens[i] ? lens[i] : 0xffffffffu);
		CHECK(used == HDR && ((struct fuse_out_header *)out)->error == -EINVAL,
		      "a short length was not refused", lens[i]);
	}
	vfs_still_works(&f);
}

void case_fuse_name_no_nul(void)
{
	struct vfs f;
	open_fs(&f);
	CHECK(vfs_call(&f, FUSE_LOOKUP, FUSE_ROOT_ID, 0, 0, "hello.txt", 9, reply(), 256) == -EINVAL,
	      "a name without NUL", 0);
	/* A name whose NUL is not at the end (trailing bytes after it) and an empty request body. */
	/* Bytes after the NUL: either answer will do, as long as it is a well-formed reply. */
	(void)vfs_call(&f, FUSE_LOOKUP, FUSE_ROOT_ID, 0, 0, "hello.txt\0junk", 14, reply(), 256);
	CHECK(vfs_call(&f, FUSE_LOOKUP, FUSE_ROOT_ID, 0, 0, 0, 0, reply(), 256) == -EINVAL,
	      "a LOOKUP without a name", 0);
	struct fuse_mkdir_in mi = { .mode = 0755 };
	CHECK(vfs_call(&f, FUSE_MKDIR, FUSE_ROOT_ID, &mi, sizeof(mi), "newdir", 6, reply(), 256) ==
		      -EINVAL,
	      "a MKDIR name without NUL", 0);
	vfs_still_works(&f);
}

/* Names that are not one component: with '/', ".", "..", empty. */
void case_fuse_name_dots_slashes(void)
{
	struct vfs f;
	open_fs(&f);
	static const char *names[] = { "dir/inner.txt", "/", "..", ".", "", "../outside",
				       "../outside/canary.txt", "dir/..", "/etc/passwd" };
	struct fuse_entry_out e;
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "dir", &e) == 0, "LOOKUP dir", 0);
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int err = vfs_lookup(&f, FUSE_ROOT_ID, names[i], NULL);
		CHECK(err == -EINVAL, "a LOOKUP of a path was not EINVAL", i);
		err = vfs_lookup(&f, e.nodeid, names[i], NULL);
		CHECK(err == -EINVAL, "a LOOKUP of a path below dir was not EINVAL", i);
		struct fuse_mkdir_in mi = { .mode = 0755 };
		err = vfs_call(&f, FUSE_MKDIR, FUSE_ROOT_ID, &mi, sizeof(mi), names[i],
			       (uint32_t)strlen(names[i]) + 1, reply(), 256);
		CHECK(err != 0, "MKDIR of a path succeeded", i);
		struct fuse_create_in ci = { .flags = 0101 /* O_WRONLY|O_CREAT */, .mode = 0644 };
		err = vfs_call(&f, FUSE_CREATE, FUSE_ROOT_ID, &ci, sizeof(ci), names[i],
			       (uint32_t)strlen(names[i]) + 1, reply(), 512);
		CHECK(err != 0, "CREATE of a path succeeded", i);
	}
	vfs_still_works(&f);
}

/* A symlink out of the share: it may be looked up and read as a link, never followed. */
void case_fuse_symlink_escape(void)
{
	struct vfs f;
	open_fs(&f);
	struct fuse_entry_out e;
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "link_out", &e) == 0, "LOOKUP link_out", 0);
	CHECK((e.attr.mode & 0170000) == 0120000, "link_out is not a symlink", e.attr.mode);
	uint8_t *out = reply();
	CHECK(vfs_call(&f, FUSE_READLINK, e.nodeid, 0, 0, 0, 0, out, 256) == 0, "READLINK", 0);
	CHECK(!memcmp(out + HDR, "../outside/canary.txt", 21), "READLINK text", out[HDR]);
	struct fuse_open_in oi = { .flags = 0 };
	CHECK(vfs_call(&f, FUSE_OPEN, e.nodeid, &oi, sizeof(oi), 0, 0, reply(), 256) != 0,
	      "OPEN of a symlink out of the share succeeded", 0);
	CHECK(vfs_lookup(&f, e.nodeid, "canary.txt", NULL) != 0, "LOOKUP through a symlink", 0);
	struct fuse_getxattr_in gx = { .size = 256 };
	vfs_call(&f, FUSE_GETXATTR, e.nodeid, &gx, sizeof(gx), "user.x", 7, reply(), 512);
	/* A new symlink out of the share (its text is just text) cannot be followed either. */
	struct fuse_entry_out s;
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "scratch", &s) == 0, "LOOKUP scratch", 0);
	char both[64] = "evil\0../../outside/canary.txt";
	CHECK(vfs_call(&f, FUSE_SYMLINK, s.nodeid, 0, 0, both, 5 + 26, reply(), 512) == 0,
	      "SYMLINK in scratch", 0);
	CHECK(vfs_lookup(&f, s.nodeid, "evil", &e) == 0, "LOOKUP the new link", 0);
	CHECK(vfs_call(&f, FUSE_OPEN, e.nodeid, &oi, sizeof(oi), 0, 0, reply(), 256) != 0,
	      "OPEN of a new symlink out of the share succeeded", 0);
	vfs_still_works(&f);
}

/* Never handed out: nodeids count up from 2, fhs are generation << 32 | slot. */
static const uint64_t forged_ids[] = { 0, 1000, 0xdeadbeef, 0x100000, ~0ULL, 1ULL << 63,
				       0x7fffffffffffULL };

void case_fuse_forged_nodeid(void)
{
	struct vfs f;
	open_fs(&f);
	for (unsigned int i = 0; i < sizeof(forged_ids) / sizeof(forged_ids[0]); i++) {
		uint64_t id = forged_ids[i];
		struct fuse_getattr_in gi = { 0 };
		CHECK(vfs_call(&f, FUSE_GETATTR, id, &gi, sizeof(gi), 0, 0, reply(), 256) == -ESTALE,
		      "GETATTR of a forged nodeid", i);
		CHECK(vfs_lookup(&f, id, "hello.txt", NULL) == -ESTALE, "LOOKUP under a forged nodeid",
		      i);
		struct fuse_open_in oi = { 0 };
		CHECK(vfs_call(&f, FUSE_OPEN, id, &oi, sizeof(oi), 0, 0, reply(), 256) == -ESTALE,
		      "OPEN of a forged nodeid", i);
		struct fuse_setattr_in si = { .valid = FATTR_MODE, .mode = 0777 };
		CHECK(vfs_call(&f, FUSE_SETATTR, id, &si, sizeof(si), 0, 0, reply(), 256) == -ESTALE,
		      "SETATTR of a forged nodeid", i);
		CHECK(vfs_call(&f, FUSE_UNLINK, id, 0, 0, "hello.txt", 10, reply(), 256) == -ESTALE,
		      "UNLINK under a forged nodeid", i);
	}
	vfs_still_works(&f);
}

void case_fuse_forged_fh(void)
{
	struct vfs f;
	uint64_t node;
	uint64_t real = open_hello(&f, &node);
	/* Slots nobody opened, the real slot in other generations, values no slot can have. */
	const uint64_t forged_fhs[] = { real + 1, real + 7, real + (1ULL << 32), real + (5ULL << 32),
					0xdeadbeef00000000ULL, ~0ULL, 1ULL << 63 };
	for (unsigned int i = 0; i < sizeof(forged_fhs) / sizeof(forged_fhs[0]); i++) {
		uint64_t fh = forged_fhs[i];
		struct fuse_read_in ri = { .fh = fh, .size = 64 };
		CHECK(vfs_call(&f, FUSE_READ, node, &ri, sizeof(ri), 0, 0, reply(), 256) == -EBADF,
		      "READ of a forged fh", i);
		CHECK(vfs_call(&f, FUSE_READDIR, FUSE_ROOT_ID, &ri, sizeof(ri), 0, 0, reply(), 256) ==
			      -EBADF,
		      "READDIR of a forged fh", i);
		struct {
			struct fuse_write_in w;
			char data[8]; /* a multiple of 8: no padding after it */
		} wi = { .w = { .fh = fh, .size = 8 }, .data = "evilevil" };
		int err = vfs_call(&f, FUSE_WRITE, node, &wi, sizeof(wi), 0, 0, reply(), 256);
		CHECK(err == -EBADF, "WRITE of a forged fh", (uint64_t)-err << 8 | i);
		struct fuse_fsync_in fi = { .fh = fh };
		CHECK(vfs_call(&f, FUSE_FSYNC, node, &fi, sizeof(fi), 0, 0, reply(), 256) == -EBADF,
		      "FSYNC of a forged fh", i);
		struct fuse_flush_in fl = { .fh = fh };
		vfs_call(&f, FUSE_FLUSH, node, &fl, sizeof(fl), 0, 0, reply(), 256);
		struct fuse_release_in rl = { .fh = fh };
		vfs_call(&f, FUSE_RELEASE, node, &rl, sizeof(rl), 0, 0, reply(), 256);
		vfs_call(&f, FUSE_RELEASEDIR, node, &rl, sizeof(rl), 0, 0, reply(), 256);
		struct fuse_lseek_in li = { .fh = fh, .whence = 3 };
		CHECK(vfs_call(&f, FUSE_LSEEK, node, &li, sizeof(li), 0, 0, reply(), 256) != 0,
		      "LSEEK of a forged fh", i);
	}
	/* The real handle still reads: nothing above closed it. */
	char buf[64];
	CHECK(vfs_read(&f, node, real, 0, 64, buf) == sizeof(SHARE_HELLO) - 1, "READ of the real fh",
	      0);
	/* The real file handle used as a directory handle, and released twice. */
	struct fuse_read_in ri = { .fh = real, .size = 4096 };
	CHECK(vfs_call(&f, FUSE_READDIR, FUSE_ROOT_ID, &ri, sizeof(ri), 0, 0, reply(), 4096 + HDR) ==
		      -EBADF,
	      "READDIR on a file handle", 0);
	struct fuse_release_in rl = { .fh = real };
	CHECK(vfs_call(&f, FUSE_RELEASE, node, &rl, sizeof(rl), 0, 0, reply(), 256) == 0, "RELEASE",
	      0);
	vfs_call(&f, FUSE_RELEASE, node, &rl, sizeof(rl), 0, 0, reply(), 256);
	CHECK(vfs_read(&f, node, real, 0, 64, buf) == -EBADF, "READ after RELEASE", 0);
	vfs_still_works(&f);
}

void case_fuse_read_huge(void)
{
	struct vfs f;
	uint64_t node;
	uint64_t fh = open_hello(&f, &node);
	static const uint32_t sizes[] = { 0xffffffffu, 0x80000000u, (1u << 20) + 1, 1u << 24 };
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct fuse_read_in ri = { .fh = fh, .size = sizes[i] };
		uint8_t *out = reply();
		int err = vfs_call(&f, FUSE_READ, node, &ri, sizeof(ri), 0, 0, out, 64);
		uint32_t got = ((struct fuse_out_header *)out)->len - HDR;
		CHECK(err != 0 || (got == sizeof(SHARE_HELLO) - 1 && !memcmp(out + HDR, SHARE_HELLO, got)),
		      "a huge READ", i);
	}
	static const uint64_t offs[] = { 1ULL << 62, ~0ULL, ~0ULL - 10, 1ULL << 63 };
	for (unsigned int i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		struct fuse_read_in ri = { .fh = fh, .offset = offs[i], .size = 64 };
		uint8_t *out = reply();
		int err = vfs_call(&f, FUSE_READ, node, &ri, sizeof(ri), 0, 0, out, 256);
		CHECK(err != 0 || ((struct fuse_out_header *)out)->len == HDR, "a READ far past the end",
		      i);
	}
	vfs_still_works(&f);
}

/* CREATE in scratch/, WRITE legitimately, then sizes and offsets that lie or overflow. */
void case_fuse_write_huge(void)
{
	struct vfs f;
	open_fs(&f);
	struct fuse_entry_out s;
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "scratch", &s) == 0, "LOOKUP scratch", 0);
	struct fuse_create_in ci = { .flags = 02 /* O_RDWR */ | 0100 /* O_CREAT */, .mode = 0644 };
	uint8_t *out = reply();
	CHECK(vfs_call(&f, FUSE_CREATE, s.nodeid, &ci, sizeof(ci), "w", 2, out, 512) == 0, "CREATE", 0);
	const struct fuse_entry_out *ce = (const void *)(out + HDR);
	const struct fuse_open_out *co = (const void *)(out + HDR + sizeof(*ce));
	uint64_t node = ce->nodeid, fh = co->fh;
	struct {
		struct fuse_write_in w;
		char data[8];
	} wi = { .w = { .fh = fh, .size = 8 }, .data = "written!" };
	CHECK(vfs_call(&f, FUSE_WRITE, node, &wi, sizeof(wi), 0, 0, reply(), 256) == 0, "WRITE", 0);
	char back[16];
	CHECK(vfs_read(&f, node, fh, 0, 16, back) == 8 && !memcmp(back, "written!", 8), "read back",
	      0);
	static const uint32_t sizes[] = { 0xffffffffu, 9, 7, 1u << 21, 0x80000000u };
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		wi.w.size = sizes[i];
		CHECK(vfs_call(&f, FUSE_WRITE, node, &wi, sizeof(wi), 0, 0, reply(), 256) == -EINVAL,
		      "a WRITE whose size lies", i);
	}
	/* A WRITE larger than max_write, with every byte present. */
	uint32_t big = (1u << 20) + 4096;
	struct fuse_write_in *bw = rt_alloc(sizeof(*bw) + big, 8);
	*bw = (struct fuse_write_in){ .fh = fh, .size = big };
	CHECK(vfs_call(&f, FUSE_WRITE, node, bw, (uint32_t)sizeof(*bw) + big, 0, 0, reply(), 256) != 0,
	      "a WRITE beyond max_write", 0);
	static const uint64_t offs[] = { ~0ULL - 3, 1ULL << 63, ~0ULL };
	for (unsigned int i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		wi.w.size = 8;
		wi.w.offset = offs[i];
		CHECK(vfs_call(&f, FUSE_WRITE, node, &wi, sizeof(wi), 0, 0, reply(), 256) != 0,
		      "a WRITE at an overflowing offset", i);
	}
	vfs_still_works(&f);
}

/* READDIR(PLUS) of the root with huge sizes and offsets: only the share's names, never more. */
void case_fuse_readdir_huge(void)
{
	struct vfs f;
	open_fs(&f);
	uint64_t dh = vfs_open_fh(&f, FUSE_ROOT_ID, true);
	for (int plus = 0; plus < 2; plus++) {
		static const uint32_t sizes[] = { 0xffffffffu, 4096, 1, 0 };
		for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			struct fuse_read_in ri = { .fh = dh, .size = sizes[i] };
			uint8_t *out = reply();
			int err = vfs_call(&f, plus ? FUSE_READDIRPLUS : FUSE_READDIR, FUSE_ROOT_ID,
					   &ri, sizeof(ri), 0, 0, out, 4096 + HDR);
			/* An entry that cannot fit in 0 or 1 byte is EINVAL (an empty reply means EOF). */
			CHECK(err == 0 || (sizes[i] < 2 && err == -EINVAL), "READDIR failed", -err);
			if (err)
				continue;
			uint32_t len = ((struct fuse_out_header *)out)->len - HDR;
			CHECK(len <= sizes[i], "READDIR answered more than asked", len);
			/* No name from outside the share. */
			for (uint32_t k = 0; k + 6 <= len; k++)
				CHECK(memcmp(out + HDR + k, "canary", 6) && memcmp(out + HDR + k, "outsid", 6),
				      "READDIR shows a name from outside the share", k);
			if (sizes[i] == 4096)
				CHECK(len > 0, "READDIR of the root is empty", 0);
		}
		static const uint64_t offs[] = { ~0ULL, 1ULL << 63, 1000000 };
		for (unsigned int i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
			struct fuse_read_in ri = { .fh = dh, .offset = offs[i], .size = 4096 };
			uint8_t *out = reply();
			vfs_call(&f, plus ? FUSE_READDIRPLUS : FUSE_READDIR, FUSE_ROOT_ID, &ri,
				 sizeof(ri), 0, 0, out, 4096 + HDR);
		}
	}
	vfs_still_works(&f);
}

/* A request on the hiprio queue, answered by nobody (no reply buffer). */
static void hiprio_send(struct vfs *f, uint32_t opcode, uint64_t nodeid, const void *body,
			uint32_t blen)
{
	uint32_t len = 40 + blen;
	struct fuse_in_header *h = rt_alloc(len, 8);
	*h = (struct fuse_in_header){ .len = len, .opcode = opcode, .unique = f->unique++,
				      .nodeid = nodeid };
	memcpy(h + 1, body, blen);
	struct vbuf b = { h, len, false };
	uint32_t used = dq_roundtrip(&f->hiprio, &b, 1);
	CHECK(used == 0, "a FORGET was answered", used);
}

void case_fuse_batch_forget_huge(void)
{
	struct vfs f;
	open_fs(&f);
	struct {
		struct fuse_batch_forget_in in;
		struct fuse_forget_one one[2];
	} bf = { .in = { .count = 0xffffffffu },
		 .one = { { .nodeid = FUSE_ROOT_ID, .nlookup = ~0ULL }, { .nodeid = 2, .nlookup = 1 } } };
	hiprio_send(&f, FUSE_BATCH_FORGET, 0, &bf, sizeof(bf));
	bf.in.count = 0x10000000u;
	hiprio_send(&f, FUSE_BATCH_FORGET, 0, &bf, sizeof(bf));
	/* Well-formed, but forgetting the root and forged nodeids with huge counts. */
	bf.in.count = 2;
	bf.one[1].nodeid = 0xdeadbeef;
	hiprio_send(&f, FUSE_BATCH_FORGET, 0, &bf, sizeof(bf));
	struct fuse_forget_in fo = { .nlookup = ~0ULL };
	hiprio_send(&f, FUSE_FORGET, FUSE_ROOT_ID, &fo, sizeof(fo));
	hiprio_send(&f, FUSE_FORGET, ~0ULL, &fo, sizeof(fo));
	/* Forget hello.txt entirely, then look it up again. */
	struct fuse_entry_out e;
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "hello.txt", &e) == 0, "LOOKUP", 0);
	hiprio_send(&f, FUSE_FORGET, e.nodeid, &fo, sizeof(fo));
	struct fuse_interrupt_in ii = { .unique = 12345 };
	hiprio_send(&f, FUSE_INTERRUPT, 0, &ii, sizeof(ii));
	/* The root survives every forget. */
	vfs_still_works(&f);
	vfs_prove_hello(&f);
}

/* Replies that do not fit: a 1-byte reply buffer, and no reply buffer at all. */
void case_fuse_reply_1byte(void)
{
	struct vfs f;
	open_fs(&f);
	uint64_t dh = vfs_open_fh(&f, FUSE_ROOT_ID, true);
	struct fuse_entry_out e;
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "hello.txt", &e) == 0, "LOOKUP", 0);
	uint64_t fh = vfs_open_fh(&f, e.nodeid, false);
	struct fuse_read_in ri = { .fh = fh, .size = 64 };
	struct fuse_read_in di = { .fh = dh, .size = 4096 };
	struct fuse_getattr_in gi = { 0 };
	for (uint32_t cap = 0; cap < 3; cap++) {
		uint8_t *out = rt_alloc(16, 8);
		memset(out, 0x99, 16);
		uint32_t u1 = vfs_send(&f, FUSE_LOOKUP, FUSE_ROOT_ID, 0, 0, "hello.txt", 10, out, cap, 0);
		uint32_t u2 = vfs_send(&f, FUSE_GETATTR, e.nodeid, &gi, sizeof(gi), 0, 0, out, cap, 0);
		uint32_t u3 = vfs_send(&f, FUSE_READ, e.nodeid, &ri, sizeof(ri), 0, 0, out, cap, 0);
		uint32_t u4 = vfs_send(&f, FUSE_READDIR, FUSE_ROOT_ID, &di, sizeof(di), 0, 0, out, cap,
				       0);
		uint32_t u5 = vfs_send(&f, 9999, FUSE_ROOT_ID, 0, 0, 0, 0, out, cap, 0);
		CHECK((u1 | u2 | u3 | u4 | u5) == 0, "a reply was reported in a buffer too small", cap);
		for (int i = (int)cap; i < 16; i++)
			CHECK(out[i] == 0x99, "a reply was written past its buffer at", i);
	}
	/* The LOOKUPs whose replies were lost still counted: forget them, as a driver would. */
	vfs_still_works(&f);
	char buf[64];
	CHECK(vfs_read(&f, e.nodeid, fh, 0, 64, buf) == sizeof(SHARE_HELLO) - 1, "READ after", 0);
}

/* Requests too short to hold a header. */
void case_fuse_short_request(void)
{
	struct vfs f;
	open_fs(&f);
	static const uint32_t lens[] = { 1, 8, 39 };
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct fuse_in_header *h = rt_alloc(64, 8);
		*h = (struct fuse_in_header){ .len = lens[i], .opcode = FUSE_LOOKUP, .unique = 77,
					      .nodeid = 1 };
		uint8_t *out = rt_alloc(256, 8);
		struct vbuf bufs[2] = { { h, lens[i], false }, { out, 256, true } };
		uint32_t used = dq_roundtrip(&f.rq, bufs, 2);
		CHECK(used == 0, "a request without a whole header was answered", used);
	}
	/* A request with no readable byte at all. */
	uint8_t *out = rt_alloc(256, 8);
	struct vbuf w = { out, 256, true };
	CHECK(dq_roundtrip(&f.rq, &w, 1) == 0, "a request of nothing was answered", 0);
	vfs_still_works(&f);
}

void case_fuse_unknown_opcode(void)
{
	struct vfs f;
	open_fs(&f);
	static const uint32_t ops[] = { 0, 9999, 0xffffffffu, 54, 100, 4096 };
	for (unsigned int i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		uint8_t body[64] = { 0 };
		int err = vfs_call(&f, ops[i], FUSE_ROOT_ID, body, sizeof(body), 0, 0, reply(), 256);
		CHECK(err == -ENOSYS, "an unknown opcode was not ENOSYS", ops[i]);
	}
	vfs_still_works(&f);
}

/* INIT with versions we cannot speak, twice, and with a short body. */
void case_fuse_init_bad(void)
{
	struct vfs f;
	vfs_open(&f);
	struct fuse_init_in in = { .major = 6, .minor = 99 };
	CHECK(vfs_call(&f, FUSE_INIT, 0, &in, sizeof(in), 0, 0, reply(), 256) == -EPROTO,
	      "INIT major 6", 0);
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "hello.txt", NULL) == -EIO, "LOOKUP after a failed INIT",
	      0);
	in.major = 8;
	uint8_t *out = reply();
	CHECK(vfs_call(&f, FUSE_INIT, 0, &in, sizeof(in), 0, 0, out, 256) == 0, "INIT major 8", 0);
	CHECK(((struct fuse_init_out *)(out + HDR))->major == 7, "INIT major 8 answer", 0);
	in.major = 0xffffffffu;
	vfs_call(&f, FUSE_INIT, 0, &in, sizeof(in), 0, 0, reply(), 256);
	CHECK(vfs_call(&f, FUSE_INIT, 0, &in, 8, 0, 0, reply(), 256) == -EINVAL, "INIT of 8 bytes", 0);
	vfs_prove_hello(&f);
	/* INIT again on a live session. */
	vfs_prove_hello(&f);
	vfs_still_works(&f);
}

/* DESTROY ends the session: nodeids and handles die with it; INIT starts a new one. */
void case_fuse_destroy_reinit(void)
{
	struct vfs f;
	uint64_t node;
	uint64_t fh = open_hello(&f, &node);
	CHECK(vfs_call(&f, FUSE_DESTROY, 0, 0, 0, 0, 0, reply(), 256) == 0, "DESTROY", 0);
	struct fuse_getattr_in gi = { 0 };
	CHECK(vfs_call(&f, FUSE_GETATTR, FUSE_ROOT_ID, &gi, sizeof(gi), 0, 0, reply(), 256) == -EIO,
	      "GETATTR after DESTROY", 0);
	vfs_prove_hello(&f);
	char buf[64];
	CHECK(vfs_read(&f, node, fh, 0, 64, buf) == -EBADF, "a handle survived DESTROY", 0);
	vfs_still_works(&f);
}

void case_fuse_long_names(void)
{
	struct vfs f;
	open_fs(&f);
	static char name[5000];
	static const uint32_t lens[] = { 256, 300, 4095, 4999 };
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(name, 'a', lens[i]);
		name[lens[i]] = 0;
		int err = vfs_lookup(&f, FUSE_ROOT_ID, name, NULL);
		CHECK(err == -ENAMETOOLONG || err == -EINVAL, "a LOOKUP of a long name", lens[i]);
		struct fuse_getxattr_in gx = { .size = 64 };
		err = vfs_call(&f, FUSE_GETXATTR, FUSE_ROOT_ID, &gx, sizeof(gx), name, lens[i] + 1,
			       reply(), 256);
		CHECK(err != 0, "a GETXATTR of a long name", lens[i]);
	}
	vfs_still_works(&f);
}

/* xattr requests whose sizes lie: bigger than the value, bigger than any reply. */
void case_fuse_xattr_sizes(void)
{
	struct vfs f;
	open_fs(&f);
	struct fuse_entry_out s;
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "scratch", &s) == 0, "LOOKUP scratch", 0);
	struct {
		struct fuse_setxattr_in in;
		char name_val[16];
	} sx = { .in = { .size = 0xffffffffu }, .name_val = "user.a\0value" };
	CHECK(vfs_call(&f, FUSE_SETXATTR, s.nodeid, &sx, sizeof(sx), 0, 0, reply(), 256) != 0,
	      "a SETXATTR whose size lies", 0);
	sx.in.size = 100;
	CHECK(vfs_call(&f, FUSE_SETXATTR, s.nodeid, &sx, sizeof(sx), 0, 0, reply(), 256) != 0,
	      "a SETXATTR whose value is short", 0);
	static const uint32_t sizes[] = { 0xffffffffu, 1u << 20, 1 };
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct fuse_getxattr_in gx = { .size = sizes[i] };
		uint8_t *out = reply();
		vfs_call(&f, FUSE_LISTXATTR, s.nodeid, &gx, sizeof(gx), 0, 0, out, 64);
		vfs_call(&f, FUSE_GETXATTR, s.nodeid, &gx, sizeof(gx), "user.a", 7, out, 64);
	}
	vfs_still_works(&f);
}

/* A WRITE whose payload is split over many descriptors and a READ into many: the data path's
   iovecs, legitimately, at the limits of the chain. */
void case_fuse_scattered_io(void)
{
	struct vfs f;
	open_fs(&f);
	struct fuse_entry_out s;
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "scratch", &s) == 0, "LOOKUP scratch", 0);
	struct fuse_create_in ci = { .flags = 02 | 0100, .mode = 0644 };
	uint8_t *out = reply();
	CHECK(vfs_call(&f, FUSE_CREATE, s.nodeid, &ci, sizeof(ci), "sc", 3, out, 512) == 0, "CREATE", 0);
	uint64_t node = ((struct fuse_entry_out *)(out + HDR))->nodeid;
	uint64_t fh = ((struct fuse_open_out *)(out + HDR + sizeof(struct fuse_entry_out)))->fh;
	struct fuse_in_header *h = rt_alloc(80, 8);
	struct fuse_write_in *wi = (void *)(h + 1);
	*h = (struct fuse_in_header){ .len = 80 + 60 * 7, .opcode = FUSE_WRITE, .unique = 999,
				      .nodeid = node };
	*wi = (struct fuse_write_in){ .fh = fh, .size = 60 * 7 };
	struct vbuf bufs[64] = { { h, 80, false } };
	for (int i = 0; i < 60; i++) {
		char *p = rt_alloc(7, 1);
		memcpy(p, "0123456", 7);
		p[0] = (char)('A' + i % 26);
		bufs[1 + i] = (struct vbuf){ p, 7, false };
	}
	uint8_t *rep = rt_alloc(64, 8);
	bufs[61] = (struct vbuf){ rep, 64, true };
	CHECK(dq_roundtrip(&f.rq, bufs, 62) == HDR + sizeof(struct fuse_write_out), "scattered WRITE",
	      0);
	CHECK(((struct fuse_write_out *)(rep + HDR))->size == 420, "scattered WRITE size", 0);
	char back[420];
	CHECK(vfs_read(&f, node, fh, 0, 420, back) == 420 && back[7] == 'B' && back[413] == 'H',
	      "read back of the scattered WRITE", (uint8_t)back[7]);
	vfs_still_works(&f);
}

/*
 * Two request queues served by two host threads at once (the share has queues=2): READs of a
 * handle on one queue while the other RELEASEs it, reopens, DESTROYs the session and INITs again,
 * and the hiprio queue FORGETs the inode. Every reply must be well-formed: the data, or an error.
 */
void case_fuse_two_queues_race(void)
{
	struct vfs f;
	struct dq qs[3];
	vdev_find(26, 0, &f.d);
	CHECK(vreg(&f.d, VIRTIO_MMIO_CONFIG + 36) == 2, "the share does not have 2 request queues",
	      vreg(&f.d, VIRTIO_MMIO_CONFIG + 36));
	vdev_start(&f.d, 0, qs, 3, 64);
	f.hiprio = qs[0];
	f.rq = qs[1];
	f.unique = 1;
	struct dq *q2 = &qs[2];
	uint64_t node = vfs_prove_hello(&f);
	uint64_t fh = vfs_open_fh(&f, node, false);
	enum { NR = 16 };
	struct fuse_in_header *reqs = rt_alloc(NR * 128, 8);
	uint8_t *outs = rt_alloc(NR * 256, 8);
	struct fuse_in_header *ctl = rt_alloc(4 * 128, 8);
	uint8_t *ctl_out = rt_alloc(4 * 256, 8);
	for (int round = 0; round < 200; round++) {
		/* Queue 1: NR READs of fh. */
		for (int i = 0; i < NR; i++) {
			struct fuse_in_header *h = (void *)((uint8_t *)reqs + i * 128);
			*h = (struct fuse_in_header){ .len = 80, .opcode = FUSE_READ,
						      .unique = 1000 + (uint64_t)i, .nodeid = node };
			*(struct fuse_read_in *)(h + 1) = (struct fuse_read_in){ .fh = fh, .size = 64 };
			memset(outs + i * 256, 0, 256);
			struct vbuf b[2] = { { h, 80, false }, { outs + i * 256, 256, true } };
			dq_push(&f.rq, dq_chain(&f.rq, b, 2));
		}
		/* Queue 2: RELEASE fh, then (every other round) DESTROY; hiprio: FORGET node. */
		struct fuse_in_header *r = ctl;
		*r = (struct fuse_in_header){ .len = 40 + sizeof(struct fuse_release_in),
					      .opcode = FUSE_RELEASE, .unique = 2000, .nodeid = node };
		*(struct fuse_release_in *)(r + 1) = (struct fuse_release_in){ .fh = fh };
		struct vbuf b1[2] = { { r, r->len, false }, { ctl_out, 256, true } };
		dq_push(q2, dq_chain(q2, b1, 2));
		unsigned int nctl = 1;
		if (round % 2) {
			struct fuse_in_header *d = (void *)((uint8_t *)ctl + 128);
			*d = (struct fuse_in_header){ .len = 40, .opcode = FUSE_DESTROY, .unique = 2001 };
			struct vbuf b2[2] = { { d, 40, false }, { ctl_out + 256, 256, true } };
			dq_push(q2, dq_chain(q2, b2, 2));
			nctl++;
		}
		struct fuse_in_header *fo = (void *)((uint8_t *)ctl + 256);
		*fo = (struct fuse_in_header){ .len = 48, .opcode = FUSE_FORGET, .unique = 2002,
					       .nodeid = node };
		*(struct fuse_forget_in *)(fo + 1) = (struct fuse_forget_in){ .nlookup = 1 };
		struct vbuf b3 = { fo, 48, false };
		dq_push(&f.hiprio, dq_chain(&f.hiprio, &b3, 1));
		dq_notify(&f.rq);
		dq_notify(q2);
		dq_notify(&f.hiprio);
		uint32_t id, len;
		for (int i = 0; i < NR; i++)
			CHECK(dq_wait(&f.rq, &id, &len, 10000), "a READ was not answered in round", round);
		for (unsigned int i = 0; i < nctl; i++)
			CHECK(dq_wait(q2, &id, &len, 10000), "a RELEASE/DESTROY not answered", round);
		CHECK(dq_wait(&f.hiprio, &id, &len, 10000) && len == 0, "FORGET", round);
		for (int i = 0; i < NR; i++) {
			const struct fuse_out_header *oh = (const void *)(outs + i * 256);
			CHECK(oh->unique == 1000 + (uint64_t)i, "a READ reply for someone else", round);
			if (oh->error == 0)
				CHECK(oh->len == HDR + sizeof(SHARE_HELLO) - 1 &&
					      !memcmp(oh + 1, SHARE_HELLO, sizeof(SHARE_HELLO) - 1),
				      "a racing READ returned wrong data", round);
			else
				CHECK(oh->error == -EBADF || oh->error == -EIO,
				      "a racing READ failed oddly", (uint32_t)-oh->error);
		}
		/* Start again: INIT when the session was destroyed, a fresh lookup and handle. */
		if (round % 2)
			vfs_init(&f);
		struct fuse_entry_out e;
		CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "hello.txt", &e) == 0, "LOOKUP in round", round);
		node = e.nodeid;
		fh = vfs_open_fh(&f, node, false);
		f.rq.next_desc = (uint16_t)(f.rq.next_desc % f.rq.size);
	}
	vfs_still_works(&f);
}

/*
 * Every metadata operation on a symlink that points out of the share (made in scratch/, so
 * changing the link itself is legal): mode, owner, size, times, xattrs, access, open, use as a
 * directory. Whatever each answers, the canary it points at must not change (the host checks its
 * ctime, mtime and atime).
 */
void case_fuse_symlink_ops(void)
{
	struct vfs f;
	open_fs(&f);
	struct fuse_entry_out s, e;
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "scratch", &s) == 0, "LOOKUP scratch", 0);
	char both[64] = "l\0../../outside/canary.txt";
	CHECK(vfs_call(&f, FUSE_SYMLINK, s.nodeid, 0, 0, both, 2 + 26, reply(), 512) == 0, "SYMLINK",
	      0);
	CHECK(vfs_lookup(&f, s.nodeid, "l", &e) == 0 && (e.attr.mode & 0170000) == 0120000,
	      "LOOKUP the link", e.attr.mode);
	uint64_t l = e.nodeid;
	static const struct fuse_setattr_in sets[] = {
		{ .valid = FATTR_MODE, .mode = 04777 },
		{ .valid = FATTR_UID | FATTR_GID, .uid = 1234, .gid = 1234 },
		{ .valid = FATTR_SIZE, .size = 0 },
		{ .valid = FATTR_SIZE, .size = 1 << 20 },
		{ .valid = FATTR_ATIME | FATTR_MTIME, .atime = 1, .mtime = 1 },
		{ .valid = FATTR_ATIME_NOW | FATTR_MTIME_NOW | FATTR_ATIME | FATTR_MTIME },
		{ .valid = FATTR_FH | FATTR_SIZE, .fh = 0, .size = 0 },
	};
	for (unsigned int i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		(void)vfs_call(&f, FUSE_SETATTR, l, &sets[i], sizeof(sets[i]), 0, 0, reply(), 256);
	struct {
		struct fuse_setxattr_in in;
		char nv[16];
	} sx = { .in = { .size = 3 }, .nv = "user.evil\0yes" };
	(void)vfs_call(&f, FUSE_SETXATTR, l, &sx, 16 + 10 + 3, 0, 0, reply(), 256);
	(void)vfs_call(&f, FUSE_REMOVEXATTR, l, 0, 0, "user.evil", 10, reply(), 256);
	struct fuse_access_in ai = { .mask = 7 };
	(void)vfs_call(&f, FUSE_ACCESS, l, &ai, sizeof(ai), 0, 0, reply(), 256);
	static const uint32_t flags[] = { 0, 01, 02, 01000 /* O_TRUNC */, 02 | 01000 | 02000 };
	for (unsigned int i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		struct fuse_open_in oi = { .flags = flags[i] };
		CHECK(vfs_call(&f, FUSE_OPEN, l, &oi, sizeof(oi), 0, 0, reply(), 256) != 0,
		      "OPEN of a symlink out of the share", flags[i]);
		CHECK(vfs_call(&f, FUSE_OPENDIR, l, &oi, sizeof(oi), 0, 0, reply(), 256) != 0,
		      "OPENDIR of a symlink out of the share", flags[i]);
	}
	struct fuse_create_in ci = { .flags = 0101, .mode = 0644 };
	CHECK(vfs_call(&f, FUSE_CREATE, l, &ci, sizeof(ci), "x", 2, reply(), 512) != 0,
	      "CREATE under a symlink", 0);
	struct fuse_mkdir_in mi = { .mode = 0755 };
	CHECK(vfs_call(&f, FUSE_MKDIR, l, &mi, sizeof(mi), "x", 2, reply(), 256) != 0,
	      "MKDIR under a symlink", 0);
	/* A hard link of the symlink is still a symlink, and still not followed. */
	struct fuse_link_in li = { .oldnodeid = l };
	(void)vfs_call(&f, FUSE_LINK, s.nodeid, &li, sizeof(li), "l2", 3, reply(), 512);
	struct fuse_getattr_in gi = { .getattr_flags = FUSE_GETATTR_FH, .fh = 0 };
	(void)vfs_call(&f, FUSE_GETATTR, l, &gi, sizeof(gi), 0, 0, reply(), 256);
	vfs_still_works(&f);
}

/* Not an attack: a legal CREATE at the share's root, which tests/boot/attack.sh's share check must
   notice (the proof that check can fail). */
void case_check_share_create(void)
{
	struct vfs f;
	open_fs(&f);
	struct fuse_create_in ci = { .flags = 0101, .mode = 0644 };
	CHECK(vfs_call(&f, FUSE_CREATE, FUSE_ROOT_ID, &ci, sizeof(ci), "intruder", 9, reply(), 512) ==
		      0,
	      "CREATE at the root", 0);
}

/* COPY_FILE_RANGE and FALLOCATE with handles of the wrong kind, offsets that overflow and
   lengths past any file; one legitimate copy into scratch/ first. */
void case_fuse_copy_fallocate(void)
{
	struct vfs f;
	struct fuse_entry_out s;
	uint64_t hello;
	uint64_t rfh = open_hello(&f, &hello);
	CHECK(vfs_lookup(&f, FUSE_ROOT_ID, "scratch", &s) == 0, "LOOKUP scratch", 0);
	struct fuse_create_in ci = { .flags = 02 | 0100, .mode = 0644 };
	uint8_t *out = reply();
	CHECK(vfs_call(&f, FUSE_CREATE, s.nodeid, &ci, sizeof(ci), "c", 2, out, 512) == 0, "CREATE", 0);
	uint64_t cnode = ((struct fuse_entry_out *)(out + HDR))->nodeid;
	uint64_t wfh = ((struct fuse_open_out *)(out + HDR + sizeof(struct fuse_entry_out)))->fh;
	struct fuse_copy_file_range_in cp = { .fh_in = rfh, .nodeid_out = cnode, .fh_out = wfh,
					      .len = 100 };
	out = reply();
	CHECK(vfs_call(&f, FUSE_COPY_FILE_RANGE, hello, &cp, sizeof(cp), 0, 0, out, 256) == 0 &&
		      ((struct fuse_write_out *)(out + HDR))->size == sizeof(SHARE_HELLO) - 1,
	      "legitimate COPY_FILE_RANGE", 0);
	char back[64];
	CHECK(vfs_read(&f, cnode, wfh, 0, 64, back) == sizeof(SHARE_HELLO) - 1 &&
		      !memcmp(back, SHARE_HELLO, sizeof(SHARE_HELLO) - 1),
	      "the copy", 0);
	/* Into the read-only handle of hello.txt, past 2^63, with flags, with forged handles. */
	static const struct fuse_copy_file_range_in bad[] = {
		{ .fh_in = 0, .fh_out = 0, .len = 10 },
		{ .off_in = ~0ULL, .len = 10 },
		{ .off_out = 1ULL << 63, .len = 10 },
		{ .len = ~0ULL },
		{ .flags = 1, .len = 10 },
	};
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fuse_copy_file_range_in c = bad[i];
		if (i) {
			c.fh_in = rfh;
			c.fh_out = wfh;
			c.nodeid_out = cnode;
		}
		(void)vfs_call(&f, FUSE_COPY_FILE_RANGE, hello, &c, sizeof(c), 0, 0, reply(), 256);
	}
	cp = (struct fuse_copy_file_range_in){ .fh_in = wfh, .nodeid_out = hello, .fh_out = rfh,
					       .len = 10 };
	CHECK(vfs_call(&f, FUSE_COPY_FILE_RANGE, cnode, &cp, sizeof(cp), 0, 0, reply(), 256) != 0,
	      "COPY_FILE_RANGE into a read-only handle", 0);
	static const struct fuse_fallocate_in fa[] = {
		{ .offset = ~0ULL, .length = 10 },
		{ .offset = 0, .length = ~0ULL },
		{ .offset = 1ULL << 62, .length = 1ULL << 62 },
		{ .offset = 0, .length = 10, .mode = 0xffffffffu },
		{ .offset = 0, .length = 4096, .mode = 3 /* PUNCH_HOLE | KEEP_SIZE */ },
	};
	for (unsigned int i = 0; i < sizeof(fa) / sizeof(fa[0]); i++) {
		struct fuse_fallocate_in a = fa[i];
		a.fh = rfh; /* hello.txt, read-only: must never change */
		CHECK(vfs_call(&f, FUSE_FALLOCATE, hello, &a, sizeof(a), 0, 0, reply(), 256) != 0,
		      "FALLOCATE through a read-only handle", i);
		a.fh = wfh;
		(void)vfs_call(&f, FUSE_FALLOCATE, cnode, &a, sizeof(a), 0, 0, reply(), 256);
	}
	/* A directory handle where a file handle belongs, and the other way round. */
	uint64_t dh = vfs_open_fh(&f, FUSE_ROOT_ID, true);
	struct fuse_fsync_in fs_ = { .fh = dh };
	CHECK(vfs_call(&f, FUSE_FSYNC, hello, &fs_, sizeof(fs_), 0, 0, reply(), 256) == -EBADF,
	      "FSYNC of a directory handle", 0);
	fs_.fh = rfh;
	CHECK(vfs_call(&f, FUSE_FSYNCDIR, FUSE_ROOT_ID, &fs_, sizeof(fs_), 0, 0, reply(), 256) ==
		      -EBADF,
	      "FSYNCDIR of a file handle", 0);
	vfs_still_works(&f);
}
