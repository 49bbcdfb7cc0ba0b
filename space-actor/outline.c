/*
 * outline.c: the outline, a pure function of a list of AX-shaped nodes.
 */
#include "outline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"

static const char *const actionable_roles[] = {
    "button",
    "checkbox",
    "combobox",
    "link",
    "listbox",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "radio",
    "searchbox",
    "slider",
    "spinbutton",
    "switch",
    "tab",
    "textbox",
    "treeitem",
    /* Chromium's words for the date, time and colour fields. */
    "Date",
    "DateTime",
    "InputTime",
    "ColorWell",
    NULL,
};

/* Roles that only wrap their children: they print no line. */
static const char *const silent_roles[] = {
    "generic",
    "none",
    "presentation",
    "InlineTextBox",
    "LineBreak",
    "ignored",
    NULL,
};

static bool
role_in(const char *role, const char *const *set)
{
	for (size_t i = 0; set[i] != NULL; i++)
		if (strcmp(role, set[i]) == 0)
			return true;
	return false;
}

struct outline {
	const json_t *nodes;
	struct act_ref *refs;
	size_t *n_refs;
	json_t *index; /* nodeId -> position in nodes */
	bool *walked;  /* per node */
	char *buf;
	size_t len, max;
	bool cut;
	size_t cut_texts; /* names and values cut at CM_SNAPSHOT_NAME_MAX */
};

/* One line, built whole before it joins the outline: indentation, role,
 * quoted name, states, ref tag and value. */
#define LINE_MAX                                                           \
	(2 * CM_SNAPSHOT_DEPTH_MAX + 3 * CM_SNAPSHOT_NAME_MAX + ROLE_MAX + \
	    STATES_MAX * (STATE_MAX + 3) + 64)
#define ROLE_MAX 64
#define STATES_MAX 8 /* states shown on one line */
#define STATE_MAX 16 /* bytes of one, "checked=mixed" the longest */

/* The mark of a name or value cut at its bound, U+2026, three bytes. */
static const char cut_mark[] = "\xe2\x80\xa6";

struct line {
	char b[LINE_MAX];
	size_t n;
};

static void
line_add(struct line *l, const char *s, size_t n)
{
	if (n > sizeof(l->b) - 1 - l->n)
		n = sizeof(l->b) - 1 - l->n;
	memcpy(l->b + l->n, s, n);
	l->n += n;
}

/* Adds s, quoted (quotes and backslashes escaped) or not, with line
 * breaks made spaces, cut at CM_SNAPSHOT_NAME_MAX bytes on a UTF-8
 * boundary with cut_mark.  Returns true when it was cut. */
static bool
line_text(struct line *l, const char *s, bool quoted)
{
	char q[CM_SNAPSHOT_NAME_MAX * 2 + 8];
	size_t k = 0, i, first = quoted ? 1 : 0;
	bool cut;

	if (quoted)
		q[k++] = '"';
	for (i = 0; s[i] != '\0' && i < CM_SNAPSHOT_NAME_MAX; i++) {
		char c = s[i];

		if (quoted && (c == '"' || c == '\\')) {
			q[k++] = '\\';
			q[k++] = c;
		} else if (c == '\n' || c == '\r' || c == '\t')
			q[k++] = ' ';
		else
			q[k++] = c;
	}
	cut = s[i] != '\0';
	if (cut) {
		while (k > first && ((unsigned char)q[k - 1] & 0xC0) == 0x80)
			k--; /* do not split a character */
		if (k > first && ((unsigned char)q[k - 1] & 0xC0) == 0xC0)
			k--;
		memcpy(q + k, cut_mark, 3);
		k += 3;
	}
	if (quoted)
		q[k++] = '"';
	line_add(l, q, k);
	return cut;
}

static void
line_quoted(struct line *l, const char *name)
{
	line_text(l, name, true);
}

/* Appends a whole line, or marks the outline cut when it would pass
 * max.  Returns true when the line went in. */
static bool
outline_put(struct outline *o, const struct line *l)
{
	if (o->cut || o->len + l->n > o->max) {
		o->cut = true;
		return false;
	}
	memcpy(o->buf + o->len, l->b, l->n);
	o->len += l->n;
	o->buf[o->len] = '\0';
	return true;
}

static const char *
ax_value(const json_t *node, const char *key)
{
	return json_string_value(
	    json_object_get(json_object_get(node, key), "value"));
}

/* The role as shown: a browser's own word, [A-Za-z0-9_-], so no role can
 * start a line of its own, open a quote or pass for a ref tag. */
static void
line_role(struct line *l, const char *role)
{
	char r[ROLE_MAX];
	size_t n = 0;

	for (; role[n] != '\0' && n < sizeof(r); n++) {
		char c = role[n];

		r[n] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		               (c >= '0' && c <= '9') || c == '_' || c == '-'
		           ? c
		           : '?';
	}
	line_add(l, r, n);
}

/* The node's states, " [checked] [disabled]": each a word of
 * [A-Za-z0-9=_-] (any other byte as '?'), at most STATES_MAX of them. */
