/*
 * chaos_check.c: what the chaos suite checks once the load has settled,
 * and the sample of the Spaces it takes during the load (chaos.h).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chaos.h"

/* A Space's status now, by id ("" when there is no answer). */
void
space_status(const char *id, char *out, size_t len)
{
	char path[256];
	json_t *res;

	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces/%s",
	    ch.ws, id);
	out[0] = '\0';
	if (api("GET", path, NULL, &res) == 200)
		snprintf(out, len, "%s",
		    jstr(json_object_get(res, "data"), "status"));
	json_decref(res);
}

/*
 * Two Spaces of one instance, seen not closed in two lists a moment apart:
 * that may be one closing and the other created between the lists.  a,
 * then b, then a again not closed: closed is final, so a was not closed
 * when b was seen, and both held the instance at that moment.
 */
static void
confirm_pair(const char *when, const char *inst, const char *a, const char *b)
{
	char sa[16], sb[16], sa2[16];

	space_status(a, sa, sizeof(sa));
	space_status(b, sb, sizeof(sb));
	space_status(a, sa2, sizeof(sa2));
	if (sa[0] != '\0' && strcmp(sa, "closed") != 0 && sb[0] != '\0' &&
	    strcmp(sb, "closed") != 0 && sa2[0] != '\0' &&
	    strcmp(sa2, "closed") != 0)
		violation("%s: instance %s has two Spaces not closed, %s (%s) "
		          "and %s (%s)",
		    when, inst, a, sa2, b, sb);
}

/* The API's view now: no instance with two Spaces that are not closed. */
void
sample_active(const char *when)
{
	static const char *const live[] = {"idle", "running", "error"};
	static char inst[CH_SPACES_MAX][CM_ID_MAX + 1];
	static char space[CH_SPACES_MAX][CM_ID_MAX + 1];
	char path[256];
	int n = 0;

	for (size_t k = 0; k < sizeof(live) / sizeof(live[0]); k++) {
		json_t *res, *sp;
		size_t i;

		snprintf(path, sizeof(path),
		    "/api/v1/workspaces/%s/browser-spaces?limit=100&status=%s",
		    ch.ws, live[k]);
		if (api("GET", path, NULL, &res) != 200) {
			json_decref(res);
			return; /* no whole view this time */
		}
		json_array_foreach(json_object_get(res, "data"), i, sp)
		{
			const char *in = jstr(sp, "browser_instance_id");
			const char *id = jstr(sp, "space_id");

			for (int j = 0; j < n; j++)
				if (strcmp(inst[j], in) == 0 &&
				    strcmp(space[j], id) != 0)
					confirm_pair(when, in, space[j], id);
			if (n < CH_SPACES_MAX) {
				snprintf(inst[n], CM_ID_MAX + 1, "%s", in);
				snprintf(space[n++], CM_ID_MAX + 1, "%s", id);
			}
		}
		json_decref(res);
	}
}

/* ---- after the load */

/* Every acknowledged task has ended, and every Space whose close was
 * accepted is closed.  Each look asks only about what has not yet. */
bool
settled(void *arg)
{
	char path[256];
	bool all = true;

	(void)arg;
	for (int i = 0; i < ch.n_task; i++) {
		struct ch_task *t = &ch.task[i];
		json_t *res;
		int status;

		if (t->terminal)
			continue;
		snprintf(path, sizeof(path),
		    "/api/v1/workspaces/%s/browser-spaces/%s/tasks/%s", ch.ws,
		    ch.space[t->space].id, t->task_id);
		status = api("GET", path, NULL, &res);
		if (status == 200) {
			snprintf(t->status, sizeof(t->status), "%s",
			    jstr(json_object_get(res, "data"), "status"));
			t->terminal = task_terminal(t->status);
		} else {
			snprintf(
			    t->status, sizeof(t->status), "HTTP %d", status);
		}
		json_decref(res);
		all &= t->terminal;
	}
	for (int si = 0; si < ch.n_space; si++) {
		struct ch_space *sp = &ch.space[si];

		if (!sp->close_acked || strcmp(sp->status, "closed") == 0)
			continue;
		space_status(sp->id, sp->status, sizeof(sp->status));
		all &= strcmp(sp->status, "closed") == 0;
	}
	return all;
}

