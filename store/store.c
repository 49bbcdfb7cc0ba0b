/*
 * store.c: the engine behind spaced-store.  Group commit and
 * publish-after-commit live here; a pass over a group's requests in
 * exec.c, the op_id memory in opid.c, the operations in ops_*.c.
 */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundles.h"
#include "clock.h"
#include "db.h"
#include "events.h"
#include "exec.h"
#include "log.h"
#include "migrate.h"
#include "opid.h"
#include "ops.h"
#include "status.h"

struct st_store {
	struct st_db *db;
	struct st_store_opts opts;
	struct st_ctx ctx;
	struct st_sync *sync; /* see st_store_pending_sync */
	int64_t txn_ns;       /* see st_store_txn_ns */
};

int
st_store_open(struct st_store **out, const struct st_store_opts *opts)
{
	struct st_store *st;

	*out = NULL;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return -1;
	st->opts = *opts;
	if (st->opts.max_spaces_per_workspace <= 0)
		st->opts.max_spaces_per_workspace = CM_SPACES_PER_WS_DEFAULT;
	if (st->opts.task_timeout_default_s <= 0)
		st->opts.task_timeout_default_s = CM_TIMEOUT_DEFAULT_S;
	if (st->opts.task_timeout_max_s <= 0)
		st->opts.task_timeout_max_s = CM_TIMEOUT_MAX_S;
	if (st->opts.host_id == NULL)
		st->opts.host_id = "localhost";
	if ((opts->postgres_dsn != NULL
	            ? st_db_open_pg(&st->db, opts->postgres_dsn)
	            : st_db_open_sqlite(&st->db, opts->sqlite_path)) != ST_OK ||
	    st_migrate(st->db) != 0 ||
	    (st->ctx.bundles = st_bundles_new()) == NULL) {
		st_store_close(st);
		return -1;
	}
	st->ctx.db = st->db;
	st->ctx.opts = &st->opts;
	*out = st;
	return 0;
}

void
st_store_close(struct st_store *st)
{
	if (st == NULL)
		return;
	st_bundles_free(st->ctx.bundles);
	free(st->ctx.pubs);
	st_db_close(st->db);
	free(st);
}

/*
 * Tells the other stores on the database of the group's events, in its
 * transaction (st_db_announce).  Returns 0, or -1 when the announcement
 * failed, which on PostgreSQL aborts the transaction: the commit then
 * fails and the group is answered store_unavailable.
 */
static int
announce(struct st_store *st)
{
	struct st_ctx *ctx = &st->ctx;
	char *lines, *p;
	size_t cap;
	int rc;

	if (ctx->n_pubs == 0 || !st_db_shared(st->db))
		return 0;
	cap = ctx->n_pubs * CM_NOTIFY_LINE_MAX;
	if ((lines = malloc(cap)) == NULL)
		return -1;
	p = lines;
	for (size_t i = 0; i < ctx->n_pubs; i++) {
		const struct st_pub *pub = &ctx->pubs[i];
		size_t left = cap - (size_t)(p - lines);
		int k = pub->sequence > 0
		            ? snprintf(p, left, "%s%s %lld", i ? "\n" : "",
		                  pub->space_id, (long long)pub->sequence)
		            : snprintf(p, left, "%s%s 0 %s", i ? "\n" : "",
		                  pub->space_id, pub->kind);

		if (k < 0 || (size_t)k >= left) {
			free(lines);
			return -1;
		}
		p += k;
	}
	rc = st_db_announce(st->db, lines) == ST_DONE ? 0 : -1;
	free(lines);
	return rc;
}

/* Why a group's writes failed when its COMMIT did. */
static const char msg_full[] = "the disk is full";
static const char msg_uncommitted[] = "the database could not commit";

/* The group did not commit: no write stands, and no item goes unanswered. */
static void
fail_writes(struct st_item *items, const struct pr_req *reqs, const bool *ok,
    size_t n, const char *msg)
{
	for (size_t i = 0; i < n; i++)
		if (ok[i] &&
		    (pr_op_is_write(reqs[i].op) || items[i].rep == NULL)) {
			st_item_error(&items[i], CM_E_STORE_UNAVAILABLE, msg);
			items[i].hold = ST_HOLD_NONE;
		}
}

