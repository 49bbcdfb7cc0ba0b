/*
 * page_snapshot.c: the snapshot capability, the outline of the document
 * as it is (outline.h), and the refs it hands out, which later calls
 * name elements by (page_element).
 *
 * The outline's nodes are gathered in the page by a constant script
 * (snapshot_js.h) in an isolated world of the main frame's document,
 * made once per document (Page.createIsolatedWorld; page.c forgets it
 * when the main frame commits a new document).  The script stops at the
 * outline's bounds, so its reply is bounded by max_chars whatever the
 * size of the page: the browser's whole accessibility tree is O(the
 * page), over CM_CDP_MSG_MAX past a few thousand links, and seconds to
 * build (docs/performance.md, "The snapshot on large pages").  The
 * world keeps the elements the refs name; a ref resolves there, so a
 * ref of an older document is gone with its world.
 */
#include "page.h"
#include "page_int.h"

#include "outline.h"
#include "snapshot_js.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the script may return is far below what the client takes
 * (limits.h says why): a reply over it would fail every snapshot. */
_Static_assert((long long)CM_SNAPSHOT_NODES_MAX * 160 +
                       (long long)CM_SNAPSHOT_CHARS_MAX * 6 <
                   CM_CDP_MSG_MAX / 2,
    "the snapshot's reply is bounded below CM_CDP_MSG_MAX");

static size_t
snapshot_limit(const struct act_page *p)
{
	json_int_t max =
	    json_integer_value(json_object_get(p->args, "max_chars"));

	return max <= 0                      ? CM_SNAPSHOT_CHARS_DEFAULT
	       : max < CM_SNAPSHOT_CHARS_MAX ? (size_t)max
	                                     : CM_SNAPSHOT_CHARS_MAX;
}

/* Why the script stopped, in words; NULL for an unknown word. */
static const char *
snapshot_why(const char *cut, size_t limit, char *buf, size_t len)
{
	if (strcmp(cut, "size") == 0)
		snprintf(
		    buf, len, "the outline reached max_chars (%zu)", limit);
	else if (strcmp(cut, "nodes") == 0)
		snprintf(buf, len, "the outline reached its %d lines",
		    CM_SNAPSHOT_NODES_MAX);
	else if (strcmp(cut, "refs") == 0)
		snprintf(buf, len, "the outline reached its %d refs",
		    CM_SNAPSHOT_REFS_MAX);
	else if (strcmp(cut, "walk") == 0)
		snprintf(buf, len, "the walk reached its %d nodes of the page",
		    CM_SNAPSHOT_WALK_MAX);
	else if (strcmp(cut, "error") == 0)
		snprintf(buf, len, "the walk met an element it could not read");
	else
		return NULL;
	return buf;
}

/*
 * The note of a cut outline: after which line (and what it shows), why,
 * and how many of the body's elements the walk did not reach.
 */
static json_t *
snapshot_note(const char *text, const char *cut, json_int_t walked,
    json_int_t total, size_t limit)
{
	char why[96], left[96] = "", at[CM_SNAPSHOT_NAME_MAX * 3];
	size_t lines = 0, n;
	const char *last = text, *s;

	for (s = text; (s = strchr(s, '\n')) != NULL; s++) {
		lines++;
		if (s[1] != '\0')
			last = s + 1;
	}
	if (snapshot_why(cut, limit, why, sizeof(why)) == NULL)
		snapshot_why("size", limit, why, sizeof(why));
	if (total > walked && walked >= 0)
		snprintf(left, sizeof(left),
		    "; %lld of the page's %lld elements were not read",
		    (long long)(total - walked), (long long)total);
	if (lines == 0)
		return json_sprintf(
		    "nothing fit: %s%s; raise max_chars", why, left);
	/* The last line as it reads, without its indentation. */
	last += strspn(last, " ");
	if (strncmp(last, "- ", 2) == 0)
		last += 2;
	n = strcspn(last, "\n");
	if (n >= sizeof(at)) { /* not for a line outline.c writes */
		n = sizeof(at) - 1;
		while (n > 0 && ((unsigned char)last[n] & 0xC0) == 0x80)
			n--;
	}
	snprintf(at, sizeof(at), "%.*s", (int)n, last);
	return json_sprintf("cut after line %zu (%s): %s%s; raise max_chars "
	                    "or act on the refs shown",
	    lines, at, why, left);
}

/* The main document's nodes: its frames' are read next. */
static void
snapshot_built(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);

	if (p->done)
		return;
	page_frames_read(p, v);
}

