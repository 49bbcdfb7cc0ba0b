/*
 * outline.h: the outline of a snapshot, as a pure function of a list of
 * nodes in the shape of Accessibility.getFullAXTree's: {nodeId, role:
 * {value}, name: {value}, childIds, backendDOMNodeId, ignored}.  The
 * snapshot's script builds such a list in the page (snapshot_js.h);
 * act_outline_name reads the browser's own.
 *
 * One line per node that matters, indented by depth; the first node,
 * the document's root (RootWebArea), prints no line of its own (the
 * snapshot's header names the page), so its children are the top level:
 *   - heading "Welcome"
 *   - link "Docs" [ref=e1]
 *   - checkbox "Remember me" [checked] [ref=e2]
 *   - textbox "Email" [required] [ref=e3]: me@x.org
 *   - text "Some words"
 * Nodes an agent can act on (links, buttons, fields...) that have a
 * backendDOMNodeId get a ref, e1, e2... in the order they appear, which
 * maps to that id; a node that carries "ref" (an integer) gets e<ref>
 * whatever its role.  A node's "states" (an array of words, at most 8,
 * shown as [word] with any byte but [A-Za-z0-9=_-] as '?') and its
 * "value" ({value}, shown after ": ", unquoted, line breaks as spaces)
 * are optional.  Wrappers (generic, none, ignored nodes) print
 * nothing but their children; a text that is its parent's whole name is
 * not repeated (the page's title counts as no parent's name).  Names are
 * quoted; names and values are cut at CM_SNAPSHOT_NAME_MAX bytes, marked with
 * U+2026 and counted; a role shows only [A-Za-z0-9_-] (any
 * other byte as '?').  The walk stops at CM_SNAPSHOT_DEPTH_MAX printed levels,
 * CM_SNAPSHOT_NEST_MAX levels of the tree (wrappers included) and
 * CM_SNAPSHOT_REFS_MAX refs, and walks each node once, however often it is
 * listed as a child: the list is outside input, cycles and all.  O(N)
 * in the nodes.
 */
#ifndef ACT_OUTLINE_H
#define ACT_OUTLINE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A ref handed out by a snapshot: "e<n>" and the backendDOMNodeId of
 * the node it names (for a snapshot, the element's place in its script's
 * list). */
struct act_ref {
	uint32_t n;
	int64_t id;
};

/*
 * Builds the outline of nodes (an array; the first is the root) in at
 * most max bytes.  refs (room for CM_SNAPSHOT_REFS_MAX)
 * gets the refs, *n_refs their count.  Returns 0 with *text (malloc'd;
 * the caller frees), *cut (true when the outline did not fit) and, when
 * cut_texts is not NULL, the count of names and values it cut in lines
 * it wrote; or -1 when nodes is not a non-empty array or memory is short.
 */
int act_outline(const json_t *nodes, size_t max, struct act_ref *refs,
    size_t *n_refs, char **text, bool *cut, size_t *cut_texts);

/* The roles that get a ref, as a new JSON array of strings (NULL when
 * memory is short): what the snapshot's script counts a ref tag for. */
json_t *act_outline_acting(void);

/*
 * The words the outline gives the node whose DOM node is backend, or, when
 * that node prints no line of its own (a text, a wrapper), the nearest
 * ancestor that does: its role and quoted name, as in `button "Accept
 * cookies"`, with no indentation or ref, into out (cut to len).  nodes
 * are a reply of Accessibility.getPartialAXTree with its relatives
 * (parentId links them).  Returns 0, or -1 when neither the node nor any
 * ancestor of it among nodes prints.  O(N) per level.
 */
int act_outline_name(
    const json_t *nodes, int64_t backend, char *out, size_t len);

#endif
