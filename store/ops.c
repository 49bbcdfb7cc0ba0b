/*
 * ops.c: the dispatch table and the helpers every operation shares.
 */
#include "ops.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ids.h"
#include "log.h"

static st_op_fn *const st_op_table[PR_OP__COUNT] = {
    [PR_OP_PING] = st_op_ping,
    [PR_OP_AUTH_RESOLVE] = st_op_auth_resolve,
    [PR_OP_WORKSPACE_CREATE] = st_op_workspace_create,
    [PR_OP_WORKSPACE_LIST] = st_op_workspace_list,
    [PR_OP_PRINCIPAL_CREATE] = st_op_principal_create,
    [PR_OP_PRINCIPAL_LIST] = st_op_principal_list,
    [PR_OP_TOKEN_ISSUE] = st_op_token_issue,
    [PR_OP_TOKEN_REVOKE] = st_op_token_revoke,
    [PR_OP_MEMBER_PUT] = st_op_member_put,
    [PR_OP_MEMBER_REMOVE] = st_op_member_remove,
    [PR_OP_BUNDLE_CREATE] = st_op_bundle_create,
    [PR_OP_BUNDLE_LIST] = st_op_bundle_list,
    [PR_OP_INSTANCE_REGISTER] = st_op_instance_register,
    [PR_OP_INSTANCE_LIST] = st_op_instance_list,
    [PR_OP_INSTANCE_SET_STATUS] = st_op_instance_set_status,
    [PR_OP_BINDING_CREATE] = st_op_binding_create,
    [PR_OP_BINDING_DELETE] = st_op_binding_delete,
    [PR_OP_SPACE_CREATE] = st_op_space_create,
    [PR_OP_SPACE_GET] = st_op_space_get,
    [PR_OP_SPACE_LIST] = st_op_space_list,
    [PR_OP_SPACE_CLOSE] = st_op_space_close,
    [PR_OP_SPACE_MARK_CLOSED] = st_op_space_mark_closed,
    [PR_OP_SPACE_MARK_ERROR] = st_op_space_mark_error,
    [PR_OP_SPACE_NETWORK_BLOCKED] = st_op_space_network_blocked,
    [PR_OP_TASK_SUBMIT] = st_op_task_submit,
    [PR_OP_TASK_GET] = st_op_task_get,
    [PR_OP_TASK_LIST] = st_op_task_list,
    [PR_OP_TASK_CANCEL] = st_op_task_cancel,
    [PR_OP_EVENT_LIST] = st_op_event_list,
    [PR_OP_ACTOR_LOAD] = st_op_actor_load,
    [PR_OP_ACTOR_CLAIM] = st_op_actor_claim,
    [PR_OP_ACTOR_HEARTBEAT] = st_op_actor_heartbeat,
    [PR_OP_ACTOR_FINISH] = st_op_actor_finish,
    [PR_OP_SUP_FINALIZE_LOST] = st_op_sup_finalize_lost,
    [PR_OP_SUP_SWEEP_LEASES] = st_op_sup_sweep_leases,
    [PR_OP_SUP_LIST_ACTIVE] = st_op_sup_list_active,
    [PR_OP_ARTIFACT_GET] = st_op_artifact_get,
    [PR_OP_SUP_LIST_CDP] = st_op_sup_list_cdp,
};

void
st_ops_dispatch(
    struct st_ctx *ctx, const struct pr_req *req, struct pr_rep *rep)
{
	if ((unsigned)req->op >= PR_OP__COUNT || st_op_table[req->op] == NULL)
		cm_fatalx("store: no handler for op %d", (int)req->op);
	ctx->seq_space[0] = '\0';
	st_op_table[req->op](ctx, req, rep);
}

void
st_db_failed(struct st_ctx *ctx, struct pr_rep *rep, const char *what)
{
	cm_warnx("store: %s failed: %s", what, st_db_errmsg(ctx->db));
	pr_rep_error(rep, CM_E_INTERNAL, "database error");
}

void *
st_rep_push(struct pr_rep *rep, void **list, size_t *n, size_t size)
{
	char *grown;

	/* Capacity doubles at powers of two; old blocks stay in the arena. */
	if (*n == 0 || (*n & (*n - 1)) == 0) {
		size_t cap = *n == 0 ? 1 : *n * 2;

		if (cap > CM_PROTO_LIST_MAX)
			return NULL;
		if ((grown = pr_rep_alloc(rep, cap * size)) == NULL)
			return NULL;
		if (*n > 0)
			memcpy(grown, *list, *n * size);
		*list = grown;
	}
	grown = (char *)*list + *n * size;
	memset(grown, 0, size);
	(*n)++;
	return grown;
}

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* The closing quote of a string checked plain (no escapes). */
static const char *
end_of(const char *p)
{
	return strchr(p, '"');
}

