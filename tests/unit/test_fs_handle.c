/* test_fs_handle.c: the handle table's references under threads (handle.h, Locking). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "devices/fs/handle.h"
#include "tests/unit/tap.h"

/*
 * A READ holds a reference to its handle (fsh_get ... fsh_put) while a RELEASE of the same fh may
 * come on another queue. References are taken under the table lock and dropped without it, so:
 * - a handle stays whole (its fd open) for as long as any thread holds a reference;
 * - it ends (its fd closed) exactly once, when the last reference goes, the table's or a reader's;
 * - a stale fh (released, its slot maybe reused) finds nothing.
 * Here the handle's fd is the write end of a pipe: EOF on the read end says it was closed. Reader
 * threads take and drop references to the current fh in a loop while the main thread adds and
 * releases handles. The ASan build reports any use of a handle after its end.
 */
#define ROUNDS 1000
#define READERS 3
/* How long a released handle may take to end: a reader holds its reference across one yield, but
   on a loaded machine it can be preempted holding it. Only a failing run waits this long. */
#define END_WAIT_MS 10000

static struct fsh_table table;
static uint64_t current_fh; /* atomic: the fh the readers hammer */
static int stop, seen_closed, taken;

static void *reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		struct fsh_handle *h =
			fsh_get(&table, __atomic_load_n(&current_fh, __ATOMIC_ACQUIRE), false);

		if (!h)
			continue;
		__atomic_fetch_add(&taken, 1, __ATOMIC_RELAXED);
		if (fcntl(h->fd, F_GETFD) < 0) /* closed under a holder */
			__atomic_fetch_add(&seen_closed, 1, __ATOMIC_RELAXED);
		sched_yield(); /* hold it across a release now and then */
		fsh_put(&table, h);
	}
	return NULL;
}

/* The pipe's write end closed within END_WAIT_MS: read gives EOF. */
static bool ended(int rfd)
{
	struct pollfd p = { .fd = rfd, .events = POLLIN };
	char c;

	return poll(&p, 1, END_WAIT_MS) == 1 && read(rfd, &c, 1) == 0;
}

int main(void)
{
	pthread_t th[READERS];
	unsigned int rounds_ended = 0, add_failed = 0, stale_found = 0;
	uint64_t fh = 0, old_fh = 0;

	TAP_CHECK(fsh_init(&table, 16) == 0, "a handle table");
	__atomic_store_n(&current_fh, (uint64_t)-1, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < READERS; i++)
		TAP_CHECK(pthread_create(&th[i], NULL, reader, NULL) == 0, "a reader thread");

	for (unsigned int r = 0; r < ROUNDS; r++) {
		int p[2];

		if (pipe2(p, O_CLOEXEC)) {
			add_failed++;
			break;
		}
		if (fsh_add(&table, p[1], FSH_FILE, NULL, &fh)) {
			add_failed++;
			close(p[0]);
			break;
		}
		__atomic_store_n(&current_fh, fh, __ATOMIC_RELEASE);
		for (unsigned int y = 0; y < r % 4; y++)
			sched_yield();
		bool end = fsh_release(&table, fh, false) == 0 && ended(p[0]);
		struct fsh_handle *stale = r ? fsh_get(&table, old_fh, false) : NULL;

		if (stale) {
			stale_found++;
			fsh_put(&table, stale);
		}
		old_fh = fh;
		close(p[0]);
		if (!end)
			break; /* a handle that never ends: one wait is enough to say so */
		rounds_ended++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < READERS; i++)
		pthread_join(th[i], NULL);

	TAP_CHECK(add_failed == 0, "every handle was added");
	TAP_CHECK(rounds_ended == ROUNDS,
		  "every released handle ended (its fd closed) once its last holder let go");
	TAP_CHECK(seen_closed == 0, "no holder ever found its handle's fd closed");
	TAP_CHECK(stale_found == 0, "a released fh finds nothing, its slot reused or not");
	TAP_CHECK(fsh_get(&table, fh, false) == NULL && table.used == 0,
		  "the table is empty at the end");
	printf("# %d references taken by %d readers over %d rounds\n", taken, READERS, ROUNDS);
	TAP_CHECK(taken > 0, "the readers took references while handles came and went");
	fsh_destroy(&table);
	return tap_done();
}
