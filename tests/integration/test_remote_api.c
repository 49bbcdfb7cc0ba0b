/*
 * test_remote_api.c: remote (cdp) instances through the real service, on
 * a Chromium the test runs with --remote-debugging-port=0 on 127.0.0.1.
 *
 * An admin registers cdp instances (both endpoint forms), a Space on each
 * snapshots a local page, the two see none of each other's cookies, and
 * after the Spaces close the browser still runs (spaced does not own it).
 * The endpoint, its websocket URL and its port appear in no response, event
 * or log line.
 *
 * The supervisor's probe: an instance on that browser stays ready, one
 * where nothing listens becomes unavailable, a disabled one is left
 * alone; killing the browser makes its instance unavailable and a browser
 * on the same port again makes it ready.
 */
#include <criterion/criterion.h>
#include <ftw.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_fixture.h"
#include "pages.h"
#include "remote_fixture.h"

#define RA_WAIT_MS 60000   /* a browser task, on a loaded machine */
#define RA_STATUS_MS 15000 /* a probe round: 200 ms apart, 3 s at most */

TestSuite(remote_api, .timeout = 300);

static struct rf_browser br;

static void
stop_browser(void)
{
	rf_stop(&br);
	tk_cleanup();
}

/* The browser bundle's id. */
static void
browser_bundle(struct hf_env *e, char *bundle)
{
	json_t *res, *v;
	size_t i;

	bundle[0] = '\0';
	cr_assert_eq(af_call(&e->af, "GET", "/api/v1/admin/runtime-bundles",
	                 e->af.admin, NULL, &res),
	    200);
	json_array_foreach(af_data(res), i, v)
	{
		if (strcmp(sf_str(v, "name"), "browser") == 0)
			snprintf(bundle, CM_ID_MAX + 1, "%s",
			    sf_str(v, "bundle_id"));
	}
	json_decref(res);
	cr_assert_neq(bundle[0], '\0', "no browser bundle");
}

/* Registers a cdp instance at endpoint that may reach 127.0.0.1, binds
 * it to the workspace; its id goes to inst. */
static void
cdp_instance(struct hf_env *e, const char *name, const char *bundle,
    const char *endpoint, char *inst)
{
	char body[1024], bind[CM_ID_MAX + 1], *text = NULL;
	json_t *res;
	int status;

	snprintf(body, sizeof(body),
	    "{\"name\": \"%s\", \"driver\": \"cdp\", \"endpoint\": \"%s\", "
	    "\"bundle_id\": \"%s\", \"network_policy\": {\"allow_hosts\": "
	    "[\"127.0.0.1\"], \"deny_private_networks\": false}}",
	    name, endpoint, bundle);
	status = hf_call_h(e, "POST", "/api/v1/admin/browser-instances",
	    e->af.admin, body, NULL, &text);
	cr_assert_eq(status, 201, "register: %d %s", status, text);
	res = json_loads(text, 0, NULL);
	snprintf(
	    inst, CM_ID_MAX + 1, "%s", af_data_str(res, "browser_instance_id"));
	json_decref(res);
	free(text);
	snprintf(body, sizeof(body),
	    "{\"workspace_id\": \"%s\", \"browser_instance_id\": \"%s\"}",
	    hf_ws(e), inst);
	af_create(&e->af, "/api/v1/admin/bindings", body, "binding_id", bind);
}

/* Submits cap with args, waits for it to end, expects completed; returns
 * the task (caller decrefs). */
static json_t *
run_task(struct hf_env *e, const char *space, const char *rid, const char *cap,
    const char *args)
{
	char task[CM_ID_MAX + 1];
	json_t *t;
	int status;
	bool done;

	status =
	    hf_submit(e, e->manager, space, "", rid, cap, args, NULL, task);
	cr_assert_eq(status, 202, "%s: submit answered %d", cap, status);
	done = hf_wait_task_for(e, space, task, "completed", RA_WAIT_MS);
	t = hf_task(e, space, task);
	cr_assert(done, "%s: %s (%s: %s)", cap, sf_str(t, "status"),
	    sf_str(json_object_get(t, "error"), "code"),
	    sf_str(json_object_get(t, "error"), "message"));
	return t;
}

static void
go(struct hf_env *e, const char *space, const char *rid, int port,
    const char *path)
{
	char args[256];

	snprintf(args, sizeof(args), "{\"url\": \"http://127.0.0.1:%d%s\"}",
	    port, path);
	json_decref(run_task(e, space, rid, "navigate", args));
}

/* The cookie page's line of cookies (pages.h). */
static void
jar_is(struct hf_env *e, const char *space, const char *rid, const char *want)
{
	json_t *t =
	    run_task(e, space, rid, "extract_text", "{\"selector\": \"#c\"}");

	cr_assert_str_eq(
	    sf_str(json_object_get(t, "result"), "text"), want, "%s", rid);
	json_decref(t);
}

