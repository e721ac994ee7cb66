/* image.c: a kernel or initrd file (or buffer) read piecewise by the boot loaders. */
#define _GNU_SOURCE
#include "vmm/image.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int img_open(const char *path, struct img *img)
{
	*img = (struct img){ .fd = -1 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int ret = 0;
	if (fstat(fd, &st) < 0)
		ret = -errno;
	else if (!S_ISREG(st.st_mode))
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	else if (st.st_size == 0)
		ret = -ENODATA;
	if (ret) {
		close(fd);
		return ret;
	}
	*img = (struct img){ .fd = fd, .size = (uint64_t)st.st_size };
	return 0;
}

struct img img_mem(const void *data, size_t size)
{
	return (struct img){ .fd = -1, .data = data, .size = size };
}

int img_read(const struct img *img, void *dst, size_t len, uint64_t off)
{
	/* Subtraction only: off <= size, len <= size - off. */
	if (off > img->size || len > img->size - off)
		return -EINVAL;
	if (img->fd < 0) {
		if (len)
			memcpy(dst, img->data + off, len);
		return 0;
	}
	uint8_t *p = dst;
	while (len > 0) {
		ssize_t n = pread(img->fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO; /* the file shrank after img_open */
		p += n;
		off += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

void img_close(struct img *img)
{
	if (img->fd >= 0)
		close(img->fd);
	*img = (struct img){ .fd = -1 };
}
