/*
 * The configuration reference of docs/operations.md against the config
 * table: every key
 * that cm_config_print writes has a row, every row is a key, and each
 * row's default (its first `code` span) is the value a load with no
 * file, environment or flag gives.  A default without a code span is
 * allowed only where the value is empty or the machine's (host_id).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define DOC SPACED_SOURCE_DIR "/docs/operations.md"
#define HEADING "## Configuration reference\n"
#define KEYS_MAX 64
#define CELL_MAX 256

struct kv {
	char key[64];
	char value[CELL_MAX];
	bool seen;
};

/* The defaults, as "key = value" lines from cm_config_print. */
static size_t
defaults(struct kv *out, size_t max)
{
	static char *const no_env[] = {NULL};
	const char *argv[] = {"test", "--config=/dev/null", NULL};
	struct cm_config cfg;
	char err[256], *text = NULL, *line, *nl;
	size_t len = 0, n = 0;
	FILE *f;

	cr_assert_eq(cm_config_load(&cfg, 2, (char *const *)argv, no_env, NULL,
	                 err, sizeof(err)),
	    0, "%s", err);
	f = open_memstream(&text, &len);
	cr_assert_not_null(f);
	cr_assert_eq(cm_config_print(&cfg, f), 0);
	fclose(f);
	for (line = text; *line != '\0' && n < max; line = nl + 1) {
		char *eq;

		cr_assert_not_null(nl = strchr(line, '\n'));
		*nl = '\0';
		eq = strstr(line, " = ");

		cr_assert_not_null(eq, "not key = value: %s", line);
		snprintf(out[n].key, sizeof(out[n].key), "%.*s",
		    (int)(eq - line), line);
		snprintf(out[n].value, sizeof(out[n].value), "%s", eq + 3);
		out[n++].seen = false;
	}
	free(text);
	return n;
}

/* The first `span` of cell into out; false when it has none. */
static bool
code_span(const char *cell, size_t len, char *out, size_t outlen)
{
	const char *a = memchr(cell, '`', len), *b;

	if (a == NULL)
		return false;
	b = memchr(a + 1, '`', len - (size_t)(a + 1 - cell));
	cr_assert_not_null(b, "unclosed code span: %.*s", (int)len, cell);
	snprintf(out, outlen, "%.*s", (int)(b - a - 1), a + 1);
	return true;
}

Test(docs, the_configuration_reference_matches_the_config_table)
{
	struct kv keys[KEYS_MAX];
	size_t n = defaults(keys, KEYS_MAX), rows = 0;
	FILE *f = fopen(DOC, "r");
	char line[1024];
	bool in = false, table = false;

	cr_assert_gt(n, 10, "cm_config_print wrote %zu keys", n);
	cr_assert_not_null(f, "cannot read %s", DOC);
	while (fgets(line, sizeof(line), f) != NULL) {
		char key[64], dflt[CELL_MAX];
		const char *c1, *c2, *c3;
		size_t i;

		if (!in) {
			in = strcmp(line, HEADING) == 0;
			continue;
		}
		if (line[0] != '|') {
			if (table)
				break; /* the table has ended */
			cr_assert(line[0] != '#', "no table under %s", HEADING);
			continue;
		}
		table = true;
		/* | `key` | default | what | */
		c1 = strchr(line + 1, '|');
		c2 = c1 != NULL ? strchr(c1 + 1, '|') : NULL;
		c3 = c2 != NULL ? strchr(c2 + 1, '|') : NULL;
		cr_assert_not_null(c3, "not a row of three cells: %s", line);
		if (!code_span(
		        line + 1, (size_t)(c1 - line - 1), key, sizeof(key)))
			continue; /* the heading and the rule */
		for (i = 0; i < n && strcmp(keys[i].key, key) != 0; i++)
			;
		cr_assert_lt(
		    i, n, "the reference names %s, which is no key", key);
		cr_assert_not(
		    keys[i].seen, "the reference names %s twice", key);
		keys[i].seen = true;
		rows++;
		if (code_span(
		        c1 + 1, (size_t)(c2 - c1 - 1), dflt, sizeof(dflt)))
			cr_assert_str_eq(dflt, keys[i].value,
			    "the reference's default of %s is %s, the code's "
			    "%s",
			    key, dflt, keys[i].value);
		else
			cr_assert(keys[i].value[0] == '\0' ||
			              strcmp(key, "host_id") == 0,
			    "the reference gives %s no default; the code's is "
			    "%s",
			    key, keys[i].value);
	}
	fclose(f);
	cr_assert(in, "%s has no heading %s", DOC, HEADING);
	for (size_t i = 0; i < n; i++)
		cr_assert(keys[i].seen, "the reference lacks %s", keys[i].key);
	cr_assert_eq(rows, n);
}
