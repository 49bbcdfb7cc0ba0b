/*
 * cmds_space.c: the workspace commands (Spaces, tasks, events, artifacts,
 * the workspace's instances) and status.  Each prints the api's answer:
 * the whole JSON document with --json, a table or a record otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ctl.h"
#include "ids.h"
#include "json.h"
#include "mime.h"
#include "status.h"

#define PATH_LEN (CM_URL_MAX + 1)
#define ESC_LEN (3 * CM_NAME_MAX + 1)

static const char *const space_cols[] = {"space_id", "status", "owner_type",
    "owner_id", "browser_instance_id", "granted_capabilities", "created_at",
    NULL};
static const char *const task_cols[] = {"task_id", "capability", "status",
    "request_id", "created_at", "finished_at", NULL};
static const char *const event_cols[] = {
    "sequence", "kind", "task_id", "created_at", "payload", NULL};
static const char *const instance_cols[] = {
    "browser_instance_id", "name", "driver", "status", "in_use", "host", NULL};
static const char *const child_cols[] = {
    "kind", "space_id", "pid", "state", "restarts", "uptime_ms", NULL};

/*
 * The workspace's path (resolving --workspace on the first call), then
 * tail with each '%' replaced by the next id, escaped.  An exit code:
 * CTL_EXIT_USAGE when an id does not fit.
 */
static int
ws_path(struct ctl *c, char *out, const char *tail, const char *id1,
    const char *id2, const char *id3)
{
	const char *ids[4] = {c->ws, id1, id2, id3};
	char fmt[PATH_LEN];
	int rc;

	if ((rc = ctl_workspace(c)) != CTL_EXIT_OK)
		return rc;
	snprintf(fmt, sizeof(fmt), "/api/v1/workspaces/%%%s", tail);
	if (ctl_path(out, PATH_LEN, fmt, ids, 4))
		return CTL_EXIT_OK;
	return ctl_usage("an id is too long");
}

static int
spaces_list(struct ctl *c)
{
	char path[PATH_LEN], q[ESC_LEN];
	long long limit = ctl_opt_int(c, CTL_O_LIMIT, CM_LIST_LIMIT_DEFAULT);
	size_t o;
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces", NULL, NULL, NULL)) != 0)
		return rc;
	o = strlen(path);
	snprintf(path + o, sizeof(path) - o, "?limit=%lld", limit);
	if (c->opt[CTL_O_STATUS] != NULL &&
	    ctl_escape(c->opt[CTL_O_STATUS], q, sizeof(q))) {
		o = strlen(path);
		snprintf(path + o, sizeof(path) - o, "&status=%s", q);
	}
	if (c->opt[CTL_O_OWNER] != NULL &&
	    ctl_escape(c->opt[CTL_O_OWNER], q, sizeof(q))) {
		o = strlen(path);
		snprintf(path + o, sizeof(path) - o, "&owner_id=%s", q);
	}
	return ctl_call_show(c, "GET", path, NULL, space_cols);
}

/* A comma-separated list as a JSON array of strings; NULL when out of
 * memory. */
