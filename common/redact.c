/*
 * redact.c: the one redactor (redact.h says what it replaces).
 *
 * Text is redacted in two steps.  Detectors (literal secrets, key=value
 * pairs, Authorization/Cookie headers, Bearer credentials, URL userinfo,
 * DevTools URLs) only set bytes in a mask over the input; the emitter then
 * writes each maximal run of marked bytes as one "[REDACTED]".  Detectors
 * never see each other's output, so two overlapping matches can never leave
 * a fragment of either behind, and their order does not matter.
 *
 * Cost: every detector is linear in the input.  Each one marks spans whose
 * starts only grow, so marking keeps a per-detector frontier and touches a
 * byte once; value ends are found through a one-entry cache per terminator
 * class, so "token=token=token=..." does not rescan the tail each time;
 * literal secrets are found with KMP (overlapping matches included) rather
 * than a naive search a hostile page could make quadratic.  Memory is one
 * mask byte per input byte plus the output.  The output is less than 3x
 * the input: the worst case is "://x@" (5 bytes) becoming
 * "://[REDACTED]@" (14); a literal is at least 4 bytes and "token=x" 7.
 *
 * Case: keys and literal secrets match ASCII case-insensitively (a host
 * inside a secret endpoint is often lowercased on its way to an error
 * message); bytes >= 0x80 match exactly.  Supported encodings of a pair's
 * separator: "=", ":", "=>", "%3D", "%3A"; URL-encoded keys
 * ("api%5Fkey") are not recognised.  A key is only a key when a separator
 * follows it, so prose ("the token is valid", "tokenizer") survives; the
 * price is that "Invalid token: expired" loses "expired".
 *
 * JSON: besides secret-named members, a {"name": "Cookie", "value": ...}
 * entry loses its value, a number that contains a literal secret becomes
 * "[REDACTED]", and keys are redacted like any text (a renamed member
 * moves to the end of its object).
 */
#include "redact.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define RD_REDACTED_LEN (sizeof CM_REDACTED - 1)
#define RD_TRUNCATED "{\"truncated\":true,\"reason\":\"result_too_large\"}"
/* A result text bigger than this is not even offered to the parser. */
#define RD_PARSE_MAX ((size_t)CM_RESULT_MAX * 4)
/* Longest normalised key suffix we compare ("authorization" is 13). */
#define RD_KEY_TAIL 16

/* Literal secrets prepared once per public call: lowercased, with a KMP
 * failure table, so walking a JSON value with many strings reuses them. */
struct rd_ctx {
	size_t n;
	struct {
		char *lit;
		size_t len;
		size_t *fail;
	} sec[CM_SECRETS_MAX];
};

enum rd_end { RD_END_VALUE, RD_END_LINE, RD_END_URL, RD_END_N };
enum rd_kind { RD_NONE, RD_VALUE, RD_LINE };

struct rd_scan {
	const char *in;
	size_t len;
	unsigned char *mask;
	size_t pair_hi, bearer_hi, userinfo_hi, devtools_hi; /* frontiers */
	bool end_ok[RD_END_N];
	size_t end_from[RD_END_N], end_to[RD_END_N];
};

/* Text keys whose value is a secret, matched as a suffix of the normalised
 * key (lowercase, no '-' or '_'), so access_token, client_secret, X-API-Key
 * and Set-Cookie need no entry of their own.  LINE keys are headers whose
 * whole value (to end of line) is the credential. */
static const struct {
	const char *suffix;
	enum rd_kind kind;
} rd_text_keys[] = {
    {"token", RD_VALUE},
    {"password", RD_VALUE},
    {"passwd", RD_VALUE},
    {"secret", RD_VALUE},
    {"apikey", RD_VALUE},
    {"bearer", RD_VALUE},
    {"cookie", RD_LINE},
    {"authorization", RD_LINE},
};

/* JSON member names whose whole value is replaced: suffixes as above plus
 * names that are secret only as a whole word. */
static const char *const rd_json_suffix[] = {"token", "password", "passwd",
    "secret", "apikey", "cookie", "authorization", "credentials", NULL};
static const char *const rd_json_exact[] = {
    "endpoint", "profile", "profilepath", NULL};

static char
rd_lower(char ch)
{
	return (ch >= 'A' && ch <= 'Z') ? (char)(ch - 'A' + 'a') : ch;
}

static bool
rd_alnum(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9');
}

static bool
rd_quote(char ch)
{
	return ch == '"' || ch == '\'';
}

static bool
rd_ieq(const char *in, size_t len, size_t at, const char *word)
{
	size_t n = strlen(word);

	if (at > len || len - at < n)
		return false;
	for (size_t k = 0; k < n; k++)
		if (rd_lower(in[at + k]) != word[k])
			return false;
	return true;
}

