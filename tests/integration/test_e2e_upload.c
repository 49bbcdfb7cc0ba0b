/*
 * test_e2e_upload.c: upload sets files a client put on its Space on a
 * page's file input, over HTTP through the whole service, on a real
 * Chromium.  A file put, then uploaded into #one of the test server's
 * form, is what the page holds (its name, size and type, with its input
 * and change events) and what the form then posts, name and bytes, from
 * a later task (the browser reads the files then); two
 * go into the multiple #many; a name the Space does not have fails before
 * the page is touched; a field that is no file input is not interactable;
 * and two names for the single #one are invalid args.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_fixture.h"
#include "pages.h"
#include "testkit.h"

#define UP_WAIT_MS 60000 /* a browser task, on a loaded machine */

TestSuite(e2e_upload, .timeout = 300);

static struct hf_env e;
static char space[CM_ID_MAX + 1];
static struct tk_pages *pages;
static int port;

/* spaced with a managed instance, one Space on it granted what the tests
 * run, the page server, and the Space's browser on its /upload form. */
static void
world_up(const char *tag)
{
	char inst[CM_ID_MAX + 1], args[128], task[CM_ID_MAX + 1];

	cr_assert_not_null(pages = tk_pages_start(&port));
	hf_start(&e, tag, 0, NULL);
	hf_managed_instance(&e, "chromium-upload", inst);
	cr_assert_eq(
	    hf_create(&e, e.manager, inst, "operator", e.sf.w.operator_id,
	        "[\"navigate\", \"click\", \"upload\", "
	        "\"extract_text\"]",
	        space),
	    201);
	snprintf(args, sizeof(args),
	    "{\"url\": \"http://127.0.0.1:%d/upload\"}", port);
	cr_assert_eq(hf_submit(&e, e.manager, space, "", "open", "navigate",
	                 args, NULL, task),
	    202);
	cr_assert(hf_wait_task_for(&e, space, task, "completed", UP_WAIT_MS),
	    "the form did not open");
}

static void
world_down(void)
{
	hf_stop(&e);
	tk_pages_stop(pages);
	tk_cleanup();
}

/* PUTs body as the Space's file name. */
static void
put_file(const char *name, const char *body)
{
	char path[512];

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/files/%s", hf_ws(&e),
	    space, name);
	cr_assert_eq(hf_call(&e, "PUT", path, e.manager, body, NULL), 201,
	    "PUT %s", name);
}

/* Runs cap with args to its end, which must be want; the task's data
 * (the caller decrefs). */
static json_t *
run(const char *rid, const char *cap, const char *args, const char *want)
{
	char task[CM_ID_MAX + 1];
	json_t *t;

	cr_assert_eq(
	    hf_submit(&e, e.manager, space, "", rid, cap, args, NULL, task),
	    202, "%s: not accepted", rid);
	cr_assert(hf_wait_task_for(&e, space, task, want, UP_WAIT_MS),
	    "%s did not end %s", rid, want);
	t = hf_task(&e, space, task);
	return t;
}

/* The task failed with code; its message holds part. */
static void
failed_with(json_t *t, const char *code, const char *part)
{
	const json_t *err = json_object_get(t, "error");

	cr_assert_str_eq(sf_str(err, "code"), code, "%s", json_dumps(t, 0));
	cr_assert(strstr(sf_str(err, "message"), part) != NULL,
	    "the message does not say %s: %s", part, sf_str(err, "message"));
	json_decref(t);
}

/* The form's #log: the input and change events its file inputs fired. */
static char *
event_log(void)
{
	json_t *t =
	    run("log", "extract_text", "{\"selector\": \"#log\"}", "completed");
	char *text = strdup(sf_str(json_object_get(t, "result"), "text"));

	json_decref(t);
	return text;
}

/* The files a result says the input holds: "name:size:type,...". */
static void
held(json_t *t, char *out, size_t len)
{
	const json_t *files =
	    json_object_get(json_object_get(t, "result"), "files");
	const json_t *f;
	size_t i, n = 0;

	out[0] = '\0';
	json_array_foreach(files, i, f)
	{
		n += (size_t)snprintf(out + n, len - n, "%s%s:%lld:%s",
		    i > 0 ? "," : "", sf_str(f, "name"),
		    (long long)json_integer_value(json_object_get(f, "size")),
		    sf_str(f, "type"));
		if (n >= len)
			break;
	}
}

