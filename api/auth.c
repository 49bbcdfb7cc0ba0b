/*
 * auth.c: the one authentication path.  A bearer token is hashed
 * (SHA-256) and resolved by the store; only the hash ever leaves this
 * function.
 */
#include <string.h>
#include <strings.h>

#include "api.h"
#include "token.h"

bool
api_authenticate(struct api_ctx *c)
{
	const char *h = c->req->authorization;
	char hash[CM_TOKEN_HASH_LEN];
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
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_AUTH_RESOLVE;
	q.token_hash = hash;
	if (!api_call(c, &q, &c->auth))
		return false;
	if (c->auth.err != CM_OK) {
		api_fail(c, 0, CM_E_UNAUTHENTICATED, "the token is not valid");
		return false;
	}
	api_identity_from_reply(&c->auth, &c->id);
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
