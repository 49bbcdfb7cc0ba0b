/*
 * reply.c: building a handler's reply in its arena (reply.h).
 */
#include "reply.h"

#include <jansson.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "ops.h"

void
st_db_failed(struct st_ctx *ctx, struct pr_rep *rep, const char *what)
{
	cm_warnx("store: %s failed: %s", what, st_db_errmsg(ctx->db));
	pr_rep_error(rep, CM_E_INTERNAL, "database error");
}

void *
st_rep_push(struct pr_rep *rep, void **list, size_t *n, size_t size)
{
	char *grown;

	/* Capacity doubles at powers of two; old blocks stay in the arena. */
	if (*n == 0 || (*n & (*n - 1)) == 0) {
		size_t cap = *n == 0 ? 1 : *n * 2;

		if (cap > CM_PROTO_LIST_MAX)
			return NULL;
		if ((grown = pr_rep_alloc(rep, cap * size)) == NULL)
			return NULL;
		if (*n > 0)
			memcpy(grown, *list, *n * size);
		*list = grown;
	}
	grown = (char *)*list + *n * size;
	memset(grown, 0, size);
	(*n)++;
	return grown;
}

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* The closing quote of a string checked plain (no escapes). */
static const char *
end_of(const char *p)
{
	return strchr(p, '"');
}

/*
 * The common case without jansson: an array of plain ASCII strings, as
 * the store writes granted capabilities.  Returns 1 when json was such an
 * array (out filled), 0 when it needs the full parser, -1 out of memory.
 */
static int
strlist_plain(struct pr_rep *rep, const char *json, struct pr_strlist *out)
{
	const char *p = skip_ws(json), *q;
	size_t n = 0;

	if (*p++ != '[')
		return 0;
	/* First the shape, and the count. */
	for (q = skip_ws(p); *q != ']'; n++) {
		if (n > 0) {
			if (*q++ != ',')
				return 0;
			q = skip_ws(q);
		}
		if (*q++ != '"')
			return 0;
		for (; *q != '"'; q++) {
			unsigned char ch = (unsigned char)*q;
			if (ch < 0x20 || ch >= 0x80 || ch == '\\')
				return 0;
		}
		q = skip_ws(q + 1);
	}
	if (*skip_ws(q + 1) != '\0')
		return 0;
	if (n > 0 && (out->v = pr_rep_alloc(rep, n * sizeof(char *))) == NULL)
		return -1;
	for (p = skip_ws(p); out->n < n; p = skip_ws(end_of(p) + 1)) {
		if (*p == ',')
			p = skip_ws(p + 1);
		p++; /* the opening quote */
		if ((out->v[out->n++] = pr_arena_strndup(
		         &rep->arena, p, (size_t)(end_of(p) - p))) == NULL)
			return -1;
	}
	return 1;
}

int
st_strlist_from_json(
    struct pr_rep *rep, const char *json, struct pr_strlist *out)
{
	json_t *arr, *v;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (json == NULL)
		return 0;
	if ((rc = strlist_plain(rep, json, out)) != 0)
		return rc > 0 ? 0 : -1;
	memset(out, 0, sizeof(*out));
	arr = json_loads(json, 0, NULL);
	if (!json_is_array(arr)) {
		json_decref(arr);
		return -1;
	}
	if (json_array_size(arr) > 0) {
		out->v =
		    pr_rep_alloc(rep, json_array_size(arr) * sizeof(char *));
		if (out->v == NULL) {
			json_decref(arr);
			return -1;
		}
	}
	json_array_foreach(arr, i, v)
	{
		if (json_is_string(v))
			out->v[out->n++] =
			    pr_rep_strdup(rep, json_string_value(v));
	}
	json_decref(arr);
	return 0;
}