/*
 * Decodes each item's request into reqs[i], ok[i] true; one that cannot
 * be decoded is answered invalid_request at once.
 */
static void
decode_items(struct st_item *items, struct pr_req *reqs, bool *ok, size_t n)
{
	char err[256];

	for (size_t i = 0; i < n; i++) {
		items[i].rep = NULL;
		items[i].rep_len = 0;
		items[i].write = false;
		items[i].hold = ST_HOLD_NONE;
		if (pr_req_decode(items[i].req, items[i].req_len, &reqs[i], err,
		        sizeof(err)) != 0) {
			/* A sibling process sent garbage: that is a bug. */
			cm_warnx(
			    "store: rejected a malformed request: %s", err);
			st_item_error(&items[i], CM_E_INVALID_REQUEST, err);
			continue;
		}
		ok[i] = true;
		items[i].write = pr_op_is_write(reqs[i].op);
	}
}

/* Appends " id" (or id first) to the list of length len; its new length.
 * An id that does not fit is left out. */
static size_t
id_append(char *list, size_t cap, size_t len, const char *id)
{
	int k = snprintf(list + len, cap - len, "%s%s", len ? " " : "", id);

	if (k < 0 || (size_t)k >= cap - len) {
		list[len] = '\0';
		return len;
	}
	return len + (size_t)k;
}

/*
 * On a database other stores write too, locks the Space rows the group's
 * writes name (by the Space, or by a task of it), all in one statement
 * and in the order of their ids, before any write runs.  Two stores'
 * groups that touch the same Spaces then take them in one order, and
 * neither holds one the other waits for while it waits for one the other
 * holds: without this, a store's finish of its own Space's task and
 * another store's submit to it, each beside one of the other kind, lock
 * two rows in opposite orders, and PostgreSQL breaks the deadlock only
 * after a second.  A write that reaches a row of a Space no request names
 * (an admin's or the supervisor's) is left to the conflict retry.
 * Returns 0, or -1 when the statement failed (the transaction is then
 * aborted).
 */
static int
lock_spaces(struct st_store *st, const struct pr_req *reqs, const bool *ok,
    size_t n, bool note)
{
	/* One set of ids, each Space's last sequence with its lock.  (The
	 * OR of two sets it replaced filtered every Space row through a
	 * subplan: 0.667 ms against 0.381 in one EXPLAIN ANALYZE of a group
	 * of 15 on 64 Spaces.) */
	static const char sql[] =
	    "SELECT id, last_sequence FROM browser_spaces"
	    " WHERE id IN (SELECT unnest(string_to_array($1, ' '))"
	    " UNION ALL SELECT space_id FROM browser_space_tasks"
	    " WHERE id = ANY (string_to_array($2, ' ')))"
	    " ORDER BY id FOR UPDATE";
	size_t cap = n * (CM_ID_MAX + 1) + 1, ls = 0, lt = 0;
	struct st_ctx *ctx = &st->ctx;
	struct st_stmt *q;
	char *spaces, *tasks;
	int rc = 0;

	if ((spaces = malloc(cap)) == NULL || (tasks = malloc(cap)) == NULL) {
		free(spaces);
		return -1;
	}
	*spaces = *tasks = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *s = reqs[i].space_id, *t = reqs[i].task_id;

		if (!ok[i] || !pr_op_is_write(reqs[i].op))
			continue;
		/* Ids are bounded at decode, so each fits its CM_ID_MAX + 1.
		 * A space in one (no id has one) would only make two names
		 * to lock. */
		if (s != NULL && *s != '\0')
			ls = id_append(spaces, cap, ls, s);
		else if (t != NULL && *t != '\0')
			lt = id_append(tasks, cap, lt, t);
	}
	ctx->n_group_seq = 0;
	if ((ls > 0 || lt > 0) &&
	    st_db_query(st->db, &q, sql, "ss", spaces, tasks) == ST_OK) {
		while ((rc = st_stmt_step(q)) == ST_ROW) {
			struct st_seq_row *row =
			    &ctx->group_seq[ctx->n_group_seq];
			const char *id = st_col_text(q, 0);

			if (!note || ctx->n_group_seq == CM_GROUP_COMMIT_MAX ||
			    strlen(id) >= sizeof(row->space_id))
				continue;
			memcpy(row->space_id, id, strlen(id) + 1);
			row->last = st_col_int(q, 1);
			ctx->n_group_seq++;
		}
		st_stmt_done(q);
		rc = rc == ST_DONE ? 0 : -1;
	} else if (ls > 0 || lt > 0) {
		rc = -1;
	}
	if (rc != 0)
		ctx->n_group_seq = 0;
	free(spaces);
	free(tasks);
	return rc;
}

