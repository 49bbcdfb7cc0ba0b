/*
 * snapshot_bench: the snapshot on big pages, with the managed driver on a
 * real Chromium as the actor runs it, and the other way to read a page,
 * its accessibility tree, by a direct CDP client (cdp_rig.h).  The pages
 * are the test page server's (pages.h): /nodes?n=N (N elements of
 * every-day kinds) for N = 1,000, 10,000 and 50,000, /links?n=5000, and
 * /quiet?n=50000 (50,000 elements that print nothing: the snapshot walks
 * them all).
 * Measured, never asserted.
 *
 *   snapshot_bench [snapshot] [axtree] [playwright]
 *                  (default: snapshot and axtree)
 *   SNAPSHOT_BENCH_RUNS=N   snapshots per page and bound (default 20)
 *   SNAPSHOT_BENCH_AX_RUNS=N   reads of each tree way per page (default 3)
 *
 *   snapshot   the page navigated to once, then N snapshots at max_chars
 *              16000 (the default) and 40000: the time of each (the call
 *              to its end on the actor's loop, bw_driver_call), and the
 *              bytes of the outline and of the whole result.
 *   axtree     on a page of its own browser: Accessibility.getFullAXTree
 *              whole, and with depth 3, and (Accessibility enabled) a walk
 *              in document order by getChildAXNodes from getRootAXNode
 *              that stops once the names of the nodes it read pass 16000
 *              bytes: the time, the bytes of the replies (as compact
 *              JSON), the largest, or that a reply passed CM_CDP_MSG_MAX
 *              (the client drops it: the call fails).
 *
 *   playwright on five pages (simple, a form, frames, 10,000 links, a
 *              long article): spaced's snapshot at max_chars 40000 (the
 *              first part's time, bytes and refs, then every part by
 *              next_offset: their bytes and refs; the outline's bytes
 *              without the header's lines above it, as Playwright's
 *              has none), and Playwright's
 *              snapshot for an agent, page.ariaSnapshot({mode: "ai"}),
 *              in its own Chromium (aria_snapshot.mjs, playwright-core
 *              of tests/console): its time, bytes and refs.
 *
 * Times are printed in ms truncated to the microsecond (never rounded).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_world.h"
#include "capability.h"
#include "cdp_rig.h"
#include "clock.h"
#include "driver.h"
#include "pages.h"
#include "testkit.h"

#define SB_RUNS_DEFAULT 20
#define SB_RUNS_MAX 200
#define SB_WAIT_MS 120000 /* one call, one tree */
#define SB_NAMES 16000    /* bytes of names the child walk reads */
#define SB_PARTS_MAX 1000 /* parts of one outline walked by next_offset */
/* The comparison's page of frames. */
#define SB_FRAMES_PAGE "/frames?n=4"

static const char *const sb_pages[] = {"/nodes?n=1000", "/nodes?n=10000",
    "/nodes?n=50000", "/links?n=5000", "/quiet?n=50000"};
#define SB_PAGES (sizeof(sb_pages) / sizeof(sb_pages[0]))

static int port;

/* ---- the capability */

/* One call to its end, as the actor's loop runs it; *result (NULL: not
 * wanted) gets the result's text, malloc'd. */
static struct act_outcome
sb_call(
    struct act_driver *d, const char *cap, const char *args_json, char **result)
{
	return bw_driver_call(d, cap, args_json, SB_WAIT_MS, result);
}

static int
sb_navigate(struct act_driver *d, const char *path)
{
	return bw_driver_navigate("snapshot_bench", d, port, path);
}

