/* dmem.c: the driver's guest memory (a sealed memfd) and its bump allocator. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/bench/device/dmem.h"

#define DMEM_ROUND (2ull << 20)

int dmem_create(struct dmem *m, uint64_t size)
{
	int err;

	memset(m, 0, sizeof(*m));
	size = (size + DMEM_ROUND - 1) & ~(DMEM_ROUND - 1);
	m->fd = memfd_create("bench-guest-ram", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (m->fd < 0)
		return -errno;
	if (ftruncate(m->fd, (off_t)size) < 0 ||
	    fcntl(m->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
		err = -errno;
		goto fail;
	}
	m->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
	if (m->base == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	m->size = size;
	return 0;
fail:
	close(m->fd);
	m->fd = -1;
	m->base = NULL;
	return err;
}

void dmem_destroy(struct dmem *m)
{
	if (m->base)
		munmap(m->base, m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
}

uint64_t dmem_alloc(struct dmem *m, uint64_t len, uint64_t align)
{
	uint64_t at = (m->next + align - 1) & ~(align - 1);

	if (at < m->next || at > m->size || len > m->size - at)
		return UINT64_MAX;
	m->next = at + len;
	memset(m->base + at, 0, len);
	return at;
}

void *dmem_ptr(const struct dmem *m, uint64_t gpa, uint64_t len)
{
	if (gpa > m->size || len > m->size - gpa)
		return NULL;
	return m->base + gpa;
}

uint64_t dmem_uaddr(const struct dmem *m, uint64_t gpa)
{
	return (uint64_t)(uintptr_t)m->base + gpa;
}
