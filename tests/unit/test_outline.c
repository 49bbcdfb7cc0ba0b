/*
 * test_outline.c: the accessibility outline (space-actor/outline.h) from
 * AX trees written here: lines and indentation, refs only on what can be
 * acted on, wrappers that print nothing, quoting, the size bound, the
 * depth bound and the ref bound; cycles, shared children, long chains of
 * wrappers and roles that are not words.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "outline.h"

static struct act_ref refs[CM_SNAPSHOT_REFS_MAX];

/* A node: id, role, name, backend id (0: none), children ids. */
static json_t *
node(const char *id, const char *role, const char *name, int backend,
    const char *kids)
{
	json_t *n = json_pack("{s:s, s:{s:s, s:s}, s:{s:s, s:s}, s:b}",
	    "nodeId", id, "role", "type", "role", "value", role, "name", "type",
	    "computedString", "value", name, "ignored", 0);
	json_t *k = json_array();
	char buf[256], *save, *t;

	if (backend > 0)
		json_object_set_new(
		    n, "backendDOMNodeId", json_integer(backend));
	snprintf(buf, sizeof(buf), "%s", kids);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		json_array_append_new(k, json_string(t));
	json_object_set_new(n, "childIds", k);
	return n;
}

static char *
build(json_t *nodes, size_t max, size_t *n_refs, bool *cut)
{
	char *text;

	cr_assert_eq(
	    act_outline(nodes, max, refs, n_refs, &text, cut, NULL), 0);
	json_decref(nodes);
	return text;
}

Test(outline, lines_refs_and_wrappers)
{
	json_t *nodes = json_array();
	json_t *ignored = node("9", "generic", "", 90, "5");
	size_t n;
	bool cut;
	char *t;

	json_array_append_new(
	    nodes, node("1", "RootWebArea", "Home", 10, "2,3,9"));
	json_array_append_new(nodes, node("2", "heading", "Welcome", 20, "4"));
	json_array_append_new(nodes, node("4", "StaticText", "Welcome", 0, ""));
	json_array_append_new(nodes, node("3", "generic", "", 30, "6,7"));
	json_array_append_new(nodes, node("6", "link", "Say \"hi\"", 60, "8"));
	json_array_append_new(
	    nodes, node("8", "StaticText", "Say \"hi\"", 0, ""));
	json_array_append_new(nodes, node("7", "textbox", "Query", 70, ""));
	json_object_set_new(ignored, "ignored", json_true());
	json_array_append_new(nodes, ignored);
	json_array_append_new(nodes, node("5", "button", "Go", 0, ""));
	t = build(nodes, 4096, &n, &cut);
	cr_assert_str_eq(t, "- heading \"Welcome\"\n"
	                    "- link \"Say \\\"hi\\\"\" [ref=e1]\n"
	                    "- textbox \"Query\" [ref=e2]\n"
	                    "- button \"Go\"\n");
	cr_assert_not(cut);
	cr_assert_eq(n, 2);
	cr_assert_eq(refs[0].n, 1);
	cr_assert_eq(refs[0].id, 60);
	cr_assert_eq(refs[1].n, 2);
	cr_assert_eq(refs[1].id, 70);
	free(t);
}

/* A text is left out only when it is its parent's whole name; part of a
 * name, or of the page's title, stays. */
Test(outline, text_that_is_part_of_a_name_stays)
{
	json_t *nodes = json_array();
	size_t n;
	bool cut;
	char *t;

	json_array_append_new(nodes,
	    node("1", "RootWebArea", "Order summary for Alice", 1, "2,3,5"));
	json_array_append_new(nodes, node("2", "StaticText", "Alice", 0, ""));
	json_array_append_new(
	    nodes, node("3", "heading", "Order summary for Alice", 30, "4,6"));
	json_array_append_new(
	    nodes, node("4", "StaticText", "Order summary", 0, ""));
	json_array_append_new(
	    nodes, node("6", "StaticText", " for Alice", 0, ""));
	json_array_append_new(nodes, node("5", "generic", "", 50, "7"));
	json_array_append_new(nodes, node("7", "link", "Pay now", 70, "8"));
	json_array_append_new(nodes, node("8", "StaticText", "Pay now", 0, ""));
	t = build(nodes, 4096, &n, &cut);
	cr_assert_str_eq(t,
	    "- text \"Alice\"\n"
	    "- heading \"Order summary for Alice\"\n"
	    "  - text \"Order summary\"\n"
	    "  - text \" for Alice\"\n"
	    "- link \"Pay now\" [ref=e1]\n",
	    "%s", t);
	cr_assert_not(cut);
	free(t);
}