/* Every Space's events, 1..N, and one terminal event per task that
 * agrees with its status. */
void
check_events(void)
{
	int *terminal_events = calloc((size_t)ch.n_task + 1, sizeof(int));

	for (int si = 0; si < ch.n_space; si++) {
		int64_t next = 1;
		bool more = true;

		while (more) {
			char path[256], tail[64];
			json_t *res, *ev;
			size_t i;

			snprintf(tail, sizeof(tail),
			    "/events?after_sequence=%lld&limit=100",
			    (long long)(next - 1));
			space_path(path, sizeof(path), si, tail);
			if (api("GET", path, NULL, &res) != 200) {
				violation(
				    "events of %s: no answer", ch.space[si].id);
				json_decref(res);
				break;
			}
			more = json_array_size(json_object_get(res, "data")) ==
			       100;
			json_array_foreach(json_object_get(res, "data"), i, ev)
			{
				int64_t seq = json_integer_value(
				    json_object_get(ev, "sequence"));
				const char *kind = jstr(ev, "kind");
				int ti = find_task(jstr(ev, "task_id"));

				if (seq != next)
					violation("Space %s: event %lld where "
					          "%lld was due",
					    ch.space[si].id, (long long)seq,
					    (long long)next);
				next = seq + 1;
				if (ti < 0 || !task_terminal(kind))
					continue;
				terminal_events[ti]++;
				if (strcmp(kind, ch.task[ti].status) != 0)
					violation("task %s is %s, its event %s",
					    ch.task[ti].task_id,
					    ch.task[ti].status, kind);
			}
			json_decref(res);
		}
	}
	for (int i = 0; i < ch.n_task; i++)
		if (ch.task[i].terminal && terminal_events[i] != 1)
			violation("task %s (%s) has %d terminal events",
			    ch.task[i].task_id, ch.task[i].status,
			    terminal_events[i]);
	free(terminal_events);
}

/* The fake runtime's log: no request_id (or task) started twice, and no
 * task completed that the runtime never started.  Returns the starts. */
int
check_fake_log(void)
{
	char *text = tk_read_file(ch.fake_log, NULL), *line, *nl;
	json_t *starts = json_object(); /* "space/rid" -> count */
	json_t *tasks = json_object();  /* task_id -> count */
	int n = 0;

	for (line = text; line != NULL && *line != '\0'; line = nl + 1) {
		char key[CM_ID_MAX * 2 + 2];
		json_t *o, *c;

		if ((nl = strchr(line, '\n')) == NULL)
			break;
		*nl = '\0';
		if ((o = json_loads(line, 0, NULL)) == NULL) {
			violation("fake log: a line that is not JSON");
			continue;
		}
		if (strcmp(jstr(o, "ev"), "start") == 0) {
			n++;
			snprintf(key, sizeof(key), "%s/%s", jstr(o, "space_id"),
			    jstr(o, "request_id"));
			c = json_object_get(starts, key);
			if (c != NULL)
				violation("request_id %s ran twice on %s",
				    jstr(o, "request_id"), jstr(o, "space_id"));
			json_object_set_new(starts, key,
			    json_integer(1 + json_integer_value(c)));
			json_object_set_new(
			    tasks, jstr(o, "task_id"), json_integer(1));
		}
		json_decref(o);
	}
	for (int i = 0; i < ch.n_task; i++)
		if (strcmp(ch.task[i].status, "completed") == 0 &&
		    json_object_get(tasks, ch.task[i].task_id) == NULL &&
		    !ch.space[ch.task[i].space].managed)
			violation("task %s completed, the runtime never ran it",
			    ch.task[i].task_id);
	json_decref(starts);
	json_decref(tasks);
	free(text);
	return n;
}

/* Closed Spaces (their status noted for check_profiles): no actor. */
void
check_closed_spaces(void)
{
	for (int si = 0; si < ch.n_space; si++) {
		struct ch_space *sp = &ch.space[si];
		pid_t pids[4];

		space_status(sp->id, sp->status, sizeof(sp->status));
		if (strcmp(sp->status, "closed") == 0 &&
		    tk_actor_pids(ch.p.pid, sp->id, pids, 4) > 0)
			violation("closed Space %s has an actor (pid %d)",
			    sp->id, (int)pids[0]);
	}
}

