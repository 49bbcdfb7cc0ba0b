/*
 * A task's artifact over real HTTP against the real service, with the
 * fake runtime's screenshot (a constant 3x2 PNG): the result names it and
 * never holds it, the route serves its bytes with its mime type, the
 * store's sha256 and size are those of the bytes, every caller gets from
 * it exactly what it gets from the task, and what is not there is 404.
 * Over-bound and cascade are the store's tests (test_ops_artifact).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_fixture.h"
#include "token.h"

TestSuite(artifacts, .timeout = 120);

static struct hf_env env;

/* The PNG signature, then IHDR's length and type. */
static const unsigned char png_head[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a,
    '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* The value of header name in head (header lines), or "" when absent. */
static void
header(const char *head, const char *name, char *out, size_t len)
{
	size_t n = strlen(name);
	const char *p = head;

	out[0] = '\0';
	while (p != NULL && *p != '\0') {
		const char *end = strstr(p, "\r\n");
		size_t line = end ? (size_t)(end - p) : strlen(p);

		if (line > n && strncasecmp(p, name, n) == 0 && p[n] == ':') {
			const char *v = p + n + 1;

			while (*v == ' ')
				v++;
			snprintf(
			    out, len, "%.*s", (int)(line - (size_t)(v - p)), v);
			return;
		}
		p = end ? end + 2 : NULL;
	}
}

/* .../browser-spaces/<space>/tasks/<task>[/artifacts/<name>] of ws (NULL:
 * the world's workspace). */
static void
task_path(const struct hf_env *e, char *out, size_t len, const char *ws,
    const char *space, const char *task, const char *name)
{
	char w[CM_ID_MAX + 1];

	snprintf(w, sizeof(w), "%s", ws ? ws : hf_ws(e));
	snprintf(out, len,
	    "/api/v1/workspaces/%s/browser-spaces/%.*s/tasks/%.*s%s%.*s", w,
	    CM_ID_MAX, space, CM_ID_MAX, task, name ? "/artifacts/" : "",
	    CM_ID_MAX, name ? name : "");
}

/* A completed screenshot task on a new Space of instance i; its ids. */
static void
screenshot_task(struct hf_env *e, size_t i, const char *owner_tok,
    const char *owner_id, char *space, char *task)
{
	json_t *res = NULL;

	cr_assert_eq(hf_create(e, e->manager, e->sf.w.instance_id[i],
	                 "operator", owner_id, "[\"screenshot\"]", space),
	    201);
	cr_assert_eq(hf_submit(e, owner_tok, space, "?wait=10", "shot-1",
	                 "screenshot", "{\"format\": \"png\"}", &res, task),
	    200, "the screenshot task did not finish in time");
	json_decref(res);
}

Test(artifacts, a_screenshot_is_served_with_its_mime_and_the_result_names_it)
{
	struct hf_env *e = &env;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], path[1024];
	char v[128], sha[CM_TOKEN_HASH_LEN], *body = NULL, *head = NULL;
	json_t *t, *result;
	size_t len = 0;
	sqlite3 *db;
	sqlite3_stmt *st = NULL;

	hf_start(e, "artifacts", 1, NULL);
	screenshot_task(e, 0, e->manager, e->sf.w.operator_id, space, task);

	/* The result names the artifact and never holds the image. */
	t = hf_task(e, space, task);
	cr_assert_str_eq(sf_str(t, "status"), "completed");
	result = json_object_get(t, "result");
	cr_assert_str_eq(sf_str(result, "artifact"), "screenshot.png");
	cr_assert_str_eq(sf_str(result, "mime"), "image/png");
	cr_assert_eq(json_integer_value(json_object_get(result, "width")), 3);
	cr_assert_eq(json_integer_value(json_object_get(result, "height")), 2);
	cr_assert_eq(json_object_size(result), 5, "only the five names");

	task_path(e, path, sizeof(path), NULL, space, task, "screenshot.png");
	cr_assert_eq(
	    tk_http_bytes(&e->sf.p, path, e->manager, &body, &len, &head), 200);
	header(head, "Content-Type", v, sizeof(v));
	cr_assert_str_eq(v, "image/png");
	header(head, "X-Content-Type-Options", v, sizeof(v));
	cr_assert_str_eq(v, "nosniff");
	header(head, "Content-Length", v, sizeof(v));
	cr_assert_eq(strtoull(v, NULL, 10), len);
	cr_assert_eq(
	    len, (size_t)json_integer_value(json_object_get(result, "bytes")));
	/* A PNG of the size the result says. */
	cr_assert_gt(len, 24);
	cr_assert_eq(memcmp(body, png_head, sizeof(png_head)), 0);
	cr_assert_eq(be32((unsigned char *)body + 16), 3);
	cr_assert_eq(be32((unsigned char *)body + 20), 2);

	/* The store's sha256 and size are the bytes' own. */
	cr_assert_eq(cm_sha256_hex(body, len, sha), 0);
	db = hf_db_open(e);
	cr_assert_eq(sqlite3_prepare_v2(db,
	                 "SELECT sha256, size FROM browser_space_artifacts"
	                 " WHERE task_id = ?1 AND name = 'screenshot.png'",
	                 -1, &st, NULL),
	    SQLITE_OK);
	sqlite3_bind_text(st, 1, task, -1, SQLITE_STATIC);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), sha);
	cr_assert_eq(sqlite3_column_int64(st, 1), (sqlite3_int64)len);
	sqlite3_finalize(st);
	sqlite3_close(db);
	free(body);
	free(head);
	json_decref(t);

	/* What is not there is 404, as an unknown task is. */
	task_path(e, path, sizeof(path), NULL, space, task, "screenshot.jpg");
	hf_expect(e, "GET", path, e->manager, NULL, 404, "not_found");
	task_path(e, path, sizeof(path), NULL, space, "no-such-task",
	    "screenshot.png");
	hf_expect(e, "GET", path, e->manager, NULL, 404, "not_found");
	task_path(e, path, sizeof(path), NULL, space, task, "..");
	hf_expect(e, "GET", path, e->manager, NULL, 404, "not_found");
	task_path(e, path, sizeof(path), NULL, space, task, ".png");
	hf_expect(e, "GET", path, e->manager, NULL, 404, "not_found");
	task_path(e, path, sizeof(path), NULL, "no-such-space", task,
	    "screenshot.png");
	hf_expect(e, "GET", path, e->manager, NULL, 404, "not_found");
	hf_stop(e);
}