static int
sb_snapshots(struct act_driver *d, const char *path, int runs)
{
	static const int bounds[] = {
	    CM_SNAPSHOT_CHARS_DEFAULT, CM_SNAPSHOT_CHARS_MAX};
	int64_t v[SB_RUNS_MAX];
	char name[96], args[64];

	if (sb_navigate(d, path) != 0)
		return -1;
	for (size_t b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++) {
		size_t outline = 0, result = 0;
		bool cut = false;

		snprintf(args, sizeof(args), "{\"max_chars\":%d}", bounds[b]);
		for (int i = 0; i < runs; i++) {
			char *text = NULL;
			int64_t t0 = cm_mono_ns();
			struct act_outcome o =
			    sb_call(d, "snapshot", args, &text);
			json_t *r;

			v[i] = cm_mono_ns() - t0;
			if (o.err != CM_OK || text == NULL) {
				free(text);
				return tk_fail("snapshot_bench",
				    "snapshot %s: %s %s", path,
				    cm_err_code(o.err), o.message);
			}
			result = strlen(text);
			r = json_loads(text, 0, NULL);
			outline =
			    json_string_length(json_object_get(r, "snapshot"));
			cut = json_is_true(json_object_get(r, "truncated"));
			json_decref(r);
			free(text);
		}
		snprintf(name, sizeof(name), "snapshot %s max_chars=%d", path,
		    bounds[b]);
		tk_report("snapshot_bench", name, v, runs);
		printf("snapshot_bench: snapshot %s max_chars=%d "
		       "outline_bytes=%zu result_bytes=%zu truncated=%d\n",
		    path, bounds[b], outline, result, cut);
		fflush(stdout);
	}
	return 0;
}

/* Opens a managed driver as the actor does, runs fn on it, closes it. */
static int
sb_with_driver(int (*fn)(struct act_driver *d, void *runs), int runs)
{
	return bw_with_driver("snapshot_bench", "snapbench", fn, &runs);
}

static int
sb_capability(struct act_driver *d, void *arg)
{
	int runs = *(const int *)arg, rc = 0;

	for (size_t i = 0; i < SB_PAGES && rc == 0; i++)
		rc = sb_snapshots(d, sb_pages[i], runs);
	return rc;
}

/* ---- beside Playwright's snapshot for an agent */

/* The pages of the comparison: simple, a form, frames, 10k links, a long
 * article. */
static const char *const sb_versus_pages[] = {
    "/", "/login", SB_FRAMES_PAGE, "/links?n=10000", "/article"};
#define SB_VERSUS_PAGES (sizeof(sb_versus_pages) / sizeof(sb_versus_pages[0]))

/* The refs an outline hands out. */
static size_t
sb_refs_in(const char *text)
{
	size_t n = 0;

	for (const char *t = text; (t = strstr(t, "[ref=")) != NULL; t++)
		n++;
	return n;
}

/* One part of the outline at max_chars 40000 (from offset; -1: the
 * first): its bytes, its refs and where the next part starts (-1 for
 * none).  0, or -1. */
static int
sb_part(struct act_driver *d, const char *path, json_int_t offset,
    size_t *bytes, size_t *refs, json_int_t *next)
{
	char args[96], *text = NULL;
	struct act_outcome o;
	const char *outline;
	json_t *r, *nx;

	if (offset < 0)
		snprintf(args, sizeof(args), "{\"max_chars\":%d}",
		    CM_SNAPSHOT_CHARS_MAX);
	else
		snprintf(args, sizeof(args),
		    "{\"max_chars\":%d,\"offset\":%" JSON_INTEGER_FORMAT "}",
		    CM_SNAPSHOT_CHARS_MAX, offset);
	o = sb_call(d, "snapshot", args, &text);
	if (o.err != CM_OK || text == NULL ||
	    (r = json_loads(text, 0, NULL)) == NULL) {
		free(text);
		return tk_fail("snapshot_bench", "snapshot %s: %s %s", path,
		    cm_err_code(o.err), o.message);
	}
	free(text);
	outline = json_string_value(json_object_get(r, "snapshot"));
	/* The outline alone, as Playwright's is: not the header's lines
	 * (url, title, tabs, a dialog) above it. */
	while (outline != NULL && *outline != '\0' && *outline != '-' &&
	       *outline != ' ')
		outline = strchr(outline, '\n') != NULL
		              ? strchr(outline, '\n') + 1
		              : outline + strlen(outline);
	*bytes = outline != NULL ? strlen(outline) : 0;
	*refs = outline != NULL ? sb_refs_in(outline) : 0;
	nx = json_object_get(r, "next_offset");
	*next = json_is_integer(nx) ? json_integer_value(nx) : -1;
	json_decref(r);
	return 0;
}

