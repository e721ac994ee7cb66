/* inode.c: the inode table: two hash chains, lookup counts, and a bound on O_PATH fds. */
#include "devices/fs/inode.h"
#include "devices/fs/fs_budget.h"
#include "devices/fs/fs_close.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <linux/fuse.h>

#define FSI_MIN_BUCKETS 1024

static size_t fsi_hash_id(uint64_t nodeid, size_t nr)
{
	return (size_t)((nodeid * 0x9e3779b97f4a7c15ULL) >> 17) & (nr - 1);
}

static size_t fsi_hash_key(dev_t dev, ino_t ino, size_t nr)
{
	uint64_t h = ((uint64_t)ino * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)dev * 0xc2b2ae3d27d4eb4fULL);

	return (size_t)(h >> 17) & (nr - 1);
}

static void fsi_link(struct fsi_table *t, struct fsi_inode *ino)
{
	size_t a = fsi_hash_id(ino->nodeid, t->nr_buckets);
	size_t b = fsi_hash_key(ino->dev, ino->ino, t->nr_buckets);

	ino->next_by_id = t->by_id[a];
	t->by_id[a] = ino;
	ino->next_by_key = t->by_key[b];
	t->by_key[b] = ino;
}

/* Double the buckets when the chains get long; on allocation failure keep the old (slower) ones. */
static void fsi_grow(struct fsi_table *t)
{
	size_t nr = t->nr_buckets * 2, i;
	struct fsi_inode **id = calloc(nr, sizeof(*id));
	struct fsi_inode **key = calloc(nr, sizeof(*key));
	struct fsi_inode **old = t->by_id;
	size_t old_nr = t->nr_buckets;

	if (!id || !key) {
		free(id);
		free(key);
		return;
	}
	free(t->by_key);
	t->by_id = id;
	t->by_key = key;
	t->nr_buckets = nr;
	for (i = 0; i < old_nr; i++) {
		struct fsi_inode *ino = old[i], *next;

		for (; ino; ino = next) {
			next = ino->next_by_id;
			fsi_link(t, ino);
		}
	}
	free(old);
}

static int fsi_take_parked(struct fsi_table *t, struct fsi_inode *ino);

static void fsi_unlink(struct fsi_table *t, struct fsi_inode *ino)
{
	struct fsi_inode **pp;

	for (pp = &t->by_id[fsi_hash_id(ino->nodeid, t->nr_buckets)]; *pp; pp = &(*pp)->next_by_id) {
		if (*pp == ino) {
			*pp = ino->next_by_id;
			break;
		}
	}
	for (pp = &t->by_key[fsi_hash_key(ino->dev, ino->ino, t->nr_buckets)]; *pp;
	     pp = &(*pp)->next_by_key) {
		if (*pp == ino) {
			*pp = ino->next_by_key;
			break;
		}
	}
	/* Off the list and its token given back under the lock; the fd stays for fsi_free. */
	ino->parked_fd = fsi_take_parked(t, ino);
	t->count--;
}

/* Lock held: ino (holding parked_fd) joins the parked list as its newest. */
static void fsi_park_link(struct fsi_table *t, struct fsi_inode *ino)
{
	ino->park_older = t->park_newest;
	ino->park_newer = NULL;
	if (t->park_newest)
		t->park_newest->park_newer = ino;
	else
		t->park_oldest = ino;
	t->park_newest = ino;
	t->nr_parked++;
}

/*
 * Lock held: ino's parked fd leaves the table (off the list, its fd budget token given back) and is
 * returned for the caller to use or close; -1 when ino holds none.
 */
static int fsi_take_parked(struct fsi_table *t, struct fsi_inode *ino)
{
	int fd = ino->parked_fd;

	if (fd < 0)
		return -1;
	if (ino->park_newer)
		ino->park_newer->park_older = ino->park_older;
	else
		t->park_newest = ino->park_older;
	if (ino->park_older)
		ino->park_older->park_newer = ino->park_newer;
	else
		t->park_oldest = ino->park_newer;
	ino->park_newer = ino->park_older = NULL;
	ino->parked_fd = -1;
	t->nr_parked--;
	fs_budget_put_fd();
	return fd;
}

