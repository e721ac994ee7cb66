/*
 * fuzz_fs_server.c: libFuzzer target for the FUSE passthrough server itself: each input is a session
 * (INIT, then up to FZ_MAX_OPS requests a hostile guest could send) against a real host directory,
 * served synchronously by fs_dispatch. Checked after every request: the reply is well formed and fits
 * the guest's buffer. Checked after every input: nothing outside the share changed (a canary file and
 * its directory next to it, reachable only through the symlinks planted inside), and a reset of the
 * session closes every fd on the share the requests opened.
 *
 * Input layout: byte 0 picks the share's policy (read-only, devices, setuid, xattr namespaces),
 * bytes 1-8 the INIT flags the guest offers; then one record per request:
 *   op selector, node selector, caller, reply room, fh selector, names (two 4-bit indexes), a raw
 *   nodeid (8 bytes, when the node selector's top bit is set), body length (2 bytes), body, a raw fh
 *   (8 bytes, when the fh selector asks for a handed-out fh and there is none yet).
 * Nodes and fhs the server handed out (entry and open replies) are remembered, so later requests
 * reach real inodes and handles: the node selector names one unless its top bit is set; the fh
 * selector's top bit puts one into the request's fh field, which otherwise keeps the body's bytes.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/fs/fs_ops.h"
#include "devices/fs/fs_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX_OPS 48
#define FZ_BODY_MAX 8192
/* Sizes the harness lets through to calls that allocate real blocks on the host's disk. */
#define FZ_BLOCKS_MAX (16u << 20)

static struct fs_server srv;
static bool ready;
static char share[80], outside[96], secret[112];
static struct stat secret_st, outside_st;
static int baseline_fds;
static unsigned char req[sizeof(struct fuse_in_header) + FZ_BODY_MAX + 2 * 256];
static unsigned char rep[FS_MAX_IO + 4096];
static uint64_t nodes[32], fhs[32];
static unsigned int nr_nodes, nr_fhs;

/* Names a request may carry: the planted entries, escapes, and what the kernel never sends. */
static const char *const names[] = { "f", "d", "esc", "escdir", "p", "new", "..", ".", "d/g", "",
				     "../outside", "x\n", "escdir/secret" };
#define NR_NAMES (sizeof(names) / sizeof(names[0]))

static void die(const char *what)
{
	fprintf(stderr, "fuzz_fs_server: %s: %s\n", what, strerror(errno));
	abort();
}

/* Remove everything under dir (not dir itself), making directories writable first. */
static void empty_dir(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d)
		die("fdopendir");
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			continue;
		int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (sub < 0)
			die("open a directory left in the share");
		if (fchmod(sub, 0700))
			die("fchmod");
		empty_dir(sub); /* closes sub */
		if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR))
			die("rmdir");
	}
	closedir(d);
}

/* The share as every input starts: a file, a directory, a FIFO and two symlinks that leave it. */
static void plant(void)
{
	int dfd = open(share, O_RDONLY | O_DIRECTORY);
	char buf[8192];
	int fd;

	if (dfd < 0 || fchmod(dfd, 0755))
		die("open the share");
	empty_dir(dup(dfd));
	memset(buf, 'a', sizeof(buf));
	fd = openat(dfd, "f", O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) || close(fd))
		die("plant f");
	if (mkdirat(dfd, "d", 0755) || (fd = openat(dfd, "d/g", O_WRONLY | O_CREAT, 0600)) < 0 ||
	    close(fd))
		die("plant d/g");
	if (mkfifoat(dfd, "p", 0644) || symlinkat("../outside/secret", dfd, "esc") ||
	    symlinkat("../outside", dfd, "escdir"))
		die("plant p, esc, escdir");
	close(dfd);
}

/*
 * The fds this process holds on the share (its root included), by their paths in /proc/self/fd.
 * Only those: libFuzzer's symbolizer keeps pipes of its own open from the first new function on.
 */
static int share_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	size_t sl = strlen(share);
	char link[PATH_MAX];
	int n = 0;

	if (!d)
		die("opendir /proc/self/fd");
	while ((e = readdir(d))) {
		ssize_t k = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (k < 0)
			continue;
		link[k] = 0;
		if (!strncmp(link, share, sl) && (link[sl] == 0 || link[sl] == '/' || link[sl] == ' '))
			n++;
	}
	closedir(d);
	return n;
}