/*
 * One page through spaced: runs snapshots of its first part (their time,
 * its bytes and refs), then one walk through every part by next_offset:
 * the bytes and refs of them all, and how many.
 */
static int
sb_versus_page(struct act_driver *d, const char *path, int runs)
{
	int64_t v[SB_RUNS_MAX];
	size_t bytes = 0, refs = 0, all_bytes, all_refs, parts = 1;
	json_int_t next = -1;
	char name[96];

	if (sb_navigate(d, path) != 0)
		return -1;
	for (int i = 0; i < runs; i++) {
		int64_t t0 = cm_mono_ns();

		if (sb_part(d, path, -1, &bytes, &refs, &next) != 0)
			return -1;
		v[i] = cm_mono_ns() - t0;
	}
	all_bytes = bytes;
	all_refs = refs;
	while (next >= 0 && parts < SB_PARTS_MAX) {
		size_t b, n;

		if (sb_part(d, path, next, &b, &n, &next) != 0)
			return -1;
		all_bytes += b;
		all_refs += n;
		parts++;
	}
	snprintf(name, sizeof(name), "versus spaced %s", path);
	tk_report("snapshot_bench", name, v, runs);
	printf(
	    "snapshot_bench: versus spaced %s first_bytes=%zu first_refs=%zu "
	    "parts=%zu all_bytes=%zu all_refs=%zu\n",
	    path, bytes, refs, parts, all_bytes, all_refs);
	fflush(stdout);
	return 0;
}

/* The same pages through Playwright (aria_snapshot.mjs), its lines
 * printed beside spaced's. */
static int
sb_versus_playwright(int runs)
{
	char cmd[2048], line[8192];
	size_t n;
	FILE *f;

	n = (size_t)snprintf(cmd, sizeof(cmd), "node %s %d", SB_ARIA_JS, runs);
	for (size_t i = 0; i < SB_VERSUS_PAGES && n < sizeof(cmd); i++)
		n += (size_t)snprintf(cmd + n, sizeof(cmd) - n,
		    " 'http://127.0.0.1:%d%s'", port, sb_versus_pages[i]);
	if (n >= sizeof(cmd) || (f = popen(cmd, "r")) == NULL)
		return tk_fail("snapshot_bench", "cannot run %s", SB_ARIA_JS);
	while (fgets(line, sizeof(line), f) != NULL) {
		json_t *r = json_loads(line, 0, NULL), *ms;
		int64_t v[SB_RUNS_MAX];
		int k = 0;
		const char *url = json_string_value(json_object_get(r, "url"));
		const char *path = url != NULL ? strchr(url + 7, '/') : NULL;
		char name[96];

		if (path == NULL) {
			json_decref(r);
			continue;
		}
		ms = json_object_get(r, "ms");
		for (size_t i = 0; i < json_array_size(ms) && k < SB_RUNS_MAX;
		     i++)
			v[k++] =
			    (int64_t)(json_number_value(json_array_get(ms, i)) *
			              1e6);
		snprintf(name, sizeof(name), "versus playwright %s", path);
		tk_report("snapshot_bench", name, v, k);
		printf("snapshot_bench: versus playwright %s "
		       "bytes=%" JSON_INTEGER_FORMAT
		       " refs=%" JSON_INTEGER_FORMAT
		       " acting_refs=%" JSON_INTEGER_FORMAT "\n",
		    path, json_integer_value(json_object_get(r, "bytes")),
		    json_integer_value(json_object_get(r, "refs")),
		    json_integer_value(json_object_get(r, "acting_refs")));
		fflush(stdout);
		json_decref(r);
	}
	return pclose(f) == 0
	           ? 0
	           : tk_fail("snapshot_bench", "%s failed", SB_ARIA_JS);
}

