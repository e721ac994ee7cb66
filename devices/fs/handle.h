/* handle.h: open files and directories the guest holds (FUSE fh), each an fd with a reference count. */
#ifndef RINGVM_FS_HANDLE_H
#define RINGVM_FS_HANDLE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/fs/inode.h"

/*
 * fh = generation << 32 | slot. The generation is bumped when a slot is reused, so an fh the guest
 * already released (or made up) finds nothing. A READ in flight in io_uring holds a reference, so a
 * RELEASE arriving on another queue meanwhile only drops the table's reference; the fd is closed
 * when the last user puts it. At most max_handles are open at once, and no more than the process-wide
 * fd budget allows (fs_budget.h; -ENFILE beyond).
 *
 * Locking: the table mutex protects slots and generations. refs is atomic: taken (fsh_get) only
 * under the mutex while the handle is in the table, dropped (fsh_put, after every READ and WRITE)
 * without it. dir_lock serialises READDIR on one directory handle (its file position is the
 * readdir cursor); the guest kernel does that already, a hostile guest sending the same fh on two
 * queues is kept from racing us.
 */
/*
 * A directory's read position, kept between READDIRs (under dir_lock): the getdents64 buffer and
 * how far the guest got in it. Seeking to the guest's cookie on every call would be wrong on file
 * systems whose d_off is an entry count (tmpfs before 6.6): entries unlinked in between shift the
 * count and later names are skipped (`rm -rf` then fails with ENOTEMPTY).
 */
struct fsh_dirstream {
	uint8_t *buf;     /* FSH_DIRBUF bytes while entries read from the host wait for the guest;
			     NULL otherwise (freed once given out; one dir buffer of fs_budget.h) */
	size_t len;       /* bytes of entries in buf */
	size_t pos;       /* first entry the guest has not been given */
	uint64_t cookie;  /* d_off of the last entry given: where a READDIR continuing the stream starts */
	bool valid;       /* buf/pos/cookie describe the fd's stream */
};
#define FSH_DIRBUF 8192

struct fsh_handle {
	int fd;
	bool is_dir;
	uint8_t kind; /* enum fsh_kind: how its READs and WRITEs are made (fs_server.root_local) */
	uint32_t gen;
	unsigned int refs; /* atomic */
	bool parkable;         /* at its end, offer the fd to its inode (park) instead of closing it */
	struct fsi_park park;  /* parkable: its key (immutable) */
	pthread_mutex_t dir_lock;
	struct fsh_dirstream dir; /* directories only; under dir_lock */
};

/* Offer the fd of a parkable handle that ends (fsi_park): true when taken (no longer ours). */
typedef bool (*fsh_park_fn)(void *ctx, int fd, const struct fsi_park *p);

struct fsh_table {
	pthread_mutex_t lock;
	struct fsh_handle **slots;
	uint32_t *gens; /* generation of each slot, kept when the slot is free */
	uint32_t nr_slots;
	uint32_t used;
	uint32_t max_handles;
	uint32_t free_hint;
	fsh_park_fn park;  /* NULL: every fd closes; set once before the first fsh_add */
	bool (*evict)(void *ctx); /* the fd budget is spent: close a parked fd (true) or not */
	void *park_ctx;    /* for both */
};

__attribute__((warn_unused_result)) int fsh_init(struct fsh_table *t, uint32_t max_handles);
void fsh_destroy(struct fsh_table *t);

/* What fsh_add enters (fs_file_kind). */
enum fsh_kind {
	FSH_DIR,
	FSH_FILE,	       /* READ and WRITE through the queue's io_uring */
	FSH_FILE_LOCAL,	       /* on local storage, buffered: WRITEs on the queue's thread, READs
				  there as far as the page cache holds them (RWF_NOWAIT) */
	FSH_FILE_LOCAL_DIRECT, /* on local storage, O_DIRECT or O_SYNC: READs and WRITEs on the
				  queue's thread while it holds no other request */
};

/* Enter fd (consumed: on error it is closed). park: its key when the fd may be parked at the
   handle's end (a plain read-only file, fs_file.c), else NULL. Returns 0 with *fh, -ENFILE or
   -ENOMEM. */
__attribute__((warn_unused_result)) int fsh_add(struct fsh_table *t, int fd, enum fsh_kind kind,
						const struct fsi_park *park, uint64_t *fh);

/* The handle for fh with a reference, or NULL. want_dir must match the handle's kind. */
struct fsh_handle *fsh_get(struct fsh_table *t, uint64_t fh, bool want_dir);
void fsh_put(struct fsh_table *t, struct fsh_handle *h);

/* RELEASE/RELEASEDIR: forget fh; the fd closes when the last in-flight user puts it. */
__attribute__((warn_unused_result)) int fsh_release(struct fsh_table *t, uint64_t fh,
						    bool want_dir);

/* Release every handle (DESTROY, device reset); in-flight users keep theirs until they put it. */
void fsh_release_all(struct fsh_table *t);

#endif
