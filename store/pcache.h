/*
 * pcache.h: SQLite's default page cache, without its scan of every cached
 * page at the end of a transaction that split a b-tree page (see pcache.c).
 * Only db.c configures it.
 */
#ifndef ST_PCACHE_H
#define ST_PCACHE_H

#include <stdint.h>

/*
 * Puts the cache in front of SQLite's default one.  It must run before
 * SQLite initialises; afterwards it changes nothing and returns -1, and
 * SQLite keeps its default cache.  Returns 0 when the cache is in place.
 * db.c calls it once.
 */
int st_pcache_configure(void);

/* Truncations of a cache passed on to the default cache, and skipped
 * because they could not drop a page, since the process began. */
void st_pcache_counts(uint64_t *passed, uint64_t *skipped);

#endif