int
cm_secrets_add(struct cm_secrets *s, const char *lit)
{
	if (s == NULL)
		return -1;
	if (lit == NULL || strlen(lit) < CM_SECRET_MIN)
		return 0;
	if (s->n >= CM_SECRETS_MAX)
		return -1;
	s->lit[s->n++] = lit;
	return 0;
}

static void
rd_ctx_fini(struct rd_ctx *c)
{
	for (size_t k = 0; k < c->n; k++) {
		free(c->sec[k].lit);
		free(c->sec[k].fail);
	}
	c->n = 0;
}

static int
rd_ctx_init(struct rd_ctx *c, const struct cm_secrets *s)
{
	size_t n = s == NULL ? 0 : s->n;

	c->n = 0;
	for (size_t k = 0; k < n && k < CM_SECRETS_MAX; k++) {
		const char *lit = s->lit[k];
		size_t len = lit == NULL ? 0 : strlen(lit);
		if (len < CM_SECRET_MIN)
			continue;
		char *low = malloc(len + 1);
		size_t *fail = malloc(len * sizeof *fail);
		if (low == NULL || fail == NULL) {
			free(low);
			free(fail);
			rd_ctx_fini(c);
			return -1;
		}
		for (size_t i = 0; i < len; i++)
			low[i] = rd_lower(lit[i]);
		low[len] = '\0';
		fail[0] = 0;
		for (size_t i = 1, m = 0; i < len; i++) {
			while (m > 0 && low[i] != low[m])
				m = fail[m - 1];
			if (low[i] == low[m])
				m++;
			fail[i] = m;
		}
		c->sec[c->n].lit = low;
		c->sec[c->n].len = len;
		c->sec[c->n].fail = fail;
		c->n++;
	}
	return 0;
}

/* Marks [from, to).  Spans of one detector start in non-decreasing order,
 * so [from, *hi) is already marked and each byte is written once. */
static void
rd_mark(struct rd_scan *sc, size_t *hi, size_t from, size_t to)
{
	if (from < *hi)
		from = *hi;
	if (to > from)
		memset(sc->mask + from, 1, to - from);
	if (to > *hi)
		*hi = to;
}

static bool
rd_is_end(enum rd_end cls, const char *in, size_t len, size_t i)
{
	char ch = in[i];

	if (ch == '\n' || ch == '\r')
		return true;
	if (cls == RD_END_LINE)
		return false;
	if ((unsigned char)ch <= ' ' || ch == 0x7f || rd_quote(ch) ||
	    ch == '`' || ch == '<' || ch == '>')
		return true;
	/* A backslash before a quote closes an escaped JSON string. */
	if (ch == '\\' && i + 1 < len && rd_quote(in[i + 1]))
		return true;
	return cls == RD_END_VALUE && (ch == '&' || ch == ';' || ch == ',');
}

/* Where the run starting at from ends.  Whether a byte ends a run does not
 * depend on where the run began, so a query inside the last answered range
 * has the same answer. */
static size_t
rd_end(struct rd_scan *sc, enum rd_end cls, size_t from)
{
	size_t i = from;

	if (sc->end_ok[cls] && from >= sc->end_from[cls] &&
	    from <= sc->end_to[cls])
		return sc->end_to[cls];
	while (i < sc->len && !rd_is_end(cls, sc->in, sc->len, i))
		i++;
	sc->end_ok[cls] = true;
	sc->end_from[cls] = from;
	sc->end_to[cls] = i;
	return i;
}

/*
 * End of a quoted value opened by q at v-1 (esc: opened by \q, i.e. a JSON
 * string inside a JSON string).  In esc mode each \x pair is one character
 * of the inner string, so an inner escaped quote (\\\") does not end it.
 */
static size_t
rd_quoted_end(const struct rd_scan *sc, size_t v, char q, bool esc)
{
	bool pending = false;

	for (size_t i = v; i < sc->len;) {
		char ch = sc->in[i];
		size_t step = 1;
		if (ch == '\n' || ch == '\r')
			return i;
		if (esc && ch == '"')
			return i; /* the outer string ends */
		if (esc && ch == '\\' && i + 1 < sc->len) {
			ch = sc->in[i + 1];
			step = 2;
		}
		if (pending)
			pending = false;
		else if (ch == '\\')
			pending = true;
		else if (ch == q)
			return i;
		i += step;
	}
	return sc->len;
}

/* Normalises the identifier ending just before end into the last
 * RD_KEY_TAIL bytes of tail; returns how many it wrote.  *whole tells
 * whether that is the entire identifier. */