/*
 * The last statements of a pass, inside its transaction.  Each group
 * forgets up to twice as many expired op_ids as it holds requests: under
 * load the memory shrinks as fast as it grows, a little at a time, and
 * never in one long stall.  Then it announces its events to the other
 * stores.  Sent ahead in the first pass, both travel with its settling.
 */
static void
group_tail(struct st_store *st, size_t n)
{
	if (st_db_in_txn(st->db))
		st_opid_prune(st->db, st_exec_now(&st->opts), 2 * (int64_t)n);
	if (st_db_in_txn(st->db) && announce(st) != 0)
		cm_warnx("store: cannot announce the group's events: %s",
		    st_db_errmsg(st->db));
}

/*
 * Begins the group's transaction and runs its requests, again when it met
 * another store's (up to CM_PG_CONFLICT_RUNS runs).  Returns 0, or -1 when
 * the group cannot run: no transaction is left open, and every request
 * not yet answered is answered why.
 */
static int
run_group(struct st_store *st, struct st_item *items, const struct pr_req *reqs,
    const bool *ok, size_t n)
{
	struct st_ctx *ctx = &st->ctx;
	int64_t t0;
	int began;
	bool conflict;

	for (int run = 1;; run++) {
		st_pubs_clear(ctx, 0);
		st->sync = NULL;
		st_db_disk_full(st->db);
		st_db_conflict(st->db);
		/* The first pass sends ahead what it can (db.h): it runs
		 * again, every statement waited for, if any of it fails. */
		st_db_defer(st->db, true);
		t0 = cm_mono_ns();
		began = st_db_begin(st->db);
		st->txn_ns += cm_mono_ns() - t0;
		if (began != ST_OK) {
			st_db_defer(st->db, false);
			fail_writes(items, reqs, ok, n,
			    "the database cannot start a transaction");
			return -1;
		}
		/*
		 * A write that fails must undo only itself, which a SAVEPOINT
		 * per write gives.  A savepoint costs a fifth of a write's work
		 * (SQLite copies every page a write touches into its journal),
		 * and is needed only by a write that fails after changing rows.
		 * So the group runs bare first, and only a group holding such a
		 * write runs again from the start with the savepoints: the same
		 * requests, in the same order, on the same state.
		 */
		if (st_db_shared(st->db) &&
		    lock_spaces(st, reqs, ok, n, true) != 0) {
			st_db_defer(st->db, false);
			if (!st_db_conflict(st->db)) {
				/* No write has run: none is answered yet. */
				st_db_run(st->db, "ROLLBACK", "");
				fail_writes(items, reqs, ok, n,
				    "the database cannot lock the group's "
				    "Spaces");
				return -1;
			}
			conflict = true;
		} else {
			bool passed =
			    st_exec_pass(&st->ctx, reqs, ok, items, n, false);

			if (passed) {
				group_tail(st, n);
				passed = st_db_settle(st->db) == ST_DONE;
			}
			st_db_defer(st->db, false);
			st->ctx.n_group_seq = 0;
			if (!passed) {
				st_db_run(st->db, "ROLLBACK", "");
				st_pubs_clear(ctx, 0);
				st_exec_reset(items, n, ok);
				if (st_db_begin(st->db) != ST_OK) {
					fail_writes(items, reqs, ok, n,
					    "the database cannot start a "
					    "transaction");
					return -1;
				}
				/* Failed, its statement leaves the pass to fail
				 * and the commit with it, or, a conflict, to
				 * run again. */
				if (st_db_shared(st->db))
					lock_spaces(st, reqs, ok, n, false);
				st_exec_pass(
				    &st->ctx, reqs, ok, items, n, true);
				group_tail(st, n);
			}
			conflict = st_db_conflict(st->db);
		}
		/*
		 * Another store's transaction met this one, and PostgreSQL
		 * failed one of its statements (a write's own savepoint may
		 * have kept the transaction open): its answers are not what the
		 * group would have found alone.  Nothing of it stands, and the
		 * same group in a new transaction, the other's locks now free,
		 * may well go through.  Past the last run every request is
		 * answered store_unavailable, even where the transaction is
		 * still open: what it would commit is not the group's.
		 */
		if (!conflict)
			return 0;
		st_db_run(st->db, "ROLLBACK", "");
		st_pubs_clear(ctx, 0);
		st_exec_reset(items, n, ok);
		if (run == CM_PG_CONFLICT_RUNS) {
			cm_warnx(
			    "store: a group met other writers %d times: %s",
			    run, st_db_errmsg(st->db));
			fail_writes(items, reqs, ok, n, msg_uncommitted);
			return -1;
		}
	}
}