Test(outline, cut_at_the_bound_and_names_cut_whole)
{
	json_t *nodes = json_array();
	char kids[4096] = "", id[16], big[1024];
	size_t n, k = 0;
	bool cut;
	char *t;

	for (int i = 0; i < 50; i++)
		k += (size_t)snprintf(
		    kids + k, sizeof(kids) - k, "%s%d", i ? "," : "", 100 + i);
	json_array_append_new(nodes, node("1", "RootWebArea", "R", 1, kids));
	/* A name of 600 bytes of 2-byte characters. */
	for (int i = 0; i < 300; i++)
		memcpy(big + 2 * i, "\xc3\xa9", 2);
	big[600] = '\0';
	for (int i = 0; i < 50; i++) {
		snprintf(id, sizeof(id), "%d", 100 + i);
		json_array_append_new(
		    nodes, node(id, "link", big, 100 + i, ""));
	}
	t = build(nodes, 1000, &n, &cut);
	cr_assert(cut);
	cr_assert_leq(strlen(t), 1000);
	/* Whole lines only, each name cut on a character boundary. */
	cr_assert_eq(t[strlen(t) - 1], '\n');
	cr_assert_not_null(
	    strstr(t, "\xc3\xa9\xe2\x80\xa6\" [ref=e1]"), "%s", t);
	free(t);
}

Test(outline, deep_trees_and_many_refs_are_bounded)
{
	json_t *nodes = json_array();
	char id[16], kid[16];
	size_t n;
	bool cut;
	char *t;

	/* A chain deeper than the bound, each a button. */
	for (int i = 0; i < CM_SNAPSHOT_DEPTH_MAX * 2; i++) {
		snprintf(id, sizeof(id), "%d", i + 1);
		snprintf(kid, sizeof(kid), "%d", i + 2);
		json_array_append_new(
		    nodes, node(id, i ? "button" : "RootWebArea", "b", i + 1,
		               i + 1 < CM_SNAPSHOT_DEPTH_MAX * 2 ? kid : ""));
	}
	t = build(nodes, CM_SNAPSHOT_CHARS_MAX * 10, &n, &cut);
	/* The root prints nothing: buttons on levels 0 to the bound. */
	cr_assert_eq(n, CM_SNAPSHOT_DEPTH_MAX + 1);
	free(t);

	/* More actionable nodes than refs. */
	nodes = json_array();
	json_array_append_new(nodes, node("r", "RootWebArea", "", 1, ""));
	for (int i = 0; i < CM_SNAPSHOT_REFS_MAX + 10; i++) {
		snprintf(id, sizeof(id), "%d", i + 1);
		json_array_append_new(
		    json_object_get(json_array_get(nodes, 0), "childIds"),
		    json_string(id));
		json_array_append_new(nodes, node(id, "link", "", i + 2, ""));
	}
	t = build(nodes, 1 << 20, &n, &cut);
	cr_assert_eq(n, CM_SNAPSHOT_REFS_MAX);
	free(t);
}

Test(outline, what_is_not_a_tree_is_refused)
{
	char *t = NULL;
	size_t n;
	bool cut;
	json_t *v = json_array();

	cr_assert_eq(act_outline(v, 100, refs, &n, &t, &cut, NULL), -1);
	cr_assert_eq(act_outline(NULL, 100, refs, &n, &t, &cut, NULL), -1);
	json_decref(v);
	v = json_object();
	cr_assert_eq(act_outline(v, 100, refs, &n, &t, &cut, NULL), -1);
	json_decref(v);
	cr_assert_null(t);
}

/* Found by fuzz_outline: the browser's tree is outside input.  A node
 * listed as its own child recursed until the stack ran out; a child listed
 * twice was shown twice, with two refs, and shared children multiplied
 * per level. */
Test(outline, each_node_is_walked_once)
{
	json_t *nodes = json_array();
	size_t n;
	bool cut;
	char *t;

	json_array_append_new(nodes, node("1", "RootWebArea", "x", 1, "2,2,1"));
	json_array_append_new(nodes, node("2", "generic", "", 0, "3,3,2,1"));
	json_array_append_new(nodes, node("3", "link", "a", 3, "1,3"));
	t = build(nodes, 4096, &n, &cut);
	cr_assert_str_eq(t, "- link \"a\" [ref=e1]\n");
	cr_assert_eq(n, 1);
	cr_assert_not(cut);
	free(t);
}

/* Found by fuzz_outline: wrappers print nothing, so the printed depth
 * never bounded a long chain of them, and the recursion ran out of stack. */
