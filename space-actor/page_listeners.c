/*
 * page_listeners.c: the elements of a document (the main one, or a
 * frame's, page_frames.c) that a script made clickable with a listener
 * (addEventListener('click', ...)), for the snapshot, which gives each
 * a ref.  The snapshot's isolated world cannot
 * see a listener the page's own world added; the browser can:
 * DOMDebugger.getEventListeners on the document, its whole subtree
 * (depth -1, shadow roots and all, with pierce), names the node of each
 * listener (a frame's too: the frame's own search names it once more,
 * where its world can take it).  The document is asked as the main
 * world's node
 * (DOM.describeNode, then DOM.resolveNode with no context, in an object
 * group let go at the end), so that the browser wraps the page's handlers
 * in their own world.  Asked from the snapshot's world, Chromium's
 * renderer crashed now and then (SIGSEGV, a page of a <select> and an
 * <input type=range> in about one snapshot in five after a few
 * navigations), and a page must never die of being looked at.  At most
 * CM_SNAPSHOT_LISTENED_MAX of the nodes that listen for a press or a
 * click are resolved in the world (DOM.resolveNode, one round trip each)
 * and handed to it as globalThis.spacedListened, a WeakSet the script
 * reads (snapshot_js.h).  Listeners on the document, <html> and <body>
 * are a page's delegation, not a control: they are left out.
 *
 * Cost: the walk of the document's listeners is O(the page) in the
 * renderer, four round trips, and one per element found; the hand-over
 * and the release are sent without waiting (listeners_tell).  Every step
 * is soft: a page that refuses one (it navigated, a node went away) is read
 * without the listeners, as before, never failed for it.
 */
#include "page.h"
#include "page_int.h"

#include <stdio.h>
#include <string.h>

/* The events whose listener makes an element something a person acts
 * on. */
static bool
listener_acts(const char *type)
{
	static const char *const acting[] = {"click", "mousedown", "mouseup",
	    "pointerdown", "pointerup", "dblclick", "auxclick"};

	for (size_t i = 0; type != NULL && i < sizeof(acting) / sizeof(*acting);
	     i++)
		if (strcmp(type, acting[i]) == 0)
			return true;
	return false;
}

#define LISTENERS_GROUP "spaced-listeners" /* the main world's objects */

static void listeners_next(struct act_page *p);

/* The session the searched document lives in. */
static const char *
listeners_at(const struct act_page *p)
{
	return p->listen_at[0] != '\0' ? p->listen_at : p->session;
}

static void
listeners_done(struct act_page *p, const json_t *reply)
{
	void (*then)(struct act_page *) = p->listen_then;

	(void)reply;
	json_decref(p->listen_ids);
	p->listen_ids = NULL;
	json_decref(p->listened);
	p->listened = NULL;
	p->listen_then = NULL;
	then(p);
}

/*
 * Sends a command whose answer nothing waits for: the browser runs a
 * session's commands in the order sent, so what is sent next on it (the
 * snapshot's script) runs after it, and a refusal of it changes nothing
 * the search could do.  One round trip less each.
 */
static void
listeners_tell(struct act_page *p, const char *method, json_t *params)
{
	act_cdp_call(p->cdp, listeners_at(p), method, params, p->deadline_ms,
	    NULL, NULL);
}

/* What the main world holds for the search (its document, the handlers
 * the browser named) is let go. */
static void
listeners_release(struct act_page *p)
{
	listeners_tell(p, "Runtime.releaseObjectGroup",
	    json_pack("{s:s}", "objectGroup", LISTENERS_GROUP));
}

/* Hands the elements resolved so far to the world. */
static void
listeners_give(struct act_page *p)
{
	static const char js[] = "function(){globalThis.spacedListened="
	                         "new WeakSet(Array.from(arguments));}";

	listeners_tell(p, "Runtime.callFunctionOn",
	    json_pack("{s:s, s:I, s:O, s:b}", "functionDeclaration", js,
	        "executionContextId", (json_int_t)p->listen_world, "arguments",
	        p->listened, "returnByValue", 1));
	listeners_done(p, NULL);
}

static void
listeners_resolved(struct act_page *p, const json_t *reply)
{
	const char *id = json_string_value(
	    json_object_get(json_object_get(reply, "object"), "objectId"));
	const char *name = json_string_value(
	    json_object_get(json_object_get(reply, "object"), "description"));

	/* The page's own delegation is no control. */
	if (id != NULL && name != NULL && strncmp(name, "html", 4) != 0 &&
	    strncmp(name, "body", 4) != 0)
		json_array_append_new(
		    p->listened, json_pack("{s:s}", "objectId", id));
	listeners_next(p);
}

