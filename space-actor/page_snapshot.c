/*
 * page_snapshot.c: the snapshot capability, the outline of the document
 * as it is (outline.h), and the refs it hands out, which later calls
 * name elements by (page_element).
 *
 * The outline's nodes are gathered in the page by a constant script
 * (snapshot_js.h) in an isolated world of the main frame's document,
 * made once per document (Page.createIsolatedWorld), ahead of the
 * snapshot: as the document commits (page.c tells), or as a call ends
 * with none made.  The script stops at the
 * outline's bounds, so its reply is bounded by max_chars whatever the
 * size of the page: the browser's whole accessibility tree is O(the
 * page), over CM_CDP_MSG_MAX past a few thousand links, and seconds to
 * build (docs/performance.md, "The snapshot on large pages").  The
 * world keeps the elements the refs name; a ref resolves there, so a
 * ref of an older document is gone with its world.  An element keeps its
 * ref in every snapshot of its document: the refs of a subtree
 * (snapshot {ref}) and of each page of a long outline (snapshot
 * {offset}, from the next_offset of a cut one) act together.
 *
 * Frames (page_frames.c): the script marks each iframe's element, and the
 * frames' documents are read next, each in a world of its own, and
 * nested under their iframe's line; their refs are f<k>e<n>, k the
 * frame's slot in this snapshot, and last until the next snapshot.
 *
 * An action whose args say snapshot: true ends with one too
 * (page_snapshot_after), in the same call: its result carries it.
 */
#include "page.h"
#include "page_int.h"

#include "clock.h"
#include "outline.h"
#include "snapshot_js.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the script may return is far below what the client takes
 * (limits.h says why): a reply over it would fail every snapshot. */
_Static_assert((long long)CM_SNAPSHOT_NODES_MAX * 200 +
                       (long long)CM_SNAPSHOT_CHARS_MAX * 6 <
                   CM_CDP_MSG_MAX / 2,
    "the snapshot's reply is bounded below CM_CDP_MSG_MAX");

/* The snapshot's own args; an action's (snapshot: true) are not its. */
static const json_t *
snapshot_arg(const struct act_page *p, const char *key)
{
	return p->snap_held != NULL ? NULL : json_object_get(p->args, key);
}

