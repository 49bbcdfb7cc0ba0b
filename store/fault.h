/*
 * fault.h: allocation failures on demand, for tests.  SQLite's own
 * allocator behind a wrapper that fails the Nth allocation of a thread
 * when armed.  The store never installs it; a test does, before SQLite
 * starts (see fault.c).
 */
#ifndef ST_FAULT_H
#define ST_FAULT_H

#include <stdbool.h>

/*
 * Puts the wrapper in front of SQLite's allocator.  It must run before
 * SQLite initialises (before the first database opens); afterwards it
 * changes nothing and returns -1.  Returns 0 when the wrapper is in
 * place.  Unarmed, it only passes each call on.
 */
int st_fault_install(void);

/*
 * Arms the wrapper: the nth allocation SQLite makes from now on, on the
 * calling thread, fails (n 0: none does), once.  A realloc counts as an
 * allocation.  st_fault_fired says whether it has failed since.  Other
 * threads (the checkpointer) allocate as usual.
 */
void st_fault_fail_nth(long n);
bool st_fault_fired(void);

#endif