/* Whether the page server has taken more uploads than *arg. */
static bool
posted(void *arg)
{
	char *bytes;
	size_t len;
	int n = tk_pages_last_upload(pages, &bytes, &len, NULL, 0);

	free(bytes);
	return n > *(int *)arg;
}

/* Submits the form, and waits until the page server has taken an upload
 * more than before. */
static void
submit(void)
{
	char *bytes;
	size_t len;
	int before = tk_pages_last_upload(pages, &bytes, &len, NULL, 0);

	free(bytes);
	json_decref(
	    run("send", "click", "{\"selector\": \"#send\"}", "completed"));
	cr_assert(tk_wait_until(posted, &before, UP_WAIT_MS),
	    "the form posted nothing");
}

Test(e2e_upload, a_file_put_is_set_on_the_input_and_posted_by_the_form,
    .fini = world_down)
{
	static const char body[] = "quarterly numbers, 4 of them\n";
	char got[256], name[64], *bytes, *log;
	size_t len;
	json_t *t;

	world_up("up-one");
	put_file("report.txt", body);
	t = run("up", "upload",
	    "{\"selector\": \"#one\", \"files\": [\"report.txt\"]}",
	    "completed");
	held(t, got, sizeof(got));
	cr_assert_str_eq(
	    got, "report.txt:29:text/plain", "%s", json_dumps(t, 0));
	json_decref(t);
	log = event_log();
	cr_assert(strstr(log, "one:input one:change") != NULL,
	    "the input's events: \"%s\"", log);
	free(log);

	submit();
	tk_pages_last_upload(pages, &bytes, &len, name, sizeof(name));
	cr_assert_str_eq(name, "report.txt");
	cr_assert_eq(len, strlen(body));
	cr_assert(bytes != NULL && memcmp(bytes, body, len) == 0,
	    "the page posted other bytes: %s", bytes ? bytes : "(none)");
	free(bytes);
}

Test(e2e_upload, two_files_go_into_a_multiple_input, .fini = world_down)
{
	char got[256], names[256];
	json_t *t;

	world_up("up-many");
	put_file("a.txt", "first");
	put_file("b.csv", "x,y\n1,2\n");
	t = run("up", "upload",
	    "{\"selector\": \"#many\", \"files\": [\"a.txt\", \"b.csv\"]}",
	    "completed");
	held(t, got, sizeof(got));
	cr_assert_str_eq(
	    got, "a.txt:5:text/plain,b.csv:8:text/csv", "%s", json_dumps(t, 0));
	json_decref(t);

	submit();
	tk_pages_upload_names(pages, names, sizeof(names));
	cr_assert_str_eq(names, "a.txt,b.csv");
}

/* upload with args fails with code, its message holding part, and no
 * file input fired an event: nothing was set on the page. */
static void
refused(const char *args, const char *code, const char *part)
{
	char *log;

	failed_with(run("up", "upload", args, "failed"), code, part);
	log = event_log();
	cr_assert_str_eq(log, "", "the inputs' events: \"%s\"", log);
	free(log);
}

Test(e2e_upload, a_name_the_space_lacks_fails_before_the_page,
    .fini = world_down)
{
	world_up("up-unknown");
	put_file("here.txt", "here");
	/* Not even the file the Space has reaches the input. */
	refused("{\"selector\": \"#one\", \"files\": [\"here.txt\", "
	        "\"missing.txt\"]}",
	    "invalid_args", "missing.txt");
}

Test(e2e_upload, a_field_that_is_no_file_input_is_not_interactable,
    .fini = world_down)
{
	world_up("up-text");
	put_file("here.txt", "here");
	refused("{\"selector\": \"#text\", \"files\": [\"here.txt\"]}",
	    "element_not_interactable", "not a file input");
}

Test(e2e_upload, two_names_for_a_single_input_are_invalid_args,
    .fini = world_down)
{
	world_up("up-single");
	put_file("a.txt", "first");
	put_file("b.txt", "second");
	refused("{\"selector\": \"#one\", \"files\": [\"a.txt\", "
	        "\"b.txt\"]}",
	    "invalid_args", "one file");
}