Test(outline, a_long_chain_of_wrappers_is_bounded)
{
	enum { CHAIN = 100000 };
	json_t *nodes = json_array();
	char id[16], kid[16];
	size_t n;
	bool cut;
	char *t;

	for (int i = 0; i < CHAIN; i++) {
		snprintf(id, sizeof(id), "%d", i);
		snprintf(kid, sizeof(kid), "%d", i + 1);
		json_array_append_new(
		    nodes, node(id,
		               i == 0           ? "RootWebArea"
		               : i == CHAIN - 1 ? "button"
		               : i == 10        ? "link"
		                                : "generic",
		               "b", i + 1, i < CHAIN - 1 ? kid : ""));
	}
	t = build(nodes, 4096, &n, &cut);
	/* The link within the bound is shown; the button past it is not. */
	cr_assert_str_eq(t, "- link \"b\" [ref=e1]\n");
	cr_assert_eq(n, 1);
	free(t);
}

/* Found by fuzz_outline: a role was shown as the browser sent it, so one
 * could start a line of its own or show a ref that was never handed out. */
Test(outline, a_role_shows_only_word_characters)
{
	size_t n;
	bool cut;
	char *t =
	    build(json_pack("[o, o]", node("1", "RootWebArea", "x", 1, "2"),
	              node("2", "note\n- link \"y\" [ref=e9]", "z", 2, "")),
	        4096, &n, &cut);

	cr_assert_str_eq(t, "- note?-?link??y???ref?e9? \"z\"\n");
	cr_assert_eq(n, 0);
	free(t);
}

/* What covers a point is named as its line would be: the node itself, or
 * the nearest ancestor that prints one; none, when nothing above prints. */
Test(outline, a_node_is_named_as_its_line)
{
	json_t *nodes = json_array();
	json_t *text = node("3", "StaticText", "Accept cookies", 30, "");
	json_t *wrap = node("2", "generic", "", 20, "3");
	json_t *lone = node("9", "generic", "", 90, "");
	char out[128];

	json_object_set_new(text, "parentId", json_string("2"));
	json_object_set_new(wrap, "parentId", json_string("1"));
	json_array_append_new(
	    nodes, node("1", "button", "Accept cookies", 10, "2"));
	json_array_append_new(nodes, wrap);
	json_array_append_new(nodes, text);
	json_array_append_new(nodes, lone);
	cr_assert_eq(act_outline_name(nodes, 30, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "button \"Accept cookies\"");
	cr_assert_eq(act_outline_name(nodes, 10, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "button \"Accept cookies\"");
	cr_assert_eq(act_outline_name(nodes, 90, out, sizeof(out)), -1);
	cr_assert_eq(act_outline_name(nodes, 77, out, sizeof(out)), -1);
	/* A parent that points back at its child ends the walk. */
	json_object_set_new(lone, "parentId", json_string("9"));
	cr_assert_eq(act_outline_name(nodes, 90, out, sizeof(out)), -1);
	json_decref(nodes);
}

/* States, values and the refs a node carries: each on its line, in the
 * order the line gives them; a cut name or value is marked and counted. */
Test(outline, states_values_and_carried_refs)
{
	json_t *nodes = json_array();
	json_t *box = node("2", "checkbox", "Remember me", 5, "");
	json_t *field = node("3", "textbox", "Email", 6, "");
	json_t *card = node("4", "listitem", "", 7, "");
	char big[CM_SNAPSHOT_NAME_MAX + 50];
	const char *want = "- checkbox \"Remember me\" [checked] [x?y] "
	                   "[ref=e40]\n"
	                   "- textbox \"Email\" [required] [ref=e41]: vvv";
	size_t n, cuts;
	bool cut;
	char *t;

	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	json_object_set_new(
	    box, "states", json_pack("[s, s]", "checked", "x]y"));
	json_object_set_new(box, "ref", json_integer(40));
	json_object_set_new(field, "states", json_pack("[s]", "required"));
	json_object_set_new(field, "value", json_pack("{s:s}", "value", big));
	json_object_set_new(field, "ref", json_integer(41));
	json_object_set_new(card, "ref", json_integer(42));
	json_array_append_new(nodes, node("1", "RootWebArea", "F", 0, "2,3,4"));
	json_array_append_new(nodes, box);
	json_array_append_new(nodes, field);
	json_array_append_new(nodes, card);
	cr_assert_eq(act_outline(nodes, 4096, refs, &n, &t, &cut, &cuts), 0);
	json_decref(nodes);
	cr_assert_not(cut);
	cr_assert_eq(cuts, 1);
	cr_assert_eq(strncmp(t, want, strlen(want)), 0, "%s", t);
	cr_assert_not_null(
	    strstr(t, "v\xe2\x80\xa6\n- listitem [ref=e42]\n"), "%s", t);
	cr_assert_eq(n, 3);
	cr_assert_eq(refs[0].n, 40);
	cr_assert_eq(refs[0].id, 5);
	cr_assert_eq(refs[2].n, 42);
	cr_assert_eq(refs[2].id, 7);
	free(t);
}