static void
line_states(struct line *l, const json_t *states)
{
	const json_t *w;
	size_t i;

	json_array_foreach(states, i, w)
	{
		const char *s = json_string_value(w);
		char b[STATE_MAX + 3];
		size_t n = 0;

		if (i >= STATES_MAX)
			break;
		if (s == NULL || s[0] == '\0')
			continue;
		b[n++] = ' ';
		b[n++] = '[';
		for (; *s != '\0' && n < STATE_MAX + 2; s++)
			b[n++] = (*s >= 'a' && *s <= 'z') ||
			                 (*s >= 'A' && *s <= 'Z') ||
			                 (*s >= '0' && *s <= '9') ||
			                 *s == '=' || *s == '_' || *s == '-'
			             ? *s
			             : '?';
		b[n++] = ']';
		line_add(l, b, n);
	}
}

/* The ref number a node gets: the one it carries (a snapshot's script
 * numbers its refs by its own list, and gives one to whatever is
 * clickable), or for an actionable role with a backend id, the next;
 * 0 for none. */
static json_int_t
node_ref(const struct outline *o, const json_t *node, const char *role)
{
	const json_t *n = json_object_get(node, "ref");

	if (!json_is_integer(json_object_get(node, "backendDOMNodeId")) ||
	    *o->n_refs >= CM_SNAPSHOT_REFS_MAX)
		return 0;
	if (n != NULL)
		return json_is_integer(n) && json_integer_value(n) > 0 &&
		               json_integer_value(n) <= UINT32_MAX
		           ? json_integer_value(n)
		           : 0;
	return role_in(role, actionable_roles) ? (json_int_t)*o->n_refs + 1 : 0;
}

/* Builds a node's line and appends it, with its ref if it gets one:
 *   - role "name" [state]... [ref=eN]: value */
static void
outline_line(struct outline *o, const json_t *node, const char *role,
    const char *name, bool is_text, int depth)
{
	struct line l = {.n = 0};
	json_int_t ref = is_text ? 0 : node_ref(o, node, role);
	/* A frame's element (page_frames.c): its ref names the frame's slot
	 * in the snapshot too, f<k>e<n>. */
	json_int_t fk = json_integer_value(json_object_get(node, "frame"));
	long frame = fk > 0 && fk <= INT32_MAX ? (long)fk : 0;
	const char *value = ax_value(node, "value");
	size_t cuts = 0;
	char tag[40];

	for (int d = 0; d < depth; d++)
		line_add(&l, "  ", 2);
	line_add(&l, "- ", 2);
	if (is_text) {
		line_add(&l, "text ", 5);
		cuts += line_text(&l, name, true);
	} else {
		line_role(&l, role);
		if (strcmp(role, "RootWebArea") == 0 || name[0] != '\0') {
			line_add(&l, " ", 1);
			cuts += line_text(&l, name, true);
		}
		line_states(&l, json_object_get(node, "states"));
		if (ref > 0 && frame > 0)
			snprintf(tag, sizeof(tag), " [ref=f%lde%lld]", frame,
			    (long long)ref);
		else if (ref > 0)
			snprintf(
			    tag, sizeof(tag), " [ref=e%lld]", (long long)ref);
		if (ref > 0)
			line_add(&l, tag, strlen(tag));
		if (value != NULL && value[0] != '\0') {
			line_add(&l, ": ", 2);
			cuts += line_text(&l, value, false);
		}
	}
	line_add(&l, "\n", 1);
	if (!outline_put(o, &l))
		return;
	o->cut_texts += cuts;
	/* A ref is handed out only with the line that shows it. */
	if (ref > 0) {
		o->refs[*o->n_refs].n = (uint32_t)ref;
		o->refs[*o->n_refs].id = json_integer_value(
		    json_object_get(node, "backendDOMNodeId"));
		++*o->n_refs;
	}
}

/*
 * Walks node i and what it contains.  depth counts printed levels, nest
 * every level: wrappers print nothing, so only nest bounds the recursion
 * through a long chain of them.  Each node is walked once: the browser's
 * tree is outside input, and a child listed twice, or an ancestor listed
 * as a child, would otherwise be walked again and again (a cycle never
 * ends; shared children multiply per level).
 */
static void
outline_node(
    struct outline *o, size_t i, int depth, int nest, const char *parent_name)
{
	const json_t *node = json_array_get(o->nodes, i);
	const char *role = ax_value(node, "role");
	const char *name = ax_value(node, "name");
	const json_t *kids = json_object_get(node, "childIds");
	bool ignored = json_is_true(json_object_get(node, "ignored"));
	bool print, is_text;
	const json_t *kid;
	size_t k;

