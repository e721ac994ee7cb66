/* test_fuse_decode.c: unit tests of the FUSE request decoder (lengths, sizes by version, names). */
#include <errno.h>
#include <string.h>

#include "devices/fs/fuse_decode.h"
#include "tests/unit/tap.h"

static unsigned char buf[128 * 1024];
static const struct fuse_decode_ctx ctx38 = { .minor = 38, .setxattr_ext = 0 };

/* Build a request: header, then body bytes; returns the total length and sets hdr.len to it. */
static size_t mk(uint32_t opcode, const void *body, size_t body_len)
{
	struct fuse_in_header h = { 0 };

	h.len = (uint32_t)(sizeof(h) + body_len);
	h.opcode = opcode;
	h.unique = 42;
	h.nodeid = 1;
	memcpy(buf, &h, sizeof(h));
	if (body_len)
		memcpy(buf + sizeof(h), body, body_len);
	return h.len;
}

static int dec(size_t len, struct fuse_req *r)
{
	return fuse_decode(buf, len, len, &ctx38, r);
}

static void test_header(void)
{
	struct fuse_req r;
	size_t n = mk(FUSE_STATFS, NULL, 0);

	TAP_CHECK(dec(n, &r) == 0 && r.hdr.unique == 42, "STATFS with a bare header decodes");
	TAP_CHECK(fuse_decode(buf, 20, 20, &ctx38, &r) == -EINVAL, "short header refused");
	TAP_CHECK(fuse_decode(buf, 0, 0, &ctx38, &r) == -EINVAL, "empty request refused");
	TAP_CHECK(fuse_decode(buf, n, n + 8, &ctx38, &r) == -EINVAL, "hdr.len shorter than chain refused");
	((struct fuse_in_header *)buf)->len = (uint32_t)n + 100;
	TAP_CHECK(dec(n, &r) == -EINVAL, "hdr.len longer than the bytes refused");
	((struct fuse_in_header *)buf)->len = 0;
	TAP_CHECK(dec(n, &r) == -EINVAL, "hdr.len 0 refused");
	TAP_CHECK(fuse_decode(buf, n + 1, n, &ctx38, &r) == -EINVAL, "have > total refused");
	n = mk(FUSE_STATFS, NULL, 0);
	((struct fuse_in_header *)buf)->total_extlen = 1;
	TAP_CHECK(dec(n, &r) == -EINVAL, "extensions not negotiated refused");
}

static void test_opcodes(void)
{
	struct fuse_req r;
	size_t n;

	n = mk(12345, NULL, 0);
	TAP_CHECK(dec(n, &r) == -ENOSYS && r.hdr.unique == 42, "unknown opcode -> ENOSYS with unique");
	n = mk(FUSE_IOCTL, NULL, 0);
	TAP_CHECK(dec(n, &r) == -ENOSYS, "IOCTL -> ENOSYS");
	n = mk(FUSE_SETUPMAPPING, NULL, 0);
	TAP_CHECK(dec(n, &r) == -ENOSYS, "SETUPMAPPING (DAX) -> ENOSYS");
	n = mk(FUSE_INIT_BSWAP_RESERVED, NULL, 0);
	TAP_CHECK(dec(n, &r) == -ENOSYS, "byte-swapped INIT -> ENOSYS");
	TAP_CHECK(fuse_opcode_no_reply(FUSE_FORGET) && fuse_opcode_no_reply(FUSE_BATCH_FORGET) &&
			  !fuse_opcode_no_reply(FUSE_LOOKUP),
		  "FORGET and BATCH_FORGET take no reply");
}