static size_t
snapshot_limit(const struct act_page *p)
{
	json_int_t max = json_integer_value(snapshot_arg(p, "max_chars"));

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
    json_int_t total, json_int_t next, size_t limit)
{
	char why[96], left[128] = "", at[CM_SNAPSHOT_NAME_MAX * 3];
	size_t lines = 0, n;
	const char *last = text, *s;

	for (s = text; (s = strchr(s, '\n')) != NULL; s++) {
		lines++;
		if (s[1] != '\0')
			last = s + 1;
	}
	if (snapshot_why(cut, limit, why, sizeof(why)) == NULL)
		snapshot_why("size", limit, why, sizeof(why));
	if (next >= 0)
		snprintf(left, sizeof(left),
		    "; %lld of the page's %lld elements were not read; "
		    "offset %lld continues",
		    (long long)(total - next), (long long)total,
		    (long long)next);
	else if (total > walked && walked >= 0)
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

/* The frame slot of a ref's id (0: the main document's). */
static unsigned
snapshot_ref_frame(const struct act_ref *r)
{
	return (unsigned)((uint64_t)r->id >> 32);
}

/*
 * The refs this snapshot handed out, at p->refs[base] on, join those of
 * the main document's earlier snapshots: the new ones (numbered past
 * every ref kept, in order) stay; one shown again is kept already.  The
 * frames' refs are this snapshot's alone: its frames' slots are read
 * anew each time, so an earlier snapshot's go.  0, or -1 when memory is
 * short.
 */
static int
snapshot_keep_refs(struct act_page *p, size_t base, size_t n)
{
	struct act_ref *framed = n > 0 ? malloc(n * sizeof(*framed)) : NULL;
	uint32_t top = 0;
	size_t w = 0, nf = 0;

	if (n > 0 && framed == NULL)
		return -1;
	for (size_t i = 0; i < base; i++)
		if (snapshot_ref_frame(&p->refs[i]) == 0) {
			if (p->refs[i].n > top)
				top = p->refs[i].n;
			p->refs[w++] = p->refs[i];
		}
	/* w <= base <= i: each move goes down the array. */
	for (size_t i = base; i < base + n; i++)
		if (snapshot_ref_frame(&p->refs[i]) != 0)
			framed[nf++] = p->refs[i];
		else if (p->refs[i].n > top) {
			top = p->refs[i].n;
			p->refs[w++] = p->refs[i];
		}
	if (nf > 0)
		memcpy(p->refs + w, framed, nf * sizeof(*framed));
	p->n_refs = w + nf;
	free(framed);
	return 0;
}

/* The note of an outline whole but for the names and values it cut. */
static json_t *
snapshot_cuts_note(size_t cuts)
{
	return json_sprintf("%zu name%s or value%s longer than %d bytes %s "
	                    "cut, marked \xe2\x80\xa6; extract_text reads "
	                    "an element's text whole",
	    cuts, cuts == 1 ? "" : "s", cuts == 1 ? "" : "s",
	    CM_SNAPSHOT_NAME_MAX, cuts == 1 ? "was" : "were");
}

/* The main document's nodes: its frames' are read next. */
static void
snapshot_built(struct act_page *p, const json_t *result)
{
	const json_t *v = page_value(p, result);

	if (p->done)
		return;
	if (json_is_true(json_object_get(v, "gone"))) {
		page_not_found(p, "the element of the ref is gone");
		return;
	}
	page_frames_read(p, v);
}

void
page_snapshot_write(struct act_page *p, const json_t *v, const char *more)
{
	const char *why;
	size_t limit = snapshot_limit(p), base, n, cuts;
	json_int_t next;
	char *text;
	bool cut;

	if (p->done)
		return;
	why = json_string_value(json_object_get(v, "cut"));
	if (p->refs == NULL && (p->refs = calloc(CM_SNAPSHOT_REFS_KEPT_MAX,
	                            sizeof(*p->refs))) == NULL) {
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	/* The script's list started over (a new world, or one full): so do
	 * the refs kept here. */
	if (json_is_true(json_object_get(v, "fresh")) ||
	    p->n_refs + CM_SNAPSHOT_REFS_MAX > CM_SNAPSHOT_REFS_KEPT_MAX)
		p->n_refs = 0;
	base = p->n_refs;
	if (act_outline(json_object_get(v, "nodes"), limit, p->refs + base, &n,
	        &text, &cut, &cuts) != 0) {
		page_fail(p, CM_E_RUNTIME_ERROR, "the page has no document");
		return;
	}
	if (snapshot_keep_refs(p, base, n) != 0) {
		free(text);
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	next = json_integer_value(json_object_get(v, "next"));
	cut = cut || (why != NULL && why[0] != '\0');
	p->keep = json_pack("{s:s, s:b}", "snapshot", text, "truncated",
	    cut || cuts > 0 || more != NULL);
	if (p->keep != NULL && cuts > 0)
		json_object_set_new(p->keep, "cut_texts", json_integer(cuts));
	if (p->keep != NULL && cut && next > 0)
		json_object_set_new(p->keep, "next_offset", json_integer(next));
	if (cut && p->keep != NULL)
		json_object_set_new(p->keep, "note",
		    snapshot_note(text, why != NULL ? why : "",
		        json_integer_value(json_object_get(v, "walked")),
		        json_integer_value(json_object_get(v, "total")),
		        next > 0 ? next : -1, limit));
	else if (cuts > 0 && p->keep != NULL)
		json_object_set_new(p->keep, "note", snapshot_cuts_note(cuts));
	else if (json_is_true(json_object_get(v, "past")) && p->keep != NULL)
		json_object_set_new(p->keep, "note",
		    json_sprintf("no element at offset %lld%s: nothing more "
		                 "to read",
		        (long long)json_integer_value(
		            snapshot_arg(p, "offset")),
		        snapshot_arg(p, "ref") != NULL
		            ? " within the ref's element"
		            : ""));
	if (more != NULL && p->keep != NULL) {
		const char *note =
		    json_string_value(json_object_get(p->keep, "note"));

		json_object_set_new(p->keep, "note",
		    note != NULL ? json_sprintf("%s; %s", note, more)
		                 : json_string(more));
	}
	free(text);
	page_info(p);
}

/* A number of a ref string at s: digits with no leading zero, into *v,
 * and where they end; NULL when there are none. */
static const char *
snapshot_ref_number(const char *s, unsigned long *v)
{
	char *end;

	if (*s < '1' || *s > '9')
		return NULL;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno == 0 && *v <= UINT32_MAX ? end : NULL;
}

/* The ref n and frame slot *k of a ref string, "e<n>" (*k 0: the main
 * document's) or "f<k>e<n>"; 0 when it is not one. */
static unsigned long
snapshot_ref_n(const char *ref, unsigned long *k)
{
	unsigned long n;

	*k = 0;
	if (ref[0] == 'f' &&
	    ((ref = snapshot_ref_number(ref + 1, k)) == NULL || *k > INT32_MAX))
		return 0;
	if (ref[0] != 'e' || (ref = snapshot_ref_number(ref + 1, &n)) == NULL ||
	    *ref != '\0')
		return 0;
	return n;
}

/* The id (the frame's slot and the place in its world's list) of the
 * element ref n of frame slot k names, or -1 when no snapshot of this
 * document handed it out. */
static json_int_t
snapshot_ref_id(const struct act_page *p, unsigned long k, unsigned long n)
{
	for (size_t i = 0; i < p->n_refs && p->world > 0; i++)
		if (p->refs[i].n == n && snapshot_ref_frame(&p->refs[i]) == k)
			return p->refs[i].id;
	return -1;
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
	return json_pack(
	    "{s:I, s:o, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}",
	    "max", (json_int_t)snapshot_limit(p), "acting", acting, "refs",
	    CM_SNAPSHOT_REFS_MAX, "depth", depth, "nest", CM_SNAPSHOT_NEST_MAX,
	    "name", CM_SNAPSHOT_NAME_MAX, "nameWalk", CM_SNAPSHOT_NAME_WALK_MAX,
	    "nodes", CM_SNAPSHOT_NODES_MAX, "walk", CM_SNAPSHOT_WALK_MAX,
	    "root", -1, "offset", 0, "kept", CM_SNAPSHOT_REFS_KEPT_MAX);
}

/* Runs the script in the world p->world: on the subtree of the args'
 * ref, from their offset. */
static void
snapshot_script(struct act_page *p)
{
	const char *ref = json_string_value(snapshot_arg(p, "ref"));
	json_int_t root = -1,
	           offset = json_integer_value(snapshot_arg(p, "offset"));
	unsigned long k = 0, n = ref != NULL ? snapshot_ref_n(ref, &k) : 0;
	json_t *o;

	if (ref != NULL && k != 0) {
		page_fail(p, CM_E_INVALID_ARGS,
		    "snapshot {ref} outlines an element of the top document; "
		    "%s is inside a frame: snapshot the page to see it",
		    ref);
		return;
	}
	if (ref != NULL && (root = snapshot_ref_id(p, 0, n)) < 0) {
		page_not_found(p, "the ref is stale or unknown");
		return;
	}
	o = page_snapshot_bounds(p, CM_SNAPSHOT_DEPTH_MAX);
	if (o == NULL || json_object_set_new(o, "root", json_integer(root)) ||
	    json_object_set_new(o, "offset", json_integer(offset))) {
		json_decref(o);
		page_fail(p, CM_E_RUNTIME_ERROR, "out of memory");
		return;
	}
	page_send(p, "Runtime.callFunctionOn",
	    json_pack("{s:s, s:I, s:[{s:o}], s:b, s:b}", "functionDeclaration",
	        ACT_SNAPSHOT_JS, "executionContextId", (json_int_t)p->world,
	        "arguments", "value", o, "returnByValue", 1, "awaitPromise", 0),
	    snapshot_built);
}

/* The elements clickable by a listener alone first, then the script. */
static void
snapshot_run(struct act_page *p)
{
	page_listeners_find(p, NULL, p->world, p->world_doc, snapshot_script);
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
 * document's earlier snapshots stay good.
 */
void
cap_snapshot(struct act_page *p)
{
	if (p->ahead_cmd > 0) {
		p->ahead_waited = true; /* ahead_over goes on */
		return;
	}
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

/*
 * ---- the world, made ahead
 *
 * Making the world and naming its document (Page.createIsolatedWorld,
 * then Runtime.evaluate and DOM.describeNode of its document, for the
 * search for listeners) took three round trips of every first snapshot
 * of a document, about a third of it on a small page
 * (docs/performance.md).  The world is made as the document commits,
 * while it loads; its document is named once the call ends, while the
 * agent reads the call's answer (asked while the document loaded, the
 * browser answered the evaluate only once it had loaded and painted).
 * A call that ends with no world made (one the browser refused, a page
 * whose first document came before its session) makes it then.
 * Nothing waits for them but a snapshot that begins before they are
 * answered.  A new document forgets those under way (their world went
 * with the old one), so a reply that comes is of the page's current
 * document.  Every step is soft: one the browser refuses leaves the
 * snapshot to do it itself.
 */

static void ahead_send(struct act_page *p, const char *method, json_t *params,
    act_cdp_reply_fn fn);
static void ahead_name(struct act_page *p);

/* No step is under way any more: a snapshot that waited goes on. */
static void
ahead_over(struct act_page *p)
{
	p->ahead_cmd = 0;
	if (!p->ahead_waited)
		return;
	p->ahead_waited = false;
	if (p->busy && !p->done)
		cap_snapshot(p);
}

static void
ahead_described(void *arg, const json_t *result, const json_t *error)
{
	struct act_page *p = arg;
	const json_t *b =
	    json_object_get(json_object_get(result, "node"), "backendNodeId");

	if (error == NULL && json_is_integer(b) && json_integer_value(b) > 0)
		p->world_doc = json_integer_value(b);
	ahead_over(p);
}

static void
ahead_document(void *arg, const json_t *result, const json_t *error)
{
	struct act_page *p = arg;
	const char *doc = json_string_value(
	    json_object_get(json_object_get(result, "result"), "objectId"));

	if (error != NULL || doc == NULL) {
		ahead_over(p);
		return;
	}
	ahead_send(p, "DOM.describeNode", json_pack("{s:s}", "objectId", doc),
	    ahead_described);
}

static void
ahead_world(void *arg, const json_t *result, const json_t *error)
{
	struct act_page *p = arg;
	const json_t *id = json_object_get(result, "executionContextId");

	if (error != NULL || !json_is_integer(id) ||
	    json_integer_value(id) <= 0) {
		ahead_over(p);
		return;
	}
	p->world = json_integer_value(id);
	if (!p->ahead_name) {
		ahead_over(p);
		return;
	}
	ahead_name(p);
}

/* Names the world's document: its backend node id. */
static void
ahead_name(struct act_page *p)
{
	p->ahead_name = false;
	ahead_send(p, "Runtime.evaluate",
	    json_pack("{s:s, s:I}", "expression", "document", "contextId",
	        (json_int_t)p->world),
	    ahead_document);
}

static void
ahead_send(
    struct act_page *p, const char *method, json_t *params, act_cdp_reply_fn fn)
{
	p->ahead_cmd = act_cdp_call(p->cdp, p->session, method, params,
	    cm_mono_ms() + CM_SNAPSHOT_AHEAD_MS, fn, p);
	if (p->ahead_cmd < 0)
		ahead_over(p);
}

/* The world of the document that committed, made. */
static void
ahead_make(struct act_page *p)
{
	if (p->frame[0] == '\0' || p->crashed)
		return;
	ahead_send(p, "Page.createIsolatedWorld",
	    json_pack("{s:s, s:s, s:b}", "frameId", p->frame, "worldName",
	        PAGE_SNAPSHOT_WORLD, "grantUniveralAccess", 0),
	    ahead_world);
}

void
page_snapshot_ahead(struct act_page *p)
{
	if (p->world_doc > 0 || p->crashed)
		return;
	if (p->ahead_cmd > 0) {
		/* The world is under way, or its document's name. */
		p->ahead_name = true;
		return;
	}
	p->ahead_name = true;
	if (p->world > 0)
		ahead_name(p);
	else
		ahead_make(p);
}

void
page_snapshot_fini(struct act_page *p)
{
	if (p->ahead_cmd > 0)
		act_cdp_forget(p->cdp, p->ahead_cmd);
	p->ahead_cmd = 0;
	p->ahead_name = p->ahead_waited = false;
}

void
page_snapshot_new_document(struct act_page *p)
{
	bool waited = p->ahead_waited;

	p->n_refs = 0;
	p->world = 0;
	p->world_doc = 0;
	page_snapshot_fini(p);
	ahead_make(p);
	/* A snapshot that waited for the old document's world reads the
	 * new one. */
	if (waited && p->busy && !p->done)
		cap_snapshot(p);
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
	unsigned long k, n = snapshot_ref_n(ref, &k);
	json_int_t id;

	if (n == 0) {
		page_not_found(p, "that is not a ref of a snapshot");
		return;
	}
	if ((id = snapshot_ref_id(p, k, n)) < 0) {
		page_not_found(p, "the ref is stale or unknown");
		return;
	}
	if (k != 0) {
		page_frames_element(p, id); /* a frame's */
		return;
	}
	page_send(p, "Runtime.callFunctionOn",
	    json_pack("{s:s, s:I, s:[{s:I}], s:b}", "functionDeclaration",
	        ACT_SNAPSHOT_REF_JS, "executionContextId", (json_int_t)p->world,
	        "arguments", "value", id, "returnByValue", 0),
	    snapshot_ref_found);
}

/* ---- snapshot: true on an action */

bool
page_snapshot_after(struct act_page *p, enum cm_err *err, json_t **result)
{
	json_t *held = p->snap_held, *snap = *result;

	if (held == NULL) {
		if (*err != CM_OK || p->snap_ran || !json_is_object(snap) ||
		    strcmp(p->capability, "snapshot") == 0 ||
		    !json_is_true(json_object_get(p->args, "snapshot")))
			return false;
		/* The action is over: nothing of it waits any more. */
		p->snap_ran = true;
		p->snap_held = snap;
		p->until = ACT_UNTIL_NONE;
		p->grace_at_ms = -1;
		p->poll_at_ms = -1;
		p->dl_wait_end_ms = -1;
		p->next = NULL;
		cap_snapshot(p);
		return true;
	}
	/* The snapshot's end: the action's result carries it, as "text"
	 * and the rest of a snapshot's result; a snapshot that failed does
	 * not undo what the action did, and says why. */
	p->snap_held = NULL;
	if (*err == CM_OK && json_is_object(snap)) {
		json_object_set(
		    snap, "text", json_object_get(snap, "snapshot"));
		json_object_del(snap, "snapshot");
		json_object_set_new(held, "snapshot", snap);
	} else {
		json_decref(snap);
		json_object_set_new(held, "snapshot", json_null());
		json_object_set_new(held, "snapshot_error",
		    json_pack("{s:s, s:s}", "code", cm_err_code(*err),
		        "message", p->out.message));
		p->out.message[0] = '\0';
	}
	*err = CM_OK;
	*result = held;
	return false;
}
