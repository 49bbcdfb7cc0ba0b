/*
 * test_page_ahead.c: the snapshot's world made ahead of it
 * (space-actor/page_snapshot.c), at the page's CDP boundary: the commands
 * the page sends as its main frame commits a document, as a call ends,
 * and as a snapshot begins, with the browser's replies written here.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "cdp.h"
#include "clock.h"
#include "page.h"

#define SENT_MAX 64

/* What the page sent, in order. */
static json_t *sent[SENT_MAX];
static int n_sent;

static int
capture(void *arg, const char *msg, size_t len)
{
	(void)arg;
	cr_assert_lt(n_sent, SENT_MAX);
	sent[n_sent] = json_loadb(msg, len, 0, NULL);
	cr_assert_not_null(sent[n_sent], "not JSON: %.*s", (int)len, msg);
	n_sent++;
	return 0;
}

static struct act_cdp *cdp;
static struct act_page page;

static void
page_up(void)
{
	n_sent = 0;
	cdp = act_cdp_new(capture, NULL, NULL);
	cr_assert_not_null(cdp);
	act_page_init(&page, cdp, NULL, "S", "T");
}

static void
page_down(void)
{
	act_page_fini(&page);
	act_cdp_free(cdp);
	for (int i = 0; i < n_sent; i++)
		json_decref(sent[i]);
	n_sent = 0;
}

/* The main frame committed a new document. */
static void
commit(void)
{
	json_t *params = json_pack(
	    "{s:{s:s, s:s}}", "frame", "id", "F1", "url", "http://a.test/");

	act_page_event(&page, "S", "Page.frameNavigated", params);
	json_decref(params);
}

/* Command i: its method, on the page's session; returns its id. */
static json_int_t
command(int i, const char *method)
{
	cr_assert_lt(i, n_sent, "command %d (%s) was not sent", i, method);
	cr_assert_str_eq(
	    json_string_value(json_object_get(sent[i], "method")), method);
	cr_assert_str_eq(
	    json_string_value(json_object_get(sent[i], "sessionId")), "S");
	return json_integer_value(json_object_get(sent[i], "id"));
}

static json_int_t
param(int i, const char *key)
{
	return json_integer_value(
	    json_object_get(json_object_get(sent[i], "params"), key));
}

/* The browser answers command id with result (JSON), or refuses it. */
static void
reply(json_int_t id, const char *result)
{
	char msg[512];

	if (result != NULL)
		snprintf(msg, sizeof(msg), "{\"id\":%lld,\"result\":%s}",
		    (long long)id, result);
	else
		snprintf(msg, sizeof(msg),
		    "{\"id\":%lld,\"error\":{\"code\":-32000,"
		    "\"message\":\"No frame for given id found\"}}",
		    (long long)id);
	cr_assert_eq(act_cdp_receive(cdp, msg, strlen(msg)), 0);
}

static void
start(const char *capability, const char *args_json)
{
	json_t *args = json_loads(args_json, 0, NULL);

	cr_assert_eq(
	    act_page_start(&page, capability, args, cm_mono_ms() + 10000), 0);
	json_decref(args);
}

/* A call that ended at once is taken: the page is at rest. */
static void
taken(void)
{
	struct act_outcome out;

	act_page_tick(&page, cm_mono_ms());
	cr_assert(act_page_take(&page, &out));
	free(out.result);
}

Test(page_ahead, a_snapshot_begun_while_the_world_is_made_waits_for_it)
{
	json_int_t world;

	page_up();
	commit();
	cr_assert_eq(n_sent, 1, "the world is made as the document commits");
	world = command(0, "Page.createIsolatedWorld");
	cr_assert_str_eq(json_string_value(json_object_get(
	                     json_object_get(sent[0], "params"), "frameId")),
	    "F1");
	start("snapshot", "{}");
	cr_assert_eq(n_sent, 1, "the snapshot made a world of its own");
	reply(world, "{\"executionContextId\":7}");
	cr_assert_eq(n_sent, 2);
	/* The search for listeners, in the world made ahead. */
	command(1, "Runtime.evaluate");
	cr_assert_eq(param(1, "contextId"), 7);
	page_down();
}

Test(page_ahead, a_new_document_forgets_the_world_under_way)
{
	json_int_t first, second;

	page_up();
	commit();
	first = command(0, "Page.createIsolatedWorld");
	start("snapshot", "{}");
	commit();
	cr_assert_eq(n_sent, 2);
	second = command(1, "Page.createIsolatedWorld");
	reply(first, "{\"executionContextId\":5}");
	cr_assert_eq(n_sent, 2, "the old document's world was used");
	reply(second, "{\"executionContextId\":9}");
	cr_assert_eq(n_sent, 3);
	command(2, "Runtime.evaluate");
	cr_assert_eq(param(2, "contextId"), 9);
	page_down();
}

Test(page_ahead, a_call_that_ends_names_the_document_for_the_next_snapshot)
{
	page_up();
	commit();
	reply(command(0, "Page.createIsolatedWorld"),
	    "{\"executionContextId\":7}");
	cr_assert_eq(n_sent, 1, "the document is named before a call ends");
	/* A call that ends at once; the page is at rest after it. */
	start("click", "{\"ref\":\"e3\"}");
	cr_assert_eq(n_sent, 1);
	taken();
	cr_assert_eq(n_sent, 2);
	command(1, "Runtime.evaluate");
	cr_assert_eq(param(1, "contextId"), 7);
	reply(command(1, "Runtime.evaluate"),
	    "{\"result\":{\"type\":\"object\",\"objectId\":\"doc-7\"}}");
	cr_assert_eq(n_sent, 3);
	command(2, "DOM.describeNode");
	reply(command(2, "DOM.describeNode"),
	    "{\"node\":{\"nodeId\":0,\"backendNodeId\":42}}");
	cr_assert_eq(n_sent, 3);
	/* The snapshot starts at the document's node, in the main world. */
	start("snapshot", "{}");
	cr_assert_eq(n_sent, 4);
	command(3, "DOM.resolveNode");
	cr_assert_eq(param(3, "backendNodeId"), 42);
	cr_assert_null(json_object_get(
	    json_object_get(sent[3], "params"), "executionContextId"));
	page_down();
}

Test(page_ahead, a_world_the_browser_refused_is_made_by_the_snapshot)
{
	page_up();
	commit();
	start("snapshot", "{}");
	reply(command(0, "Page.createIsolatedWorld"), NULL);
	cr_assert_eq(n_sent, 2);
	command(1, "Page.createIsolatedWorld");
	page_down();
}

Test(page_ahead, an_abandoned_snapshot_is_not_taken_up_again)
{
	page_up();
	commit();
	start("snapshot", "{}");
	act_page_abort(&page);
	reply(command(0, "Page.createIsolatedWorld"),
	    "{\"executionContextId\":7}");
	cr_assert_eq(n_sent, 1, "a call nobody runs sent a command");
	/* The world stays the document's, for the next snapshot. */
	start("snapshot", "{}");
	cr_assert_eq(n_sent, 2);
	command(1, "Runtime.evaluate");
	cr_assert_eq(param(1, "contextId"), 7);
	page_down();
}
