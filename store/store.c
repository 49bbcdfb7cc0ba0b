/*
 * store.c: the engine behind spaced-store.  Group commit, op_id memory and
 * publish-after-commit live here; the operations live in ops_*.c.
 */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundles.h"
#include "clock.h"
#include "db.h"
#include "events.h"
#include "log.h"
#include "migrate.h"
#include "ops.h"
#include "status.h"

struct st_store {
	struct st_db *db;
	struct st_store_opts opts;
	struct st_ctx ctx;
	struct st_sync *sync; /* see st_store_pending_sync */
	int64_t txn_ns;       /* see st_store_txn_ns */
};

static int64_t
store_now(struct st_store *st)
{
	return st->opts.now_ms ? st->opts.now_ms(st->opts.now_arg)
	                       : cm_now_ms();
}

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

static void
pubs_clear(struct st_ctx *ctx, size_t from)
{
	for (size_t i = from; i < ctx->n_pubs; i++)
		free(ctx->pubs[i].buf);
	ctx->n_pubs = from;
}

/* Encodes rep into the item, or a bare error reply if that fails. */
static void
item_reply(struct st_item *it, const struct pr_rep *rep)
{
	struct pr_rep fallback;

	if (pr_rep_encode(rep, &it->rep, &it->rep_len) == 0)
		return;
	cm_warnx("store: cannot encode a reply");
	memset(&fallback, 0, sizeof(fallback));
	fallback.err = CM_E_INTERNAL;
	if (pr_rep_encode(&fallback, &it->rep, &it->rep_len) != 0) {
		it->rep = NULL;
		it->rep_len = 0;
	}
}

static void
item_error(struct st_item *it, enum cm_err err, const char *msg)
{
	struct pr_rep rep;

	memset(&rep, 0, sizeof(rep));
	rep.err = err;
	rep.msg = msg;
	free(it->rep);
	item_reply(it, &rep);
}

/* A write seen before: its first reply, from the op_id memory. */
static bool
remembered(struct st_store *st, const char *op_id, struct st_item *it)
{
	static const char sql[] =
	    "SELECT reply FROM store_ops WHERE op_id = $1";
	struct st_stmt *s;
	const void *blob;
	size_t n;
	bool found = false;

	if (st_db_query(st->db, &s, sql, "s", op_id) != ST_OK)
		return false;
	if (st_stmt_step(s) == ST_ROW &&
	    (blob = st_col_blob(s, 0, &n)) != NULL && n > 0 &&
	    (it->rep = malloc(n)) != NULL) {
		memcpy(it->rep, blob, n);
		it->rep_len = n;
		found = true;
	}
	st_stmt_done(s);
	return found;
}

static int
remember(struct st_store *st, const char *op_id, const struct st_item *it)
{
	static const char sql[] = "INSERT INTO store_ops (op_id, reply,"
	                          " created_at) VALUES ($1, $2, $3)";

	return st_db_run(st->db, sql, "sBi", op_id, (const void *)it->rep,
	           it->rep_len, st->ctx.now) == ST_DONE
	           ? 0
	           : -1;
}

/*
 * Whether the caller may hold its answer (store.h, enum st_hold): an idle
 * claim that asked to wait and found nothing to do in a Space that runs,
 * or the loss of a Space's actor.
 */
static void
item_hold(
    struct st_item *it, const struct pr_req *req, const struct pr_rep *rep)
{
	it->hold = ST_HOLD_NONE;
	if (rep->err != CM_OK)
		return;
	if (req->op == PR_OP_ACTOR_CLAIM && req->wait_ms > 0 &&
	    rep->n_tasks == 0 && !rep->close_requested && rep->n_spaces == 1 &&
	    !cm_space_status_is(rep->spaces[0].status, CM_SPACE_CLOSED) &&
	    !cm_space_status_is(rep->spaces[0].status, CM_SPACE_ERROR)) {
		it->hold = ST_HOLD_PARK;
		it->hold_ms = req->wait_ms < CM_CLAIM_WAIT_MAX_MS
		                  ? req->wait_ms
		                  : CM_CLAIM_WAIT_MAX_MS;
	} else if (req->op == PR_OP_SUP_FINALIZE_LOST) {
		it->hold = ST_HOLD_DROP;
	} else {
		return;
	}
	snprintf(it->space_id, sizeof(it->space_id), "%s", req->space_id);
}

