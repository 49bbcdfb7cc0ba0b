/*
 * test_fault.c: the allocation failure wrapper the store's fault tests
 * use.  Armed for n, the nth allocation of the arming thread fails, once,
 * and is reported; nothing else fails; SQLite turns the failure into
 * SQLITE_NOMEM; and it cannot be installed once SQLite has started.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sqlite3.h>

#include "fault.h"

static void
setup(void)
{
	cr_assert_eq(st_fault_install(), 0, "SQLite started before the test");
	/* Whatever SQLite allocates as it starts is not counted below. */
	cr_assert_eq(sqlite3_initialize(), SQLITE_OK);
}

TestSuite(fault, .init = setup);

Test(fault, the_nth_allocation_fails_once_and_is_reported)
{
	void *p[4];

	st_fault_fail_nth(3);
	p[0] = sqlite3_malloc(40);
	p[1] = sqlite3_malloc(4000);
	cr_assert(p[0] != NULL && p[1] != NULL, "an allocation before the 3rd");
	cr_assert_not(st_fault_fired());
	p[2] = sqlite3_malloc(40);
	cr_assert_null(p[2], "the 3rd allocation did not fail");
	cr_assert(st_fault_fired());
	p[3] = sqlite3_malloc(40);
	cr_assert_not_null(p[3], "the failure came back");
	for (int i = 0; i < 4; i++)
		sqlite3_free(p[i]);
}

Test(fault, unarmed_or_disarmed_nothing_fails)
{
	st_fault_fail_nth(1);
	st_fault_fail_nth(0);
	for (int i = 0; i < 1000; i++) {
		void *p = sqlite3_malloc(16 + i);

		cr_assert_not_null(p, "allocation %d failed unarmed", i);
		sqlite3_free(p);
	}
	cr_assert_not(st_fault_fired());
}

Test(fault, a_realloc_counts_and_keeps_its_block_when_it_fails)
{
	char *p = sqlite3_malloc(8), *q;

	cr_assert_not_null(p);
	p[0] = 'x';
	st_fault_fail_nth(1);
	q = sqlite3_realloc(p, 100000);
	cr_assert_null(q, "the realloc did not fail");
	cr_assert(st_fault_fired());
	cr_assert_eq(p[0], 'x');
	q = sqlite3_realloc(p, 100000);
	cr_assert_not_null(q);
	cr_assert_eq(q[0], 'x');
	sqlite3_free(q);
}

static void *
allocate(void *arg)
{
	void *p = sqlite3_malloc(64);

	(void)arg;
	sqlite3_free(p);
	return p;
}

Test(fault, another_thread_s_allocations_are_not_counted)
{
	pthread_t t;
	void *got;

	st_fault_fail_nth(1);
	cr_assert_eq(pthread_create(&t, NULL, allocate, NULL), 0);
	cr_assert_eq(pthread_join(t, &got), 0);
	cr_assert_not_null(got, "another thread's allocation failed");
	cr_assert_not(st_fault_fired());
	cr_assert_null(sqlite3_malloc(64), "this thread's 1st did not fail");
}

Test(fault, sqlite_reports_the_failure_as_nomem)
{
	sqlite3 *db;
	sqlite3_stmt *s = NULL;

	cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	st_fault_fail_nth(1);
	cr_assert_eq(
	    sqlite3_prepare_v2(db, "SELECT 1", -1, &s, NULL), SQLITE_NOMEM);
	cr_assert(st_fault_fired());
	cr_assert_null(s);
	cr_assert_eq(
	    sqlite3_prepare_v2(db, "SELECT 1", -1, &s, NULL), SQLITE_OK);
	sqlite3_finalize(s);
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
}

Test(fault, cannot_be_installed_once_sqlite_started)
{
	cr_assert_eq(st_fault_install(), -1);
}