/*
 * The common case without jansson: an array of plain ASCII strings, as
 * the store writes granted capabilities.  Returns 1 when json was such an
 * array (out filled), 0 when it needs the full parser, -1 out of memory.
 */
static int
strlist_plain(struct pr_rep *rep, const char *json, struct pr_strlist *out)
{
	const char *p = skip_ws(json), *q;
	size_t n = 0;

	if (*p++ != '[')
		return 0;
	/* First the shape, and the count. */
	for (q = skip_ws(p); *q != ']'; n++) {
		if (n > 0) {
			if (*q++ != ',')
				return 0;
			q = skip_ws(q);
		}
		if (*q++ != '"')
			return 0;
		for (; *q != '"'; q++) {
			unsigned char ch = (unsigned char)*q;
			if (ch < 0x20 || ch >= 0x80 || ch == '\\')
				return 0;
		}
		q = skip_ws(q + 1);
	}
	if (*skip_ws(q + 1) != '\0')
		return 0;
	if (n > 0 && (out->v = pr_rep_alloc(rep, n * sizeof(char *))) == NULL)
		return -1;
	for (p = skip_ws(p); out->n < n; p = skip_ws(end_of(p) + 1)) {
		if (*p == ',')
			p = skip_ws(p + 1);
		p++; /* the opening quote */
		if ((out->v[out->n++] = pr_arena_strndup(
		         &rep->arena, p, (size_t)(end_of(p) - p))) == NULL)
			return -1;
	}
	return 1;
}

int
st_strlist_from_json(
    struct pr_rep *rep, const char *json, struct pr_strlist *out)
{
	json_t *arr, *v;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (json == NULL)
		return 0;
	if ((rc = strlist_plain(rep, json, out)) != 0)
		return rc > 0 ? 0 : -1;
	memset(out, 0, sizeof(*out));
	arr = json_loads(json, 0, NULL);
	if (!json_is_array(arr)) {
		json_decref(arr);
		return -1;
	}
	if (json_array_size(arr) > 0) {
		out->v =
		    pr_rep_alloc(rep, json_array_size(arr) * sizeof(char *));
		if (out->v == NULL) {
			json_decref(arr);
			return -1;
		}
	}
	json_array_foreach(arr, i, v)
	{
		if (json_is_string(v))
			out->v[out->n++] =
			    pr_rep_strdup(rep, json_string_value(v));
	}
	json_decref(arr);
	return 0;
}

static const char *
col_dup(struct pr_rep *rep, struct st_stmt *s, int col)
{
	return pr_rep_strdup(rep, st_col_text(s, col));
}

void
st_row_space(struct pr_rep *rep, struct st_stmt *s, struct pr_space *o)
{
	o->space_id = col_dup(rep, s, 0);
	o->workspace_id = col_dup(rep, s, 1);
	o->browser_instance_id = col_dup(rep, s, 2);
	o->binding_id = col_dup(rep, s, 3);
	o->owner_type = col_dup(rep, s, 4);
	o->owner_id = col_dup(rep, s, 5);
	o->status = col_dup(rep, s, 6);
	st_strlist_from_json(rep, st_col_text(s, 7), &o->granted);
	o->revision = st_col_int(s, 8);
	o->last_error_code = col_dup(rep, s, 9);
	o->close_requested = st_col_int(s, 10) != 0;
	o->created_at = st_col_int(s, 11);
	o->updated_at = st_col_int(s, 12);
	o->closed_at = st_col_int(s, 13);
}

/* arg_keys: the names of the args object, never its values (SPEC 3.12). */
void
st_task_arg_keys(struct pr_rep *rep, const char *args, struct pr_strlist *out)
{
	json_t *obj = json_loads(args ? args : "{}", 0, NULL);
	const char *key;
	json_t *v;

	memset(out, 0, sizeof(*out));
	if (json_is_object(obj) && json_object_size(obj) > 0) {
		size_t n = json_object_size(obj);

		if (n > CM_SCHEMA_PROPS_MAX)
			n = CM_SCHEMA_PROPS_MAX;
		out->v = pr_rep_alloc(rep, n * sizeof(char *));
		json_object_foreach(obj, key, v)
		{
			if (out->v == NULL || out->n == n)
				break;
			out->v[out->n++] = pr_rep_strdup(rep, key);
		}
	}
	json_decref(obj);
}

