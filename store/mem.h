/*
 * mem.h: SQLite's allocator, with a free list per thread for small blocks
 * (see mem.c).  Only db.c configures it.
 */
#ifndef ST_MEM_H
#define ST_MEM_H

/*
 * Puts the allocator in place.  It must run before SQLite initialises;
 * afterwards it changes nothing and returns -1, and SQLite keeps malloc.
 * Returns 0 when the allocator is in place.  db.c calls it once.
 */
int st_mem_configure(void);

#endif