static int
sb_versus(struct act_driver *d, void *arg)
{
	int runs = *(const int *)arg, rc = 0;

	for (size_t i = 0; i < SB_VERSUS_PAGES && rc == 0; i++)
		rc = sb_versus_page(d, sb_versus_pages[i], runs);
	return rc;
}

/* ---- the accessibility tree, by a direct client */

struct sb_read {
	size_t calls, bytes, biggest, names;
	bool too_big;
};

/* One command; its result (the rig's), counted into rd, or NULL. */
static const json_t *
sb_ax(struct tk_rig *r, const char *sid, const char *method, json_t *params,
    struct sb_read *rd)
{
	json_t *v = tk_rig_call(r, sid, method, params, SB_WAIT_MS);
	char *text;
	size_t n;

	rd->calls++;
	if (v == NULL) {
		rd->too_big = r->error_code == ACT_CDP_E_TOO_BIG;
		return NULL;
	}
	text = json_dumps(v, JSON_COMPACT);
	n = text != NULL ? strlen(text) : 0;
	free(text);
	rd->bytes += n;
	if (n > rd->biggest)
		rd->biggest = n;
	return v;
}

/* The walk of getChildAXNodes from node (a copy the caller owns), in
 * document order, until rd->names passes SB_NAMES.  -1 when a call
 * failed. */
static int
sb_walk(struct tk_rig *r, const char *sid, json_t *node, struct sb_read *rd)
{
	const char *id = json_string_value(json_object_get(node, "nodeId"));
	const json_t *v;
	json_t *kids;
	size_t i;
	int rc = 0;

	if (rd->names > SB_NAMES || id == NULL ||
	    json_array_size(json_object_get(node, "childIds")) == 0)
		return 0;
	if ((v = sb_ax(r, sid, "Accessibility.getChildAXNodes",
	         json_pack("{s:s}", "id", id), rd)) == NULL)
		return -1;
	kids = json_deep_copy(json_object_get(v, "nodes"));
	for (i = 0; i < json_array_size(kids); i++) {
		const char *name = json_string_value(json_object_get(
		    json_object_get(json_array_get(kids, i), "name"), "value"));

		rd->names += 10 + (name != NULL ? strlen(name) : 0);
	}
	for (i = 0; i < json_array_size(kids) && rc == 0; i++)
		rc = sb_walk(r, sid, json_array_get(kids, i), rd);
	json_decref(kids);
	return rc;
}

enum sb_way { SB_FULL, SB_DEPTH3, SB_CHILDREN, SB_WAYS };
static const char *const sb_way_name[SB_WAYS] = {
    "getFullAXTree", "getFullAXTree_depth3", "getChildAXNodes_walk"};

static int
sb_tree_once(
    struct tk_rig *r, const char *sid, enum sb_way way, struct sb_read *rd)
{
	const json_t *v;
	json_t *root;
	int rc;

	memset(rd, 0, sizeof(*rd));
	if (way == SB_FULL)
		return sb_ax(r, sid, "Accessibility.getFullAXTree", NULL, rd)
		           ? 0
		           : -1;
	if (way == SB_DEPTH3)
		return sb_ax(r, sid, "Accessibility.getFullAXTree",
		           json_pack("{s:i}", "depth", 3), rd)
		           ? 0
		           : -1;
	if (tk_rig_call(r, sid, "Accessibility.enable", NULL, SB_WAIT_MS) ==
	        NULL ||
	    (v = sb_ax(r, sid, "Accessibility.getRootAXNode", NULL, rd)) ==
	        NULL)
		return -1;
	root = json_deep_copy(json_object_get(v, "node"));
	rc = sb_walk(r, sid, root, rd);
	json_decref(root);
	tk_rig_call(r, sid, "Accessibility.disable", NULL, SB_WAIT_MS);
	return rc;
}