static json_t *
name_list(const char *s)
{
	json_t *a = json_array();
	const char *p = s;

	while (a != NULL && *p != '\0') {
		size_t n = strcspn(p, ",");

		if (n > 0 &&
		    json_array_append_new(a, json_stringn(p, n)) != 0) {
			json_decref(a); /* out of memory: ctl_set says so */
			return NULL;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return a;
}

static int
spaces_create(struct ctl *c)
{
	char path[PATH_LEN];
	json_t *body;
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces", NULL, NULL, NULL)) != 0)
		return rc;
	body = json_pack("{s:s, s:s, s:s}", "browser_instance_id",
	    c->opt[CTL_O_INSTANCE], "owner_type",
	    c->opt[CTL_O_OWNER_TYPE] ? c->opt[CTL_O_OWNER_TYPE] : "operator",
	    "owner_id", c->opt[CTL_O_OWNER]);
	if (c->opt[CTL_O_BINDING] != NULL)
		ctl_set(
		    &body, "binding_id", json_string(c->opt[CTL_O_BINDING]));
	if (c->opt[CTL_O_GRANT] != NULL)
		ctl_set(&body, "granted_capabilities",
		    name_list(c->opt[CTL_O_GRANT]));
	if (c->opt[CTL_O_REQUEST_ID] != NULL)
		ctl_set(
		    &body, "request_id", json_string(c->opt[CTL_O_REQUEST_ID]));
	if (c->opt[CTL_O_DIALOGS] != NULL)
		ctl_set(
		    &body, "dialog_policy", json_string(c->opt[CTL_O_DIALOGS]));
	return ctl_call_show(c, "POST", path, body, space_cols);
}

static int
spaces_get(struct ctl *c)
{
	char path[PATH_LEN];
	int rc;

	if ((rc = ws_path(
	         c, path, "/browser-spaces/%", c->arg[0], NULL, NULL)) != 0)
		return rc;
	return ctl_call_show(c, "GET", path, NULL, space_cols);
}

static int
spaces_cancel(struct ctl *c)
{
	char path[PATH_LEN];
	json_t *body;
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces/%/cancel", c->arg[0], NULL,
	         NULL)) != 0)
		return rc;
	body = json_object();
	if (c->opt[CTL_O_TASK] != NULL)
		ctl_set(&body, "task_id", json_string(c->opt[CTL_O_TASK]));
	return ctl_call_show(c, "POST", path, body, task_cols);
}

static int
spaces_close(struct ctl *c)
{
	char path[PATH_LEN];
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces/%/close", c->arg[0], NULL,
	         NULL)) != 0)
		return rc;
	return ctl_call_show(c, "POST", path, json_object(), space_cols);
}

static int
spaces_takeover(struct ctl *c)
{
	char path[PATH_LEN];
	json_t *body = json_object();
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces/%/takeover", c->arg[0],
	         NULL, NULL)) != 0) {
		json_decref(body);
		return rc;
	}
	if (c->opt[CTL_O_TTL] != NULL)
		ctl_set(
		    &body, "ttl_s", json_integer(ctl_opt_int(c, CTL_O_TTL, 0)));
	return ctl_call_show(c, "POST", path, body, space_cols);
}

static int
spaces_release(struct ctl *c)
{
	char path[PATH_LEN];
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces/%/release", c->arg[0], NULL,
	         NULL)) != 0)
		return rc;
	return ctl_call_show(c, "POST", path, json_object(), space_cols);
}

/* --- tasks --------------------------------------------------------------- */

static bool
task_ends(const char *kind)
{
	return cm_event_kind_ends_task(cm_event_kind_parse(kind));
}

/* What --wait watches: one task's events, timed from its submit. */
struct watch {
	const struct ctl *c;
	const char *task_id;
	int64_t t0_ms;
};

static bool
watch_event(void *arg, json_t *ev)
{
	struct watch *w = arg;
	const char *task = json_string_value(json_object_get(ev, "task_id"));
	const char *kind = json_string_value(json_object_get(ev, "kind"));
	char payload[CM_CTL_COL_MAX * 4];

	if (task == NULL || strcmp(task, w->task_id) != 0)
		return false;
	if (w->c->json) {
		ctl_print_json(ev);
	} else {
		ctl_cell(
		    json_object_get(ev, "payload"), payload, sizeof(payload));
		printf("+%lldms  #%lld  %s  %s\n",
		    (long long)(cm_mono_ms() - w->t0_ms),
		    (long long)json_integer_value(
		        json_object_get(ev, "sequence")),
		    kind ? kind : "?", payload);
		fflush(stdout);
	}
	return task_ends(kind);
}

/* After --wait: the task's result, where its artifact is, and its error
 * as the exit code. */
