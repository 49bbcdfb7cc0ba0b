/*
 * fuzz_outline.c: libFuzzer target for the snapshot outline
 * (space-actor/outline.c), built from a list of nodes in the shape of
 * Accessibility.getFullAXTree's, as the snapshot's script returns them.
 *
 * Input: two bytes that pick the outline's bound (0..CM_SNAPSHOT_CHARS_MAX,
 * as a snapshot's max_chars does), then a result {"nodes": [...]} as the
 * browser sends it, parsed as the CDP client parses every message.  What
 * the page shows is outside input (names, and through the page's
 * document its tree), and so is the browser: the list may have cycles,
 * shared children, any role.
 *
 * Checked beyond "no crash" (and, through libFuzzer's -timeout, beyond
 * "no hang"):
 *   - the outline is within its bound and valid UTF-8 (it goes into the
 *     task's JSON result);
 *   - every line is an indented "- " item: no role or name starts a line
 *     of its own;
 *   - the refs shown outside quotes are exactly e1..en, in order, one
 *     each, and n is the count handed back, within CM_SNAPSHOT_REFS_MAX.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "limits.h"
#include "outline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct act_ref refs[CM_SNAPSHOT_REFS_MAX];

_Noreturn static void
die(const char *what, const char *text)
{
	fprintf(stderr, "fuzz_outline: %s\n%s\n", what, text ? text : "");
	abort();
}

/* Checks one line: "  " * depth, "- ", then text whose [ref=eN] tags
 * outside quotes continue the count *next. */
static void
check_line(const char *line, size_t n, size_t *next, const char *text)
{
	size_t i = 0;
	bool quoted = false;

	while (i + 1 < n && line[i] == ' ' && line[i + 1] == ' ')
		i += 2;
	if (i + 2 > n || line[i] != '-' || line[i + 1] != ' ')
		die("a line that is not an item", text);
	for (; i < n; i++) {
		if (line[i] == '\\' && quoted) {
			i++;
			continue;
		}
		if (line[i] == '"')
			quoted = !quoted;
		if (!quoted && n - i > 7 &&
		    memcmp(line + i, "[ref=e", 6) == 0) {
			char want[32];
			int w = snprintf(
			    want, sizeof(want), "[ref=e%zu]", *next + 1);

			if (w < 0 || (size_t)w > n - i ||
			    memcmp(line + i, want, (size_t)w) != 0)
				die("a ref out of order", text);
			++*next;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *result, *nodes, *s;
	size_t max, n_refs = 0, shown = 0, len;
	const char *line, *nl;
	char *text = NULL;
	bool cut;
	int rv;

	if (size < 2)
		return 0;
	max = ((size_t)data[0] << 8 | data[1]) % (CM_SNAPSHOT_CHARS_MAX + 1);
	if (cm_json_parse((const char *)data + 2, size - 2, CM_CDP_MSG_MAX,
	        CM_CDP_DEPTH_MAX, &result, NULL, 0) != 0)
		return 0;
	nodes = json_object_get(result, "nodes");
	rv = act_outline(nodes, max, refs, &n_refs, &text, &cut, NULL);
	if (rv != 0) {
		if (json_is_array(nodes) && json_array_size(nodes) > 0)
			die("no outline of a non-empty array", NULL);
		json_decref(result);
		return 0;
	}
	if (text == NULL || (len = strlen(text)) > max)
		die("an outline over its bound", text);
	if (len > 0 && text[len - 1] != '\n')
		die("an outline that does not end a line", text);
	if ((s = json_string(text)) == NULL)
		die("an outline that is not UTF-8", text);
	json_decref(s);
	for (line = text; *line != '\0'; line = nl + 1) {
		nl = strchr(line, '\n');
		check_line(line, (size_t)(nl - line), &shown, text);
	}
	if (n_refs > CM_SNAPSHOT_REFS_MAX || shown != n_refs)
		die("refs shown and refs handed out differ", text);
	for (size_t i = 0; i < n_refs; i++)
		if (refs[i].n != i + 1)
			die("refs not numbered in order", text);
	free(text);
	json_decref(result);
	return 0;
}
