/*
 * mem.c: SQLite's allocator, with a free list per thread for small blocks.
 *
 * Debian builds SQLite without its lookaside allocator, so every cursor
 * and record a statement builds is a malloc, and all of them are freed
 * when the statement ends: about 78 allocations per store write, most of
 * them between 256 bytes and 1 KiB, in bursts larger than glibc's
 * per-thread cache holds.  The surplus went through glibc's bins, with
 * their coalescing.
 *
 * Here a block of up to ST_MEM_SMALL_MAX bytes is rounded up to a
 * multiple of ST_MEM_CLASS bytes and, when freed, kept on the freeing
 * thread's list for its size, up to ST_MEM_KEEP blocks a size; anything
 * else goes to malloc and free.  A block carries its size in a 16-byte
 * header, so it can be freed by any thread.  A thread's lists are given
 * back when it exits.
 */
#include "mem.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ST_MEM_CLASS 32       /* bytes between small sizes */
#define ST_MEM_SMALL_MAX 1024 /* the largest small block */
#define ST_MEM_KEEP 64        /* free blocks a thread keeps of a size */
#define ST_MEM_NCLASS (ST_MEM_SMALL_MAX / ST_MEM_CLASS)

/* Keeps the payload 16-byte aligned, as malloc's is. */
struct hdr {
	uint64_t size; /* usable bytes: a class's size, or a large request */
	uint64_t pad;
};

struct free_block {
	struct free_block *next;
};

struct lists {
	struct free_block *head[ST_MEM_NCLASS];
	unsigned n[ST_MEM_NCLASS];
};

static _Thread_local struct lists *tl;
/* st_mem_fail_nth: allocations left before the one that fails. */
static _Thread_local long fail_in;
static _Thread_local bool fail_fired;
static pthread_key_t lists_key;
static bool key_ok;

static void
lists_free(void *arg)
{
	struct lists *l = arg;

	for (size_t c = 0; c < ST_MEM_NCLASS; c++)
		while (l->head[c] != NULL) {
			struct free_block *b = l->head[c];

			l->head[c] = b->next;
			free((struct hdr *)(void *)b - 1);
		}
	free(l);
	tl = NULL;
}

/* The calling thread's lists, made on first use; NULL when they cannot
 * be (the thread then allocates straight from malloc). */
static struct lists *
lists_get(void)
{
	if (tl == NULL && key_ok && (tl = calloc(1, sizeof(*tl))) != NULL &&
	    pthread_setspecific(lists_key, tl) != 0) {
		free(tl);
		tl = NULL;
	}
	return tl;
}

static uint64_t
round_up(int n)
{
	uint64_t sz = n > 0 ? (uint64_t)n : 1;

	if (sz > ST_MEM_SMALL_MAX)
		return sz;
	return (sz + ST_MEM_CLASS - 1) / ST_MEM_CLASS * ST_MEM_CLASS;
}

/* Whether this allocation is the one a test wants to fail. */
static bool
mem_fault(void)
{
	if (fail_in <= 0 || --fail_in > 0)
		return false;
	fail_fired = true;
	return true;
}

void
st_mem_fail_nth(long n)
{
	fail_in = n;
	fail_fired = false;
}

bool
st_mem_fault_fired(void)
{
	return fail_fired;
}

static void *
mem_malloc(int n)
{
	uint64_t sz = round_up(n);
	struct lists *l;
	struct hdr *h;

	if (mem_fault())
		return NULL;
	if (sz <= ST_MEM_SMALL_MAX && (l = lists_get()) != NULL) {
		size_t c = sz / ST_MEM_CLASS - 1;
		struct free_block *b = l->head[c];

		if (b != NULL) {
			l->head[c] = b->next;
			l->n[c]--;
			return b;
		}
	}
	if ((h = malloc(sizeof(*h) + sz)) == NULL)
		return NULL;
	h->size = sz;
	return h + 1;
}

static void
mem_free(void *p)
{
	struct hdr *h;
	struct lists *l;

	if (p == NULL)
		return;
	h = (struct hdr *)p - 1;
	if (h->size <= ST_MEM_SMALL_MAX && (l = lists_get()) != NULL) {
		size_t c = h->size / ST_MEM_CLASS - 1;

		if (l->n[c] < ST_MEM_KEEP) {
			struct free_block *b = p;

			b->next = l->head[c];
			l->head[c] = b;
			l->n[c]++;
			return;
		}
	}
	free(h);
}

static int
mem_size(void *p)
{
	return p != NULL ? (int)((struct hdr *)p - 1)->size : 0;
}

static void *
mem_realloc(void *p, int n)
{
	uint64_t sz = round_up(n);
	struct hdr *h;
	void *q;

	if (p == NULL)
		return mem_malloc(n);
	h = (struct hdr *)p - 1;
	if (sz == h->size)
		return p;
	if (h->size > ST_MEM_SMALL_MAX && sz > ST_MEM_SMALL_MAX) {
		if (mem_fault() || (h = realloc(h, sizeof(*h) + sz)) == NULL)
			return NULL;
		h->size = sz;
		return h + 1;
	}
	if ((q = mem_malloc(n)) == NULL)
		return NULL;
	memcpy(q, p, h->size < sz ? h->size : sz);
	mem_free(p);
	return q;
}

static int
mem_roundup(int n)
{
	return (int)round_up(n);
}

static int
mem_init(void *arg)
{
	(void)arg;
	return SQLITE_OK;
}

static void
mem_shutdown(void *arg)
{
	(void)arg;
}

static const sqlite3_mem_methods methods = {
    .xMalloc = mem_malloc,
    .xFree = mem_free,
    .xRealloc = mem_realloc,
    .xSize = mem_size,
    .xRoundup = mem_roundup,
    .xInit = mem_init,
    .xShutdown = mem_shutdown,
    .pAppData = NULL,
};

int
st_mem_configure(void)
{
	if (!key_ok)
		key_ok = pthread_key_create(&lists_key, lists_free) == 0;
	if (!key_ok ||
	    sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) != SQLITE_OK)
		return -1;
	return 0;
}
