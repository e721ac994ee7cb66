/* inode.h: the table of host inodes the guest knows, keyed by (dev, ino), each holding an O_PATH fd. */
#ifndef RINGVM_FS_INODE_H
#define RINGVM_FS_INODE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Every inode the guest kernel holds a reference to (a FUSE nodeid) is one struct fsi_inode with an
 * O_PATH fd on the host inode, so a name the guest resolves later is always looked up relative to
 * the same directory, whatever happens to paths on the host.
 *
 * Two counts decide its life:
 *   nlookup  references the guest kernel holds: +1 for every successful LOOKUP-like reply (LOOKUP,
 *            MKNOD, MKDIR, SYMLINK, LINK, CREATE, each READDIRPLUS entry), -n on FORGET/BATCH_FORGET.
 *   refs     requests of ours using it right now (fsi_get .. fsi_put), on any queue's thread.
 * The inode (and its fd) is freed when both are 0. nodeids are never reused (a 64-bit counter), so a
 * stale or guessed nodeid from the guest finds nothing instead of someone else's inode.
 *
 * Bound on open fds: at most `max_inodes` inodes exist at once (each one fd); a lookup beyond it
 * fails with -ENFILE, and so does one past the fds of the process-wide budget (fs_budget.h), which
 * every share draws on (the root inode is not counted). The guest kernel forgets inodes it evicts from its cache, so this bounds a
 * workload of millions of lookups without leaking: the count only grows with what the guest holds.
 * The device sets max_inodes from RLIMIT_NOFILE (raised to its hard limit at creation).
 *
 * Locking: one mutex per table protects both hash tables, nlookup and refs; it is held for a hash
 * lookup or insert only, never across a system call other than close() of a losing duplicate fd.
 * The fields fd, nodeid, dev, ino and type are immutable while the inode is reachable.
 */
/*
 * What a host open's outcome depended on, from a stat made before the open: an fd opened then may
 * be given to a later OPEN only while a new stat of it says the same (fsi_stamp_same). mode, uid and
 * gid are compared as well as ctime because a kernel with coarse timestamps can leave ctime as it
 * was for a chmod made in the same clock tick as the first stat.
 */
struct fsi_stamp {
	uint32_t mode, uid, gid;
	int64_t ctime_sec, ctime_nsec;
};

/* A parked fd's key: the request identity and host open flags it was opened with, and its stamp. */
struct fsi_park {
	uint64_t nodeid; /* the inode it is open on (nodeids are never reused) */
	uint32_t uid, gid;
	int flags;
	struct fsi_stamp stamp;
};

struct fsi_inode {
	uint64_t nodeid;
	dev_t dev;
	ino_t ino;
	int fd;      /* O_PATH|O_NOFOLLOW on the host inode */
	mode_t type; /* S_IFMT bits: the type of an inode never changes */
	uint64_t nlookup;
	unsigned int refs;
	/* A read-only fd a RELEASE left for the next OPEN like it (fsi_park), or -1; under the lock,
	   as is its place in the table's list of parked fds (oldest at the tail, evicted first). */
	int parked_fd;
	struct fsi_park parked;
	struct fsi_inode *park_newer, *park_older;
	struct fsi_inode *next_by_id;
	struct fsi_inode *next_by_key;
};

struct fsi_table {
	pthread_mutex_t lock;
	struct fsi_inode **by_id;  /* chained hash on nodeid */
	struct fsi_inode **by_key; /* chained hash on (dev, ino) */
	size_t nr_buckets;         /* power of two, both tables */
	size_t count;
	size_t max_inodes;
	uint64_t next_nodeid;
	struct fsi_inode *root;
	struct fsi_inode *park_newest, *park_oldest; /* inodes holding a parked fd */
	size_t nr_parked;
};

/*
 * Make a table whose root (nodeid FUSE_ROOT_ID) is root_fd (an O_PATH directory fd, now owned by the
 * table). The root is never forgotten. Returns 0 or -errno.
 */