/* Once spaced has stopped: no profile of a closed Space, under its own
 * name or as a discarded one (trash-<pid>-<space_id>). */
void
check_profiles(void)
{
	char dir[200];

	snprintf(dir, sizeof(dir), "%s/profiles", ch.dir);
	for (int si = 0; si < ch.n_space; si++)
		if (strcmp(ch.space[si].status, "closed") == 0 &&
		    tk_dir_holds(dir, ch.space[si].id))
			violation("closed Space %s: a profile remains in %s",
			    ch.space[si].id, dir);
}

/* Each row sql finds is a violation: what, and its first two columns. */
static void
db_violations(sqlite3 *db, const char *sql, const char *what)
{
	sqlite3_stmt *rows;

	if (sqlite3_prepare_v2(db, sql, -1, &rows, NULL) != SQLITE_OK) {
		violation("the database: %s", sqlite3_errmsg(db));
		return;
	}
	while (sqlite3_step(rows) == SQLITE_ROW)
		violation("the database: %s: %s, %s", what,
		    sqlite3_column_text(rows, 0), sqlite3_column_text(rows, 1));
	sqlite3_finalize(rows);
}

/* Every row of the database, but the instance's own secret columns,
 * must hold no canary (a task's args, what the client sent and the
 * runtime needs, may hold the secret the load put there); no instance has two
 * Spaces that are not closed; no task is left queued or running. */
void
check_database(void)
{
	char path[256];
	sqlite3 *db;
	sqlite3_stmt *tables, *rows;

	snprintf(path, sizeof(path), "%s/spaced.db", ch.dir);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) !=
	    SQLITE_OK) {
		violation("the database %s does not open", path);
		sqlite3_close(db);
		return;
	}
	sqlite3_prepare_v2(db,
	    "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &tables,
	    NULL);
	while (sqlite3_step(tables) == SQLITE_ROW) {
		char sql[128], where[160];
		const char *table =
		    (const char *)sqlite3_column_text(tables, 0);

		snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\"", table);
		if (sqlite3_prepare_v2(db, sql, -1, &rows, NULL) != SQLITE_OK)
			continue;
		while (sqlite3_step(rows) == SQLITE_ROW) {
			for (int c = 0; c < sqlite3_column_count(rows); c++) {
				const char *col = sqlite3_column_name(rows, c);
				const void *v = sqlite3_column_blob(rows, c);

				bool args;

				if (strcmp(table, "browser_instances") == 0 &&
				    (strcmp(col, "endpoint") == 0 ||
				        strcmp(col, "config") == 0 ||
				        strcmp(col, "profile") == 0))
					continue;
				/* A task's args, and the claim replies the
				 * store keeps for a re-sent claim, which
				 * carry them to the actor. */
				args = (strcmp(table, "browser_space_tasks") ==
				               0 &&
				           strcmp(col, "args") == 0) ||
				       (strcmp(table, "store_ops") == 0 &&
				           strcmp(col, "reply") == 0);
				snprintf(where, sizeof(where),
				    "the database, %s.%s", table, col);
				canary_scan_but(where, v,
				    (size_t)sqlite3_column_bytes(rows, c),
				    args ? ch.msg : NULL);
			}
		}
		sqlite3_finalize(rows);
	}
	sqlite3_finalize(tables);

	db_violations(db,
	    "SELECT browser_instance_id, count(*) FROM browser_spaces "
	    "WHERE status <> 'closed' GROUP BY 1 HAVING count(*) > 1",
	    "an instance with more than one Space not closed");
	db_violations(db,
	    "SELECT id, status FROM browser_space_tasks "
	    "WHERE status IN ('queued', 'running')",
	    "a task not ended");
	sqlite3_close(db);
}

void
check_log(void)
{
	size_t len = 0;
	char *text = tk_read_file(ch.out, &len);

	canary_scan("spaced's log", text, len);
	free(text);
}
