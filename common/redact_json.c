/*
 * redact_json.c: redaction of JSON values and results (redact.h):
 * strings through the text redactor of redact.c, secret-named members
 * replaced whole, keys renamed, numbers that hold a literal secret
 * replaced, depth bounded; and the bounded serialisation a result leaves
 * through (cm_bound_json), which a text that is not JSON becomes a
 * redacted JSON string of.
 *
 * JSON: besides secret-named members, a {"name": "Cookie", "value": ...}
 * entry loses its value, a number that contains a literal secret becomes
 * "[REDACTED]", and keys are redacted like any text (a renamed member
 * moves to the end of its object).
 */
#include "redact.h"
#include "redact_int.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define RD_TRUNCATED "{\"truncated\":true,\"reason\":\"result_too_large\"}"
/* A result text bigger than this is not even offered to the parser. */
#define RD_PARSE_MAX ((size_t)CM_RESULT_MAX * 4)

/* JSON member names whose whole value is replaced: suffixes as redact.c's
 * rd_text_keys plus names that are secret only as a whole word. */
static const char *const rd_json_suffix[] = {"token", "password", "passwd",
    "secret", "apikey", "cookie", "authorization", "credentials", NULL};
static const char *const rd_json_exact[] = {
    "endpoint", "profile", "profilepath", NULL};

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs,
 * surrogates or code points past U+10FFFF), or 0. */
