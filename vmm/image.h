/* image.h: a kernel or initrd file as the boot loaders read it: each piece read straight to where it goes. */
#ifndef RINGVM_IMAGE_H
#define RINGVM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The loaders (arch/x86/boot.c) never hold a whole image: they read the headers into locals and
 * each loaded segment (a vmlinux's PT_LOAD, a bzImage's payload, the initrd) with one pread() into
 * its place in guest RAM. Nothing is mapped or copied twice, and only what is loaded is read: a
 * vmlinux's symbols and debug sections never leave the disk. A file system that caches nothing
 * between opens (a network or 9p mount) pays one request per msize instead of a page fault per
 * readahead window.
 *
 * A file source is opened by img_open; a buffer source (unit tests, a caller holding the image in
 * memory) is made by img_mem. Either is read only through img_read.
 */
struct img {
	int fd;		     /* the file, read with pread; -1 for a buffer */
	const uint8_t *data; /* the buffer (fd < 0) */
	uint64_t size;	     /* bytes in the image (the file's size when it was opened) */
};

/*
 * Open path for reading: a regular, non-empty file. 0, or -errno from open/fstat, -EISDIR (a
 * directory), -EINVAL (not a regular file), -ENODATA (empty). Caller: ringvm_build, then img_close.
 */
__attribute__((warn_unused_result)) int img_open(const char *path, struct img *img);

/* An image over data[0..size), which the caller keeps until the last img_read. */
struct img img_mem(const void *data, size_t size);

/*
 * Copy [off, off+len) of the image into dst. 0; -EINVAL when the range does not lie inside the
 * image (checked without overflow); -EIO when the file ended early (shrunk since img_open: a
 * kernel rebuilt while it was being read); another -errno from pread. Retries EINTR and short reads.
 */
__attribute__((warn_unused_result)) int img_read(const struct img *img, void *dst, size_t len, uint64_t off);

/* Close a file source (a buffer source or a closed one: nothing). */
void img_close(struct img *img);

#endif