int fsi_init(struct fsi_table *t, int root_fd, size_t max_inodes)
{
	struct stat st;
	int err;

	if (fstat(root_fd, &st) < 0)
		return -errno;
	t->nr_buckets = FSI_MIN_BUCKETS;
	t->by_id = calloc(t->nr_buckets, sizeof(*t->by_id));
	t->by_key = calloc(t->nr_buckets, sizeof(*t->by_key));
	t->root = calloc(1, sizeof(*t->root));
	if (!t->by_id || !t->by_key || !t->root) {
		err = -ENOMEM;
		goto fail;
	}
	err = -pthread_mutex_init(&t->lock, NULL);
	if (err)
		goto fail;
	t->count = 1;
	t->max_inodes = max_inodes < 2 ? 2 : max_inodes;
	t->next_nodeid = FUSE_ROOT_ID + 1;
	t->root->nodeid = FUSE_ROOT_ID;
	t->root->dev = st.st_dev;
	t->root->ino = st.st_ino;
	t->root->fd = root_fd;
	t->root->type = st.st_mode & S_IFMT;
	t->root->nlookup = 1; /* the guest's mount; FORGET never takes the root below this */
	t->root->parked_fd = -1;
	t->park_newest = t->park_oldest = NULL;
	t->nr_parked = 0;
	fsi_link(t, t->root);
	return 0;
fail:
	free(t->by_id);
	free(t->by_key);
	free(t->root);
	return err;
}

void fsi_destroy(struct fsi_table *t)
{
	size_t i;

	for (i = 0; i < t->nr_buckets; i++) {
		struct fsi_inode *ino = t->by_id[i], *next;

		for (; ino; ino = next) {
			next = ino->next_by_id;
			close(ino->fd);
			int parked = fsi_take_parked(t, ino);
			if (parked >= 0)
				close(parked);
			if (ino != t->root)
				fs_budget_put_fd(); /* the root is the share's own, never charged */
			free(ino);
		}
	}
	free(t->by_id);
	free(t->by_key);
	pthread_mutex_destroy(&t->lock);
}

static struct fsi_inode *fsi_find_id(struct fsi_table *t, uint64_t nodeid)
{
	struct fsi_inode *ino = t->by_id[fsi_hash_id(nodeid, t->nr_buckets)];

	while (ino && ino->nodeid != nodeid)
		ino = ino->next_by_id;
	return ino;
}

struct fsi_inode *fsi_get(struct fsi_table *t, uint64_t nodeid)
{
	struct fsi_inode *ino;

	pthread_mutex_lock(&t->lock);
	ino = fsi_find_id(t, nodeid);
	if (ino)
		ino->refs++;
	pthread_mutex_unlock(&t->lock);
	return ino;
}

/* Called with the lock held: unlink a dead inode and return it for closing outside the lock. */
static struct fsi_inode *fsi_reap(struct fsi_table *t, struct fsi_inode *ino)
{
	if (ino->refs || ino->nlookup || ino == t->root)
		return NULL;
	fsi_unlink(t, ino);
	return ino;
}

static void fsi_free(struct fsi_inode *dead)
{
	if (dead) {
		fs_close(dead->fd);
		fs_budget_put_fd();
		if (dead->parked_fd >= 0)
			fs_close(dead->parked_fd);
		free(dead);
	}
}

void fsi_put(struct fsi_table *t, struct fsi_inode *ino)
{
	struct fsi_inode *dead;

	if (!ino)
		return;
	pthread_mutex_lock(&t->lock);
	ino->refs--;
	dead = fsi_reap(t, ino);
	pthread_mutex_unlock(&t->lock);
	fsi_free(dead);
}

struct fsi_inode *fsi_relearn(struct fsi_table *t, const struct stat *st)
{
	struct fsi_inode *ino;

	pthread_mutex_lock(&t->lock);
	ino = t->by_key[fsi_hash_key(st->st_dev, st->st_ino, t->nr_buckets)];
	while (ino && !(ino->dev == st->st_dev && ino->ino == st->st_ino))
		ino = ino->next_by_key;
	if (ino && ino->type == (st->st_mode & S_IFMT)) {
		ino->nlookup++;
		ino->refs++;
	} else {
		ino = NULL;
	}
	pthread_mutex_unlock(&t->lock);
	return ino;
}

int fsi_learn(struct fsi_table *t, int fd, const struct stat *st, struct fsi_inode **out)
{
	struct fsi_inode *ino, *fresh;

	/* Allocate before locking; most lookups of a known inode then just free it. */
	fresh = calloc(1, sizeof(*fresh));
	if (!fresh) {
		close(fd);
		return -ENOMEM;
	}
	pthread_mutex_lock(&t->lock);
	ino = t->by_key[fsi_hash_key(st->st_dev, st->st_ino, t->nr_buckets)];
	while (ino && !(ino->dev == st->st_dev && ino->ino == st->st_ino))
		ino = ino->next_by_key;
	if (ino) {
		ino->nlookup++;
		ino->refs++;
		pthread_mutex_unlock(&t->lock);
		free(fresh);
		fs_close(fd); /* we already hold this inode open */
		*out = ino;
		return 0;
	}
	int evicted = -1;
	bool room = t->count < t->max_inodes;
	if (room && fs_budget_take_fd()) {
		/* Out of fds: a parked one goes first (a cache), then the guest hears ENFILE. */
		evicted = t->park_oldest ? fsi_take_parked(t, t->park_oldest) : -1;
		room = evicted >= 0 && fs_budget_take_fd() == 0;
	}
	if (!room) {
		pthread_mutex_unlock(&t->lock);
		if (evicted >= 0)
			fs_close(evicted);
		free(fresh);
		close(fd);
		return -ENFILE;
	}
	fresh->nodeid = t->next_nodeid++;
	fresh->dev = st->st_dev;
	fresh->ino = st->st_ino;
	fresh->fd = fd;
	fresh->type = st->st_mode & S_IFMT;
	fresh->nlookup = 1;
	fresh->refs = 1;
	fresh->parked_fd = -1;
	if (t->count >= t->nr_buckets)
		fsi_grow(t);
	fsi_link(t, fresh);
	t->count++;
	pthread_mutex_unlock(&t->lock);
	if (evicted >= 0)
		fs_close(evicted);
	*out = fresh;
	return 0;
}

