/* chain.c: Reader/Writer cursors over a validated descriptor chain, so devices never index iovecs. */
#include "devices/virtio/virtq.h"

#include <errno.h>
#include <string.h>

static void vq_cursor_init(struct vq_cursor *c, const struct iovec *iov, unsigned int nr,
			   uint64_t total)
{
	c->iov = iov;
	c->nr = nr;
	c->idx = 0;
	c->off = 0;
	c->remaining = total;
}

void vq_reader_init(struct vq_reader *r, const struct vq_chain *chain)
{
	vq_cursor_init(&r->c, chain->iov, chain->nr_readable, chain->readable_len);
}

void vq_writer_init(struct vq_writer *w, const struct vq_chain *chain)
{
	vq_cursor_init(&w->c, chain->iov + chain->nr_readable, chain->nr_writable,
		       chain->writable_len);
	w->written = 0;
}

/*
 * Walk len bytes from the cursor. For each piece, copy to/from buf when given, or record it in
 * out[] when given. The caller has checked len <= remaining; -E2BIG (cursor untouched) when out[]
 * is too small.
 */
static int vq_cursor_walk(struct vq_cursor *c, size_t len, uint8_t *buf, bool to_guest,
			  struct iovec *out, unsigned int max, unsigned int *nr)
{
	unsigned int idx = c->idx;
	size_t off = c->off;
	unsigned int n = 0;
	size_t left = len;

	while (left) {
		/* remaining >= len guarantees idx < nr here; re-checked to never index past the array. */
		if (idx >= c->nr)
			return -EMSGSIZE;
		size_t avail = c->iov[idx].iov_len - off;
		size_t piece = avail < left ? avail : left;
		uint8_t *host = (uint8_t *)c->iov[idx].iov_base + off;
		if (out) {
			if (n == max)
				return -E2BIG;
			out[n].iov_base = host;
			out[n].iov_len = piece;
		} else if (buf) {
			if (to_guest)
				memcpy(host, buf, piece);
			else
				memcpy(buf, host, piece);
			buf += piece;
		}
		n++;
		left -= piece;
		off += piece;
		if (off == c->iov[idx].iov_len) {
			idx++;
			off = 0;
		}
	}
	c->idx = idx;
	c->off = off;
	c->remaining -= len;
	if (nr)
		*nr = out ? n : 0;
	return 0;
}

int vq_reader_read(struct vq_reader *r, void *dst, size_t len)
{
	if (len > r->c.remaining)
		return -EMSGSIZE;
	return vq_cursor_walk(&r->c, len, dst, false, NULL, 0, NULL);
}

int vq_reader_skip(struct vq_reader *r, size_t len)
{
	if (len > r->c.remaining)
		return -EMSGSIZE;
	return vq_cursor_walk(&r->c, len, NULL, false, NULL, 0, NULL);
}

int vq_reader_iov(struct vq_reader *r, size_t len, struct iovec *out, unsigned int max,
		  unsigned int *nr)
{
	if (len > r->c.remaining)
		return -EMSGSIZE;
	return vq_cursor_walk(&r->c, len, NULL, false, out, max, nr);
}

int vq_writer_write(struct vq_writer *w, const void *src, size_t len)
{
	if (len > w->c.remaining)
		return -EMSGSIZE;
	/* The cursor only reads through buf when to_guest is false; here it is a source. */
	int err = vq_cursor_walk(&w->c, len, (uint8_t *)(uintptr_t)src, true, NULL, 0, NULL);
	if (!err)
		w->written += len;
	return err;
}

int vq_writer_skip(struct vq_writer *w, size_t len)
{
	if (len > w->c.remaining)
		return -EMSGSIZE;
	int err = vq_cursor_walk(&w->c, len, NULL, true, NULL, 0, NULL);
	if (!err)
		w->written += len;
	return err;
}

int vq_writer_iov(struct vq_writer *w, size_t len, struct iovec *out, unsigned int max,
		  unsigned int *nr)
{
	if (len > w->c.remaining)
		return -EMSGSIZE;
	int err = vq_cursor_walk(&w->c, len, NULL, true, out, max, nr);
	if (!err)
		w->written += len;
	return err;
}

size_t vq_iov_len(const struct iovec *iov, unsigned int nr)
{
	size_t total = 0;
	for (unsigned int i = 0; i < nr; i++)
		total += iov[i].iov_len;
	return total;
}