static int
sb_trees_of(struct tk_rig *r, const char *sid, const char *path, int runs)
{
	char url[160], name[96];
	int64_t v[SB_RUNS_MAX];
	struct sb_read rd;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	tk_rig_expect(r, "Page.loadEventFired");
	if (tk_rig_call(r, sid, "Page.navigate", json_pack("{s:s}", "url", url),
	        SB_WAIT_MS) == NULL ||
	    !tk_rig_await(r, SB_WAIT_MS))
		return tk_fail("snapshot_bench", "navigate %s", path);
	for (int w = 0; w < SB_WAYS; w++) {
		bool failed = false;

		for (int i = 0; i < runs; i++) {
			int64_t t0 = cm_mono_ns();

			failed = sb_tree_once(r, sid, (enum sb_way)w, &rd) != 0;
			v[i] = cm_mono_ns() - t0;
		}
		snprintf(
		    name, sizeof(name), "axtree %s %s", path, sb_way_name[w]);
		tk_report("snapshot_bench", name, v, runs);
		printf("snapshot_bench: axtree %s %s %s calls=%zu bytes=%zu "
		       "biggest_reply=%zu\n",
		    path, sb_way_name[w],
		    !failed      ? "ok"
		    : rd.too_big ? "failed: a reply over CM_CDP_MSG_MAX"
		                 : "failed",
		    rd.calls, rd.bytes, rd.biggest);
		fflush(stdout);
	}
	return 0;
}

static int
sb_trees(int runs)
{
	struct tk_rig r;
	char err[256], sid[CM_ID_MAX + 1];
	const json_t *v;
	int rc = 0;

	if (tk_rig_start(&r, err, sizeof(err)) != 0)
		return tk_fail("snapshot_bench", "launch: %s", err);
	if ((v = tk_rig_call(&r, NULL, "Target.createTarget",
	         json_pack("{s:s}", "url", "about:blank"), SB_WAIT_MS)) ==
	        NULL ||
	    (v = tk_rig_call(&r, NULL, "Target.attachToTarget",
	         json_pack("{s:s, s:b}", "targetId",
	             json_string_value(json_object_get(v, "targetId")),
	             "flatten", 1),
	         SB_WAIT_MS)) == NULL ||
	    json_string_value(json_object_get(v, "sessionId")) == NULL) {
		tk_rig_stop(&r);
		return tk_fail("snapshot_bench", "no page");
	}
	snprintf(sid, sizeof(sid), "%s",
	    json_string_value(json_object_get(v, "sessionId")));
	if (tk_rig_call(&r, sid, "Page.enable", NULL, SB_WAIT_MS) == NULL)
		rc = tk_fail("snapshot_bench", "Page.enable failed");
	for (size_t i = 0; i < SB_PAGES && rc == 0; i++)
		rc = sb_trees_of(&r, sid, sb_pages[i], runs);
	tk_rig_stop(&r);
	return rc;
}

int
main(int argc, char **argv)
{
	int runs =
	    tk_knob("SNAPSHOT_BENCH_RUNS", SB_RUNS_DEFAULT, 1, SB_RUNS_MAX);
	int ax_runs = tk_knob("SNAPSHOT_BENCH_AX_RUNS", 3, 1, SB_RUNS_MAX);
	bool all = argc < 2, snap = all, ax = all, versus = false;
	struct tk_pages *pages;
	int rc = 0;

	signal(SIGPIPE, SIG_IGN); /* as the actor: a dead browser's pipe */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "snapshot") == 0)
			snap = true;
		else if (strcmp(argv[i], "axtree") == 0)
			ax = true;
		else if (strcmp(argv[i], "playwright") == 0)
			versus = true;
		else {
			tk_fail("snapshot_bench", "unknown mode %s", argv[i]);
			return 2;
		}
	}
	if ((pages = tk_pages_start(&port)) == NULL)
		return tk_fail("snapshot_bench", "no page server") != 0;
	if (snap)
		rc = sb_with_driver(sb_capability, runs);
	if (versus && rc == 0)
		rc = sb_with_driver(sb_versus, runs);
	if (versus && rc == 0)
		rc = sb_versus_playwright(runs);
	if (ax && rc == 0)
		rc = sb_trees(ax_runs);
	tk_pages_stop(pages);
	return rc != 0;
}