static char base[64];

/* At the fuzzer's exit (its time is up): the share, the canary and their directory go. */
static void cleanup(void)
{
	int dfd = open(share, O_RDONLY | O_DIRECTORY);

	if (dfd >= 0 && fs_creds_enter(&srv, 0, 0) == 0 && fchmod(dfd, 0755) == 0)
		empty_dir(dfd);
	else if (dfd >= 0)
		close(dfd);
	rmdir(share);
	unlink(secret);
	rmdir(outside);
	rmdir(base);
}

static void setup(void)
{
	struct stat st;
	int fd;

	/* tmpfs when there is one: FSYNC and FALLOCATE cost no disk there. */
	snprintf(base, sizeof(base), "%s/ringvm-fuzz-fs.XXXXXX",
		 stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp");
	if (!mkdtemp(base))
		die("mkdtemp");
	snprintf(share, sizeof(share), "%s/share", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	snprintf(secret, sizeof(secret), "%s/secret", outside);
	if (mkdir(share, 0755) || mkdir(outside, 0755))
		die("mkdir");
	fd = open(secret, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, "secret\n", 7) != 7 || close(fd))
		die("the canary");
	if (stat(secret, &secret_st) || stat(outside, &outside_st))
		die("stat the canary");
	plant();
	/* Small tables: the budget's refusals are hostile input's path too. */
	if (fs_server_create(&srv, share, false, FS_CACHE_AUTO, 64))
		die("fs_server_create");
	if (fs_thread_prepare(&srv))
		die("fs_thread_prepare");
	baseline_fds = share_fds();
	atexit(cleanup);
	ready = true;
}

/* Take n bytes of input (fewer at its end; zeros past it). */
static void take(const uint8_t **d, size_t *left, void *out, size_t n)
{
	size_t k = n < *left ? n : *left;

	memcpy(out, *d, k);
	memset((uint8_t *)out + k, 0, n - k);
	*d += k;
	*left -= k;
}

static uint8_t byte(const uint8_t **d, size_t *left)
{
	uint8_t b;

	take(d, left, &b, 1);
	return b;
}

/* A nodeid or fh: one the server gave (low 7 bits pick it) or 8 raw bytes (top bit). */
static uint64_t pick(uint8_t sel, const uint64_t *known, unsigned int n, const uint8_t **d,
		     size_t *left)
{
	uint64_t v;

	if ((sel & 0x80) || n == 0) {
		take(d, left, &v, sizeof(v));
		return v;
	}
	return known[(sel & 0x7f) % n];
}

/* Keep v among the 32 values a selector can name; once full, v takes a slot of its own choosing. */
static void remember(uint64_t *known, unsigned int *n, uint64_t v)
{
	if (*n < 32)
		known[(*n)++] = v;
	else
		known[v % 32] = v;
}

/* Keep calls that would allocate real blocks on the host's disk small; the server's own checks
   of these fields still see every other value. */
static void bound_blocks(struct fuse_req *r)
{
	if (r->hdr.opcode == FUSE_FALLOCATE && r->in.fallocate.length > FZ_BLOCKS_MAX)
		r->in.fallocate.length = FZ_BLOCKS_MAX;
	if (r->hdr.opcode == FUSE_COPY_FILE_RANGE && r->in.copy_file_range.len > FZ_BLOCKS_MAX)
		r->in.copy_file_range.len = FZ_BLOCKS_MAX;
}

/* Where a request's fh lives in its decoded body (fuse_req.in), plus 1; 0: the opcode has none. */
static const uint8_t fh_at[64] = {
	[FUSE_READ] = 1 + offsetof(struct fuse_read_in, fh),
	[FUSE_READDIR] = 1 + offsetof(struct fuse_read_in, fh),
	[FUSE_READDIRPLUS] = 1 + offsetof(struct fuse_read_in, fh),
	[FUSE_WRITE] = 1 + offsetof(struct fuse_write_in, fh),
	[FUSE_RELEASE] = 1 + offsetof(struct fuse_release_in, fh),
	[FUSE_RELEASEDIR] = 1 + offsetof(struct fuse_release_in, fh),
	[FUSE_FLUSH] = 1 + offsetof(struct fuse_flush_in, fh),
	[FUSE_FSYNC] = 1 + offsetof(struct fuse_fsync_in, fh),
	[FUSE_FSYNCDIR] = 1 + offsetof(struct fuse_fsync_in, fh),
	[FUSE_FALLOCATE] = 1 + offsetof(struct fuse_fallocate_in, fh),
	[FUSE_LSEEK] = 1 + offsetof(struct fuse_lseek_in, fh),
	[FUSE_COPY_FILE_RANGE] = 1 + offsetof(struct fuse_copy_file_range_in, fh_in),
	[FUSE_SETATTR] = 1 + offsetof(struct fuse_setattr_in, fh),
	[FUSE_GETATTR] = 1 + offsetof(struct fuse_getattr_in, fh),
};

/* Put fh into the request's own fh field, where it has one. */
static void set_fh(struct fuse_req *r, uint64_t fh)
{
	if (r->hdr.opcode < sizeof(fh_at) && fh_at[r->hdr.opcode])
		memcpy((uint8_t *)&r->in + fh_at[r->hdr.opcode] - 1, &fh, sizeof(fh));
}

/* The reply body's len bytes at off into out; a reply too short for its opcode traps. */
static void reply_body(size_t n, size_t off, void *out, size_t len)
{
	if (n < sizeof(struct fuse_out_header) + off + len)
		__builtin_trap();
	memcpy(out, rep + sizeof(struct fuse_out_header) + off, len);
}

/* A reply the server wrote: well formed, within the room it was given; nodes and fhs kept. */
static void check_reply(const struct fuse_req *r, size_t n, size_t cap)
{
	struct fuse_out_header oh;

	if (n == 0)
		return;
	if (n > cap || n < sizeof(oh))
		__builtin_trap();
	memcpy(&oh, rep, sizeof(oh));
	if (oh.len != n || oh.unique != r->hdr.unique || oh.error > 0 || oh.error < -4095)
		__builtin_trap();
	if (oh.error)
		return;
	struct fuse_entry_out e;
	struct fuse_open_out o;
	switch (r->hdr.opcode) {
	case FUSE_LOOKUP:
	case FUSE_MKNOD:
	case FUSE_MKDIR:
	case FUSE_SYMLINK:
	case FUSE_LINK:
	case FUSE_CREATE:
		reply_body(n, 0, &e, sizeof(e));
		if (e.nodeid)
			remember(nodes, &nr_nodes, e.nodeid);
		if (r->hdr.opcode == FUSE_CREATE) {
			reply_body(n, sizeof(e), &o, sizeof(o));
			remember(fhs, &nr_fhs, o.fh);
		}
		break;
	case FUSE_OPEN:
	case FUSE_OPENDIR:
		reply_body(n, 0, &o, sizeof(o));
		remember(fhs, &nr_fhs, o.fh);
		break;
	default:
		break;
	}
}

/* One request from the input; false when the input is used up. */
static bool one_request(const uint8_t **d, size_t *left, uint64_t unique)
{
	struct fuse_in_header h = { .unique = unique };
	struct fuse_decode_ctx ctx;
	struct fuse_req r;
	uint16_t blen;

	if (*left < 8)
		return false;
	uint8_t op = byte(d, left), node_sel = byte(d, left), who = byte(d, left);
	uint8_t room = byte(d, left), fh_sel = byte(d, left), name_sel = byte(d, left);
	h.opcode = op & 0x3f; /* every opcode up to 63: the known ones and a few that are not */
	if (op & 0x40)
		h.opcode = 4096u + op; /* CUSE_INIT and beyond: unknown */
	h.nodeid = pick(node_sel, nodes, nr_nodes, d, left);
	switch (who & 3) {
	case 0: h.uid = h.gid = 0; break;
	case 1: h.uid = h.gid = 1000; break;
	case 2: h.uid = 1000; h.gid = 0; break;
	default: h.uid = h.gid = 65534; break;
	}
	h.pid = 42;
	take(d, left, &blen, sizeof(blen));
	blen %= FZ_BODY_MAX;
	size_t len = sizeof(h);
	take(d, left, req + len, blen);
	len += blen;
	/* Names after the body, NUL-terminated, as the kernel lays them out. */
	for (unsigned int i = 0; i < 2; i++) {
		unsigned int k = (name_sel >> (4 * i)) & 15;
		if (k == 0 || k > NR_NAMES)
			continue;
		size_t nl = strlen(names[k - 1]) + 1;
		memcpy(req + len, names[k - 1], nl);
		len += nl;
	}
	h.len = (uint32_t)len;
	memcpy(req, &h, sizeof(h));
	fs_server_decode_ctx(&srv, &ctx);
	if (fuse_decode(req, len, len, &ctx, &r) != 0)
		return true; /* the decoder's refusal: fuzz_fuse_decode covers it */
	if (fh_sel & 0x80)
		set_fh(&r, pick(fh_sel & 0x7f, fhs, nr_fhs, d, left));
	bound_blocks(&r);
	/* The guest's reply buffer: whole, or as small as a header. */
	size_t cap = room & 0x80 ? sizeof(struct fuse_out_header) + (room & 0x7f) * 8u : sizeof(rep);
	size_t n = fs_dispatch(&srv, &r, req, len, rep, cap);
	check_reply(&r, n, cap);
	return true;
}

/* Nothing outside the share changed: the canary's bytes, inode and links, its directory. */
static void check_outside(void)
{
	struct stat st, ost;
	char buf[16];
	int fd = open(secret, O_RDONLY | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;

	if (fd >= 0)
		close(fd);
	if (n != 7 || memcmp(buf, "secret\n", 7) || stat(secret, &st) || stat(outside, &ost))
		__builtin_trap();
	if (st.st_ino != secret_st.st_ino || st.st_nlink != 1 || st.st_mode != secret_st.st_mode ||
	    st.st_uid != secret_st.st_uid || st.st_gid != secret_st.st_gid ||
	    st.st_size != secret_st.st_size || ost.st_mtim.tv_sec != outside_st.st_mtim.tv_sec ||
	    ost.st_mtim.tv_nsec != outside_st.st_mtim.tv_nsec || ost.st_mode != outside_st.st_mode)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuse_init_in init = { .major = FUSE_KERNEL_VERSION, .minor = FUSE_KERNEL_MINOR_VERSION,
				     .max_readahead = 1u << 20 };
	uint64_t flags;
	struct fuse_req r;
	struct fuse_decode_ctx ctx;
	uint64_t unique = 1;

	if (!ready)
		setup();
	if (size < 9)
		return 0;
	/* The last input's requests left this thread acting as their caller: root again to plant. */
	if (fs_creds_enter(&srv, 0, 0))
		die("fs_creds_enter");
	fs_server_reset(&srv);
	plant();
	nr_nodes = nr_fhs = 0;
	remember(nodes, &nr_nodes, FUSE_ROOT_ID);

	uint8_t policy = byte(&data, &size);
	srv.readonly = policy & 1;
	srv.allow_dev = policy & 2;
	srv.allow_suid = policy & 4;
	srv.xattr = (enum fs_xattr_policy)((policy >> 3) & 3);
	take(&data, &size, &flags, sizeof(flags));
	init.flags = (uint32_t)flags;
	init.flags2 = (uint32_t)(flags >> 32);
	init.flags |= FUSE_INIT_EXT;

	struct fuse_in_header h = { .len = sizeof(h) + sizeof(init), .opcode = FUSE_INIT, .unique = unique++ };
	memcpy(req, &h, sizeof(h));
	memcpy(req + sizeof(h), &init, sizeof(init));
	fs_server_decode_ctx(&srv, &ctx);
	if (fuse_decode(req, h.len, h.len, &ctx, &r) == 0)
		check_reply(&r, fs_dispatch(&srv, &r, req, h.len, rep, sizeof(rep)), sizeof(rep));

	for (unsigned int i = 0; i < FZ_MAX_OPS && one_request(&data, &size, unique); i++)
		unique++;

	check_outside();
	/* A reset forgets every node and handle: their fds must all be closed again. */
	fs_server_reset(&srv);
	if (share_fds() != baseline_fds)
		__builtin_trap();
	return 0;
}