static size_t
rd_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char b = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	if (b < 0x80)
		return 1;
	if (b >= 0xc2 && b <= 0xdf)
		need = 1;
	else if (b >= 0xe0 && b <= 0xef)
		need = 2;
	else if (b >= 0xf0 && b <= 0xf4)
		need = 3;
	else
		return 0;
	if (b == 0xe0)
		lo = 0xa0;
	else if (b == 0xed)
		hi = 0x9f;
	else if (b == 0xf0)
		lo = 0x90;
	else if (b == 0xf4)
		hi = 0x8f;
	if (need >= n)
		return 0;
	for (size_t k = 1; k <= need; k++) {
		if (s[k] < lo || s[k] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

/* Replaces every byte that is not part of well-formed UTF-8, and NUL, with
 * '?', so that jansson accepts the text as a string and readers that stop
 * at NUL see all of it. */
static void
rd_utf8_fix(char *t, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k =
		    t[i] == '\0'
		        ? 0
		        : rd_utf8_seq((const unsigned char *)t + i, n - i);
		if (k == 0)
			t[i++] = '?';
		else
			i += k;
	}
}

/* Redacts a string value in place; 0, or -1 on allocation failure. */
static int
rd_string(json_t *v, const struct rd_ctx *c)
{
	size_t len = json_string_length(v), outlen;
	char *out = cm_rd_text(c, json_string_value(v), len, &outlen);
	int rc = 0;

	if (out == NULL)
		return -1;
	if (outlen != len || memcmp(out, json_string_value(v), len) != 0) {
		/* A secret that is not itself UTF-8 can cut a character. */
		rd_utf8_fix(out, outlen);
		rc = json_string_setn(v, out, outlen);
	}
	free(out);
	return rc;
}

static bool
rd_number_has_secret(const json_t *v, const struct rd_ctx *c)
{
	char buf[64];

	if (c->n == 0)
		return false;
	if (json_is_integer(v))
		snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
	else
		snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
	for (size_t k = 0; k < c->n; k++)
		if (c->sec[k].len <= strlen(buf) &&
		    strstr(buf, c->sec[k].lit) != NULL)
			return true;
	return false;
}

static bool
rd_key_is_secret(const char *key, size_t len)
{
	char tail[RD_KEY_TAIL];
	bool whole;
	size_t n = cm_rd_key_tail(key, len, tail, &whole);

	for (size_t k = 0; rd_json_suffix[k] != NULL; k++)
		if (cm_rd_tail_is(tail, n, rd_json_suffix[k]))
			return true;
	for (size_t k = 0; whole && rd_json_exact[k] != NULL; k++)
		if (strlen(rd_json_exact[k]) == n &&
		    cm_rd_tail_is(tail, n, rd_json_exact[k]))
			return true;
	return false;
}

static int rd_walk(json_t *v, const struct rd_ctx *c, size_t depth);

/* Whether child of a container at depth is replaced whole: a number that
 * holds a literal secret, or anything nested deeper than CM_JSON_DEPTH_MAX
 * (values built in-process are not depth-checked by a parser). */
static bool
rd_replace_child(json_t *child, const struct rd_ctx *c, size_t depth)
{
	if (json_is_number(child))
		return rd_number_has_secret(child, c);
	return (json_is_object(child) || json_is_array(child)) &&
	       depth + 1 > CM_JSON_DEPTH_MAX;
}

/*
 * Keys can carry secrets too (a URL with userinfo as a key, a literal
 * token).  Such members are renamed to their redacted key: all of them are
 * removed before any is re-added, so a renamed key never overwrites another
 * member, and one that collides gets "#2", "#3", ... appended.  Renamed
 * members move to the end.  Cost: one redaction per key.
 */
static int
rd_rename_keys(json_t *obj, const struct rd_ctx *c)
{
	json_t *renamed = NULL; /* [[new key, value, old key], ...] */
	size_t suffix = 2;
	int rc = -1;

	for (void *it = json_object_iter(obj); it != NULL;
	     it = json_object_iter_next(obj, it)) {
		const char *key = json_object_iter_key(it);
		size_t klen = json_object_iter_key_len(it), outlen;
		char *out = cm_rd_text(c, key, klen, &outlen);
		json_t *row;
		if (out == NULL)
			goto out;
		if (outlen == klen && memcmp(out, key, klen) == 0) {
			free(out);
			continue;
		}
		rd_utf8_fix(out, outlen);
		row = json_pack("[s%Os%]", out, outlen,
		    json_object_iter_value(it), key, klen);
		free(out);
		if (renamed == NULL)
			renamed = json_array();
		if (json_array_append_new(renamed, row) < 0)
			goto out; /* it took row, or row was NULL */
	}
	for (size_t k = 0; k < json_array_size(renamed); k++) {
		json_t *old = json_array_get(json_array_get(renamed, k), 2);
		json_object_deln(
		    obj, json_string_value(old), json_string_length(old));
	}
	for (size_t k = 0; k < json_array_size(renamed); k++) {
		json_t *row = json_array_get(renamed, k);
		const char *base = json_string_value(json_array_get(row, 0));
		size_t blen = json_string_length(json_array_get(row, 0));
		size_t nlen = blen;
		char *name = malloc(blen + 32);
		if (name == NULL)
			goto out;
		memcpy(name, base, blen);
		while (json_object_getn(obj, name, nlen) != NULL)
			nlen = blen + (size_t)snprintf(
			                  name + blen, 32, "#%zu", suffix++);
		int set =
		    json_object_setn(obj, name, nlen, json_array_get(row, 1));
		free(name);
		if (set < 0)
			goto out;
	}
	rc = 0;
out:
	json_decref(renamed);
	return rc;
}

static int
rd_walk(json_t *v, const struct rd_ctx *c, size_t depth)
{
	if (json_is_string(v))
		return rd_string(v, c);
	if (json_is_array(v)) {
		for (size_t k = 0; k < json_array_size(v); k++) {
			json_t *child = json_array_get(v, k);
			if (rd_replace_child(child, c, depth)) {
				if (json_array_set_new(
				        v, k, json_string(CM_REDACTED)) < 0)
					return -1;
			} else if (rd_walk(child, c, depth + 1) < 0) {
				return -1;
			}
		}
		return 0;
	}
	if (!json_is_object(v))
		return 0;
	/* {"name": "Cookie", "value": "..."} (HAR, CDP header lists) names
	 * the secret in a value instead of a key. */
	const json_t *name = json_object_get(v, "name");
	bool named =
	    json_is_string(name) &&
	    rd_key_is_secret(json_string_value(name), json_string_length(name));
	for (void *it = json_object_iter(v); it != NULL;
	     it = json_object_iter_next(v, it)) {
		json_t *child = json_object_iter_value(it);
		const char *key = json_object_iter_key(it);
		size_t klen = json_object_iter_key_len(it);
		if (rd_key_is_secret(key, klen) ||
		    (named && klen == 5 && memcmp(key, "value", 5) == 0) ||
		    rd_replace_child(child, c, depth)) {
			/* Replacing a value in place keeps the iterator. */
			if (json_object_iter_set_new(
			        v, it, json_string(CM_REDACTED)) < 0)
				return -1;
		} else if (rd_walk(child, c, depth + 1) < 0) {
			return -1;
		}
	}
	return rd_rename_keys(v, c);
}

int
cm_redact_json(json_t *v, const struct cm_secrets *s)
{
	struct rd_ctx c;
	int rc;

	if (v == NULL)
		return -1;
	if (cm_rd_ctx_init(&c, s) < 0)
		return -1;
	rc = rd_walk(v, &c, 1);
	cm_rd_ctx_fini(&c);
	return rc;
}

struct rd_buf {
	char *p;
	size_t n, cap, max;
	bool over;
};

/* Aborts the dump as soon as it passes max, so a huge value costs at most
 * max bytes of memory, not its whole serialization. */
static int
rd_dump_cb(const char *buf, size_t size, void *data)
{
	struct rd_buf *b = data;

	if (size > b->max - b->n) {
		b->over = true;
		return -1;
	}
	if (b->n + size + 1 > b->cap) {
		size_t cap = b->cap == 0 ? 256 : b->cap;
		while (cap < b->n + size + 1)
			cap *= 2;
		if (cap > b->max + 1)
			cap = b->max + 1;
		char *p = realloc(b->p, cap);
		if (p == NULL)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, buf, size);
	b->n += size;
	return 0;
}

char *
cm_bound_json(const json_t *v, size_t max)
{
	/* Keeps max + 1 (room for the NUL) from wrapping. */
	struct rd_buf b = {
	    NULL, 0, 0, max < SIZE_MAX / 4 ? max : SIZE_MAX / 4, false};

	if (v == NULL)
		return strdup("null");
	if (json_dump_callback(
	        v, rd_dump_cb, &b, JSON_COMPACT | JSON_ENCODE_ANY) != 0) {
		free(b.p);
		return b.over ? strdup(RD_TRUNCATED) : NULL;
	}
	if (b.p == NULL)
		return strdup("");
	b.p[b.n] = '\0';
	return b.p;
}

char *
cm_redact_result(const char *json_text, size_t len, const struct cm_secrets *s)
{
	struct rd_ctx c;
	json_t *v = NULL;
	char err[128], *out = NULL;

	if (json_text == NULL)
		len = 0;
	if (cm_rd_ctx_init(&c, s) < 0)
		return NULL;
	if (len > 0 && len <= RD_PARSE_MAX &&
	    cm_json_parse(json_text, len, RD_PARSE_MAX, CM_JSON_DEPTH_MAX, &v,
	        err, sizeof err) == 0) {
		if (rd_walk(v, &c, 1) < 0)
			goto out;
	} else {
		/* Not JSON (or too big to parse): keep it, redacted, as a
		 * JSON string; the bound below still applies. */
		size_t tlen;
		char *t = cm_rd_text(
		    &c, json_text == NULL ? "" : json_text, len, &tlen);
		if (t == NULL)
			goto out;
		rd_utf8_fix(t, tlen);
		v = json_stringn(t, tlen);
		free(t);
		if (v == NULL)
			goto out;
	}
	out = cm_bound_json(v, CM_RESULT_MAX);
out:
	json_decref(v);
	cm_rd_ctx_fini(&c);
	return out;
}