Test(artifacts, every_caller_gets_from_the_artifact_what_it_gets_from_the_task)
{
	struct hf_env *e = &env;
	char owner_id[CM_ID_MAX + 1], owner[CM_TOKEN_MAX + 1];
	char member_id[CM_ID_MAX + 1], member[CM_TOKEN_MAX + 1];
	char outsider_id[CM_ID_MAX + 1], outsider[CM_TOKEN_MAX + 1];
	char ws2[CM_ID_MAX + 1], space[CM_ID_MAX + 1], task[CM_ID_MAX + 1];
	char tpath[1024], apath[1024];

	hf_start(e, "artifacts-authz", 1, NULL);
	hf_principal(e, "operator", "owner", "member", owner_id, owner);
	hf_principal(e, "operator", "member", "member", member_id, member);
	af_create(&e->af, "/api/v1/admin/workspaces", "{\"name\": \"w2\"}",
	    "workspace_id", ws2);
	hf_principal(e, "operator", "outsider", NULL, outsider_id, outsider);
	af_member_put(&e->af, ws2, outsider_id, "manager");
	screenshot_task(e, 0, owner, owner_id, space, task);

	task_path(e, tpath, sizeof(tpath), NULL, space, task, NULL);
	task_path(e, apath, sizeof(apath), NULL, space, task, "screenshot.png");
	const struct {
		const char *who, *tok;
		int want;
	} callers[] = {
	    {"no token", NULL, 401},
	    {"a manager of another workspace", outsider, 403},
	    {"a member who owns nothing", member, 403},
	    {"the owner", owner, 200},
	    {"the manager", e->manager, 200},
	    {"an admin", e->af.admin, 200},
	};
	for (size_t i = 0; i < sizeof(callers) / sizeof(callers[0]); i++) {
		int t = hf_call(e, "GET", tpath, callers[i].tok, NULL, NULL);
		char *body = NULL, *head = NULL;
		size_t len = 0;
		int a = tk_http_bytes(
		    &e->sf.p, apath, callers[i].tok, &body, &len, &head);

		cr_expect_eq(
		    t, callers[i].want, "%s: task %d", callers[i].who, t);
		cr_expect_eq(
		    a, t, "%s: artifact %d, task %d", callers[i].who, a, t);
		if (a == 200)
			cr_expect(
			    len > sizeof(png_head) &&
			        memcmp(body, png_head, sizeof(png_head)) == 0,
			    "%s: not the PNG", callers[i].who);
		else
			cr_expect(hf_contains(body, len, "\"error\""),
			    "%s: a refusal is the error envelope",
			    callers[i].who);
		free(body);
		free(head);
	}
	/* The same Space under another workspace's path is not found. */
	task_path(e, apath, sizeof(apath), ws2, space, task, "screenshot.png");
	hf_expect(e, "GET", apath, outsider, NULL, 404, "not_found");
	hf_stop(e);
}