/*
 * Ends the group's transaction: commits.  Returns 0, or -1 when the
 * commit failed (every write answered why, no event left to publish).
 */
static int
commit_group(struct st_store *st, struct st_item *items,
    const struct pr_req *reqs, const bool *ok, size_t n)
{
	int64_t t0;
	int committed;
	bool full;

	t0 = cm_mono_ns();
	committed =
	    st_db_commit(st->db, st->opts.defer_sync ? &st->sync : NULL);
	st->txn_ns += cm_mono_ns() - t0;
	if (committed == ST_DONE)
		return 0;
	cm_warnx("store: commit failed: %s", st_db_errmsg(st->db));
	/* A full disk is said as such: the operator's to fix, and the
	 * writes' to retry once there is room. */
	full = st_db_disk_full(st->db);
	st_db_run(st->db, "ROLLBACK", "");
	st_pubs_clear(&st->ctx, 0);
	fail_writes(items, reqs, ok, n, full ? msg_full : msg_uncommitted);
	return -1;
}

int
st_store_exec(struct st_store *st, struct st_item *items, size_t n,
    st_publish_fn publish, void *arg)
{
	struct st_ctx *ctx = &st->ctx;
	struct pr_req *reqs;
	bool *ok;
	int rc = -1;

	reqs = calloc(n ? n : 1, sizeof(*reqs));
	ok = calloc(n ? n : 1, sizeof(*ok));
	if (reqs == NULL || ok == NULL) {
		free(reqs);
		free(ok);
		for (size_t i = 0; i < n; i++)
			st_item_error(
			    &items[i], CM_E_INTERNAL, "out of memory");
		return -1;
	}
	decode_items(items, reqs, ok, n);
	if (run_group(st, items, reqs, ok, n) == 0 &&
	    commit_group(st, items, reqs, ok, n) == 0) {
		/* Published only now: no subscriber sees an event it cannot
		 * read. */
		for (size_t i = 0; publish != NULL && i < ctx->n_pubs; i++)
			publish(arg, ctx->pubs[i].space_id, ctx->pubs[i].kind,
			    ctx->pubs[i].buf, ctx->pubs[i].len,
			    ctx->pubs[i].serial);
		if (publish != NULL)
			ctx->pub_serial += (int64_t)ctx->n_pubs;
		st_pubs_clear(ctx, 0);
		rc = 0;
	}
	for (size_t i = 0; i < n; i++)
		pr_req_free(&reqs[i]);
	free(reqs);
	free(ok);
	return rc;
}

int
st_store_call(struct st_store *st, const struct pr_req *req, struct pr_rep *rep,
    st_publish_fn publish, void *arg)
{
	struct st_item it;
	char *buf;
	size_t len;
	char err[256];
	int rc;

	memset(rep, 0, sizeof(*rep));
	if (pr_req_encode(req, &buf, &len) != 0) {
		rep->err = CM_E_INTERNAL;
		return -1;
	}
	it.req = buf;
	it.req_len = len;
	rc = st_store_exec(st, &it, 1, publish, arg);
	free(buf);
	if (it.rep == NULL) {
		rep->err = CM_E_INTERNAL;
		return -1;
	}
	if (pr_rep_decode(it.rep, it.rep_len, rep, err, sizeof(err)) != 0) {
		cm_warnx("store: cannot decode its own reply: %s", err);
		rep->err = CM_E_INTERNAL;
		rc = -1;
	}
	free(it.rep);
	return rc;
}