static void test_names(void)
{
	struct fuse_req r;
	char name[300];
	size_t n;

	n = mk(FUSE_LOOKUP, "hello", 6);
	TAP_CHECK(dec(n, &r) == 0 && strcmp(r.name, "hello") == 0, "LOOKUP name decoded");
	n = mk(FUSE_LOOKUP, "hello", 5);
	TAP_CHECK(dec(n, &r) == -EINVAL, "name without NUL refused");
	n = mk(FUSE_LOOKUP, "", 1);
	TAP_CHECK(dec(n, &r) == -EINVAL, "empty name refused");
	n = mk(FUSE_LOOKUP, "a/b", 4);
	TAP_CHECK(dec(n, &r) == -EINVAL, "name with '/' refused");
	n = mk(FUSE_LOOKUP, "../../etc", 10);
	TAP_CHECK(dec(n, &r) == -EINVAL, "'..' chain with '/' refused");
	memset(name, 'x', sizeof(name));
	name[sizeof(name) - 1] = '\0';
	n = mk(FUSE_MKDIR, NULL, 0);
	{
		unsigned char body[sizeof(struct fuse_mkdir_in) + sizeof(name)] = { 0 };

		memcpy(body + sizeof(struct fuse_mkdir_in), name, sizeof(name));
		n = mk(FUSE_MKDIR, body, sizeof(body));
		TAP_CHECK(dec(n, &r) == -ENAMETOOLONG, "name over NAME_MAX -> ENAMETOOLONG");
		body[sizeof(struct fuse_mkdir_in) + 255] = '\0';
		n = mk(FUSE_MKDIR, body, sizeof(struct fuse_mkdir_in) + 256);
		TAP_CHECK(dec(n, &r) == 0 && strlen(r.name) == 255, "name of NAME_MAX accepted");
	}
	n = mk(FUSE_MKDIR, "\0\0\0", 3);
	TAP_CHECK(dec(n, &r) == -EINVAL, "MKDIR body shorter than fuse_mkdir_in refused");
}

static void test_two_names(void)
{
	unsigned char body[64] = { 0 };
	struct fuse_req r;
	size_t n, off;

	off = sizeof(struct fuse_rename_in);
	memcpy(body + off, "old\0new", 8);
	n = mk(FUSE_RENAME, body, off + 8);
	TAP_CHECK(dec(n, &r) == 0 && !strcmp(r.name, "old") && !strcmp(r.name2, "new") &&
			  r.in.rename2.flags == 0,
		  "RENAME decodes both names, flags 0");
	n = mk(FUSE_RENAME, body, off + 7);
	TAP_CHECK(dec(n, &r) == -EINVAL, "RENAME second name without NUL refused");
	n = mk(FUSE_RENAME, body, off + 4);
	TAP_CHECK(dec(n, &r) == -EINVAL, "RENAME missing second name refused");
	off = sizeof(struct fuse_rename2_in);
	memset(body, 0, sizeof(body));
	((struct fuse_rename2_in *)body)->flags = 2;
	memcpy(body + off, "a\0b", 4);
	n = mk(FUSE_RENAME2, body, off + 4);
	TAP_CHECK(dec(n, &r) == 0 && r.in.rename2.flags == 2 && !strcmp(r.name2, "b"),
		  "RENAME2 decodes flags and names");
	memcpy(body + off, "a\0b/c", 6);
	n = mk(FUSE_RENAME2, body, off + 6);
	TAP_CHECK(dec(n, &r) == -EINVAL, "RENAME2 new name with '/' refused");
	n = mk(FUSE_SYMLINK, "ln\0/etc/passwd", 15);
	TAP_CHECK(dec(n, &r) == 0 && !strcmp(r.name, "ln") && !strcmp(r.name2, "/etc/passwd"),
		  "SYMLINK: entry name then target (target may hold '/')");
	n = mk(FUSE_SYMLINK, "ln\0/etc", 7);
	TAP_CHECK(dec(n, &r) == -EINVAL, "SYMLINK target without NUL refused");
	memset(body, 0, sizeof(body));
	memcpy(body + sizeof(struct fuse_link_in), "x", 2);
	n = mk(FUSE_LINK, body, sizeof(struct fuse_link_in) + 2);
	TAP_CHECK(dec(n, &r) == 0 && !strcmp(r.name, "x"), "LINK decodes new name");
	n = mk(FUSE_LINK, body, 4);
	TAP_CHECK(dec(n, &r) == -EINVAL, "LINK short body refused");
}

