/*
 * token.h: API bearer tokens, a principal's credential (docs/security.md).
 *
 * A token is "spd_" followed by CM_TOKEN_RANDOM bytes from getrandom(2)
 * in unpadded base64url.  Only its SHA-256, in lowercase hex, is ever
 * stored; the token itself is shown once, to whoever asked for it, and
 * never logged.
 */
#ifndef CM_TOKEN_H
#define CM_TOKEN_H

#include <stdbool.h>
#include <stddef.h>

#include "limits.h"

#define CM_TOKEN_PREFIX "spd_"

/* Writes a new NUL-terminated token of CM_TOKEN_LEN - 1 characters. */
void cm_token_new(char out[CM_TOKEN_LEN]);

/*
 * Writes the lowercase hex SHA-256 of the len bytes at token (any bytes;
 * the token need not be one cm_token_new made) and a NUL into out.
 * Returns 0, or -1 when len is 0 or above CM_TOKEN_MAX, or when libcrypto
 * fails (out is then an empty string).
 */
int cm_token_hash(const char *token, size_t len, char out[CM_TOKEN_HASH_LEN]);

/*
 * Writes the lowercase hex SHA-256 of the len bytes at buf (any length,
 * 0 included) and a NUL into out.  Returns 0, or -1 when libcrypto fails
 * (out is then an empty string).  cm_token_hash is this, for a token.
 */
int cm_sha256_hex(const void *buf, size_t len, char out[CM_TOKEN_HASH_LEN]);

/* True when the len bytes at s have the shape cm_token_new produces. */
bool cm_token_valid(const char *s, size_t len);

#endif
