/*
 * bundles.c: parsed runtime bundles, cached by id (bundles.h).
 */
#include "bundles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "ops.h"

/* Bundles never change once created, so a parsed copy stays valid. */
#define ST_BUNDLE_CACHE 32

struct st_bundles {
	size_t n;
	struct {
		char id[CM_ID_MAX + 1];
		struct cm_bundle *b;
	} e[ST_BUNDLE_CACHE];
};

struct st_bundles *
st_bundles_new(void)
{
	return calloc(1, sizeof(struct st_bundles));
}

void
st_bundles_free(struct st_bundles *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++)
		cm_bundle_free(c->e[i].b);
	free(c);
}

const struct cm_bundle *
st_bundle_get(struct st_ctx *ctx, const char *bundle_id)
{
	static const char sql[] =
	    "SELECT manifest FROM runtime_bundles WHERE id = $1";
	struct st_bundles *c = ctx->bundles;
	struct cm_bundle *b = NULL;
	struct st_stmt *s;
	char err[256];
	const char *m;

	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->e[i].id, bundle_id) == 0)
			return c->e[i].b;
	if (st_db_query(ctx->db, &s, sql, "s", bundle_id) != ST_OK)
		return NULL;
	if (st_stmt_step(s) == ST_ROW && (m = st_col_text(s, 0)) != NULL &&
	    cm_bundle_parse(m, strlen(m), &b, err, sizeof(err)) != 0) {
		cm_warnx("store: stored bundle %s does not parse: %s",
		    bundle_id, err);
		b = NULL;
	}
	st_stmt_done(s);
	if (b == NULL)
		return NULL;
	if (c->n == ST_BUNDLE_CACHE) {
		/* Rare: more live bundles than slots.  Start over. */
		for (size_t i = 0; i < c->n; i++)
			cm_bundle_free(c->e[i].b);
		c->n = 0;
	}
	snprintf(c->e[c->n].id, sizeof(c->e[c->n].id), "%s", bundle_id);
	c->e[c->n].b = b;
	c->n++;
	return b;
}