static size_t
rd_key_tail(const char *s, size_t end, char tail[RD_KEY_TAIL], bool *whole)
{
	size_t n = 0, i = end;

	while (i > 0) {
		char ch = s[i - 1];
		if (ch != '-' && ch != '_') {
			if (!rd_alnum(ch) || n == RD_KEY_TAIL)
				break;
			tail[RD_KEY_TAIL - 1 - n++] = rd_lower(ch);
		}
		i--;
	}
	*whole = i == 0;
	return n;
}

static bool
rd_tail_is(const char tail[RD_KEY_TAIL], size_t n, const char *word)
{
	size_t w = strlen(word);

	return w <= n && memcmp(tail + RD_KEY_TAIL - w, word, w) == 0;
}

/* A key=value pair whose separator (seplen bytes) starts at i. */
static void
rd_pair(struct rd_scan *sc, size_t i, size_t seplen)
{
	const char *in = sc->in;
	char tail[RD_KEY_TAIL];
	enum rd_kind kind = RD_NONE;
	size_t j = i, v = i + seplen, end;
	bool whole, key_quoted = false, esc = false;
	char q = 0;

	while (j > 0 && (in[j - 1] == ' ' || in[j - 1] == '\t' ||
	                    rd_quote(in[j - 1]) || in[j - 1] == '\\')) {
		key_quoted = key_quoted || rd_quote(in[j - 1]);
		j--;
	}
	size_t n = rd_key_tail(in, j, tail, &whole);
	for (size_t k = 0; k < sizeof rd_text_keys / sizeof *rd_text_keys; k++)
		if (rd_tail_is(tail, n, rd_text_keys[k].suffix))
			kind = rd_text_keys[k].kind;
	if (kind == RD_NONE)
		return;
	if (seplen == 1 && in[i] == '=' && v < sc->len && in[v] == '>')
		v++;
	while (v < sc->len && (in[v] == ' ' || in[v] == '\t'))
		v++;
	if (v < sc->len && rd_quote(in[v])) {
		q = in[v++];
	} else if (v + 1 < sc->len && in[v] == '\\' && rd_quote(in[v + 1])) {
		q = in[v + 1];
		v += 2;
		esc = true;
	}
	/* A header (Cookie: a="b c"; d=e) is credential to the end of the
	 * line even when its value starts with a quote; only a quoted key
	 * ("Cookie": "...") makes it a JSON-like quoted value. */
	if (q != 0 && (kind == RD_VALUE || key_quoted))
		end = rd_quoted_end(sc, v, q, esc);
	else if (kind == RD_LINE ||
	         (v < sc->len && (in[v] == '[' || in[v] == '{') &&
	             !rd_ieq(in, sc->len, v, "[redacted]")))
		/* A structured value ([..] or {..}) is taken to the end of
		 * the line rather than parsed: crude, but linear. */
		end = rd_end(sc, RD_END_LINE, v);
	else
		end = rd_end(sc, RD_END_VALUE, v);
	rd_mark(sc, &sc->pair_hi, v, end);
}

/* "Bearer" as a word, then blanks (or %20 / +), then the credential. */
static void
rd_bearer(struct rd_scan *sc, size_t i)
{
	size_t v = i + 6, gap = 0, end;

	if ((i > 0 && rd_alnum(sc->in[i - 1])) ||
	    !rd_ieq(sc->in, sc->len, i, "bearer"))
		return;
	for (;;) {
		if (v < sc->len &&
		    (sc->in[v] == ' ' || sc->in[v] == '\t' || sc->in[v] == '+'))
			v++;
		else if (rd_ieq(sc->in, sc->len, v, "%20"))
			v += 3;
		else
			break;
		gap++;
	}
	if (gap == 0)
		return;
	if (v < sc->len && rd_quote(sc->in[v])) {
		v++;
		end = rd_quoted_end(sc, v, sc->in[v - 1], false);
	} else {
		end = rd_end(sc, RD_END_VALUE, v);
	}
	rd_mark(sc, &sc->bearer_hi, v, end);
}

/* Userinfo of an authority starting at a: up to the last '@' before the
 * path, query or fragment (a password may itself contain '@'). */
static void
rd_userinfo(struct rd_scan *sc, size_t a)
{
	size_t at = a, i;

	for (i = a; i < sc->len; i++) {
		char ch = sc->in[i];
		if (ch == '/' || ch == '?' || ch == '#' || ch == '\\' ||
		    rd_is_end(RD_END_URL, sc->in, sc->len, i))
			break;
		if (ch == '@')
			at = i;
	}
	rd_mark(sc, &sc->userinfo_hi, a, at);
}

/* A DevTools URL: the whole URL-ish token around "/devtools/", whatever
 * its scheme (ws://, http://.../devtools/inspector.html?ws=..., bare
 * host:port/devtools/page/ID). */
