/*
 * bundles.h: parsed runtime bundles, cached by id for the capability
 * checks of creates and submits.  Internal to the store.
 */
#ifndef ST_BUNDLES_H
#define ST_BUNDLES_H

#include "capability.h"

struct st_ctx;
struct st_bundles;

/* An empty cache, or NULL out of memory. */
struct st_bundles *st_bundles_new(void);
/* Frees the cache and every bundle in it; NULL is ignored. */
void st_bundles_free(struct st_bundles *b);
/*
 * The bundle bundle_id, parsed from its stored manifest the first time
 * (bundles are immutable, so a parsed copy stays valid), owned by
 * ctx->bundles and valid until the next call.  NULL when there is no such
 * bundle, the read fails or its manifest does not parse (logged).
 */
const struct cm_bundle *st_bundle_get(
    struct st_ctx *ctx, const char *bundle_id);

#endif