void
page_snapshot_write(struct act_page *p, const json_t *v, const char *more)
{
	const char *why;
	size_t limit = snapshot_limit(p);
	char *text;
	bool cut;

	if (p->done)
		return;
	why = json_string_value(json_object_get(v, "cut"));
	if (p->refs == NULL && (p->refs = calloc(CM_SNAPSHOT_REFS_MAX,
	                            sizeof(*p->refs))) == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	p->n_refs = 0;
	if (act_outline(json_object_get(v, "nodes"), limit, p->refs, &p->n_refs,
	        &text, &cut) != 0) {
		page_fail(p, CM_E_RUNTIME_ERROR, "the page has no document");
		return;
	}
	cut = cut || (why != NULL && why[0] != '\0');
	p->keep = json_pack(
	    "{s:s, s:b}", "snapshot", text, "truncated", cut || more != NULL);
	if (cut && p->keep != NULL)
		json_object_set_new(p->keep, "note",
		    snapshot_note(text, why != NULL ? why : "",
		        json_integer_value(json_object_get(v, "walked")),
		        json_integer_value(json_object_get(v, "total")),
		        limit));
	if (more != NULL && p->keep != NULL)
		json_object_set_new(p->keep, "note",
		    cut ? json_sprintf("%s; %s",
		              json_string_value(
		                  json_object_get(p->keep, "note")),
		              more)
		        : json_string(more));
	free(text);
	page_info(p);
}

json_t *
page_snapshot_bounds(struct act_page *p, int depth)
{
	json_t *acting = act_outline_acting();

	/* An iframe's element is found again by its place in the list, to
	 * read its frame (page_frames.c); outline.c gives it no ref. */
	if (acting == NULL ||
	    json_array_append_new(acting, json_string("Iframe")) != 0) {
		json_decref(acting);
		return NULL;
	}
	return json_pack("{s:I, s:o, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "max",
	    (json_int_t)snapshot_limit(p), "acting", acting, "refs",
	    CM_SNAPSHOT_REFS_MAX, "depth", depth, "nest", CM_SNAPSHOT_NEST_MAX,
	    "name", CM_SNAPSHOT_NAME_MAX, "nameWalk", CM_SNAPSHOT_NAME_WALK_MAX,
	    "nodes", CM_SNAPSHOT_NODES_MAX, "walk", CM_SNAPSHOT_WALK_MAX);
}

/* Runs the script in the world p->world. */
static void
snapshot_run(struct act_page *p)
{
	json_t *o = page_snapshot_bounds(p, CM_SNAPSHOT_DEPTH_MAX);

	if (o == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	page_send(p, "Runtime.callFunctionOn",
	    json_pack("{s:s, s:I, s:[{s:o}], s:b, s:b}", "functionDeclaration",
	        ACT_SNAPSHOT_JS, "executionContextId", (json_int_t)p->world,
	        "arguments", "value", o, "returnByValue", 1, "awaitPromise", 0),
	    snapshot_built);
}

static void
snapshot_world(struct act_page *p, const json_t *result)
{
	const json_t *id = json_object_get(result, "executionContextId");

	if (!json_is_integer(id) || json_integer_value(id) <= 0) {
		page_fail(p, CM_E_RUNTIME_ERROR,
		    "the browser made no world for the snapshot");
		return;
	}
	p->world = json_integer_value(id);
	snapshot_run(p);
}

/*
 * The document as it is: one still loading is read too, and the result
 * says it is loading.  Nothing here waits for the page.  The refs of the
 * last snapshot are gone from here on, whatever this one comes to: the
 * world's list is replaced by the script.
 */
void
cap_snapshot(struct act_page *p)
{
	p->n_refs = 0;
	if (p->world > 0) {
		snapshot_run(p);
		return;
	}
	if (p->frame[0] == '\0') {
		page_fail(
		    p, CM_E_RUNTIME_ERROR, "the page has no document yet");
		return;
	}
	page_send(p, "Page.createIsolatedWorld",
	    json_pack("{s:s, s:s, s:b}", "frameId", p->frame, "worldName",
	        PAGE_SNAPSHOT_WORLD, "grantUniveralAccess", 0),
	    snapshot_world);
}

/* ---- refs */

static void
snapshot_ref_found(struct act_page *p, const json_t *result)
{
	const char *id = json_string_value(
	    json_object_get(json_object_get(result, "result"), "objectId"));

	if (json_object_get(result, "exceptionDetails") != NULL || id == NULL ||
	    strlen(id) >= sizeof(p->object)) {
		page_not_found(p, "the element is gone");
		return;
	}
	snprintf(p->object, sizeof(p->object), "%s", id);
	p->then(p);
}

void
page_snapshot_element(struct act_page *p, const char *ref)
{
	char *end;
	unsigned long n;

	if (ref[0] != 'e' || ref[1] < '1' || ref[1] > '9' ||
	    (n = strtoul(ref + 1, &end, 10)) == 0 || *end != '\0') {
		page_not_found(p, "that is not a ref of a snapshot");
		return;
	}
	for (size_t i = 0; i < p->n_refs && p->world > 0; i++)
		if (p->refs[i].n == n && (p->refs[i].id >> 32) != 0) {
			page_frames_element(p, p->refs[i].id); /* a frame's */
			return;
		} else if (p->refs[i].n == n) {
			page_send(p, "Runtime.callFunctionOn",
			    json_pack("{s:s, s:I, s:[{s:I}], s:b}",
			        "functionDeclaration", ACT_SNAPSHOT_REF_JS,
			        "executionContextId", (json_int_t)p->world,
			        "arguments", "value", (json_int_t)p->refs[i].id,
			        "returnByValue", 0),
			    snapshot_ref_found);
			return;
		}
	page_not_found(p, "the ref is stale or unknown");
}
