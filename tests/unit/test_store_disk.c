/*
 * test_store_disk.c: what the engine leaves on disk and its upkeep: the
 * WAL sync a deferred commit leaves to its caller, checkpoints that bound
 * the log, synchronous=FULL, expired op_ids pruned a few with every group,
 * and the work of a task's cycle however long the Space's history.
 */
#include <sys/stat.h>
#include <time.h>

#include "clock.h"
#include "store_fixture.h"
#include "vfs.h"

static struct fx fx;

static void
setup(void)
{
	fx_setup(&fx, 0);
}

static void
teardown(void)
{
	fx_teardown(&fx);
}

TestSuite(store, .init = setup, .fini = teardown);

/* ---- cost -------------------------------------------------------------- */

/*
 * The work of one submit -> claim -> finish cycle and a read of the last
 * events, in SQLite VM steps (a count no clock disturbs).
 */
static int64_t
cycle_work(const char *sp, int i)
{
	struct pr_req q;
	struct pr_rep *r;
	const char *task;
	char rid[32];
	int64_t before = st_store_work(fx.st);

	snprintf(rid, sizeof(rid), "r%d", i);
	task = fx_task(&fx, sp, rid);
	r = fx_claim(&fx, sp, "holder");
	cr_assert_eq(r->n_tasks, 1);
	FX_FINISH(&fx, task, "holder", "completed", "{}", NULL, CM_OK);
	fx_req(&fx, &q, PR_OP_EVENT_LIST);
	q.workspace_id = fx.ws;
	q.space_id = sp;
	q.after_sequence = 1 + 3 * (int64_t)i;
	r = FX_CALL(&fx, &q, CM_OK);
	cr_assert_eq(r->n_events, 3);
	return st_store_work(fx.st) - before;
}

/*
 * A Space's history must not make its next task dearer: every lookup on
 * the hot path is an index seek.  (A claim once filtered the Space's
 * tasks by status, and cost grew with every task the Space had run.)
 */
Test(store, a_cycle_costs_the_same_however_long_the_history)
{
	const char *sp;
	int64_t early, late;
	int i;

	FX_SQLITE_ONLY(&fx, "SQLite VM steps measure the work");

	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	for (i = 0; i < 5; i++)
		early = cycle_work(sp, i);
	for (; i < 400; i++)
		cycle_work(sp, i);
	late = cycle_work(sp, i);
	cr_assert_leq(late, early + early / 10,
	    "a cycle cost %lld VM steps after 5 tasks, %lld after 400",
	    (long long)early, (long long)late);
}

/* ---- durability ---------------------------------------------------------
 */

static off_t
file_size(const char *suffix)
{
	char path[FX_PATH_MAX + 8];
	struct stat st;

	snprintf(path, sizeof(path), "%s%s", fx.path, suffix);
	return stat(path, &st) == 0 ? st.st_size : -1;
}

/*
 * With defer_sync a group's commit leaves its WAL sync to the caller,
 * through a handle on the WAL file itself; a group that wrote nothing
 * leaves nothing to sync.  (test_powerloss shows the sync is the log's,
 * under a VFS that records every sync.)
 */
Test(store, deferred_commit_leaves_the_wal_sync_to_the_caller)
{
	struct st_sync *sync;
	const char *sp;

	fx.opts.defer_sync = true;
	fx_reopen(&fx);
	if (fx.pg) {
		char *rep;
		size_t len;

		/* PostgreSQL's COMMIT is only sent: the sync reads its
		 * answer.  Each group's is its own, on the writers in turn. */
		fx.sync_each = true;
		fx_provision(&fx, 1);
		fx.sync_each = false;
		sp = fx_space(&fx, 0);
		sync = st_store_pending_sync(fx.st);
		cr_assert_not_null(sync, "the COMMIT was waited for");
		cr_assert_eq(st_store_sync(fx.st, sync, &rep, &len), 0);
		cr_assert_null(rep);
		cr_assert_not(st_store_sync_covers(fx.st));
		fx_space_get(&fx, fx.ws, sp);
		cr_assert_not_null(st_store_pending_sync(fx.st));
		cr_assert_neq(st_store_pending_sync(fx.st), sync,
		    "one writer for two groups in a row");
		cr_assert_eq(st_store_sync(fx.st, st_store_pending_sync(fx.st),
		                 &rep, &len),
		    0);
		return;
	}
	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	sync = st_store_pending_sync(fx.st);
	cr_assert_not_null(sync, "a committed write left nothing to sync");
	cr_assert_eq(st_vfs_sync(sync), SQLITE_OK);

	fx_space_get(&fx, fx.ws, sp);
	cr_assert_null(
	    st_store_pending_sync(fx.st), "a read left something to sync");
	fx_task(&fx, sp, "t1");
	cr_assert_eq(st_store_pending_sync(fx.st), sync,
	    "the same log has another handle");
}

