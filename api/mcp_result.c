/*
 * mcp_result.c: a task's answer as an MCP tool result (mcp.h): what a
 * model can read at once, the page header and the task's result as
 * text, the outline of the page after an action, a screenshot as an
 * image; a task that failed as isError with "code: message".
 */
#include "mcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "b64.h"
#include "mcp_rpc.h"
#include "metrics.h"

const char *
api_mcp_str(const json_t *v, const char *d)
{
	return json_is_string(v) ? json_string_value(v) : d;
}

enum api_mcp_outcome
api_mcp_outcome(const char *status)
{
	if (status != NULL && strcmp(status, "completed") == 0)
		return API_MCP_OK;
	if (status != NULL && strcmp(status, "cancelled") == 0)
		return API_MCP_CANCELLED;
	return API_MCP_TOOL_ERROR;
}

/* Counts a parked call of t's capability. */
static void
count(const struct pr_task *t, enum api_mcp_outcome o)
{
	char tool[CM_CAPABILITY_MAX + 16];

	snprintf(tool, sizeof(tool), "browser_%s",
	    t->capability != NULL ? t->capability : "");
	api_metrics_mcp_call(t->capability != NULL ? tool : NULL, o);
}

json_t *
api_mcp_text_result(const char *text, bool is_error)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
	    "text", text, "isError", is_error);
}

/* The page header of a result (its "page"), as the snapshot's header
 * lines read: url, title, loading, the tabs when more than one, a
 * dialog. */
static void
header_lines(FILE *f, const json_t *page)
{
	const json_t *tabs = json_object_get(page, "tabs"), *t, *d;
	size_t i;

	if (!json_is_object(page))
		return;
	fprintf(f, "url: %s\ntitle: %s\n",
	    api_mcp_str(json_object_get(page, "url"), ""),
	    api_mcp_str(json_object_get(page, "title"), ""));
	if (json_is_true(json_object_get(page, "loading")))
		fputs("loading: true\n", f);
	if (json_array_size(tabs) > 1)
		json_array_foreach(tabs, i, t) fprintf(f, "tab %lld: %s %s%s\n",
		    (long long)json_integer_value(json_object_get(t, "index")),
		    api_mcp_str(json_object_get(t, "title"), ""),
		    api_mcp_str(json_object_get(t, "url"), ""),
		    json_is_true(json_object_get(t, "current")) ? " (current)"
		                                                : "");
	if ((d = json_object_get(page, "dialog")) != NULL && json_is_object(d))
		fprintf(f,
		    "dialog: %s \"%s\" (answer it with "
		    "browser_handle_dialog)\n",
		    api_mcp_str(json_object_get(d, "type"), ""),
		    api_mcp_str(json_object_get(d, "message"), ""));
}

/* A completed task's result as a model reads it.  A snapshot's is its
 * outline, which begins with the header, then the rest as JSON.  An
 * action's is the header, the result as JSON, then the outline of the
 * page after it when it took snapshot: true (its "snapshot": {text,
 * ...}).  malloc'd; NULL out of memory. */