void
st_row_task(struct pr_rep *rep, struct st_stmt *s, struct pr_task *o)
{
	o->task_id = col_dup(rep, s, 0);
	o->space_id = col_dup(rep, s, 1);
	o->workspace_id = col_dup(rep, s, 2);
	o->request_id = col_dup(rep, s, 3);
	o->operation_id = col_dup(rep, s, 4);
	o->capability = col_dup(rep, s, 5);
	st_task_arg_keys(rep, st_col_text(s, 6), &o->arg_keys);
	o->timeout_ms = st_col_int(s, 7);
	o->status = col_dup(rep, s, 8);
	o->cancel_requested = st_col_int(s, 9) != 0;
	o->result = col_dup(rep, s, 10);
	o->error_code = col_dup(rep, s, 11);
	o->error_message = col_dup(rep, s, 12);
	o->created_at = st_col_int(s, 13);
	o->started_at = st_col_int(s, 14);
	o->finished_at = st_col_int(s, 15);
	o->updated_at = st_col_int(s, ST_TASK_NCOLS - 1);
}

static int load_space(struct st_ctx *ctx, struct pr_rep *rep,
    const char *workspace_id, const char *space_id, bool lock);

int
st_load_space(struct st_ctx *ctx, struct pr_rep *rep, const char *workspace_id,
    const char *space_id)
{
	return load_space(ctx, rep, workspace_id, space_id, false);
}

int
st_load_space_locked(
    struct st_ctx *ctx, struct pr_rep *rep, const char *space_id)
{
	return load_space(ctx, rep, NULL, space_id, true);
}

static int
load_space(struct st_ctx *ctx, struct pr_rep *rep, const char *workspace_id,
    const char *space_id, bool lock)
{
	static const char sql[] =
	    "SELECT " ST_SPACE_COLS ", last_sequence FROM browser_spaces"
	    " WHERE id = $1";
	static const char lock_sql[] =
	    "SELECT " ST_SPACE_COLS ", last_sequence FROM browser_spaces"
	    " WHERE id = $1 FOR UPDATE";
	struct st_stmt *s;
	struct pr_space *sp;
	int rc;

	if (st_db_query(ctx->db, &s,
	        lock && st_db_shared(ctx->db) ? lock_sql : sql, "s",
	        space_id) != ST_OK) {
		st_db_failed(ctx, rep, "space load");
		return -1;
	}
	rc = st_stmt_step(s);
	if (rc == ST_ROW && (workspace_id == NULL ||
	                        strcmp(st_col_text(s, 1), workspace_id) == 0)) {
		if ((sp = ST_PUSH(rep, spaces)) == NULL) {
			st_stmt_done(s);
			pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
			return -1;
		}
		st_row_space(rep, s, sp);
		st_seq_note(ctx, sp->space_id, st_col_int(s, ST_SPACE_NCOLS));
		st_stmt_done(s);
		return 1;
	}
	st_stmt_done(s);
	if (rc == ST_ERROR) {
		st_db_failed(ctx, rep, "space load");
		return -1;
	}
	/* Unknown and foreign look the same to the caller (SPEC 1). */
	pr_rep_error(rep, CM_E_NOT_FOUND, "no such browser space");
	return 0;
}

static int
load_task_where(struct st_ctx *ctx, struct pr_rep *rep, const char *sql,
    const char *key, bool missing_is_error, const char **args)
{
	struct st_stmt *s;
	struct pr_task *t;
	int rc;

	if (st_db_query(ctx->db, &s, sql, "s", key) != ST_OK) {
		st_db_failed(ctx, rep, "task load");
		return -1;
	}
	rc = st_stmt_step(s);
	if (rc == ST_ROW) {
		if ((t = ST_PUSH(rep, tasks)) == NULL) {
			st_stmt_done(s);
			pr_rep_error(rep, CM_E_INTERNAL, "out of memory");
			return -1;
		}
		st_row_task(rep, s, t);
		if (args != NULL)
			*args = pr_rep_strdup(
			    rep, st_col_text(s, ST_TASK_COL_ARGS));
		st_stmt_done(s);
		return 1;
	}
	st_stmt_done(s);
	if (rc == ST_ERROR) {
		st_db_failed(ctx, rep, "task load");
		return -1;
	}
	if (missing_is_error)
		pr_rep_error(rep, CM_E_NOT_FOUND, "no such task");
	return 0;
}

