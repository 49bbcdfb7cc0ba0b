/*
 * test_mem.c: SQLite's allocator with free lists per thread.  Small blocks
 * are rounded to their class and reused; large ones go to malloc; realloc
 * keeps the contents; a block freed by another thread is safe to use, and
 * a database works on top of it.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "db.h"

static void
setup(void)
{
	cr_assert_eq(st_db_configure(), 0, "SQLite started before the store");
}

TestSuite(mem, .init = setup);

Test(mem, small_blocks_are_rounded_to_their_class_and_reused)
{
	void *a = sqlite3_malloc(100), *b;

	cr_assert_not_null(a);
	cr_assert_eq((uintptr_t)a % 16, 0, "not 16-byte aligned");
	cr_assert_eq(sqlite3_msize(a), 128);
	memset(a, 0xa5, 128);
	sqlite3_free(a);
	b = sqlite3_malloc(120); /* the same class */
	cr_assert_eq(b, a, "a freed block of the class was not reused");
	sqlite3_free(b);
	cr_assert_eq(sqlite3_msize(NULL), 0);
}

Test(mem, large_blocks_keep_their_size)
{
	void *a = sqlite3_malloc(5000);

	cr_assert_not_null(a);
	cr_assert_eq((uintptr_t)a % 16, 0, "not 16-byte aligned");
	cr_assert_eq(sqlite3_msize(a), 5000);
	memset(a, 1, 5000);
	sqlite3_free(a);
}

Test(mem, realloc_keeps_the_contents_across_classes_and_sizes)
{
	static const int sizes[] = {10, 40, 1024, 1025, 3000, 600, 20};
	unsigned char *p = sqlite3_malloc(sizes[0]);
	int have = sizes[0];

	cr_assert_not_null(p);
	for (int i = 0; i < have; i++)
		p[i] = (unsigned char)i;
	for (size_t k = 1; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		int keep = have < sizes[k] ? have : sizes[k];

		p = sqlite3_realloc(p, sizes[k]);
		cr_assert_not_null(p);
		cr_assert_geq(sqlite3_msize(p), (sqlite3_uint64)sizes[k]);
		for (int i = 0; i < keep; i++)
			cr_assert_eq(p[i], (unsigned char)i,
			    "byte %d lost in a realloc to %d", i, sizes[k]);
		for (int i = keep; i < sizes[k]; i++)
			p[i] = (unsigned char)i;
		have = sizes[k];
	}
	sqlite3_free(p);
}

static void *
free_elsewhere(void *arg)
{
	void **blocks = arg;

	for (int i = 0; i < 200; i++)
		sqlite3_free(blocks[i]);
	/* This thread's lists now hold them, and are given back at exit. */
	return NULL;
}

Test(mem, blocks_freed_by_another_thread_are_safe)
{
	void *blocks[200];
	pthread_t t;

	for (int i = 0; i < 200; i++) {
		blocks[i] = sqlite3_malloc(64 + (i % 8) * 100);
		cr_assert_not_null(blocks[i]);
		memset(blocks[i], i, 64);
	}
	cr_assert_eq(pthread_create(&t, NULL, free_elsewhere, blocks), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	for (int i = 0; i < 200; i++) {
		unsigned char *p = sqlite3_malloc(64 + (i % 8) * 100);

		cr_assert_not_null(p);
		memset(p, 0x5a, 64);
		sqlite3_free(p);
	}
}

Test(mem, a_database_runs_on_it)
{
	sqlite3 *db;
	sqlite3_stmt *s;

	cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db,
	                 "CREATE TABLE t (k TEXT PRIMARY KEY, v BLOB);"
	                 "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
	                 " SELECT i + 1 FROM n WHERE i < 5000)"
	                 " INSERT INTO t SELECT hex(randomblob(16)),"
	                 " randomblob(i % 700) FROM n;",
	                 NULL, NULL, NULL),
	    SQLITE_OK);
	cr_assert_eq(
	    sqlite3_prepare_v2(
	        db, "SELECT count(*), sum(length(v)) FROM t", -1, &s, NULL),
	    SQLITE_OK);
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int(s, 0), 5000);
	cr_assert_gt(sqlite3_column_int64(s, 1), 0);
	sqlite3_finalize(s);
	cr_assert_eq(sqlite3_close(db), SQLITE_OK);
}