int
st_store_prune(struct st_store *st)
{
	int64_t n =
	    st_opid_prune(st->db, st_exec_now(&st->opts), CM_OPID_PRUNE_MAX);

	if (n < 0)
		cm_warnx("store: op_id prune failed: %s", st_db_errmsg(st->db));
	return (int)n;
}

int
st_store_republish(struct st_store *st, const char *space_id, int64_t sequence,
    const char *kind, st_publish_fn publish, void *arg)
{
	/* The instance's host goes with space_opened, as the committing
	 * store published it (st_event_opened). */
	static const char event_sql[] =
	    "SELECT s.workspace_id, e.task_id, e.kind, e.payload,"
	    " e.created_at, i.host FROM browser_space_events e"
	    " JOIN browser_spaces s ON s.id = e.space_id"
	    " JOIN browser_instances i ON i.id = s.browser_instance_id"
	    " WHERE e.space_id = $1 AND e.sequence = $2";
	static const char notice_sql[] =
	    "SELECT workspace_id FROM browser_spaces WHERE id = $1";
	struct st_stmt *s;
	struct pr_event ev;
	char *buf = NULL;
	size_t len;
	int rc = -1;

	if ((sequence > 0 ? st_db_query(
	                        st->db, &s, event_sql, "si", space_id, sequence)
	                  : st_db_query(st->db, &s, notice_sql, "s",
	                        space_id)) != ST_OK)
		return -1;
	if (st_stmt_step(s) == ST_ROW) {
		memset(&ev, 0, sizeof(ev));
		ev.workspace_id = st_col_text(s, 0);
		ev.space_id = space_id;
		ev.sequence = sequence;
		if (sequence > 0) {
			ev.task_id = st_col_text(s, 1);
			ev.kind = st_col_text(s, 2);
			ev.payload = st_col_text(s, 3);
			ev.created_at = st_col_int(s, 4);
			if (cm_event_kind_is(ev.kind, CM_EV_SPACE_OPENED))
				ev.host = st_col_text(s, 5);
		} else {
			ev.kind = kind;
			ev.created_at = st_exec_now(&st->opts);
		}
		ev.serial = st->ctx.pub_serial + 1;
		if (ev.workspace_id != NULL &&
		    pr_pub_encode(&ev, NULL, &buf, &len) == 0) {
			publish(arg, space_id, ev.kind, buf, len, ev.serial);
			st->ctx.pub_serial = ev.serial;
			free(buf);
			rc = 0;
		}
	}
	st_stmt_done(s);
	return rc;
}

int
st_store_sync(
    struct st_store *st, struct st_sync *sync, char **rep, size_t *rep_len)
{
	struct st_item it;
	bool full;

	*rep = NULL;
	*rep_len = 0;
	if (st_db_sync(st->db, sync, &full) == ST_DONE)
		return 0;
	memset(&it, 0, sizeof(it));
	st_item_error(
	    &it, CM_E_STORE_UNAVAILABLE, full ? msg_full : msg_uncommitted);
	*rep = it.rep;
	*rep_len = it.rep_len;
	return -1;
}

bool
st_store_sync_covers(const struct st_store *st)
{
	return st_db_sync_covers(st->db);
}

const char *
st_store_listen_dsn(const struct st_store *st)
{
	return st->opts.postgres_dsn;
}

size_t
st_store_sessions(struct st_store *st, int64_t *out, size_t max)
{
	return st_db_sessions(st->db, out, max);
}

int64_t
st_store_txn_ns(const struct st_store *st)
{
	return st->txn_ns;
}

struct st_sync *
st_store_pending_sync(struct st_store *st)
{
	return st->sync;
}

int64_t
st_store_work(struct st_store *st)
{
	return st_db_work(st->db);
}

int
st_store_synchronous(struct st_store *st)
{
	return st_db_synchronous(st->db);
}