/*
 * One write.  Guarded, it runs inside its own SAVEPOINT, so a failure
 * after some of its changes undoes only itself.  Unguarded (the first
 * pass over a group), it runs bare: a write that fails before changing
 * anything needs no undo, which is nearly every failure, since every
 * operation checks before it writes.  One that fails after changing rows
 * cannot be undone alone, so it reports false and the group runs again,
 * guarded.  it->rep is then left to the caller.
 *
 * Guarded, the op_id memory is read first.  Unguarded, a write runs
 * before the memory is read, since nearly every op_id is new: a repeat
 * that changes rows again is caught when its op_id cannot be stored
 * twice, and the group runs again, guarded; one that changes nothing
 * looks its first reply up afterwards.
 */
static bool
exec_write(struct st_store *st, const struct pr_req *req, struct st_item *it,
    bool guarded)
{
	struct st_ctx *ctx = &st->ctx;
	struct pr_rep rep;
	size_t mark = ctx->n_pubs;
	int64_t changes;
	bool keep, changed;

	if (guarded && remembered(st, req->op_id, it))
		return true;
	if (guarded && st_db_run(st->db, "SAVEPOINT op", "") != ST_DONE) {
		item_error(it, CM_E_INTERNAL, "database error");
		return true;
	}
	memset(&rep, 0, sizeof(rep));
	ctx->keep_on_error = false;
	changes = st_db_total_changes(st->db);
	st_ops_dispatch(ctx, req, &rep);
	keep = rep.err == CM_OK || ctx->keep_on_error;
	changed = st_db_total_changes(st->db) != changes;
	if (!keep && changed && !guarded) {
		pr_rep_free(&rep);
		return false;
	}
	if (!keep) {
		if (guarded)
			st_db_run(st->db, "ROLLBACK TO op", "");
		pubs_clear(ctx, mark);
		changed = false;
	}
	if (!guarded && !changed && remembered(st, req->op_id, it)) {
		pr_rep_free(&rep);
		pubs_clear(ctx, mark);
		return true;
	}
	item_reply(it, &rep);
	item_hold(it, req, &rep);
	pr_rep_free(&rep);
	/*
	 * Only a write that changed something is remembered: one that changed
	 * nothing (a claim that found no task, a failed check) is just as
	 * harmless to apply again, and an idle actor's polling then costs no
	 * row.
	 */
	if (changed && it->rep != NULL && remember(st, req->op_id, it) != 0) {
		/* A repeat applied again, or a failure: the guarded run reads
		 * the memory first. */
		if (!guarded)
			return false;
		st_db_run(st->db, "ROLLBACK TO op", "");
		pubs_clear(ctx, mark);
		item_error(it, CM_E_INTERNAL, "database error");
		it->hold = ST_HOLD_NONE;
	}
	if (guarded)
		st_db_run(st->db, "RELEASE op", "");
	return true;
}

/*
 * Forgets the limit oldest op_ids older than CM_OPID_TTL_MS (and any more
 * of the same millisecond as the last of them).  Returns how many, or -1.
 *
 * The bound is a timestamp, the created_at of the limit-th oldest expired
 * row, found on the created_at index; then one range of that index goes.
 * "op_id IN (SELECT ... LIMIT n)" did the same through a temporary table
 * of the keys, built on every call.
 */
static int64_t
prune_expired(struct st_store *st, int64_t limit)
{
	static const char sql[] =
	    "DELETE FROM store_ops WHERE created_at < $1 AND created_at <="
	    " COALESCE((SELECT created_at FROM store_ops WHERE created_at < $1"
	    " ORDER BY created_at LIMIT 1 OFFSET $2), $1)";

	if (limit < 1)
		return 0;
	if (st_db_run(st->db, sql, "ii", store_now(st) - CM_OPID_TTL_MS,
	        limit - 1) != ST_DONE)
		return -1;
	return st_db_changes(st->db);
}

static void
replies_clear(struct st_item *items, size_t n, const bool *ok)
{
	for (size_t i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		free(items[i].rep);
		items[i].rep = NULL;
		items[i].rep_len = 0;
		items[i].hold = ST_HOLD_NONE;
	}
}

/*
 * One pass over a group inside the open transaction.  Returns false when
 * an unguarded write failed after changing rows.
 */
static bool
exec_pass(struct st_store *st, const struct pr_req *reqs, const bool *ok,
    struct st_item *items, size_t n, bool guarded)
{
	struct st_ctx *ctx = &st->ctx;

	for (size_t i = 0; i < n; i++) {
		struct pr_rep rep;

		if (!ok[i])
			continue;
		ctx->now = store_now(st);
		if (pr_op_is_write(reqs[i].op)) {
			if (!exec_write(st, &reqs[i], &items[i], guarded))
				return false;
			if (!st_db_in_txn(st->db))
				break;
			continue;
		}
		memset(&rep, 0, sizeof(rep));
		st_ops_dispatch(ctx, &reqs[i], &rep);
		item_reply(&items[i], &rep);
		pr_rep_free(&rep);
		/*
		 * Some errors (an I/O error, a full disk) make SQLite roll the
		 * whole transaction back by itself.  Nothing more may run:
		 * it would commit on its own.  The COMMIT then fails and the
		 * group is answered store_unavailable.
		 */
		if (!st_db_in_txn(st->db))
			break;
	}
	return true;
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
			item_error(&items[i], CM_E_STORE_UNAVAILABLE, msg);
			items[i].hold = ST_HOLD_NONE;
		}
}

