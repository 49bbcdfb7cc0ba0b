/*
 * mem.h: SQLite's allocator, with a free list per thread for small blocks
 * (see mem.c).  Only db.c configures it.
 */
#ifndef ST_MEM_H
#define ST_MEM_H

#include <stdbool.h>

/*
 * Puts the allocator in place.  It must run before SQLite initialises;
 * afterwards it changes nothing and returns -1, and SQLite keeps malloc.
 * Returns 0 when the allocator is in place.  db.c calls it once.
 */
int st_mem_configure(void);

/*
 * For tests that inject allocation failures: the nth allocation SQLite
 * makes from now on the calling thread fails (n 0: none does), once.
 * st_mem_fault_fired says whether it has since.
 */
void st_mem_fail_nth(long n);
bool st_mem_fault_fired(void);

#endif
