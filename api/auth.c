/*
 * auth.c: the one authentication path.  A bearer token is hashed
 * (SHA-256) and resolved by the store; only the hash ever leaves this
 * function.
 *
 * Resolutions are cached for at most CM_AUTH_CACHE_TTL_MS, never past
 * the token's own expiry, and the whole cache is dropped when this
 * process changes any principal, token or membership (router.c), so a
 * revocation made here takes effect at once; one made through another
 * api process (or straight in the store) within the second.
 *
 * Only SHA-256 hashes are ever compared, never the token: the store
 * finds the row by the hash, and the cache compares hashes in constant
 * time (CRYPTO_memcmp), so how long a refusal takes says nothing of how
 * close a guess came.
 */
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api.h"
#include "clock.h"
#include "token.h"

#define AUTH_CACHE_SLOTS 256 /* direct-mapped by the hash's first bytes */

static struct {
	pthread_mutex_t lock;
	uint64_t generation;
	struct {
		char hash[CM_TOKEN_HASH_LEN];
		uint64_t generation;
		int64_t until_ms; /* monotonic */
		char *reply;      /* the encoded auth.resolve reply */
		size_t len;
	} slot[AUTH_CACHE_SLOTS];
} cache = {.lock = PTHREAD_MUTEX_INITIALIZER, .generation = 1};

static size_t
slot_of(const char *hash)
{
	return (size_t)strtoul((char[]){hash[0], hash[1], '\0'}, NULL, 16) %
	       AUTH_CACHE_SLOTS;
}

void
api_auth_cache_clear(void)
{
	pthread_mutex_lock(&cache.lock);
	cache.generation++;
	pthread_mutex_unlock(&cache.lock);
}

/* A fresh cached reply decoded into *rep; false on a miss. */
static bool
cache_get(const char *hash, struct pr_rep *rep)
{
	size_t i = slot_of(hash);
	bool hit = false;
	char err[64];

	pthread_mutex_lock(&cache.lock);
	if (cache.slot[i].reply != NULL &&
	    cache.slot[i].generation == cache.generation &&
	    cache.slot[i].until_ms > cm_mono_ms() &&
	    CRYPTO_memcmp(cache.slot[i].hash, hash, CM_TOKEN_HASH_LEN) == 0)
		hit = pr_rep_decode(cache.slot[i].reply, cache.slot[i].len, rep,
		          err, sizeof(err)) == 0;
	pthread_mutex_unlock(&cache.lock);
	return hit;
}

static void
cache_put(const char *hash, const struct pr_rep *rep, uint64_t generation)
{
	int64_t ttl = CM_AUTH_CACHE_TTL_MS;
	size_t i = slot_of(hash), len;
	char *buf;

	if (rep->n_tokens == 1 && rep->tokens[0].expires_at > 0 &&
	    rep->tokens[0].expires_at - cm_now_ms() < ttl)
		ttl = rep->tokens[0].expires_at - cm_now_ms();
	if (ttl <= 0 || pr_rep_encode(rep, &buf, &len) != 0)
		return;
	pthread_mutex_lock(&cache.lock);
	/* A change made while the store was asked makes this answer stale. */
	if (generation == cache.generation) {
		free(cache.slot[i].reply);
		memcpy(cache.slot[i].hash, hash, CM_TOKEN_HASH_LEN);
		cache.slot[i].generation = generation;
		cache.slot[i].until_ms = cm_mono_ms() + ttl;
		cache.slot[i].reply = buf;
		cache.slot[i].len = len;
		buf = NULL;
	}
	pthread_mutex_unlock(&cache.lock);
	free(buf);
}

bool
api_authenticate(struct api_ctx *c)
{
	const char *h = c->req->authorization;
	char hash[CM_TOKEN_HASH_LEN];
	uint64_t generation;
	struct pr_req q;

	memset(&c->auth, 0, sizeof(c->auth));
	memset(&c->id, 0, sizeof(c->id));
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0) {
		api_fail(
		    c, 0, CM_E_UNAUTHENTICATED, "a bearer token is required");
		return false;
	}
	h += 7;
	while (*h == ' ')
		h++;
	if (cm_token_hash(h, strlen(h), hash) != 0) {
		api_fail(c, 0, CM_E_UNAUTHENTICATED, "the token is not valid");
		return false;
	}
	if (!cache_get(hash, &c->auth)) {
		pthread_mutex_lock(&cache.lock);
		generation = cache.generation;
		pthread_mutex_unlock(&cache.lock);
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_AUTH_RESOLVE;
		q.token_hash = hash;
		if (!api_call(c, &q, &c->auth))
			return false;
		if (c->auth.err == CM_OK)
			cache_put(hash, &c->auth, generation);
	}
	if (c->auth.err != CM_OK) {
		api_fail(c, 0, CM_E_UNAUTHENTICATED, "the token is not valid");
		return false;
	}
	cm_identity_from_reply(&c->auth, &c->id);
	if (c->id.principal == NULL) {
		api_fail(c, 0, CM_E_UNAUTHENTICATED, "the token is not valid");
		return false;
	}
	return true;
}

void
api_auth_release(struct api_ctx *c)
{
	pr_rep_free(&c->auth);
	memset(&c->id, 0, sizeof(c->id));
}

/*
 * GET /api/v1/me: the caller as its token resolved, and the workspaces it
 * is a member of, so that a console can name the owner of a Space it
 * creates and offer the caller's workspaces.  Nothing here is more than
 * the caller already is; a disabled principal is refused as every route
 * refuses it.
 */
void
api_me_get(struct api_ctx *c)
{
	const struct pr_principal *p = c->id.principal;
	json_t *ws = json_array(), *me;

	if (p->disabled) {
		json_decref(ws);
		api_fail(c, 0, CM_E_UNAUTHENTICATED, "the token is not valid");
		return;
	}
	for (size_t i = 0; ws != NULL && i < c->id.n_memberships; i++)
		if (strcmp(c->id.memberships[i].principal_id,
		        p->principal_id) == 0)
			json_array_append_new(
			    ws, api_dto_membership(&c->id.memberships[i]));
	me = api_dto_principal(p);
	if (me == NULL || ws == NULL ||
	    json_object_set_new(me, "memberships", ws) != 0) {
		json_decref(me);
		api_fail(c, 500, CM_E_INTERNAL, "out of memory");
		return;
	}
	api_ok(c, 200, me);
}