static void
rd_devtools(struct rd_scan *sc, size_t i)
{
	size_t b = i;

	if (i < sc->devtools_hi)
		return;
	while (b > sc->devtools_hi) {
		char ch = sc->in[b - 1];
		if ((unsigned char)ch <= ' ' || ch == 0x7f || rd_quote(ch) ||
		    strchr("`<>=(){},", ch) != NULL)
			break;
		b--;
	}
	rd_mark(sc, &sc->devtools_hi, b, rd_end(sc, RD_END_URL, i));
}

static void
rd_literals(struct rd_scan *sc, const struct rd_ctx *c)
{
	for (size_t k = 0; k < c->n; k++) {
		const char *lit = c->sec[k].lit;
		size_t len = c->sec[k].len, m = 0, hi = 0;
		for (size_t i = 0; i < sc->len; i++) {
			char ch = rd_lower(sc->in[i]);
			while (m > 0 && ch != lit[m])
				m = c->sec[k].fail[m - 1];
			if (ch == lit[m])
				m++;
			if (m == len) {
				rd_mark(sc, &hi, i + 1 - len, i + 1);
				m = c->sec[k].fail[m - 1];
			}
		}
	}
}

static void
rd_detect(struct rd_scan *sc)
{
	const char *in = sc->in;
	size_t len = sc->len;

	for (size_t i = 0; i < len; i++) {
		switch (in[i]) {
		case '=':
			rd_pair(sc, i, 1);
			break;
		case ':':
			rd_pair(sc, i, 1);
			if (rd_ieq(in, len, i, "://"))
				rd_userinfo(sc, i + 3);
			else if (rd_ieq(in, len, i, ":\\/\\/"))
				rd_userinfo(sc, i + 5);
			break;
		case '%':
			if (rd_ieq(in, len, i, "%3d") ||
			    rd_ieq(in, len, i, "%3a"))
				rd_pair(sc, i, 3);
			break;
		case 'b':
		case 'B':
			rd_bearer(sc, i);
			break;
		case '/':
			if (rd_ieq(in, len, i, "/devtools/"))
				rd_devtools(sc, i);
			break;
		case '\\':
			if (rd_ieq(in, len, i, "\\/devtools\\/"))
				rd_devtools(sc, i);
			break;
		default:
			break;
		}
	}
}

/* The core of cm_redact_text with prepared secrets.  *outlen gets the
 * length (the text may hold NUL bytes). */
static char *
rd_text(const struct rd_ctx *c, const char *in, size_t len, size_t *outlen)
{
	struct rd_scan sc;
	size_t n = 0, o = 0;
	char *out;

	memset(&sc, 0, sizeof sc);
	sc.in = in;
	sc.len = len;
	sc.mask = calloc(len + 1, 1);
	if (sc.mask == NULL)
		return NULL;
	rd_literals(&sc, c);
	rd_detect(&sc);
	for (size_t i = 0; i < len; i++)
		if (!sc.mask[i])
			n++;
		else if (i == 0 || !sc.mask[i - 1])
			n += RD_REDACTED_LEN;
	out = malloc(n + 1);
	if (out != NULL) {
		for (size_t i = 0; i < len; i++) {
			if (!sc.mask[i]) {
				out[o++] = in[i];
			} else if (i == 0 || !sc.mask[i - 1]) {
				memcpy(out + o, CM_REDACTED, RD_REDACTED_LEN);
				o += RD_REDACTED_LEN;
			}
		}
		out[o] = '\0';
		*outlen = o;
	}
	free(sc.mask);
	return out;
}

char *
cm_redact_text(const char *in, size_t len, const struct cm_secrets *s)
{
	struct rd_ctx c;
	size_t outlen;
	char *out;

	if (in == NULL)
		len = 0;
	if (rd_ctx_init(&c, s) < 0)
		return NULL;
	out = rd_text(&c, in == NULL ? "" : in, len, &outlen);
	rd_ctx_fini(&c);
	return out;
}

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
	char *out = rd_text(c, json_string_value(v), len, &outlen);
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
	size_t n = rd_key_tail(key, len, tail, &whole);

	for (size_t k = 0; rd_json_suffix[k] != NULL; k++)
		if (rd_tail_is(tail, n, rd_json_suffix[k]))
			return true;
	for (size_t k = 0; whole && rd_json_exact[k] != NULL; k++)
		if (strlen(rd_json_exact[k]) == n &&
		    rd_tail_is(tail, n, rd_json_exact[k]))
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
		char *out = rd_text(c, key, klen, &outlen);
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
	if (rd_ctx_init(&c, s) < 0)
		return -1;
	rc = rd_walk(v, &c, 1);
	rd_ctx_fini(&c);
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
	if (rd_ctx_init(&c, s) < 0)
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
		char *t =
		    rd_text(&c, json_text == NULL ? "" : json_text, len, &tlen);
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
	rd_ctx_fini(&c);
	return out;
}