static int
show_outcome(struct ctl *c, const char *space, json_t *res)
{
	json_t *t = json_object_get(res, "data");
	json_t *result = json_object_get(t, "result");
	json_t *err = json_object_get(t, "error");
	const char *status = json_string_value(json_object_get(t, "status"));
	const char *art =
	    json_string_value(json_object_get(result, "artifact"));
	char path[PATH_LEN];

	ctl_show(c, res, task_cols);
	if (art != NULL && !c->json &&
	    ws_path(c, path, "/browser-spaces/%/tasks/%/artifacts/%", space,
	        json_string_value(json_object_get(t, "task_id")), art) == 0)
		printf("\nartifact %s: spacectl artifacts get --workspace %s "
		       "%s %s %s -o %s\n  (GET %s%s)\n",
		    art, c->ws, space,
		    json_string_value(json_object_get(t, "task_id")), art, art,
		    c->url, path);
	if (cm_task_status_is(status, CM_TASK_COMPLETED))
		return CTL_EXIT_OK;
	if (json_is_object(err))
		fprintf(stderr, "error: %s: %s\n",
		    json_string_value(json_object_get(err, "code")),
		    json_string_value(json_object_get(err, "message")));
	else
		fprintf(stderr, "error: %s: the task did not complete\n",
		    status ? status : "unknown");
	return CTL_EXIT_API;
}

static int
tasks_submit(struct ctl *c)
{
	char path[PATH_LEN], rid[CM_UUID_LEN];
	const char *space = c->arg[0], *task_id;
	struct watch w = {.c = c, .t0_ms = cm_mono_ms()};
	json_t *body, *args, *res = NULL;
	long long timeout = ctl_opt_int(c, CTL_O_TIMEOUT, 0);
	int64_t last = 0;
	int status, rc;

	if ((rc = ws_path(
	         c, path, "/browser-spaces/%/tasks", space, NULL, NULL)) != 0)
		return rc;
	args = ctl_opt_obj(c, CTL_O_ARGS);
	cm_uuid7(rid);
	body = json_pack("{s:s, s:s, s:o}", "request_id",
	    c->opt[CTL_O_REQUEST_ID] ? c->opt[CTL_O_REQUEST_ID] : rid,
	    "capability", c->arg[1], "args", args ? args : json_object());
	if (timeout > 0)
		ctl_set(&body, "timeout_seconds", json_integer(timeout));
	rc = ctl_call(c, "POST", path, body, &status, &res);
	json_decref(body);
	if (rc != CTL_EXIT_OK || c->opt[CTL_O_WAIT] == NULL) {
		if (rc == CTL_EXIT_OK)
			ctl_show(c, res, task_cols);
		json_decref(res);
		return rc;
	}
	task_id = json_string_value(
	    json_object_get(json_object_get(res, "data"), "task_id"));
	if (task_id == NULL) {
		json_decref(res);
		fprintf(stderr, "error: bad_answer: no task_id\n");
		return CTL_EXIT_API;
	}
	w.task_id = task_id;
	if (!c->json)
		printf("task %s %s\n", task_id,
		    status == 200 ? "(an earlier submit)" : "accepted");
	/* The whole log is replayed, so that no event of the task can fall
	 * between the submit and the stream; others are skipped. */
	if ((rc = ws_path(
	         c, path, "/browser-spaces/%/events", space, NULL, NULL)) == 0)
		rc = ctl_stream(c, path, &last, watch_event, &w);
	if (rc == CTL_EXIT_OK &&
	    (rc = ws_path(c, path, "/browser-spaces/%/tasks/%", space, task_id,
	         NULL)) == 0) {
		json_t *t;

		if (!c->json)
			printf("\n");
		rc = ctl_call(c, "GET", path, NULL, &status, &t);
		if (rc == CTL_EXIT_OK)
			rc = show_outcome(c, space, t);
		json_decref(t);
	}
	json_decref(res);
	return rc;
}

