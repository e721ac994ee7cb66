/* handle.c: the table of open file and directory handles, with stale-fh detection. */
#include "devices/fs/handle.h"
#include "devices/fs/fs_budget.h"
#include "devices/fs/fs_close.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

int fsh_init(struct fsh_table *t, uint32_t max_handles)
{
	t->slots = NULL;
	t->gens = NULL;
	t->nr_slots = 0;
	t->used = 0;
	t->free_hint = 0;
	t->max_handles = max_handles ? max_handles : 1;
	t->park = NULL;
	t->evict = NULL;
	t->park_ctx = NULL;
	return -pthread_mutex_init(&t->lock, NULL);
}

static void fsh_free(struct fsh_handle *h)
{
	if (h->fd >= 0) {
		fs_close(h->fd);
		fs_budget_put_fd();
	}
	pthread_mutex_destroy(&h->dir_lock);
	if (h->dir.buf) {
		free(h->dir.buf);
		fs_budget_put_dir_buffer();
	}
	free(h);
}

/* The handle's last user is gone: its fd goes to its inode if parkable and wanted (its fd budget
   token with it), else it closes. */
static void fsh_end(struct fsh_table *t, struct fsh_handle *h)
{
	if (h->parkable && t->park && t->park(t->park_ctx, h->fd, &h->park))
		h->fd = -1;
	fsh_free(h);
}

void fsh_destroy(struct fsh_table *t)
{
	uint32_t i;

	for (i = 0; i < t->nr_slots; i++)
		if (t->slots[i])
			fsh_free(t->slots[i]);
	free(t->slots);
	free(t->gens);
	pthread_mutex_destroy(&t->lock);
}

/* Grow the slot arrays (lock held). */
static int fsh_grow(struct fsh_table *t)
{
	uint32_t nr = t->nr_slots ? t->nr_slots * 2 : 64, i;
	struct fsh_handle **slots;
	uint32_t *gens;

	if (nr > t->max_handles)
		nr = t->max_handles;
	if (nr <= t->nr_slots)
		return -ENFILE;
	slots = realloc(t->slots, nr * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	t->slots = slots;
	gens = realloc(t->gens, nr * sizeof(*gens));
	if (!gens)
		return -ENOMEM;
	t->gens = gens;
	for (i = t->nr_slots; i < nr; i++) {
		slots[i] = NULL;
		gens[i] = 1;
	}
	t->free_hint = t->nr_slots;
	t->nr_slots = nr;
	return 0;
}

int fsh_add(struct fsh_table *t, int fd, enum fsh_kind kind, const struct fsi_park *park,
	    uint64_t *fh)
{
	struct fsh_handle *h;
	uint32_t i;
	int err;

	/* Out of fds: a parked one goes first (a cache), then the guest hears ENFILE. */
	if (fs_budget_take_fd() &&
	    !(t->evict && t->evict(t->park_ctx) && fs_budget_take_fd() == 0)) {
		close(fd);
		return -ENFILE;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		fs_budget_put_fd();
		return -ENOMEM;
	}
	h->fd = fd;
	h->is_dir = kind == FSH_DIR;
	h->kind = (uint8_t)kind;
	if (park) {
		h->parkable = true;
		h->park = *park;
	}
	h->refs = 1; /* the table's own reference, dropped by fsh_release */
	pthread_mutex_init(&h->dir_lock, NULL);
	pthread_mutex_lock(&t->lock);
	if (t->used >= t->max_handles) {
		err = -ENFILE;
		goto fail;
	}
	if (t->used == t->nr_slots) {
		err = fsh_grow(t);
		if (err)
			goto fail;
	}
	for (i = t->free_hint;; i = (i + 1) % t->nr_slots)
		if (!t->slots[i])
			break;
	t->slots[i] = h;
	t->used++;
	t->free_hint = (i + 1) % t->nr_slots;
	h->gen = t->gens[i];
	pthread_mutex_unlock(&t->lock);
	*fh = (uint64_t)h->gen << 32 | i;
	return 0;
fail:
	pthread_mutex_unlock(&t->lock);
	fsh_free(h);
	return err;
}

/* Lock held: the live handle for fh, or NULL. */
static struct fsh_handle *fsh_find(struct fsh_table *t, uint64_t fh, bool want_dir)
{
	uint32_t slot = (uint32_t)fh, gen = (uint32_t)(fh >> 32);
	struct fsh_handle *h;

	if (slot >= t->nr_slots)
		return NULL;
	h = t->slots[slot];
	if (!h || h->gen != gen || h->is_dir != want_dir)
		return NULL;
	return h;
}

struct fsh_handle *fsh_get(struct fsh_table *t, uint64_t fh, bool want_dir)
{
	struct fsh_handle *h;

	pthread_mutex_lock(&t->lock);
	h = fsh_find(t, fh, want_dir);
	if (h) /* in the table: the table's reference keeps refs >= 1 while we add ours */
		__atomic_fetch_add(&h->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&t->lock);
	return h;
}

void fsh_put(struct fsh_table *t, struct fsh_handle *h)
{
	bool last;

	if (!h)
		return;
	/* No table lock: the last reference can only be dropped once fsh_release took h out of the
	   table, so nobody can find h and take a new one meanwhile. */
	last = __atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) == 0;
	if (last)
		fsh_end(t, h);
}

int fsh_release(struct fsh_table *t, uint64_t fh, bool want_dir)
{
	uint32_t slot = (uint32_t)fh;
	struct fsh_handle *h;
	bool last;

	pthread_mutex_lock(&t->lock);
	h = fsh_find(t, fh, want_dir);
	if (!h) {
		pthread_mutex_unlock(&t->lock);
		return -EBADF;
	}
	t->slots[slot] = NULL;
	t->gens[slot]++;
	t->used--;
	pthread_mutex_unlock(&t->lock);
	last = __atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) == 0; /* the table's reference */
	if (last)
		fsh_end(t, h);
	return 0;
}

void fsh_release_all(struct fsh_table *t)
{
	uint32_t i;

	for (i = 0;; i++) {
		struct fsh_handle *h;
		uint64_t fh = 0;
		bool dir = false;

		pthread_mutex_lock(&t->lock);
		if (i >= t->nr_slots) {
			pthread_mutex_unlock(&t->lock);
			return;
		}
		h = t->slots[i];
		if (h) {
			fh = (uint64_t)h->gen << 32 | i;
			dir = h->is_dir;
		}
		pthread_mutex_unlock(&t->lock);
		/* -EBADF: a request on another queue released it meanwhile, which is just as good. */
		if (h)
			(void)!fsh_release(t, fh, dir);
	}
}