	if (depth > CM_SNAPSHOT_DEPTH_MAX || nest > CM_SNAPSHOT_NEST_MAX ||
	    o->cut || o->walked[i])
		return;
	o->walked[i] = true;
	if (role == NULL)
		role = "generic";
	if (name == NULL)
		name = "";
	is_text = strcmp(role, "StaticText") == 0;
	/* A text repeats its parent only when it is the parent's whole name
	 * (a link's own label).  Part of a name is still text of its own,
	 * and the page's title is no parent: a body that says "Alice" under
	 * the title "Order summary for Alice" keeps it. */
	/* The document's own root prints nothing: the header above the
	 * outline names the page and its title, and its children are the
	 * outline's top level, two bytes less on every line.  A frame's
	 * document keeps its line, under its frame's. */
	print =
	    !ignored && !role_in(role, silent_roles) &&
	    !(i == 0 && nest == 0 && strcmp(role, "RootWebArea") == 0) &&
	    !(is_text && (name[0] == '\0' ||
	                     (parent_name && strcmp(parent_name, name) == 0)));
	if (print)
		outline_line(o, node, role, name, is_text, depth);
	json_array_foreach(kids, k, kid)
	{
		const json_t *pos =
		    json_object_get(o->index, json_string_value(kid));

		if (pos != NULL)
			outline_node(o, (size_t)json_integer_value(pos),
			    print ? depth + 1 : depth, nest + 1,
			    print && !is_text
			        ? (strcmp(role, "RootWebArea") == 0 ? NULL
			                                            : name)
			        : parent_name);
	}
}

int
act_outline(const json_t *nodes, size_t max, struct act_ref *refs,
    size_t *n_refs, char **text, bool *cut, size_t *cut_texts)
{
	struct outline o = {.nodes = nodes, .refs = refs, .n_refs = n_refs};
	const json_t *node;
	size_t i;

	*text = NULL;
	*cut = false;
	*n_refs = 0;
	if (cut_texts != NULL)
		*cut_texts = 0;
	if (!json_is_array(nodes) || json_array_size(nodes) == 0)
		return -1;
	o.max = max;
	o.index = json_object();
	o.buf = malloc(max + 1);
	o.walked = calloc(json_array_size(nodes), sizeof(*o.walked));
	if (o.index == NULL || o.buf == NULL || o.walked == NULL) {
		json_decref(o.index);
		free(o.buf);
		free(o.walked);
		return -1;
	}
	o.buf[0] = '\0';
	/* O(N): every node is found by its id through one index. */
	json_array_foreach(nodes, i, node)
	{
		const char *id =
		    json_string_value(json_object_get(node, "nodeId"));

		if (id != NULL)
			json_object_set_new(
			    o.index, id, json_integer((json_int_t)i));
	}
	outline_node(&o, 0, 0, 0, NULL);
	json_decref(o.index);
	free(o.walked);
	*text = o.buf;
	*cut = o.cut;
	if (cut_texts != NULL)
		*cut_texts = o.cut_texts;
	return 0;
}

json_t *
act_outline_acting(void)
{
	json_t *roles = json_array();

	for (size_t i = 0; roles != NULL && actionable_roles[i] != NULL; i++)
		if (json_array_append_new(
		        roles, json_string(actionable_roles[i])) != 0) {
			json_decref(roles);
			roles = NULL;
		}
	return roles;
}

/* The node of nodes whose DOM node is backend, or NULL. */
static const json_t *
node_of_backend(const json_t *nodes, int64_t backend)
{
	const json_t *node;
	size_t i;

	json_array_foreach(nodes, i, node)
	{
		const json_t *b = json_object_get(node, "backendDOMNodeId");

		if (json_is_integer(b) && json_integer_value(b) == backend)
			return node;
	}
	return NULL;
}

static const json_t *
node_of_id(const json_t *nodes, const char *id)
{
	const json_t *node;
	size_t i;

	if (id == NULL)
		return NULL;
	json_array_foreach(nodes, i, node)
	{
		const char *n =
		    json_string_value(json_object_get(node, "nodeId"));

		if (n != NULL && strcmp(n, id) == 0)
			return node;
	}
	return NULL;
}

int
act_outline_name(const json_t *nodes, int64_t backend, char *out, size_t len)
{
	const json_t *node = node_of_backend(nodes, backend);
	struct line l = {.n = 0};

	/* Up from the node to the first that prints a line of its own: a
	 * text or a wrapper is named by what holds it.  Bounded, as the
	 * parents are the browser's word. */
	for (int up = 0; node != NULL && up <= CM_SNAPSHOT_NEST_MAX; up++) {
		const char *role = ax_value(node, "role");
		const char *name = ax_value(node, "name");

		if (role != NULL &&
		    !json_is_true(json_object_get(node, "ignored")) &&
		    !role_in(role, silent_roles) &&
		    strcmp(role, "StaticText") != 0) {
			line_role(&l, role);
			if (name != NULL && name[0] != '\0') {
				line_add(&l, " ", 1);
				line_quoted(&l, name);
			}
			snprintf(out, len, "%.*s", (int)l.n, l.b);
			return 0;
		}
		node = node_of_id(nodes,
		    json_string_value(json_object_get(node, "parentId")));
	}
	return -1;
}