static char *
result_text(const json_t *result)
{
	json_t *rest =
	    json_is_object(result) ? json_deep_copy(result) : json_object();
	json_t *after = NULL;
	const char *snap;
	char *buf = NULL, *more;
	size_t len = 0;
	FILE *f;

	if (rest == NULL || (f = open_memstream(&buf, &len)) == NULL) {
		json_decref(rest);
		return NULL;
	}
	snap = json_string_value(json_object_get(rest, "snapshot"));
	if (snap != NULL)
		fprintf(f, "%s%s", snap,
		    snap[0] != '\0' && snap[strlen(snap) - 1] != '\n' ? "\n"
		                                                      : "");
	else
		header_lines(f, json_object_get(rest, "page"));
	if (json_is_object(json_object_get(rest, "snapshot")))
		after = json_incref(json_object_get(rest, "snapshot"));
	json_object_del(rest, "page");
	json_object_del(rest, "snapshot");
	if (json_object_size(rest) > 0 &&
	    (more = json_dumps(rest, JSON_COMPACT)) != NULL) {
		fprintf(f, "result: %s\n", more);
		free(more);
	}
	if (after != NULL) {
		snap = json_string_value(json_object_get(after, "text"));
		if (snap != NULL)
			fprintf(f, "\nthe page after it:\n%s%s", snap,
			    snap[0] != '\0' && snap[strlen(snap) - 1] != '\n'
			        ? "\n"
			        : "");
		/* What its header lines said already. */
		json_object_del(after, "text");
		json_object_del(after, "url");
		json_object_del(after, "title");
		json_object_del(after, "loading");
		json_object_del(after, "status");
		if (json_object_size(after) > 0 &&
		    (more = json_dumps(after, JSON_COMPACT)) != NULL) {
			fprintf(f, "snapshot: %s\n", more);
			free(more);
		}
		json_decref(after);
	}
	json_decref(rest);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * The image of a screenshot task t (its DTO), as an MCP image block;
 * NULL when it cannot be read (then the text alone says what it was).
 * Read from the store as the task's own: the call that made the task
 * was authorized when it was made, as a parked wait's look is.
 */
static json_t *
image_block(struct api_ctx *c, const json_t *t, const char *name)
{
	struct pr_req q;
	struct pr_rep r;
	const struct pr_bin *b;
	char *b64;
	json_t *block = NULL;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_ARTIFACT_GET;
	q.workspace_id = c->workspace_id;
	q.space_id = json_string_value(json_object_get(t, "space_id"));
	q.task_id = json_string_value(json_object_get(t, "task_id"));
	q.artifact_name = name;
	if (!api_call(c, &q, &r))
		return NULL;
	b = r.n_artifacts == 1 ? &r.artifacts[0].bytes : NULL;
	if (r.err == CM_OK && b != NULL && b->n > 0 &&
	    b->n <= CM_ARTIFACT_MAX &&
	    (b64 = malloc(CM_B64_LEN(b->n) + 1)) != NULL) {
		cm_b64_encode(b->p, b->n, b64);
		block = json_pack("{s:s, s:s, s:s}", "type", "image", "data",
		    b64, "mimeType",
		    r.artifacts[0].mime != NULL ? r.artifacts[0].mime
		                                : "image/png");
		free(b64);
	}
	pr_rep_free(&r);
	return block;
}

/*
 * The tool result of t, a finished task's DTO.  A screenshot's image
 * needs the store: without store, NULL and *later.
 */
json_t *
api_mcp_task_result(struct api_ctx *c, const json_t *t, bool store, bool *later)
{
	const char *status = json_string_value(json_object_get(t, "status"));
	const json_t *err = json_object_get(t, "error"),
	             *result = json_object_get(t, "result");
	const char *artifact =
	    json_string_value(json_object_get(result, "artifact"));
	json_t *out, *image;
	char line[CM_ERROR_MESSAGE_MAX + 160];
	char *text;

	*later = false;
	if (status != NULL && strcmp(status, "completed") == 0) {
		if (artifact != NULL && !store) {
			*later = true;
			return NULL;
		}
		if ((text = result_text(result)) == NULL)
			return NULL;
		out = api_mcp_text_result(text, false);
		free(text);
		if (artifact != NULL && out != NULL &&
		    (image = image_block(c, t, artifact)) != NULL)
			json_array_append_new(
			    json_object_get(out, "content"), image);
		return out;
	}
	if (status != NULL && strcmp(status, "cancelled") == 0)
		snprintf(line, sizeof(line),
		    "cancelled: the task was cancelled, and the page reset");
	else
		snprintf(line, sizeof(line), "%s: %s",
		    api_mcp_str(json_object_get(err, "code"), "failed"),
		    api_mcp_str(json_object_get(err, "message"), ""));
	return api_mcp_text_result(line, true);
}

bool
api_mcp_finished(struct api_ctx *c, const struct pr_task *t, bool store)
{
	json_t *dto = api_dto_task(t), *result;
	bool later = false;

	result =
	    dto != NULL ? api_mcp_task_result(c, dto, store, &later) : NULL;
	json_decref(dto);
	if (later)
		return false;
	c->later = API_LATER_NONE;
	if (result == NULL)
		result = api_mcp_text_result("internal: out of memory", true);
	api_mcp_answer(c, 200, api_rpc_result(c->later_rpc, result));
	count(t, api_mcp_outcome(t->status));
	return true;
}

void
api_mcp_unfinished(struct api_ctx *c, const struct pr_task *t)
{
	char line[CM_ID_MAX + 200];

	snprintf(line, sizeof(line),
	    "task_in_progress: the task %s is still %s after the call's "
	    "bound; what it did is not known yet: take a snapshot later",
	    t->task_id, t->status);
	c->later = API_LATER_NONE;
	api_mcp_answer(c, 200,
	    api_rpc_result(c->later_rpc, api_mcp_text_result(line, true)));
	count(t, API_MCP_IN_PROGRESS);
}

void
api_mcp_unlooked(struct api_ctx *c)
{
	json_t *b =
	    c->res->body != NULL ? json_loads(c->res->body, 0, NULL) : NULL;
	const json_t *e = json_object_get(b, "error");
	char line[CM_ERROR_MESSAGE_MAX + CM_ID_MAX + 200];

	snprintf(line, sizeof(line),
	    "%s: %s; the task %s may still run: the same call again (its id "
	    "too) tells how it ended",
	    api_mcp_str(json_object_get(e, "code"), "internal"),
	    api_mcp_str(json_object_get(e, "message"), "no answer"),
	    c->later_task);
	json_decref(b);
	c->later = API_LATER_NONE;
	api_mcp_answer(c, 200,
	    api_rpc_result(c->later_rpc, api_mcp_text_result(line, true)));
	api_metrics_mcp_call(NULL, API_MCP_ERROR);
}