__attribute__((warn_unused_result)) int fsi_init(struct fsi_table *t, int root_fd,
						 size_t max_inodes);

/* Close every fd and free everything. No request may be running. */
void fsi_destroy(struct fsi_table *t);

/* The inode for a nodeid the guest sent, with a reference (fsi_put it), or NULL if unknown. */
struct fsi_inode *fsi_get(struct fsi_table *t, uint64_t nodeid);

void fsi_put(struct fsi_table *t, struct fsi_inode *ino);

/*
 * The guest learns about a host inode: fd is an O_PATH fd on it (consumed: kept or closed), st its
 * stat. Finds the existing inode for (st_dev, st_ino) or makes one, adds 1 to nlookup, and returns
 * it with a reference. -ENFILE beyond max_inodes, -ENOMEM.
 */
__attribute__((warn_unused_result)) int fsi_learn(struct fsi_table *t, int fd,
						  const struct stat *st, struct fsi_inode **out);

/*
 * A LOOKUP of an inode the table already holds: the inode for st (a stat of the name) if the table
 * has (st_dev, st_ino) with that type, with 1 added to nlookup and a reference, else NULL (learn it
 * with fsi_learn). While the table holds an inode its O_PATH fd keeps it alive, so no other inode
 * can have its number meanwhile.
 */
struct fsi_inode *fsi_relearn(struct fsi_table *t, const struct stat *st);

/* FORGET: the guest drops n references to nodeid. Unknown nodeids and n too large are ignored. */
void fsi_forget(struct fsi_table *t, uint64_t nodeid, uint64_t n);

/*
 * The guest unmounted (DESTROY) or the device was reset: it holds no nodeid any more. Every inode
 * but the root loses its lookups; those no request is using are freed now, the others when their
 * last request puts them.
 */
void fsi_forget_all(struct fsi_table *t);

/* The stamp of a stat (fsi_stamp above). */
void fsi_stamp_of(struct fsi_stamp *out, const struct stat *st);
static inline int fsi_stamp_same(const struct fsi_stamp *a, const struct fsi_stamp *b)
{
	return a->mode == b->mode && a->uid == b->uid && a->gid == b->gid &&
	       a->ctime_sec == b->ctime_sec && a->ctime_nsec == b->ctime_nsec;
}

/*
 * Parked fds (an OPEN-READ-RELEASE cycle without an open(2) and a close(2) each time). A RELEASE of
 * a plain read-only handle gives its fd to its inode instead of closing it, when the inode is still
 * held by the guest, holds no parked fd yet and the budget has room (fs_budget_may_park); a later
 * OPEN of that inode by the same uid and gid with the same flags takes it back (fsi_unpark) and
 * uses it if a fresh fstat of it still has the stamp taken before the first open (else it opens
 * anew). A parked fd keeps its fd budget token; it is a cache, so when the budget runs out the
 * oldest parked fd is closed to make room (fsi_evict_parked) before anything the guest asks for
 * fails with ENFILE. FORGET and reset close them too.
 * fsi_park: true when fd was parked (now the table's), false: the caller still owns it.
 */
__attribute__((warn_unused_result)) bool fsi_park(struct fsi_table *t, int fd,
						  const struct fsi_park *p);
/* The fd parked on ino if it was opened as uid, gid with flags (taken out, its key in *p), or -1. */
int fsi_unpark(struct fsi_table *t, struct fsi_inode *ino, uint32_t uid, uint32_t gid, int flags,
	       struct fsi_park *p);
/* Close the oldest parked fd, giving its budget token back: true, or false when none is parked. */
bool fsi_evict_parked(struct fsi_table *t);
/* Fds parked in the table now (tests, statistics). */
size_t fsi_parked_count(struct fsi_table *t);

/* Inodes in the table now (tests, statistics). */
size_t fsi_count(struct fsi_table *t);

#endif