static void test_versions(void)
{
	struct fuse_decode_ctx old = { .minor = 11 };
	struct fuse_decode_ctx ancient = { .minor = 8 };
	unsigned char body[128] = { 0 };
	struct fuse_req r;
	size_t n;

	/* MKNOD: 8 bytes before 7.12, 16 after. */
	memcpy(body + 8, "dev", 4);
	n = mk(FUSE_MKNOD, body, 12);
	TAP_CHECK(fuse_decode(buf, n, n, &old, &r) == 0 && !strcmp(r.name, "dev"),
		  "MKNOD compat 8-byte body at 7.11");
	TAP_CHECK(dec(n, &r) == -EINVAL, "MKNOD 8-byte body refused at 7.38 (name lacks room)");
	memset(body, 0, sizeof(body));
	memcpy(body + 16, "dev", 4);
	n = mk(FUSE_MKNOD, body, 20);
	TAP_CHECK(dec(n, &r) == 0 && !strcmp(r.name, "dev"), "MKNOD 16-byte body at 7.38");

	/* WRITE: 24 bytes before 7.9. */
	memset(body, 0, sizeof(body));
	((struct fuse_write_in *)body)->size = 5;
	memcpy(body + 24, "hello", 5);
	n = mk(FUSE_WRITE, body, 29);
	TAP_CHECK(fuse_decode(buf, n, n, &ancient, &r) == 0 && r.write_off == 40 + 24,
		  "WRITE compat 24-byte body at 7.8");
	TAP_CHECK(dec(n, &r) == -EINVAL, "same WRITE at 7.38 has a size that lies");
	memcpy(body + 40, "hello", 5);
	n = mk(FUSE_WRITE, body, 45);
	TAP_CHECK(dec(n, &r) == 0 && r.write_off == 80 && r.in.write.size == 5, "WRITE at 7.38");
	TAP_CHECK(fuse_decode(buf, 80, n, &ctx38, &r) == 0, "WRITE payload may stay in guest memory");
	TAP_CHECK(fuse_decode(buf, 60, n, &ctx38, &r) == -E2BIG ||
			  fuse_decode(buf, 60, n, &ctx38, &r) == -EINVAL,
		  "WRITE without its whole fuse_write_in refused");
	((struct fuse_write_in *)body)->size = 0xffffffffu;
	n = mk(FUSE_WRITE, body, 45);
	TAP_CHECK(dec(n, &r) == -EINVAL, "WRITE size larger than the request refused");
	((struct fuse_write_in *)body)->size = 2;
	n = mk(FUSE_WRITE, body, 45);
	TAP_CHECK(dec(n, &r) == -EINVAL, "WRITE size smaller than the payload refused");

	/* CREATE: fuse_open_in (8 bytes) before 7.12. */
	memset(body, 0, sizeof(body));
	memcpy(body + 8, "f", 2);
	n = mk(FUSE_CREATE, body, 10);
	TAP_CHECK(fuse_decode(buf, n, n, &old, &r) == 0 && !strcmp(r.name, "f"),
		  "CREATE compat body at 7.11");
	memset(body, 0, sizeof(body));
	memcpy(body + 16, "f", 2);
	n = mk(FUSE_CREATE, body, 18);
	TAP_CHECK(dec(n, &r) == 0 && !strcmp(r.name, "f"), "CREATE at 7.38");
	/* TMPFILE: CREATE's body, and the unnamed dentry's "/" (not an entry name). */
	((struct fuse_create_in *)body)->flags = 02; /* O_RDWR */
	memcpy(body + 16, "/", 2);
	n = mk(FUSE_TMPFILE, body, 18);
	TAP_CHECK(dec(n, &r) == 0 && r.in.create.flags == 02, "TMPFILE with the name \"/\"");
	n = mk(FUSE_TMPFILE, body, 17);
	TAP_CHECK(dec(n, &r) == -EINVAL, "TMPFILE without a NUL-terminated name refused");

	/* GETATTR had no body before 7.9; READ was 24 bytes. */
	n = mk(FUSE_GETATTR, NULL, 0);
	TAP_CHECK(fuse_decode(buf, n, n, &ancient, &r) == 0, "GETATTR without body at 7.8");
	TAP_CHECK(dec(n, &r) == -EINVAL, "GETATTR without body refused at 7.38");
	memset(body, 0, sizeof(body));
	n = mk(FUSE_READ, body, 24);
	TAP_CHECK(fuse_decode(buf, n, n, &ancient, &r) == 0, "READ 24-byte body at 7.8");
	TAP_CHECK(dec(n, &r) == -EINVAL, "READ 24-byte body refused at 7.38");

	/* INIT: 16 bytes from old kernels, 64 with INIT_EXT. */
	((struct fuse_init_in *)body)->major = 7;
	((struct fuse_init_in *)body)->minor = 31;
	((struct fuse_init_in *)body)->flags2 = 9;
	n = mk(FUSE_INIT, body, 16);
	TAP_CHECK(dec(n, &r) == 0 && r.in.init.minor == 31 && r.in.init.flags2 == 0,
		  "INIT 16-byte body, flags2 zero");
	n = mk(FUSE_INIT, body, 64);
	TAP_CHECK(dec(n, &r) == 0 && r.in.init.flags2 == 9, "INIT 64-byte body keeps flags2");
	n = mk(FUSE_INIT, body, 8);
	TAP_CHECK(dec(n, &r) == -EINVAL, "INIT 8-byte body refused");
}

