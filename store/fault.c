/*
 * fault.c: SQLite's default allocator behind a wrapper that can fail one
 * allocation.  Tests sweep the failure over every allocation of a request
 * to check that each one ends in an error reply, never in an abort or a
 * half-written database.
 *
 * SQLite takes its allocator only before it initialises, so the wrapper
 * is installed by the test process itself, before it opens a store; the
 * store never installs it and runs on SQLite's allocator unchanged.  The
 * count is per thread, so the checkpointer's allocations do not move the
 * failure around in a sweep.
 */
#include "fault.h"

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

static sqlite3_mem_methods orig;
/* Allocations left before the one that fails; 0 when unarmed. */
static _Thread_local long fail_in;
static _Thread_local bool fail_fired;

/* Whether this allocation is the one to fail. */
static bool
fault_now(void)
{
	if (fail_in <= 0 || --fail_in > 0)
		return false;
	fail_fired = true;
	return true;
}

void
st_fault_fail_nth(long n)
{
	fail_in = n;
	fail_fired = false;
}

bool
st_fault_fired(void)
{
	return fail_fired;
}

static void *
fault_malloc(int n)
{
	return fault_now() ? NULL : orig.xMalloc(n);
}

static void *
fault_realloc(void *p, int n)
{
	return fault_now() ? NULL : orig.xRealloc(p, n);
}

static void
fault_free(void *p)
{
	orig.xFree(p);
}

static int
fault_size(void *p)
{
	return orig.xSize(p);
}

static int
fault_roundup(int n)
{
	return orig.xRoundup(n);
}

static int
fault_init(void *arg)
{
	(void)arg;
	return orig.xInit(orig.pAppData);
}

static void
fault_shutdown(void *arg)
{
	(void)arg;
	orig.xShutdown(orig.pAppData);
}

static const sqlite3_mem_methods methods = {
    .xMalloc = fault_malloc,
    .xFree = fault_free,
    .xRealloc = fault_realloc,
    .xSize = fault_size,
    .xRoundup = fault_roundup,
    .xInit = fault_init,
    .xShutdown = fault_shutdown,
    .pAppData = NULL,
};

int
st_fault_install(void)
{
	sqlite3_mem_methods d;

	/* Both calls fail once SQLite has initialised. */
	if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &d) != SQLITE_OK ||
	    d.xMalloc == NULL)
		return -1;
	/* A second install would wrap the wrapper. */
	if (d.xMalloc == fault_malloc)
		return 0;
	orig = d;
	return sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) == SQLITE_OK ? 0
	                                                                   : -1;
}
