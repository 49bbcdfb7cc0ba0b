/*
 * pcache.c: SQLite's default page cache behind a thin wrapper that skips
 * the truncations that cannot drop anything.
 *
 * At the end of every transaction the pager truncates its cache to the
 * database's size.  The default cache keeps the largest key it has ever
 * held and, when that key is far past the limit, scans its whole hash
 * table to find the pages to drop.  A b-tree that splits a page swaps page
 * numbers through a temporary key, the lock page's number (1 GiB / page
 * size + 1), so after any split the default cache believes a page lies far
 * past the end, and the next commit scans every bucket.  With the store's
 * 64 MiB cache that scan was 5.5% of the serving thread's time under load.
 *
 * The wrapper keeps its own bound on the keys its cache can hold, leaving
 * out the lock page, which holds no data: its key only ever carries a page
 * in the middle of a swap.  A truncation at or below the bound, or while
 * a page may still sit at the lock page's key, is passed on unchanged.
 * Keys only enter a cache through xFetch (with a create flag) and xRekey,
 * so the bound is never too low.
 */
#include "pcache.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

/* SQLite's PENDING_BYTE: the offset of its lock bytes in a database. */
#define ST_LOCK_BYTE 0x40000000u

struct cache {
	sqlite3_pcache *inner;
	unsigned max;      /* no page but the lock page's has a larger key */
	unsigned lock_key; /* the lock page's number at this page size */
	bool lock_held;    /* a page may be keyed at lock_key */
};

static sqlite3_pcache_methods2 dflt;
static atomic_uint_fast64_t n_passed, n_skipped;

static void
note_key(struct cache *c, unsigned key)
{
	if (key == c->lock_key)
		c->lock_held = true;
	else if (key > c->max)
		c->max = key;
}

static int
pc_init(void *arg)
{
	(void)arg;
	return dflt.xInit(dflt.pArg);
}

static void
pc_shutdown(void *arg)
{
	(void)arg;
	if (dflt.xShutdown != NULL)
		dflt.xShutdown(dflt.pArg);
}

static sqlite3_pcache *
pc_create(int sz_page, int sz_extra, int purgeable)
{
	struct cache *c;

	if (sz_page <= 0 || (c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	if ((c->inner = dflt.xCreate(sz_page, sz_extra, purgeable)) == NULL) {
		free(c);
		return NULL;
	}
	c->lock_key = ST_LOCK_BYTE / (unsigned)sz_page + 1;
	return (sqlite3_pcache *)c;
}

static void
pc_cachesize(sqlite3_pcache *p, int n)
{
	dflt.xCachesize(((struct cache *)p)->inner, n);
}

static int
pc_pagecount(sqlite3_pcache *p)
{
	return dflt.xPagecount(((struct cache *)p)->inner);
}

static sqlite3_pcache_page *
pc_fetch(sqlite3_pcache *p, unsigned key, int create)
{
	struct cache *c = (struct cache *)p;
	sqlite3_pcache_page *pg = dflt.xFetch(c->inner, key, create);

	if (pg != NULL && create)
		note_key(c, key);
	return pg;
}

static void
pc_unpin(sqlite3_pcache *p, sqlite3_pcache_page *pg, int discard)
{
	dflt.xUnpin(((struct cache *)p)->inner, pg, discard);
}

static void
pc_rekey(sqlite3_pcache *p, sqlite3_pcache_page *pg, unsigned old_key,
    unsigned new_key)
{
	struct cache *c = (struct cache *)p;

	dflt.xRekey(c->inner, pg, old_key, new_key);
	/* Only one page at a time can hold a key. */
	if (old_key == c->lock_key)
		c->lock_held = false;
	note_key(c, new_key);
}

static void
pc_truncate(sqlite3_pcache *p, unsigned limit)
{
	struct cache *c = (struct cache *)p;

	if (limit > c->max && (!c->lock_held || limit > c->lock_key)) {
		atomic_fetch_add_explicit(&n_skipped, 1, memory_order_relaxed);
		return;
	}
	dflt.xTruncate(c->inner, limit);
	atomic_fetch_add_explicit(&n_passed, 1, memory_order_relaxed);
	if (limit <= c->max)
		c->max = limit > 0 ? limit - 1 : 0;
	if (limit <= c->lock_key)
		c->lock_held = false;
}

static void
pc_destroy(sqlite3_pcache *p)
{
	struct cache *c = (struct cache *)p;

	dflt.xDestroy(c->inner);
	free(c);
}

static void
pc_shrink(sqlite3_pcache *p)
{
	dflt.xShrink(((struct cache *)p)->inner);
}

static const sqlite3_pcache_methods2 methods = {
    .iVersion = 1,
    .pArg = NULL,
    .xInit = pc_init,
    .xShutdown = pc_shutdown,
    .xCreate = pc_create,
    .xCachesize = pc_cachesize,
    .xPagecount = pc_pagecount,
    .xFetch = pc_fetch,
    .xUnpin = pc_unpin,
    .xRekey = pc_rekey,
    .xTruncate = pc_truncate,
    .xDestroy = pc_destroy,
    .xShrink = pc_shrink,
};

int
st_pcache_configure(void)
{
	sqlite3_pcache_methods2 d;

	/* Both calls fail once SQLite has initialised. */
	if (sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &d) != SQLITE_OK ||
	    d.xCreate == NULL || d.xShrink == NULL)
		return -1;
	dflt = d;
	return sqlite3_config(SQLITE_CONFIG_PCACHE2, &methods) == SQLITE_OK
	           ? 0
	           : -1;
}

void
st_pcache_counts(uint64_t *passed, uint64_t *skipped)
{
	*passed = atomic_load_explicit(&n_passed, memory_order_relaxed);
	*skipped = atomic_load_explicit(&n_skipped, memory_order_relaxed);
}