static int
tasks_list(struct ctl *c)
{
	char path[PATH_LEN];
	long long limit = ctl_opt_int(c, CTL_O_LIMIT, CM_LIST_LIMIT_DEFAULT);
	size_t o;
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces/%/tasks", c->arg[0], NULL,
	         NULL)) != 0)
		return rc;
	o = strlen(path);
	snprintf(path + o, sizeof(path) - o, "?limit=%lld", limit);
	return ctl_call_show(c, "GET", path, NULL, task_cols);
}

static int
tasks_get(struct ctl *c)
{
	char path[PATH_LEN];
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces/%/tasks/%", c->arg[0],
	         c->arg[1], NULL)) != 0)
		return rc;
	return ctl_call_show(c, "GET", path, NULL, task_cols);
}

static int
artifacts_get(struct ctl *c)
{
	char path[PATH_LEN], mime[CM_MIME_MAX + 1];
	const char *file = c->opt[CTL_O_OUTPUT];
	size_t size = 0;
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces/%/tasks/%/artifacts/%",
	         c->arg[0], c->arg[1], c->arg[2])) != 0)
		return rc;
	rc = ctl_download(c, path, file, mime, sizeof(mime), &size);
	if (rc != CTL_EXIT_OK)
		return rc;
	if (c->json) {
		json_t *o = json_pack("{s:s, s:s, s:I}", "file", file, "mime",
		    mime, "size", (json_int_t)size);

		ctl_print_json(o);
		json_decref(o);
	} else {
		printf("wrote %s (%zu bytes, %s)\n", file, size, mime);
	}
	return CTL_EXIT_OK;
}

/* --- files --------------------------------------------------------------- */

static const char *const file_cols[] = {
    "name", "mime", "size", "sha256", "updated_at", NULL};

/* Reads file (at most CM_UPLOAD_MAX bytes) into buf (CM_UPLOAD_MAX + 1
 * bytes); its length, or -1 with the reason printed. */
static long
read_upload(const char *file, char *buf)
{
	FILE *f = fopen(file, "rb");
	size_t n;

	if (f == NULL) {
		ctl_fail(CTL_EXIT_USAGE, "%s: %s", file, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, CM_UPLOAD_MAX + 1, f);
	if (ferror(f) || n == 0 || n > CM_UPLOAD_MAX) {
		fclose(f);
		ctl_fail(CTL_EXIT_USAGE, "%s: a file is 1..%d bytes", file,
		    CM_UPLOAD_MAX);
		return -1;
	}
	fclose(f);
	return (long)n;
}

static int
files_put(struct ctl *c)
{
	const char *file = c->arg[1], *base = strrchr(file, '/');
	const char *name = c->opt[CTL_O_FILE_NAME] != NULL
	                       ? c->opt[CTL_O_FILE_NAME]
	                   : base != NULL ? base + 1
	                                  : file;
	char path[PATH_LEN], *buf;
	json_t *res;
	int rc, status;
	long n;

	if (!cm_file_name_valid(name, strlen(name)))
		return ctl_usage("a file's name is 1..%d of [A-Za-z0-9._-], "
		                 "not starting with '.': give one (--name)",
		    CM_FILE_NAME_MAX);
	if ((rc = ws_path(c, path, "/browser-spaces/%/files/%", c->arg[0], name,
	         NULL)) != 0)
		return rc;
	if ((buf = malloc(CM_UPLOAD_MAX + 1)) == NULL)
		return ctl_internal("out of memory");
	if ((n = read_upload(file, buf)) < 0) {
		free(buf);
		return CTL_EXIT_USAGE;
	}
	rc = ctl_put_bytes(
	    c, path, buf, (size_t)n, cm_mime_of_name(name), &status, &res);
	free(buf);
	if (rc == CTL_EXIT_OK)
		ctl_show(c, res, NULL);
	json_decref(res);
	return rc;
}

static int
files_list(struct ctl *c)
{
	char path[PATH_LEN];
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces/%/files", c->arg[0], NULL,
	         NULL)) != 0)
		return rc;
	return ctl_call_show(c, "GET", path, NULL, file_cols);
}

