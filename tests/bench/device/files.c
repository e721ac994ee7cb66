/* files.c: the pattern files the runs read, and page-cache control (warm, evict, residency). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/bench/device/bench.h"
#include "tests/bench/device/files.h"
#include "tests/bench/device/workload.h"

#define CHUNK (1u << 20)
/* files_rewrite_pages' write size: 4 KiB writes leave the file in the page cache in 4 KiB folios. */
#define PAGE_PIECE 4096u

static int say(int err, const char *path)
{
	fprintf(stderr, "device bench: %s: %s\n", path, strerror(-err));
	return err;
}

/* Write size bytes of file id's pattern into path, at most piece bytes per pwrite; created or
   truncated with `truncate`, else written over in place. Written back before it returns. */
static int write_pattern(const char *path, uint32_t id, uint64_t size, uint32_t piece, bool truncate)
{
	uint8_t *buf = malloc(CHUNK);
	int fd = open(path, O_WRONLY | O_CLOEXEC | (truncate ? O_CREAT | O_TRUNC : 0), 0644), err = 0;

	if (fd < 0 || !buf) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	for (uint64_t off = 0; off < size && !err; off += CHUNK) {
		uint32_t n = size - off < CHUNK ? (uint32_t)(size - off) : CHUNK;

		pattern_fill(buf, id, off, n);
		for (uint32_t done = 0; done < n && !err; done += piece) {
			uint32_t k = n - done < piece ? n - done : piece;

			if (pwrite(fd, buf + done, k, (off_t)(off + done)) != (ssize_t)k)
				err = -EIO;
		}
	}
	if (!err && fsync(fd))
		err = -errno;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err ? say(err, path) : 0;
}

/* True when path has size bytes and a few sampled words hold file id's pattern. */
static int looks_right(const char *path, uint32_t id, uint64_t size)
{
	struct stat st;
	uint64_t w;
	int fd, ok = 1;

	if (stat(path, &st) || (uint64_t)st.st_size != size)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	for (uint64_t off = 0; off + 8 <= size && ok; off += size / 16 + 8) {
		off &= ~7ull;
		ok = pread(fd, &w, 8, (off_t)off) == 8 && w == pattern_word(id, off);
	}
	close(fd);
	return ok;
}

static int mkdir_p(const char *path)
{
	return mkdir(path, 0755) && errno != EEXIST ? say(-errno, path) : 0;
}

int files_prepare(const char *dir, uint64_t file_mb, uint32_t tree_files, unsigned int jobs)
{
	char path[4096], name[OP_NAME_MAX];
	int err = mkdir_p(dir);

	snprintf(path, sizeof(path), "%s/%s", dir, DATA_NAME);
	if (!err && !looks_right(path, 0, file_mb << 20)) {
		err = write_pattern(path, 0, file_mb << 20, CHUNK, true);
		/* Just written, its pages sit in the page cache in the large folios of the 1 MiB writes;
		   every warm-up after an eviction (each O_DIRECT run makes one) reads them back by
		   readahead, in folios of other sizes. Evicted now, the first page-cache read run finds
		   the file as every later one does; a write run sets its own (files_rewrite_pages). */
		if (!err)
			err = files_evict(path);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, TREE_NAME);
	if (!err)
		err = mkdir_p(path);
	for (uint32_t i = 0; !err && i < tree_files; i++) {
		char dname[OP_NAME_MAX];

		wl_tree_dir_name(dname, wl_tree_dir(i));
		wl_tree_name(name, i);
		snprintf(path, sizeof(path), "%s/%s/%s", dir, TREE_NAME, dname);
		if (i % TREE_DIR_FILES == 0)
			err = mkdir_p(path);
		snprintf(path, sizeof(path), "%s/%s/%s/%s", dir, TREE_NAME, dname, name);
		if (!err && !looks_right(path, i + 1, TREE_FILE_BYTES))
			err = write_pattern(path, i + 1, TREE_FILE_BYTES, CHUNK, true);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, UNTAR_NAME);
	if (!err)
		err = mkdir_p(path);
	for (unsigned int i = 0; !err && i < jobs; i++) {
		snprintf(path, sizeof(path), "%s/%s/j%u", dir, UNTAR_NAME, i);
		err = mkdir_p(path);
	}
	return err;
}

/* Read the whole file in chunks (which leaves it in the page cache); with check, against file 0's
   pattern. 0, -EIO (printed with the offset) or -errno (printed). */
static int read_all(const char *path, bool check)
{
	uint8_t *buf = malloc(CHUNK);
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	uint64_t off = 0, bad;
	ssize_t n = 0;

	if (fd < 0 || !buf) {
		err = fd < 0 ? -errno : -ENOMEM;
		goto out;
	}
	while (!err && (n = pread(fd, buf, CHUNK, (off_t)off)) > 0) {
		bad = check ? pattern_check(buf, 0, off, (uint32_t)n & ~7u) : 0;
		if (bad) {
			fprintf(stderr, "device bench: %s: wrong data at byte %llu after the run\n", path,
				(unsigned long long)(off + bad - 1));
			err = -EIO;
		}
		off += (uint64_t)n;
	}
	if (n < 0)
		err = -errno;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return err == -EIO ? err : err ? say(err, path) : 0;
}

int files_warm(const char *path)
{
	return read_all(path, false);
}

int files_evict(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return say(-errno, path);
	if (fdatasync(fd) || (errno = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)))
		err = -errno;
	close(fd);
	return err ? say(err, path) : 0;
}

int files_rewrite_pages(const char *path)
{
	struct stat st;
	int err = files_evict(path);

	if (err)
		return err;
	if (stat(path, &st))
		return say(-errno, path);
	return write_pattern(path, 0, (uint64_t)st.st_size, PAGE_PIECE, false);
}

double files_resident(const char *path)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	unsigned char *vec;
	uint64_t pages, in = 0;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) || !st.st_size) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	pages = ((uint64_t)st.st_size + (uint64_t)page - 1) / (uint64_t)page;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	vec = malloc(pages);
	if (map == MAP_FAILED || !vec || mincore(map, (size_t)st.st_size, vec)) {
		if (map != MAP_FAILED)
			munmap(map, (size_t)st.st_size);
		free(vec);
		return -1;
	}
	for (uint64_t i = 0; i < pages; i++)
		in += vec[i] & 1;
	munmap(map, (size_t)st.st_size);
	free(vec);
	return (double)in / (double)pages;
}

int files_verify(const char *path)
{
	return read_all(path, true);
}
