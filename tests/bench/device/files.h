/* files.h: the test files on the host (written with the known pattern) and their page-cache state. */
#ifndef BENCH_FILES_H
#define BENCH_FILES_H

#include <stdint.h>

/*
 * prepare: under dir, DATA_NAME (file_mb MiB of pattern, file 0; rewritten only when its size or a
 * sample of its words is wrong), TREE_NAME/dNNN/fNNNNN (tree_files files of TREE_FILE_BYTES, file
 * i + 1's pattern; kept when the last one is right), and UNTAR_NAME/j0..j(jobs-1) empty.
 * 0 or negative errno (printed).
 */
__attribute__((warn_unused_result)) int files_prepare(const char *dir, uint64_t file_mb,
						      uint32_t tree_files, unsigned int jobs);

/* Read the whole file so it sits in the page cache. 0 or negative errno. */
__attribute__((warn_unused_result)) int files_warm(const char *path);
/* Write back and drop the file's pages from the page cache. 0 or negative errno. */
__attribute__((warn_unused_result)) int files_evict(const char *path);
/*
 * Give the data file (file 0's pattern) the page cache a write row starts from: evicted, then
 * written over in 4 KiB pieces and written back, so its pages are cached, clean, in 4 KiB folios.
 * A 4 KiB buffered write into a large folio costs ext4 (6.16 on) several times more: it walks every
 * block of the folio, and a file read back by readahead sits in large ones (README, "The page
 * cache's state"). 0 or negative errno (printed).
 */
__attribute__((warn_unused_result)) int files_rewrite_pages(const char *path);
/* Fraction (0..1) of the file's pages in the page cache (mincore), or a negative value on error. */
double files_resident(const char *path);
/* Check the whole data file holds its pattern. 0, -EIO (printed with the offset) or -errno. */
__attribute__((warn_unused_result)) int files_verify(const char *path);

#endif
