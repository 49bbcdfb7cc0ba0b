#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "token.h"

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static void
assert_hash(const char *in, size_t len, const char *want)
{
	char out[CM_TOKEN_HASH_LEN];

	cr_assert_eq(cm_token_hash(in, len, out), 0);
	cr_assert_str_eq(out, want);
}

/* FIPS 180-2 examples and values from sha256sum. */
Test(token, hash_known_vectors)
{
	assert_hash("abc", 3,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_hash("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
	    56,
	    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	assert_hash("a", 1,
	    "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb");
	/* The length is what counts, not a NUL: "ab" of "abc". */
	assert_hash("abc", 2,
	    "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603");
}

Test(token, hash_is_lowercase_hex_of_fixed_length)
{
	char out[CM_TOKEN_HASH_LEN];

	cr_assert_eq(cm_token_hash("spd_x", 5, out), 0);
	cr_assert_eq(strlen(out), CM_TOKEN_HASH_LEN - 1);
	cr_assert_eq(strspn(out, "0123456789abcdef"), CM_TOKEN_HASH_LEN - 1);
}

Test(token, hash_bounds)
{
	char big[CM_TOKEN_MAX + 2];
	char out[CM_TOKEN_HASH_LEN], again[CM_TOKEN_HASH_LEN];

	memset(big, 'x', sizeof(big));
	big[CM_TOKEN_MAX + 1] = '\0';
	cr_assert_eq(cm_token_hash("abc", 0, out), -1);
	cr_assert_str_empty(out);
	cr_assert_eq(cm_token_hash(NULL, 3, out), -1);
	cr_assert_eq(cm_token_hash(big, CM_TOKEN_MAX + 1, out), -1);
	cr_assert_str_empty(out);
	cr_assert_eq(cm_token_hash(big, CM_TOKEN_MAX, out), 0);
	cr_assert_str_eq(out, /* 256 times "x" */
	    "85e62acd750c4eb56b7b6a1d66dca5bfaac5f062608a1a893410d0288936c09a");
	cr_assert_eq(cm_token_hash(big, 1, again), 0);
	/* "x": one byte is hashed, not the buffer. */
	cr_assert_str_eq(again,
	    "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881");
	cr_assert_str_neq(out, again);
}

Test(token, new_token_shape)
{
	char t[CM_TOKEN_LEN];

	for (int i = 0; i < 200; i++) {
		memset(t, '!', sizeof(t));
		cm_token_new(t);
		cr_assert_eq(strlen(t), CM_TOKEN_LEN - 1);
		cr_assert_eq(strlen(t), 4 + 43);
		cr_assert_eq(strncmp(t, "spd_", 4), 0);
		cr_assert_eq(strspn(t + 4, b64url), 43, "%s", t);
		cr_assert(cm_token_valid(t, strlen(t)));
	}
}

Test(token, new_tokens_are_unique_and_hash_stably)
{
	enum { N = 1000 };
	static char tokens[N][CM_TOKEN_LEN];
	static char hashes[N][CM_TOKEN_HASH_LEN];
	char again[CM_TOKEN_HASH_LEN];

	for (int i = 0; i < N; i++) {
		cm_token_new(tokens[i]);
		cr_assert_eq(
		    cm_token_hash(tokens[i], strlen(tokens[i]), hashes[i]), 0);
		cr_assert_eq(
		    cm_token_hash(tokens[i], strlen(tokens[i]), again), 0);
		cr_assert_str_eq(hashes[i], again);
	}
	for (int i = 0; i < N; i++) {
		for (int j = i + 1; j < N; j++) {
			cr_assert_str_neq(tokens[i], tokens[j]);
			cr_assert_str_neq(hashes[i], hashes[j]);
		}
	}
}

/* The random part decodes back to 32 bytes: every bit of the token is
 * random but the 2 spare bits of the last character. */
Test(token, new_tokens_use_the_whole_alphabet)
{
	bool seen[64] = {false};
	int distinct = 0;
	char t[CM_TOKEN_LEN];

	for (int i = 0; i < 500; i++) {
		cm_token_new(t);
		for (size_t k = 4; k < CM_TOKEN_LEN - 2; k++)
			seen[strchr(b64url, t[k]) - b64url] = true;
		cr_assert_eq((strchr(b64url, t[CM_TOKEN_LEN - 2]) - b64url) % 4,
		    0, "spare bits set in %s", t);
	}
	for (int i = 0; i < 64; i++)
		distinct += seen[i];
	cr_assert_eq(distinct, 64);
}

Test(token, valid_rejects_other_shapes)
{
	char t[CM_TOKEN_LEN], bad[CM_TOKEN_LEN];

	cm_token_new(t);
	cr_assert(cm_token_valid(t, strlen(t)));
	cr_assert_not(cm_token_valid(t, strlen(t) - 1));
	cr_assert_not(cm_token_valid(NULL, 0));
	cr_assert_not(cm_token_valid("", 0));
	memcpy(bad, t, sizeof(bad));
	bad[0] = 'x'; /* prefix */
	cr_assert_not(cm_token_valid(bad, strlen(bad)));
	memcpy(bad, t, sizeof(bad));
	bad[10] = '+'; /* base64, not base64url */
	cr_assert_not(cm_token_valid(bad, strlen(bad)));
	memcpy(bad, t, sizeof(bad));
	bad[10] = '\0'; /* a NUL inside */
	cr_assert_not(cm_token_valid(bad, CM_TOKEN_LEN - 1));
	memcpy(bad, t, sizeof(bad));
	bad[CM_TOKEN_LEN - 2] = 'B'; /* a spare bit set */
	cr_assert_not(cm_token_valid(bad, strlen(bad)));
	memcpy(bad, t, sizeof(bad));
	bad[CM_TOKEN_LEN - 2] = 'E';
	cr_assert(cm_token_valid(bad, strlen(bad)));
}
