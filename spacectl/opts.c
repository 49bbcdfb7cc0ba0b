/*
 * opts.c: what a command reads of its parsed command line: an option's
 * value (checked by main.c's parse before any command runs) and the
 * workspace it names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ids.h"
#include "json.h"

long long
ctl_opt_int(const struct ctl *c, enum ctl_opt o, long long dflt)
{
	return c->opt[o] != NULL ? strtoll(c->opt[o], NULL, 10) : dflt;
}

json_t *
ctl_opt_obj(const struct ctl *c, enum ctl_opt o)
{
	char err[128];
	json_t *v = NULL;

	if (c->opt[o] != NULL)
		cm_json_parse(c->opt[o], strlen(c->opt[o]), CM_BODY_MAX,
		    CM_JSON_DEPTH_MAX, &v, err, sizeof(err));
	return v;
}

bool
ctl_utf8(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p++, cp, min;
		size_t n;

		if (c < 0x80)
			continue;
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1, cp = c & 0x1f, min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2, cp = c & 0x0f, min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return false; /* a continuation byte, or 0xc0, 0xc1 */
		}
		if ((size_t)(end - p) < n)
			return false;
		for (size_t i = 0; i < n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i] & 0x3f);
		}
		p += n;
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
	}
	return true;
}

int
ctl_workspace(struct ctl *c)
{
	const char *w =
	    c->opt[CTL_O_WORKSPACE] ? c->opt[CTL_O_WORKSPACE] : "default";
	json_t *rows, *row;
	size_t i;
	int rc;

	if (strlen(w) == 0 || strlen(w) > CM_NAME_MAX)
		return ctl_usage("--workspace is empty or too long");
	if (c->ws[0] != '\0')
		return CTL_EXIT_OK;
	if (cm_uuid_valid(w)) {
		snprintf(c->ws, sizeof(c->ws), "%s", w);
		return CTL_EXIT_OK;
	}
	if ((rc = ctl_get(c, "/api/v1/admin/workspaces", &rows)) != 0) {
		fprintf(stderr,
		    "spacectl: the workspace named %s was not looked up (a "
		    "name needs an admin token; any token takes its id)\n",
		    w);
		return rc;
	}
	json_array_foreach(rows, i, row)
	{
		const char *name =
		    json_string_value(json_object_get(row, "name"));
		const char *id =
		    json_string_value(json_object_get(row, "workspace_id"));

		if (name && id && strcmp(name, w) == 0) {
			snprintf(c->ws, sizeof(c->ws), "%s", id);
			json_decref(rows);
			return CTL_EXIT_OK;
		}
	}
	json_decref(rows);
	fprintf(stderr, "error: not_found: no workspace named %s\n", w);
	return CTL_EXIT_API;
}