int
st_load_task(struct st_ctx *ctx, struct pr_rep *rep, const char *task_id)
{
	static const char sql[] =
	    "SELECT " ST_TASK_COLS " FROM browser_space_tasks WHERE id = $1";

	return load_task_where(ctx, rep, sql, task_id, true, NULL);
}

int
st_load_active_task(struct st_ctx *ctx, struct pr_rep *rep,
    const char *space_id, const char **args)
{
	static const char sql[] =
	    "SELECT " ST_TASK_COLS
	    " FROM browser_space_tasks WHERE space_id = $1"
	    " AND (status = 'queued' OR status = 'running')";

	return load_task_where(ctx, rep, sql, space_id, false, args);
}

void
st_seq_note(struct st_ctx *ctx, const char *space_id, int64_t last)
{
	size_t n = strlen(space_id);

	if (n >= sizeof(ctx->seq_space)) {
		ctx->seq_space[0] = '\0';
		return;
	}
	memcpy(ctx->seq_space, space_id, n + 1);
	ctx->seq_last = last;
	ctx->seq_locked = false;
}

static int
pubs_push(struct st_ctx *ctx, char *buf, size_t len, const struct pr_event *ev)
{
	struct st_pub *pub;

	if (ctx->n_pubs == ctx->cap_pubs) {
		size_t cap = ctx->cap_pubs ? ctx->cap_pubs * 2 : 64;
		struct st_pub *p = realloc(ctx->pubs, cap * sizeof(*p));

		if (p == NULL)
			return -1;
		ctx->pubs = p;
		ctx->cap_pubs = cap;
	}
	pub = &ctx->pubs[ctx->n_pubs++];
	pub->buf = buf;
	pub->len = len;
	/* The encoder checked the id against CM_ID_MAX. */
	snprintf(pub->space_id, sizeof(pub->space_id), "%s", ev->space_id);
	pub->sequence = ev->sequence;
	pub->kind = ev->kind;
	return 0;
}

/*
 * What an event does to its Space's row besides numbering it.  Each is one
 * statement with the numbering: the row is written once per event.
 */
enum space_change {
	SPACE_SAME,   /* numbering only */
	SPACE_TOUCH,  /* revision + 1, updated_at, and status unless NULL */
	SPACE_SETTLE, /* a running Space goes idle; any other stays as it is */
};