static void test_xattr_forget(void)
{
	struct fuse_decode_ctx ext = { .minor = 38, .setxattr_ext = 1 };
	unsigned char body[256] = { 0 };
	struct fuse_req r;
	size_t n;

	((struct fuse_setxattr_in *)body)->size = 3;
	memcpy(body + 8, "user.a\0xyz", 10);
	n = mk(FUSE_SETXATTR, body, 18);
	TAP_CHECK(dec(n, &r) == 0 && !strcmp(r.name, "user.a") && r.data_len == 3 &&
			  !memcmp(r.data, "xyz", 3),
		  "SETXATTR compat: name and value");
	TAP_CHECK(fuse_decode(buf, n, n, &ext, &r) == -EINVAL,
		  "SETXATTR with SETXATTR_EXT needs 16-byte body");
	((struct fuse_setxattr_in *)body)->size = 30;
	n = mk(FUSE_SETXATTR, body, 18);
	TAP_CHECK(dec(n, &r) == -EINVAL, "SETXATTR value size that lies refused");
	((struct fuse_setxattr_in *)body)->size = 70000;
	n = mk(FUSE_SETXATTR, body, 18);
	TAP_CHECK(dec(n, &r) == -E2BIG, "SETXATTR value above XATTR_SIZE_MAX refused");

	memset(body, 0, sizeof(body));
	((struct fuse_batch_forget_in *)body)->count = 2;
	n = mk(FUSE_BATCH_FORGET, body, 8 + 32);
	TAP_CHECK(dec(n, &r) == 0 && r.data_len == 32, "BATCH_FORGET with 2 entries");
	n = mk(FUSE_BATCH_FORGET, body, 8 + 31);
	TAP_CHECK(dec(n, &r) == -EINVAL, "BATCH_FORGET count larger than body refused");
	((struct fuse_batch_forget_in *)body)->count = 0xffffffffu;
	n = mk(FUSE_BATCH_FORGET, body, 8 + 32);
	TAP_CHECK(dec(n, &r) == -EINVAL, "BATCH_FORGET huge count refused");
	n = mk(FUSE_FORGET, body, 4);
	TAP_CHECK(dec(n, &r) == -EINVAL, "FORGET short body refused");
	n = mk(FUSE_LOOKUP, "big", 4);
	TAP_CHECK(fuse_decode(buf, n, n + 10, &ctx38, &r) == -EINVAL,
		  "non-WRITE request larger than gathered refused");
}

int main(void)
{
	test_header();
	test_opcodes();
	test_names();
	test_two_names();
	test_versions();
	test_xattr_forget();
	return tap_done();
}
