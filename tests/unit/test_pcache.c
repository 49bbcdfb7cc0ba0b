/*
 * test_pcache.c: the page cache in front of SQLite's default one.  A
 * commit after b-tree splits passes no truncation on; a rolled-back
 * transaction that grew the database still drops its pages, and the
 * database stays intact.
 */
#include "db.h"
#include "pcache.h"
#include "store_fixture.h"

static char dir[FX_PATH_MAX];
static char path[FX_PATH_MAX + 16];
static struct st_db *db;

static void
setup(void)
{
	fx_mkdtemp(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.db", dir);
	cr_assert_eq(st_db_open_sqlite(&db, path), ST_OK);
	cr_assert_eq(st_db_exec(db, "CREATE TABLE t (k TEXT PRIMARY KEY,"
	                            " v TEXT NOT NULL)"),
	    ST_OK);
}

static void
teardown(void)
{
	st_db_close(db);
	fx_rmdir(dir);
}

TestSuite(pcache, .init = setup, .fini = teardown);

/* Inserts n rows keyed prefix-<random>, each with a value of len bytes. */
static void
insert_rows(const char *prefix, int n, size_t len)
{
	char key[64], *val = malloc(len + 1);

	cr_assert_not_null(val);
	memset(val, 'v', len);
	val[len] = '\0';
	for (int i = 0; i < n; i++) {
		/* Random keys land all over the index: its pages split. */
		snprintf(key, sizeof(key), "%s-%08lx-%d", prefix,
		    (unsigned long)random(), i);
		cr_assert_eq(
		    st_db_run(db, "INSERT INTO t (k, v) VALUES ($1, $2)", "ss",
		        key, val),
		    ST_DONE);
	}
	free(val);
}

static int64_t
count_where(const char *like)
{
	struct st_stmt *s;
	int64_t n;

	cr_assert_eq(st_db_query(db, &s,
	                 "SELECT count(*) FROM t WHERE k LIKE $1", "s", like),
	    ST_OK);
	cr_assert_eq(st_stmt_step(s), ST_ROW);
	n = st_col_int(s, 0);
	st_stmt_done(s);
	return n;
}

static void
assert_intact(void)
{
	struct st_stmt *s;

	cr_assert_eq(st_db_query(db, &s, "PRAGMA integrity_check", ""), ST_OK);
	cr_assert_eq(st_stmt_step(s), ST_ROW);
	cr_assert_str_eq(st_col_text(s, 0), "ok");
	st_stmt_done(s);
}

Test(pcache, is_configured_before_sqlite_starts)
{
	cr_assert_eq(st_db_configure(), 0,
	    "the store opened its database on SQLite's defaults");
}

Test(pcache, commits_after_splits_pass_no_truncation_on)
{
	uint64_t p0, s0, p1, s1;

	srandom(1);
	cr_assert_eq(st_db_exec(db, "BEGIN IMMEDIATE"), ST_OK);
	insert_rows("warm", 2000, 200); /* a tree several levels deep */
	cr_assert_eq(st_db_commit(db, NULL), ST_DONE);
	st_pcache_counts(&p0, &s0);
	for (int i = 0; i < 200; i++) {
		cr_assert_eq(st_db_exec(db, "BEGIN IMMEDIATE"), ST_OK);
		insert_rows("c", 20, 200);
		cr_assert_eq(st_db_commit(db, NULL), ST_DONE);
	}
	st_pcache_counts(&p1, &s1);
	cr_assert_geq(s1 - s0, 200, "skipped %llu of 200 commits",
	    (unsigned long long)(s1 - s0));
	cr_assert_eq(p1 - p0, 0, "%llu truncations reached the default cache",
	    (unsigned long long)(p1 - p0));
	cr_assert_eq(count_where("c-%"), 200 * 20);
	assert_intact();
}

Test(pcache, a_rolled_back_growth_is_dropped_and_the_database_stays_intact)
{
	uint64_t p0, s0, p1, s1;

	srandom(2);
	cr_assert_eq(st_db_exec(db, "BEGIN IMMEDIATE"), ST_OK);
	insert_rows("base", 500, 200);
	cr_assert_eq(st_db_commit(db, NULL), ST_DONE);
	st_pcache_counts(&p0, &s0);
	cr_assert_eq(st_db_exec(db, "BEGIN IMMEDIATE"), ST_OK);
	insert_rows("gone", 3000, 500); /* hundreds of new pages */
	cr_assert_eq(st_db_exec(db, "ROLLBACK"), ST_OK);
	st_pcache_counts(&p1, &s1);
	cr_assert_geq(p1 - p0, 1, "the rollback's truncation was skipped");

	/* The pages the rollback dropped are allocated again. */
	cr_assert_eq(st_db_exec(db, "BEGIN IMMEDIATE"), ST_OK);
	insert_rows("again", 3000, 500);
	cr_assert_eq(st_db_commit(db, NULL), ST_DONE);
	cr_assert_eq(count_where("gone-%"), 0);
	cr_assert_eq(count_where("again-%"), 3000);
	cr_assert_eq(count_where("base-%"), 500);
	assert_intact();
}