int
st_store_exec(struct st_store *st, struct st_item *items, size_t n,
    st_publish_fn publish, void *arg)
{
	struct st_ctx *ctx = &st->ctx;
	struct pr_req *reqs;
	bool *ok;
	char err[256];
	bool full;
	int rc = 0, began, committed;
	int64_t t0;

	reqs = calloc(n ? n : 1, sizeof(*reqs));
	ok = calloc(n ? n : 1, sizeof(*ok));
	if (reqs == NULL || ok == NULL) {
		free(reqs);
		free(ok);
		for (size_t i = 0; i < n; i++)
			item_error(&items[i], CM_E_INTERNAL, "out of memory");
		return -1;
	}
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
			item_error(&items[i], CM_E_INVALID_REQUEST, err);
			continue;
		}
		ok[i] = true;
		items[i].write = pr_op_is_write(reqs[i].op);
	}

	pubs_clear(ctx, 0);
	st->sync = NULL;
	st_db_disk_full(st->db);
	t0 = cm_mono_ns();
	began = st_db_begin(st->db);
	st->txn_ns += cm_mono_ns() - t0;
	if (began != ST_OK) {
		fail_writes(items, reqs, ok, n,
		    "the database cannot start a transaction");
		rc = -1;
		goto out;
	}
	/*
	 * A write that fails must undo only itself, which a SAVEPOINT per
	 * write gives.  A savepoint costs a fifth of a write's work (SQLite
	 * copies every page a write touches into its journal), and is needed
	 * only by a write that fails after changing rows.  So the group runs
	 * bare first, and only a group holding such a write runs again from the
	 * start with the savepoints: the same requests, in the same order, on
	 * the same state.
	 */
	if (!exec_pass(st, reqs, ok, items, n, false)) {
		st_db_run(st->db, "ROLLBACK", "");
		pubs_clear(ctx, 0);
		replies_clear(items, n, ok);
		if (st_db_begin(st->db) != ST_OK) {
			fail_writes(items, reqs, ok, n,
			    "the database cannot start a transaction");
			rc = -1;
			goto out;
		}
		exec_pass(st, reqs, ok, items, n, true);
	}
	/*
	 * Each group forgets up to twice as many expired op_ids as it holds
	 * requests: under load the memory shrinks as fast as it grows, a
	 * little at a time, and never in one long stall.
	 */
	if (st_db_in_txn(st->db))
		prune_expired(st, 2 * (int64_t)n);
	if (st_db_in_txn(st->db) && announce(st) != 0)
		cm_warnx("store: cannot announce the group's events: %s",
		    st_db_errmsg(st->db));
	t0 = cm_mono_ns();
	committed =
	    st_db_commit(st->db, st->opts.defer_sync ? &st->sync : NULL);
	st->txn_ns += cm_mono_ns() - t0;
	if (committed != ST_DONE) {
		cm_warnx("store: commit failed: %s", st_db_errmsg(st->db));
		/* A full disk is said as such: the operator's to fix, and
		 * the writes' to retry once there is room. */
		full = st_db_disk_full(st->db);
		st_db_run(st->db, "ROLLBACK", "");
		pubs_clear(ctx, 0);
		fail_writes(
		    items, reqs, ok, n, full ? msg_full : msg_uncommitted);
		rc = -1;
		goto out;
	}
	/* Published only now: no subscriber sees an event it cannot read. */
	for (size_t i = 0; i < ctx->n_pubs; i++)
		if (publish != NULL)
			publish(arg, ctx->pubs[i].space_id, ctx->pubs[i].buf,
			    ctx->pubs[i].len);
	pubs_clear(ctx, 0);
out:
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
	int64_t n = prune_expired(st, CM_OPID_PRUNE_MAX);

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
			if (ev.kind != NULL &&
			    strcmp(ev.kind,
			        cm_event_kind_name(CM_EV_SPACE_OPENED)) == 0)
				ev.host = st_col_text(s, 5);
		} else {
			ev.kind = kind;
			ev.created_at = store_now(st);
		}
		if (ev.workspace_id != NULL &&
		    pr_pub_encode(&ev, NULL, &buf, &len) == 0) {
			publish(arg, space_id, buf, len);
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
	item_error(
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
