/* vu_probe.c: a front-end that checks a running `ringvm serve` end to end (tests/boot/serve.sh). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/fuse.h>
#include <linux/virtio_blk.h>

#include "tests/support/fuse_req.h"
#include "tests/support/vu_front.h"

/*
 *   vu_probe blk SOCKET IMAGE   write 64 KiB at sector 16 through ring 0, read it back through
 *                               ring 0 and from IMAGE on the host
 *   vu_probe fs SOCKET DIR      FUSE INIT, CREATE probe.PID, WRITE 8 KiB, READ it back, and compare
 *                               with DIR/probe.PID on the host (then unlink it there)
 * Exit 0 when every check held; otherwise one line on stderr saying which did not, exit 1.
 */

#define RAM (16u << 20)
#define LEN (64u << 10)

static int fail(const char *what)
{
	fprintf(stderr, "vu_probe: %s\n", what);
	return 1;
}

static void fill(uint8_t *p, size_t n)
{
	unsigned int seed = (unsigned int)getpid();
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 9));
}

static int probe_blk(struct vu_front *f, const char *image)
{
	static uint8_t want[LEN], got[LEN];
	struct vuf_blk_req io;
	fill(want, LEN);
	if (vuf_ring(f, 0, 128, 0))
		return fail("ring 0 set-up refused");
	if (vuf_blk(f, 0, &io, VIRTIO_BLK_T_OUT, 16, LEN, want) != VIRTIO_BLK_S_OK)
		return fail("write request failed");
	if (vuf_blk(f, 0, &io, VIRTIO_BLK_T_IN, 16, LEN, NULL) != VIRTIO_BLK_S_OK ||
	    memcmp(f->ram + io.data, want, LEN))
		return fail("read back through the ring differs");
	int fd = open(image, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, got, LEN, 16 * 512) : -1;
	if (fd >= 0)
		close(fd);
	if (n != LEN || memcmp(got, want, LEN))
		return fail("the image on the host does not hold the bytes");
	return 0;
}

static int probe_fs(struct vu_front *f, const char *dir)
{
	static unsigned char req[16384], rep[16384];
	const struct fuse_out_header *oh = (const void *)rep;
	if (vuf_ring(f, 0, 64, 0) || vuf_ring(f, 1, 64, 0))
		return fail("ring set-up refused");
	if (vuf_fuse_init(f, 1, rep) <= 0 || oh->error)
		return fail("FUSE INIT failed");
	char name[32];
	int nlen = snprintf(name, sizeof(name), "probe.%d", (int)getpid()) + 1;
	struct fuse_create_in ci = { .flags = O_RDWR, .mode = 0644 };
	unsigned char body[64];
	memcpy(body, &ci, sizeof(ci));
	memcpy(body + sizeof(ci), name, (size_t)nlen);
	uint32_t len = fuse_mkreq(req, FUSE_CREATE, 1, body, sizeof(ci) + (uint32_t)nlen);
	if (vuf_fuse(f, 1, req, len, 4096, rep) <= 0 || oh->error)
		return fail("FUSE CREATE failed");
	uint64_t nodeid = ((struct fuse_entry_out *)(rep + sizeof(*oh)))->nodeid;
	uint64_t fh = ((struct fuse_open_out *)(rep + sizeof(*oh) + sizeof(struct fuse_entry_out)))->fh;
	struct fuse_write_in wi = { .fh = fh, .offset = 0, .size = 8192 };
	static uint8_t data[sizeof(wi) + 8192], host[8192];
	memcpy(data, &wi, sizeof(wi));
	fill(data + sizeof(wi), 8192);
	len = fuse_mkreq(req, FUSE_WRITE, nodeid, data, sizeof(data));
	if (vuf_fuse(f, 1, req, len, 64, rep) <= 0 || oh->error ||
	    ((struct fuse_write_out *)(rep + sizeof(*oh)))->size != 8192)
		return fail("FUSE WRITE failed");
	struct fuse_read_in ri = { .fh = fh, .offset = 0, .size = 8192 };
	len = fuse_mkreq(req, FUSE_READ, nodeid, &ri, sizeof(ri));
	if (vuf_fuse(f, 1, req, len, 16 + 8192, rep) != 16 + 8192 ||
	    memcmp(rep + 16, data + sizeof(wi), 8192))
		return fail("FUSE READ returned other bytes");
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? pread(fd, host, sizeof(host), 0) : -1;
	if (fd >= 0)
		close(fd);
	unlink(path);
	if (n != 8192 || memcmp(host, data + sizeof(wi), 8192))
		return fail("the host file does not hold the bytes");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "blk") && strcmp(argv[1], "fs")))
		return fail("usage: vu_probe blk|fs SOCKET IMAGE|DIR");
	struct vu_front f;
	if (vuf_connect(&f, argv[2], RAM, true))
		return fail("cannot connect to the socket");
	int ret = vuf_negotiate(&f, true) ? fail("negotiation refused")
		  : !strcmp(argv[1], "blk") ? probe_blk(&f, argv[3])
					    : probe_fs(&f, argv[3]);
	vuf_close(&f);
	return ret;
}
