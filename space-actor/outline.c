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
};

/* One line, built whole before it joins the outline. */
#define LINE_MAX \
	(2 * CM_SNAPSHOT_DEPTH_MAX + 2 * CM_SNAPSHOT_NAME_MAX + ROLE_MAX + 64)
#define ROLE_MAX 64

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

/* Adds name quoted, with quotes and backslashes escaped and line breaks
 * made spaces, cut at CM_SNAPSHOT_NAME_MAX bytes on a UTF-8 boundary. */
static void
line_quoted(struct line *l, const char *name)
{
	char q[CM_SNAPSHOT_NAME_MAX * 2 + 8];
	size_t k = 0, i;

	q[k++] = '"';
	for (i = 0; name[i] != '\0' && i < CM_SNAPSHOT_NAME_MAX; i++) {
		char c = name[i];

		if (c == '"' || c == '\\') {
			q[k++] = '\\';
			q[k++] = c;
		} else if (c == '\n' || c == '\r' || c == '\t')
			q[k++] = ' ';
		else
			q[k++] = c;
	}
	if (name[i] != '\0') {
		while (k > 1 && ((unsigned char)q[k - 1] & 0xC0) == 0x80)
			k--; /* do not split a character */
		if (k > 1 && ((unsigned char)q[k - 1] & 0xC0) == 0xC0)
			k--;
		memcpy(q + k, "...", 3);
		k += 3;
	}
	q[k++] = '"';
	line_add(l, q, k);
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

/* Builds a node's line and appends it, with its ref if it gets one. */
static void
outline_line(struct outline *o, const char *role, const char *name,
    bool is_text, const json_t *backend, int depth)
{
	struct line l = {.n = 0};
	bool ref = role_in(role, actionable_roles) &&
	           json_is_integer(backend) &&
	           *o->n_refs < CM_SNAPSHOT_REFS_MAX;
	char tag[32];

	for (int d = 0; d < depth; d++)
		line_add(&l, "  ", 2);
	line_add(&l, "- ", 2);
	if (is_text) {
		line_add(&l, "text ", 5);
		line_quoted(&l, name);
	} else {
		line_role(&l, role);
		if (strcmp(role, "RootWebArea") == 0 || name[0] != '\0') {
			line_add(&l, " ", 1);
			line_quoted(&l, name);
		}
		if (ref) {
			snprintf(
			    tag, sizeof(tag), " [ref=e%zu]", *o->n_refs + 1);
			line_add(&l, tag, strlen(tag));
		}
	}
	line_add(&l, "\n", 1);
	/* A ref is handed out only with the line that shows it. */
	if (outline_put(o, &l) && ref) {
		o->refs[*o->n_refs].n = (uint32_t)(*o->n_refs + 1);
		o->refs[*o->n_refs].id = json_integer_value(backend);
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
	print =
	    !ignored && !role_in(role, silent_roles) &&
	    !(is_text && (name[0] == '\0' ||
	                     (parent_name && strcmp(parent_name, name) == 0)));
	if (print)
		outline_line(o, role, name, is_text,
		    json_object_get(node, "backendDOMNodeId"), depth);
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
    size_t *n_refs, char **text, bool *cut)
{
	struct outline o = {.nodes = nodes, .refs = refs, .n_refs = n_refs};
	const json_t *node;
	size_t i;

	*text = NULL;
	*cut = false;
	*n_refs = 0;
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