/* ---- no secret in any log file of the data dir */

static const char *const *log_needles;
static const char *log_hit;
static size_t log_bytes; /* of log text scanned */

static int
log_scan(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	size_t n = strlen(path), len;
	char *text;

	(void)st;
	(void)ftw;
	/* Log files only: the database holds the endpoint, as it must. */
	if (flag != FTW_F || !(n > 4 && (strcmp(path + n - 4, ".out") == 0 ||
	                                    strcmp(path + n - 4, ".log") == 0)))
		return 0;
	if ((text = tk_read_file(path, &len)) == NULL)
		return 0;
	log_bytes += len;
	for (size_t i = 0; log_needles[i] != NULL; i++)
		if (hf_contains(text, len, log_needles[i]))
			log_hit = log_needles[i];
	free(text);
	return log_hit != NULL ? 1 : 0;
}

static void
assert_nowhere(struct hf_env *e, const char *const *needles)
{
	for (size_t i = 0; needles[i] != NULL; i++)
		cr_assert_not(hf_contains(e->seen, e->seen_len, needles[i]),
		    "a response names %s", needles[i]);
	log_needles = needles;
	log_hit = NULL;
	log_bytes = 0;
	nftw(e->sf.dir, log_scan, 16, FTW_PHYS);
	cr_assert_gt(log_bytes, 0, "no log file in %s", e->sf.dir);
	cr_assert_null(log_hit, "a log file of %s names %s", e->sf.dir,
	    log_hit ? log_hit : "");
}

Test(remote_api, test_7_a_space_on_a_remote_browser_through_the_api,
    .fini = stop_browser)
{
	static const char *const flags[] = {"--log-level=debug", NULL};
	struct hf_env e;
	struct tk_pages *pages;
	char bundle[CM_ID_MAX + 1], inst_a[CM_ID_MAX + 1],
	    inst_b[CM_ID_MAX + 1];
	char space_a[CM_ID_MAX + 1], space_b[CM_ID_MAX + 1];
	char http_ep[128], ws_ep[512], hostport[64], colon_port[16];
	const char *needles[6];
	json_t *t, *res;
	int port;

	memset(&br, 0, sizeof(br));
	cr_assert_not_null(pages = tk_pages_start(&port));
	rf_start(&br, 0);
	snprintf(http_ep, sizeof(http_ep), "http://127.0.0.1:%d", br.port);
	snprintf(
	    ws_ep, sizeof(ws_ep), "ws://127.0.0.1:%d%s", br.port, br.ws_path);
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%d", br.port);
	snprintf(colon_port, sizeof(colon_port), ":%d", br.port);

	hf_start(&e, "rapi", 0, flags);
	e.record = true;
	browser_bundle(&e, bundle);
	cdp_instance(&e, "remote-a", bundle, http_ep, inst_a);
	cdp_instance(&e, "remote-b", bundle, ws_ep, inst_b);
	cr_assert_eq(
	    hf_create(&e, e.manager, inst_a, "operator", e.sf.w.operator_id,
	        "[\"navigate\", \"snapshot\", \"extract_text\"]", space_a),
	    201);
	cr_assert_eq(
	    hf_create(&e, e.manager, inst_b, "operator", e.sf.w.operator_id,
	        "[\"navigate\", \"snapshot\", \"extract_text\"]", space_b),
	    201);

	/* A snapshot of a local page, on the remote browser. */
	go(&e, space_a, "nav-1", port, "/");
	t = run_task(&e, space_a, "snap-1", "snapshot", "{}");
	cr_assert_str_eq(sf_str(json_object_get(t, "result"), "title"), "Home");
	cr_assert_not_null(
	    strstr(sf_str(json_object_get(t, "result"), "snapshot"),
	        "heading \"Welcome\""),
	    "%s", sf_str(json_object_get(t, "result"), "snapshot"));
	json_decref(t);

	/* A cookie of Space A stays in Space A. */
	go(&e, space_a, "nav-2", port, "/cookie?set=alpha");
	go(&e, space_a, "nav-3", port, "/cookie");
	jar_is(&e, space_a, "text-1", "cookies: alpha=1.");
	go(&e, space_b, "nav-1", port, "/cookie");
	jar_is(&e, space_b, "text-1", "cookies: none.");

	/* Close both: the browser is not ours, it runs on. */
	cr_assert(
	    hf_post(&e, e.manager, space_a, "close", NULL, NULL) / 100 == 2);
	cr_assert(
	    hf_post(&e, e.manager, space_b, "close", NULL, NULL) / 100 == 2);
	cr_assert(hf_wait_space(&e, space_a, "closed"), "A never closed");
	cr_assert(hf_wait_space(&e, space_b, "closed"), "B never closed");
	cr_assert(rf_running(&br), "closing the Spaces closed the browser");
	cr_assert(rf_answers(br.port), "the browser stopped answering");

	/* Everything a client can read, and every log line: no endpoint. */
	json_decref(hf_all_events(&e, space_a));
	json_decref(hf_all_events(&e, space_b));
	cr_assert_eq(hf_call(&e, "GET", "/api/v1/admin/browser-instances",
	                 e.af.admin, NULL, &res),
	    200);
	json_decref(res);
	needles[0] = http_ep;
	needles[1] = hostport;
	needles[2] = colon_port;
	needles[3] = br.ws_path;
	needles[4] = "/devtools/";
	needles[5] = NULL;
	assert_nowhere(&e, needles);

	hf_stop(&e);
	tk_pages_stop(pages);
}