static int
event_add(struct st_ctx *ctx, const char *workspace_id, const char *space_id,
    const char *task_id, const char *kind, const char *payload,
    enum space_change change, const char *status, const char *host,
    const struct pr_task *task)
{
	/*
	 * A plain read then write: cheaper in SQLite than UPDATE RETURNING
	 * (which buffers its rows), and safe because the store is the only
	 * writer.  On a shared database (PostgreSQL, other hosts' stores)
	 * the read locks the Space row until the commit, and no value read
	 * before it is trusted: two writers then take turns, and the second
	 * reads the first one's sequence.
	 */
	static const char next_sql[] =
	    "SELECT last_sequence + 1 FROM browser_spaces WHERE id = $1";
	static const char next_lock_sql[] =
	    "SELECT last_sequence + 1 FROM browser_spaces WHERE id = $1"
	    " FOR UPDATE";
	bool shared = st_db_shared(ctx->db);
	static const char same_sql[] =
	    "UPDATE browser_spaces SET last_sequence = $2 WHERE id = $1";
	static const char touch_sql[] =
	    "UPDATE browser_spaces SET last_sequence = $2,"
	    " status = COALESCE($3, status), revision = revision + 1,"
	    " updated_at = $4 WHERE id = $1";
	static const char settle_sql[] =
	    "UPDATE browser_spaces SET last_sequence = $2,"
	    " status = CASE WHEN status = 'running' THEN 'idle'"
	    " ELSE status END,"
	    " revision = revision + CASE WHEN status = 'running' THEN 1"
	    " ELSE 0 END,"
	    " updated_at = CASE WHEN status = 'running' THEN $3"
	    " ELSE updated_at END"
	    " WHERE id = $1";
	static const char insert_sql[] =
	    "INSERT INTO browser_space_events"
	    " (space_id, task_id, sequence, kind, payload, created_at)"
	    " VALUES ($1, $2, $3, $4, $5, $6)";
	struct pr_event ev;
	struct st_stmt *s;
	char *buf;
	size_t len;
	int64_t seq;
	int rc;

	if (payload == NULL)
		payload = "{}";
	if (strcmp(ctx->seq_space, space_id) == 0 &&
	    (!shared || ctx->seq_locked)) {
		seq = ctx->seq_last + 1;
	} else {
		if (st_db_query(ctx->db, &s, shared ? next_lock_sql : next_sql,
		        "s", space_id) != ST_OK)
			return -1;
		if (st_stmt_step(s) != ST_ROW) {
			st_stmt_done(s);
			return -1;
		}
		seq = st_col_int(s, 0);
		st_stmt_done(s);
	}
	switch (change) {
	case SPACE_SAME:
		rc = st_db_run(ctx->db, same_sql, "si", space_id, seq);
		break;
	case SPACE_TOUCH:
		rc = st_db_run(ctx->db, touch_sql, "sisi", space_id, seq,
		    status, ctx->now);
		break;
	default:
		rc = st_db_run(
		    ctx->db, settle_sql, "sii", space_id, seq, ctx->now);
		break;
	}
	if (rc != ST_DONE)
		return -1;

	if (st_db_run(ctx->db, insert_sql, "ssissi", space_id, task_id, seq,
	        kind, payload, ctx->now) != ST_DONE)
		return -1;
	st_seq_note(ctx, space_id, seq);
	ctx->seq_locked = shared; /* the row stays locked until the commit */

	memset(&ev, 0, sizeof(ev));
	ev.workspace_id = workspace_id;
	ev.space_id = space_id;
	ev.task_id = task_id;
	ev.sequence = seq;
	ev.kind = kind;
	ev.payload = payload;
	ev.created_at = ctx->now;
	ev.host = host;
	if (pr_pub_encode(&ev, task, &buf, &len) != 0)
		return -1;
	if (pubs_push(ctx, buf, len, &ev) != 0) {
		free(buf);
		return -1;
	}
	return 0;
}

int
st_event_append(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id, const char *kind,
    const char *payload)
{
	return event_add(ctx, workspace_id, space_id, task_id, kind, payload,
	    SPACE_SAME, NULL, NULL, NULL);
}

int
st_event_opened(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *payload, const char *host)
{
	return event_add(ctx, workspace_id, space_id, NULL,
	    cm_event_kind_name(CM_EV_SPACE_OPENED), payload, SPACE_SAME, NULL,
	    host, NULL);
}

int
st_event_touch(struct st_ctx *ctx, const char *workspace_id,
    const char *space_id, const char *task_id, const char *kind,
    const char *payload, const char *status)
{
	return event_add(ctx, workspace_id, space_id, task_id, kind, payload,
	    SPACE_TOUCH, status, NULL, NULL);
}

int
st_event_settle(
    struct st_ctx *ctx, const struct pr_task *task, const char *payload)
{
	return event_add(ctx, task->workspace_id, task->space_id, task->task_id,
	    task->status, payload, SPACE_SETTLE, NULL, NULL, task);
}

int
st_notice(struct st_ctx *ctx, const char *workspace_id, const char *space_id,
    const char *kind)
{
	struct pr_event ev;
	char *buf;
	size_t len;

	memset(&ev, 0, sizeof(ev));
	ev.workspace_id = workspace_id;
	ev.space_id = space_id;
	ev.kind = kind;
	ev.created_at = ctx->now;
	if (pr_pub_encode(&ev, NULL, &buf, &len) != 0)
		return -1;
	if (pubs_push(ctx, buf, len, &ev) != 0) {
		free(buf);
		return -1;
	}
	return 0;
}

int
st_space_touch(struct st_ctx *ctx, const char *space_id, const char *status)
{
	static const char sql[] =
	    "UPDATE browser_spaces SET status = COALESCE($2, status),"
	    " revision = revision + 1, updated_at = $3 WHERE id = $1";

	return st_db_run(ctx->db, sql, "ssi", space_id, status, ctx->now) ==
	               ST_DONE
	           ? 0
	           : -1;
}

char *
st_payload(const char *fmt, ...)
{
	va_list ap;
	json_t *v;
	char *out;

	va_start(ap, fmt);
	v = json_vpack_ex(NULL, 0, fmt, ap);
	va_end(ap);
	if (v == NULL)
		return NULL;
	out = json_dumps(v, JSON_COMPACT);
	json_decref(v);
	return out;
}