/* --- events -------------------------------------------------------------- */

static bool
print_event(void *arg, json_t *ev)
{
	const struct ctl *c = arg;
	char task[CM_ID_MAX + 1], payload[CM_CTL_COL_MAX * 4], at[64];

	if (c->json) {
		ctl_print_json(ev);
		return false;
	}
	ctl_cell(json_object_get(ev, "task_id"), task, sizeof(task));
	ctl_cell(json_object_get(ev, "payload"), payload, sizeof(payload));
	ctl_cell(json_object_get(ev, "created_at"), at, sizeof(at));
	printf("%-6lld %-17s %-36s %s %s\n",
	    (long long)json_integer_value(json_object_get(ev, "sequence")),
	    json_string_value(json_object_get(ev, "kind")), task, at, payload);
	fflush(stdout);
	return false;
}

static int
events(struct ctl *c)
{
	char path[PATH_LEN];
	long long after = ctl_opt_int(c, CTL_O_AFTER, 0);
	long long limit = ctl_opt_int(c, CTL_O_LIMIT, CM_EVENTS_LIMIT_DEFAULT);
	int64_t last;
	size_t o;
	int rc;

	if ((rc = ws_path(c, path, "/browser-spaces/%/events", c->arg[0], NULL,
	         NULL)) != 0)
		return rc;
	if (c->opt[CTL_O_FOLLOW] != NULL) {
		last = after;
		return ctl_stream(c, path, &last, print_event, c);
	}
	o = strlen(path);
	snprintf(path + o, sizeof(path) - o, "?after_sequence=%lld&limit=%lld",
	    after, limit);
	return ctl_call_show(c, "GET", path, NULL, event_cols);
}

static int
instances_bound(struct ctl *c)
{
	char path[PATH_LEN];
	int rc;

	if ((rc = ws_path(c, path, "/browser-instances", NULL, NULL, NULL)) !=
	    0)
		return rc;
	return ctl_call_show(c, "GET", path, NULL, instance_cols);
}

static int
bundles_bound(struct ctl *c)
{
	char path[PATH_LEN];
	int rc;

	if ((rc = ws_path(c, path, "/runtime-bundles", NULL, NULL, NULL)) != 0)
		return rc;
	return ctl_call_show(c, "GET", path, NULL, ctl_bundle_cols);
}

/* Who the token is: GET /api/v1/me, the console's sign-in route. */
static int
me(struct ctl *c)
{
	return ctl_call_show(c, "GET", "/api/v1/me", NULL, NULL);
}

static int
status(struct ctl *c)
{
	return ctl_call_show(
	    c, "GET", "/api/v1/admin/status", NULL, child_cols);
}