/* ---- the probe */

struct status_wait {
	struct hf_env *e;
	const char *inst, *want;
};

static bool
status_is(void *arg)
{
	struct status_wait *w = arg;
	json_t *res = NULL;
	int i;
	bool ok = false;

	if (af_call(&w->e->af, "GET", "/api/v1/admin/browser-instances",
	        w->e->af.admin, NULL, &res) == 200 &&
	    (i = af_find(af_data(res), "browser_instance_id", w->inst)) >= 0)
		ok = strcmp(sf_str(json_array_get(af_data(res), (size_t)i),
		                "status"),
		         w->want) == 0;
	json_decref(res);
	return ok;
}

static void
wait_status(struct hf_env *e, const char *inst, const char *want)
{
	struct status_wait w = {e, inst, want};

	cr_assert(tk_wait_until(status_is, &w, RA_STATUS_MS),
	    "instance %s did not become %s", inst, want);
}

/* True once the process arg (a pid_t) has libcurl mapped. */
static bool
curl_loaded(void *arg)
{
	char path[64], *maps;
	bool loaded;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)*(pid_t *)arg);
	if ((maps = tk_read_file(path, NULL)) == NULL)
		return false;
	loaded = strstr(maps, "/libcurl") != NULL;
	free(maps);
	return loaded;
}

Test(remote_api, the_probe_keeps_cdp_instances_ready_or_unavailable,
    .fini = stop_browser)
{
	static const char *const flags[] = {"--probe-interval-ms=200", NULL};
	struct hf_env e;
	char bundle[CM_ID_MAX + 1], live[CM_ID_MAX + 1], dead[CM_ID_MAX + 1];
	char off[CM_ID_MAX + 1], ep[128], nowhere[128], hostport[64];
	char path[256];
	const char *needles[4];
	int port;

	memset(&br, 0, sizeof(br));
	rf_start(&br, 0);
	port = br.port;
	snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", port);
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%d", port);
	snprintf(
	    nowhere, sizeof(nowhere), "http://127.0.0.1:%d", tk_free_port());

	hf_start(&e, "rprobe", 0, flags);
	e.record = true;
	browser_bundle(&e, bundle);
	/* Rounds with no cdp instance to ask never load libcurl into the
	 * supervisor (and so into every child it forks); the first with
	 * one does. */
	cr_assert_not(tk_wait_until(curl_loaded, &e.sf.p.pid, 1000),
	    "the supervisor loaded libcurl with no cdp instance");
	cdp_instance(&e, "live", bundle, ep, live);
	cdp_instance(&e, "dead", bundle, nowhere, dead);
	cdp_instance(&e, "off", bundle, nowhere, off);
	snprintf(path, sizeof(path),
	    "/api/v1/admin/browser-instances/%s/disable", off);
	cr_assert_eq(hf_call(&e, "POST", path, e.af.admin, NULL, NULL), 200);

	cr_assert(tk_wait_until(curl_loaded, &e.sf.p.pid, 20000));

	/* Nobody answers at dead's endpoint; live's browser does. */
	wait_status(&e, dead, "unavailable");
	wait_status(&e, live, "ready");

	/* The browser goes: unavailable.  One on its port again: ready. */
	rf_kill(&br);
	wait_status(&e, live, "unavailable");
	rf_start(&br, port);
	wait_status(&e, live, "ready");

	/* Many rounds later the disabled one is still the operator's. */
	cr_assert(status_is(&(struct status_wait){&e, off, "disabled"}));
	cr_assert(status_is(&(struct status_wait){&e, dead, "unavailable"}));

	needles[0] = ep;
	needles[1] = hostport;
	needles[2] = nowhere;
	needles[3] = NULL;
	assert_nowhere(&e, needles);
	hf_stop(&e);
}