Test(store, without_deferral_a_commit_syncs_itself)
{
	fx_provision(&fx, 1);
	fx_space(&fx, 0);
	cr_assert_null(st_store_pending_sync(fx.st));
}

/*
 * Checkpoints run beside the writer and keep the log bounded: after
 * CM_WAL_MAX_PAGES / 10 cycles of three commits of five frames or more,
 * far past CM_WAL_MAX_PAGES, the log has started over (it holds no more
 * than CM_WAL_MAX_PAGES and one commit's frames, a few here) and the
 * database file holds the copied pages.
 */
#define ONE_COMMIT_FRAMES_MAX 64
static void
checkpoints_bound_the_log(bool defer_sync)
{
	const char *sp;
	off_t db0, frames;
	int64_t deadline;
	int i;

	fx.opts.defer_sync = defer_sync;
	fx_reopen(&fx);
	fx_provision(&fx, 1);
	sp = fx_space(&fx, 0);
	db0 = file_size("");
	for (i = 0; i < CM_WAL_MAX_PAGES / 10; i++) {
		char rid[32];
		const char *task;

		snprintf(rid, sizeof(rid), "r%d", i);
		task = fx_task(&fx, sp, rid);
		fx_claim(&fx, sp, "holder");
		FX_FINISH(&fx, task, "holder", "completed", "{}", NULL, CM_OK);
	}
	frames = file_size("-wal") / (4096 + 24);
	cr_assert_leq(frames, CM_WAL_MAX_PAGES + ONE_COMMIT_FRAMES_MAX,
	    "the log holds %lld frames: it never started over",
	    (long long)frames);
	deadline = cm_mono_ms() + 10000;
	while (file_size("") <= db0 && cm_mono_ms() < deadline) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	cr_assert_gt(file_size(""), db0, "no page reached the database file");
}

Test(store, checkpoints_copy_the_log_and_let_it_start_over)
{
	FX_SQLITE_ONLY(&fx, "the checkpointer is SQLite's");
	checkpoints_bound_the_log(true);
}

Test(store, checkpoints_bound_the_log_of_commits_that_sync_themselves)
{
	FX_SQLITE_ONLY(&fx, "the checkpointer is SQLite's");
	checkpoints_bound_the_log(false);
}

/*
 * Under load, expired op_ids go with the groups, a few at a time: a group
 * of one forgets two, oldest first; pruning when idle forgets at most
 * CM_OPID_PRUNE_MAX at once.
 */
Test(store, expired_op_ids_go_a_little_with_every_group)
{
	static const char count_sql[] = "SELECT count(*) FROM store_ops";
	struct pr_req q;
	char name[32];
	int64_t before;

	for (int i = 0; i < 5; i++) {
		fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
		snprintf(name, sizeof(name), "old-%d", i);
		q.name = name;
		FX_CALL(&fx, &q, CM_OK);
		fx_advance(&fx, 1);
	}
	before = fx_sql_int(&fx, count_sql, (const char *)NULL);
	cr_assert_geq(before, 5);
	fx_advance(&fx, CM_OPID_TTL_MS);

	fx_req(&fx, &q, PR_OP_WORKSPACE_CREATE);
	q.name = "new";
	FX_CALL(&fx, &q, CM_OK);
	/* Two expired gone, one new remembered. */
	cr_assert_eq(
	    fx_sql_int(&fx, count_sql, (const char *)NULL), before - 2 + 1);
	cr_assert_eq(
	    fx_sql_int(&fx,
	        "SELECT count(*) FROM store_ops o JOIN workspaces w"
	        " ON w.name = 'old-0' WHERE o.created_at = w.created_at",
	        (const char *)NULL),
	    0, "the oldest op_id was not the first to go");

	cr_assert_eq(st_store_prune(fx.st), (int)(before - 2));
	cr_assert_eq(st_store_prune(fx.st), 0);
	cr_assert_eq(fx_sql_int(&fx, count_sql, (const char *)NULL), 1);
}

Test(store, synchronous_is_full)
{
	FX_SQLITE_ONLY(&fx, "the test cluster runs with fsync off");
	cr_assert_eq(st_store_synchronous(fx.st), 2, "PRAGMA synchronous is %d",
	    st_store_synchronous(fx.st));
	fx_reopen(&fx);
	cr_assert_eq(st_store_synchronous(fx.st), 2);
	cr_assert_eq(fx_sql_int(&fx,
	                 "SELECT count(*) FROM pragma_journal_mode"
	                 " WHERE journal_mode = 'wal'",
	                 (const char *)NULL),
	    1, "the database is not in WAL mode");
}