#define B(o) CTL_BIT(o)
const struct ctl_cmd ctl_space_cmds[] = {
    {"status", NULL, "", 0, 0, status,
        "The supervisor's children (the store, the api, each Space's "
        "actor): pid, state, restarts.  Needs an admin token.",
        0, "GET /api/v1/admin/status"},
    {"spaces", "list", "", 0, B(WORKSPACE) | B(STATUS) | B(OWNER) | B(LIMIT),
        spaces_list, "The workspace's Spaces (a manager sees all).", 0,
        "GET /api/v1/workspaces/{workspace_id}/browser-spaces"},
    {"spaces", "create", "", 0,
        B(WORKSPACE) | B(INSTANCE) | B(OWNER) | B(OWNER_TYPE) | B(BINDING) |
            B(GRANT) | B(REQUEST_ID) | B(DIALOGS),
        spaces_create,
        "Create a Space on a bound instance: --instance ID --owner "
        "PRINCIPAL [--grant snapshot,navigate].",
        B(INSTANCE) | B(OWNER),
        "POST /api/v1/workspaces/{workspace_id}/browser-spaces"},
    {"spaces", "get", "SPACE", 1, B(WORKSPACE), spaces_get,
        "A Space, with its active task.", 0,
        "GET /api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}"},
    {"spaces", "cancel", "SPACE", 1, B(WORKSPACE) | B(TASK), spaces_cancel,
        "Cancel the Space's active task (or --task ID); idempotent.", 0,
        "POST "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/cancel"},
    {"spaces", "close", "SPACE", 1, B(WORKSPACE), spaces_close,
        "Close a Space: no new tasks, the running one cancelled, the "
        "instance released.",
        0,
        "POST "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/close"},
    {"spaces", "takeover", "SPACE", 1, B(WORKSPACE) | B(TTL), spaces_takeover,
        "Hold a Space for yourself (the owner or a manager): the agent's "
        "tasks answer space_held until the release or --ttl SECONDS; "
        "again, it renews the hold.",
        0,
        "POST "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/"
        "takeover"},
    {"spaces", "release", "SPACE", 1, B(WORKSPACE), spaces_release,
        "Hand a held Space back to its agent (its holder or a manager).", 0,
        "POST "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/"
        "release"},
    {"tasks", "submit", "SPACE CAPABILITY", 2,
        B(WORKSPACE) | B(ARGS) | B(REQUEST_ID) | B(TIMEOUT) | B(WAIT),
        tasks_submit,
        "Submit a task.  With --wait, each event of the task is printed as "
        "it arrives (with the ms since the submit), then the result; the "
        "exit code is 1 unless it completed.  With --json and --wait: one "
        "JSON line per event, then the task's document.",
        0,
        "POST "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/tasks"},
    {"tasks", "list", "SPACE", 1, B(WORKSPACE) | B(LIMIT), tasks_list,
        "The Space's tasks, newest first.", 0,
        "GET "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/tasks"},
    {"tasks", "get", "SPACE TASK", 2, B(WORKSPACE), tasks_get,
        "A task, with its redacted result.", 0,
        "GET "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/tasks/"
        "{task_id}"},
    {"artifacts", "get", "SPACE TASK NAME", 3, B(WORKSPACE) | B(OUTPUT),
        artifacts_get, "Save a task's artifact (a screenshot) to -o FILE.",
        B(OUTPUT),
        "GET "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/tasks/"
        "{task_id}/artifacts/{artifact_name}"},
    {"files", "put", "SPACE FILE", 2, B(WORKSPACE) | B(FILE_NAME), files_put,
        "Keep FILE (1 byte to 4 MiB) on the Space as --name NAME "
        "(default: FILE's base name), for its page's upload; its type by "
        "the name's extension.  A second put of a name replaces it.",
        0,
        "PUT /api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/"
        "files/{file_name}"},
    {"files", "list", "SPACE", 1, B(WORKSPACE), files_list,
        "The files kept on the Space, without their bytes.", 0,
        "GET "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/files"},
    {"events", NULL, "SPACE", 1, B(WORKSPACE) | B(AFTER) | B(LIMIT) | B(FOLLOW),
        events,
        "The Space's events after --after N.  With --follow, a live "
        "stream (one JSON line per event with --json) that resumes with "
        "Last-Event-ID when the connection drops, and ends after "
        "space_closed.",
        0,
        "GET "
        "/api/v1/workspaces/{workspace_id}/browser-spaces/{space_id}/events"},
    {"instances", "bound", "", 0, B(WORKSPACE), instances_bound,
        "The instances bound to the workspace, with in_use.", 0,
        "GET /api/v1/workspaces/{workspace_id}/browser-instances"},
    {"bundles", "bound", "", 0, B(WORKSPACE), bundles_bound,
        "The runtime bundles of the instances bound to the workspace "
        "(with --json, their manifests: each capability's args schema).",
        0, "GET /api/v1/workspaces/{workspace_id}/runtime-bundles"},
    {"me", NULL, "", 0, 0, me,
        "Who the token is: the principal, and its workspaces and roles.", 0,
        "GET /api/v1/me"},
    {NULL, NULL, NULL, 0, 0, NULL, NULL, 0, NULL},
};