static void
listeners_next(struct act_page *p)
{
	json_t *id;

	if (json_array_size(p->listen_ids) == 0) {
		listeners_give(p);
		return;
	}
	id = json_incref(json_array_get(p->listen_ids, 0));
	json_array_remove(p->listen_ids, 0);
	page_send_soft(p, listeners_at(p), "DOM.resolveNode",
	    json_pack("{s:o, s:I}", "backendNodeId", id, "executionContextId",
	        (json_int_t)p->listen_world),
	    listeners_resolved);
}

static void
listeners_found(struct act_page *p, const json_t *reply)
{
	const json_t *all = json_object_get(reply, "listeners"), *l;
	size_t i;

	listeners_release(p);
	json_array_foreach(all, i, l)
	{
		const json_t *b = json_object_get(l, "backendNodeId");
		bool seen = false;
		size_t j;
		const json_t *k;

		if (!json_is_integer(b) || !listener_acts(json_string_value(
		                               json_object_get(l, "type"))))
			continue;
		json_array_foreach(p->listen_ids, j, k) seen =
		    seen || json_integer_value(k) == json_integer_value(b);
		if (!seen &&
		    json_array_size(p->listen_ids) < CM_SNAPSHOT_LISTENED_MAX)
			json_array_append_new(
			    p->listen_ids, json_integer(json_integer_value(b)));
	}
	listeners_next(p);
}

/* The main world's document: its listeners, the page's own among them. */
static void
listeners_main(struct act_page *p, const json_t *reply)
{
	const char *doc = json_string_value(
	    json_object_get(json_object_get(reply, "object"), "objectId"));

	if (doc == NULL) {
		listeners_give(p);
		return;
	}
	page_send_soft(p, listeners_at(p), "DOMDebugger.getEventListeners",
	    json_pack(
	        "{s:s, s:i, s:b}", "objectId", doc, "depth", -1, "pierce", 1),
	    listeners_found);
}

/* The document of backend id doc, as the main world's node. */
static void
listeners_resolve_main(struct act_page *p, int64_t doc)
{
	page_send_soft(p, listeners_at(p), "DOM.resolveNode",
	    json_pack("{s:I, s:s}", "backendNodeId", (json_int_t)doc,
	        "objectGroup", LISTENERS_GROUP),
	    listeners_main);
}

static void
listeners_described(struct act_page *p, const json_t *reply)
{
	const json_t *b =
	    json_object_get(json_object_get(reply, "node"), "backendNodeId");

	if (!json_is_integer(b)) {
		listeners_give(p);
		return;
	}
	/* The main document's, for its next snapshots (page_snapshot.c). */
	if (p->listen_at[0] == '\0' && p->listen_world == p->world)
		p->world_doc = json_integer_value(b);
	listeners_resolve_main(p, json_integer_value(b));
}

/* The world's document, to name the node the main world resolves. */
static void
listeners_document(struct act_page *p, const json_t *reply)
{
	const char *doc = json_string_value(
	    json_object_get(json_object_get(reply, "result"), "objectId"));

	if (doc == NULL) {
		listeners_give(p);
		return;
	}
	page_send_soft(p, listeners_at(p), "DOM.describeNode",
	    json_pack("{s:s}", "objectId", doc), listeners_described);
}

void
page_listeners_find(struct act_page *p, const char *at, int64_t world,
    int64_t doc, void (*then)(struct act_page *p))
{
	snprintf(p->listen_at, sizeof(p->listen_at), "%s",
	    at != NULL && strlen(at) < sizeof(p->listen_at) ? at : "");
	p->listen_world = world;
	json_decref(p->listen_ids);
	json_decref(p->listened);
	p->listen_ids = json_array();
	p->listened = json_array();
	p->listen_then = then;
	if (p->listen_ids == NULL || p->listened == NULL) {
		listeners_done(p, NULL);
		return;
	}
	if (doc > 0) {
		listeners_resolve_main(p, doc);
		return;
	}
	page_send_soft(p, listeners_at(p), "Runtime.evaluate",
	    json_pack("{s:s, s:I}", "expression", "document", "contextId",
	        (json_int_t)p->listen_world),
	    listeners_document);
}
