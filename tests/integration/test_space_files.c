/*
 * test_space_files.c: a client keeps files on a Space for its page to
 * upload, over HTTP through the whole service: PUT .../files/{name} keeps
 * the body's bytes with their type, GET .../files lists them with the
 * store's size and sha256, a second PUT replaces the file, a body past
 * CM_UPLOAD_MAX is refused before it is read, a name that is none is not
 * a route, and only who may act on the Space may put or list.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_fixture.h"
#include "token.h"

TestSuite(space_files, .timeout = 120);

static struct hf_env env;

static void
files_path(const char *space, const char *name, char *out, size_t len)
{
	snprintf(out, len, "/api/v1/workspaces/%s/browser-spaces/%s/files%s%s",
	    hf_ws(&env), space, name ? "/" : "", name ? name : "");
}

/* The listed file named name, or NULL (borrowed from list). */
static json_t *
listed(json_t *list, const char *name)
{
	json_t *f;
	size_t i;

	json_array_foreach(
	    list, i, f) if (strcmp(sf_str(f, "name"), name) == 0) return f;
	return NULL;
}

Test(space_files, a_file_is_kept_listed_and_replaced)
{
	struct hf_env *e = &env;
	char space[CM_ID_MAX + 1], path[512], lpath[512];
	char sha[CM_TOKEN_HASH_LEN];
	json_t *out = NULL, *f;
	char *big;

	hf_start(e, "files", 1, NULL);
	hf_create_ok(e, 0, "[\"screenshot\"]", space);
	files_path(space, "notes.txt", path, sizeof(path));
	files_path(space, NULL, lpath, sizeof(lpath));

	cr_assert_eq(hf_call(e, "PUT", path, e->manager, "{\"v\": 1}", &out),
	    201, "the first put makes it");
	cr_assert_eq(json_integer_value(
	                 json_object_get(json_object_get(out, "data"), "size")),
	    8, "%s", json_dumps(out, 0));
	json_decref(out);
	cr_assert_eq(hf_call(e, "GET", lpath, e->manager, NULL, &out), 200);
	f = listed(json_object_get(out, "data"), "notes.txt");
	cr_assert_not_null(f, "not listed: %s", json_dumps(out, 0));
	cr_assert_eq(json_integer_value(json_object_get(f, "size")), 8);
	cr_assert_eq(cm_sha256_hex("{\"v\": 1}", 8, sha), 0);
	cr_assert_str_eq(sf_str(f, "sha256"), sha);
	cr_assert_str_eq(sf_str(f, "mime"), "application/json");
	json_decref(out);

	/* A second put replaces it: one file, the new bytes. */
	cr_assert_eq(
	    hf_call(e, "PUT", path, e->manager, "{\"v\": 22}", NULL), 200);
	cr_assert_eq(hf_call(e, "GET", lpath, e->manager, NULL, &out), 200);
	cr_assert_eq(json_array_size(json_object_get(out, "data")), 1);
	f = listed(json_object_get(out, "data"), "notes.txt");
	cr_assert_eq(json_integer_value(json_object_get(f, "size")), 9);
	json_decref(out);

	/* Past the bound: 413, before the body is read. */
	cr_assert_not_null(big = malloc(CM_UPLOAD_MAX + 2));
	memset(big, 'a', CM_UPLOAD_MAX + 1);
	big[CM_UPLOAD_MAX + 1] = '\0';
	files_path(space, "big.bin", path, sizeof(path));
	hf_expect(e, "PUT", path, e->manager, big, 413, "payload_too_large");
	free(big);
	/* A name that is none: no such resource. */
	files_path(space, ".hidden", path, sizeof(path));
	hf_expect(e, "PUT", path, e->manager, "x", 404, "not_found");
	files_path(space, "a%2fb", path, sizeof(path));
	hf_expect(e, "PUT", path, e->manager, "x", 404, "not_found");
	hf_stop(e);
}

Test(space_files, only_who_may_act_on_the_space_puts_or_lists)
{
	struct hf_env *e = &env;
	char outsider_id[CM_ID_MAX + 1], outsider[CM_TOKEN_MAX + 1];
	char ws2[CM_ID_MAX + 1], space[CM_ID_MAX + 1], path[512], lpath[512];
	json_t *out = NULL;

	hf_start(e, "files-authz", 1, NULL);
	af_create(&e->af, "/api/v1/admin/workspaces", "{\"name\": \"w2\"}",
	    "workspace_id", ws2);
	hf_principal(e, "operator", "outsider", NULL, outsider_id, outsider);
	af_member_put(&e->af, ws2, outsider_id, "manager");
	hf_create_ok(e, 0, "[\"screenshot\"]", space);
	files_path(space, "a.txt", path, sizeof(path));
	files_path(space, NULL, lpath, sizeof(lpath));
	cr_assert_eq(hf_call(e, "PUT", path, e->manager, "mine", NULL), 201);

	/* A manager of another workspace can neither put nor list. */
	hf_expect(e, "PUT", path, outsider, "theirs", 403, "forbidden");
	hf_expect(e, "GET", lpath, outsider, NULL, 403, "forbidden");
	hf_expect(e, "PUT", path, NULL, "anyone", 401, "unauthenticated");
	/* And the file is still the owner's. */
	cr_assert_eq(hf_call(e, "GET", lpath, e->manager, NULL, &out), 200);
	cr_assert_eq(
	    json_integer_value(json_object_get(
	        listed(json_object_get(out, "data"), "a.txt"), "size")),
	    4);
	json_decref(out);
	hf_stop(e);
}