void fsi_forget(struct fsi_table *t, uint64_t nodeid, uint64_t n)
{
	struct fsi_inode *ino, *dead = NULL;

	pthread_mutex_lock(&t->lock);
	ino = fsi_find_id(t, nodeid);
	if (ino && ino != t->root) {
		/* A guest that forgets more than it looked up is wrong; clamp instead of wrapping. */
		ino->nlookup = n > ino->nlookup ? 0 : ino->nlookup - n;
		dead = fsi_reap(t, ino);
	}
	pthread_mutex_unlock(&t->lock);
	fsi_free(dead);
}

void fsi_stamp_of(struct fsi_stamp *out, const struct stat *st)
{
	out->mode = (uint32_t)st->st_mode;
	out->uid = (uint32_t)st->st_uid;
	out->gid = (uint32_t)st->st_gid;
	out->ctime_sec = (int64_t)st->st_ctim.tv_sec;
	out->ctime_nsec = (int64_t)st->st_ctim.tv_nsec;
}

bool fsi_park(struct fsi_table *t, int fd, const struct fsi_park *p)
{
	struct fsi_inode *ino;
	bool parked = false;

	pthread_mutex_lock(&t->lock);
	ino = fsi_find_id(t, p->nodeid);
	/* Only while the guest holds the inode: one it forgot would keep the fd until a reset. */
	if (ino && ino->nlookup && ino->type == S_IFREG && ino->parked_fd < 0 &&
	    fs_budget_may_park()) {
		ino->parked_fd = fd;
		ino->parked = *p;
		fsi_park_link(t, ino);
		parked = true;
	}
	pthread_mutex_unlock(&t->lock);
	return parked;
}

int fsi_unpark(struct fsi_table *t, struct fsi_inode *ino, uint32_t uid, uint32_t gid, int flags,
	       struct fsi_park *p)
{
	int fd = -1;

	pthread_mutex_lock(&t->lock);
	if (ino->parked_fd >= 0 && ino->parked.uid == uid && ino->parked.gid == gid &&
	    ino->parked.flags == flags) {
		*p = ino->parked;
		/* Its token goes back: the handle it goes to takes one of its own. */
		fd = fsi_take_parked(t, ino);
	}
	pthread_mutex_unlock(&t->lock);
	return fd;
}

bool fsi_evict_parked(struct fsi_table *t)
{
	int fd;

	pthread_mutex_lock(&t->lock);
	fd = t->park_oldest ? fsi_take_parked(t, t->park_oldest) : -1;
	pthread_mutex_unlock(&t->lock);
	if (fd < 0)
		return false;
	fs_close(fd);
	return true;
}

/* A count of the table, read under its lock. */
static size_t fsi_read_count(struct fsi_table *t, const size_t *count)
{
	size_t n;

	pthread_mutex_lock(&t->lock);
	n = *count;
	pthread_mutex_unlock(&t->lock);
	return n;
}

size_t fsi_parked_count(struct fsi_table *t)
{
	return fsi_read_count(t, &t->nr_parked);
}

size_t fsi_count(struct fsi_table *t)
{
	return fsi_read_count(t, &t->count);
}

void fsi_forget_all(struct fsi_table *t)
{
	struct fsi_inode *dead = NULL, *ino, *next;
	size_t i;

	pthread_mutex_lock(&t->lock);
	for (i = 0; i < t->nr_buckets; i++) {
		for (ino = t->by_id[i]; ino; ino = next) {
			next = ino->next_by_id;
			if (ino == t->root)
				continue;
			ino->nlookup = 0;
			if (fsi_reap(t, ino)) {
				/* Unlinked from both chains: reuse next_by_id for the free list. */
				ino->next_by_id = dead;
				dead = ino;
			}
		}
	}
	pthread_mutex_unlock(&t->lock);
	for (; dead; dead = next) {
		next = dead->next_by_id;
		fsi_free(dead);
	}
}
