#include "token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>

#include "ids.h"

#define TOKEN_PREFIX_LEN (sizeof(CM_TOKEN_PREFIX) - 1)
/* Unpadded base64 of n bytes: 4 characters per 3 bytes, rounded up. */
#define TOKEN_B64_LEN ((CM_TOKEN_RANDOM * 4 + 2) / 3)

_Static_assert(TOKEN_PREFIX_LEN + TOKEN_B64_LEN + 1 == CM_TOKEN_LEN,
    "CM_TOKEN_LEN does not match CM_TOKEN_RANDOM");
_Static_assert(CM_TOKEN_RANDOM % 3 == 2,
    "cm_token_valid expects 2 spare bits in the last character");
_Static_assert(CM_TOKEN_LEN - 1 <= CM_TOKEN_MAX,
    "a new token must be one that cm_token_hash accepts");

static const char token_b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* RFC 4648 section 5 without padding; out holds (n * 4 + 2) / 3 bytes. */
static void
token_b64url_encode(const unsigned char *in, size_t n, char *out)
{
	size_t o = 0, i = 0;

	for (; i + 3 <= n; i += 3) {
		unsigned long v = (unsigned long)in[i] << 16 |
		                  (unsigned long)in[i + 1] << 8 | in[i + 2];

		out[o++] = token_b64url[(v >> 18) & 63];
		out[o++] = token_b64url[(v >> 12) & 63];
		out[o++] = token_b64url[(v >> 6) & 63];
		out[o++] = token_b64url[v & 63];
	}
	if (n - i == 1) {
		unsigned long v = (unsigned long)in[i] << 16;

		out[o++] = token_b64url[(v >> 18) & 63];
		out[o++] = token_b64url[(v >> 12) & 63];
	} else if (n - i == 2) {
		unsigned long v =
		    (unsigned long)in[i] << 16 | (unsigned long)in[i + 1] << 8;

		out[o++] = token_b64url[(v >> 18) & 63];
		out[o++] = token_b64url[(v >> 12) & 63];
		out[o++] = token_b64url[(v >> 6) & 63];
	}
}

void
cm_token_new(char out[CM_TOKEN_LEN])
{
	unsigned char raw[CM_TOKEN_RANDOM];

	cm_random_bytes(raw, sizeof(raw));
	memcpy(out, CM_TOKEN_PREFIX, TOKEN_PREFIX_LEN);
	token_b64url_encode(raw, sizeof(raw), out + TOKEN_PREFIX_LEN);
	out[CM_TOKEN_LEN - 1] = '\0';
	/* The secret leaves this frame only through out. */
	OPENSSL_cleanse(raw, sizeof(raw));
}

int
cm_token_hash(const char *token, size_t len, char out[CM_TOKEN_HASH_LEN])
{
	out[0] = '\0';
	if (token == NULL || len == 0 || len > CM_TOKEN_MAX)
		return -1;
	return cm_sha256_hex(token, len, out);
}

int
cm_sha256_hex(const void *buf, size_t len, char out[CM_TOKEN_HASH_LEN])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int md_len = 0;

	out[0] = '\0';
	if (EVP_Digest(buf, len, md, &md_len, EVP_sha256(), NULL) != 1 ||
	    md_len * 2 + 1 != CM_TOKEN_HASH_LEN)
		return -1;
	for (unsigned int i = 0; i < md_len; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[2 * md_len] = '\0';
	return 0;
}

bool
cm_token_valid(const char *s, size_t len)
{
	if (s == NULL || len != CM_TOKEN_LEN - 1 ||
	    memcmp(s, CM_TOKEN_PREFIX, TOKEN_PREFIX_LEN) != 0)
		return false;
	for (size_t i = TOKEN_PREFIX_LEN; i < len; i++)
		if (s[i] == '\0' || strchr(token_b64url, s[i]) == NULL)
			return false;
	/* 43 characters carry 258 bits for 256: the 2 spare bits are 0. */
	return (strchr(token_b64url, s[len - 1]) - token_b64url) % 4 == 0;
}
