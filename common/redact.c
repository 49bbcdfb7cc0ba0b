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
 * This file owns the text redactor: the secrets, the detectors, the mask
 * and the emitter.  JSON values and results are redact_json.c's.
 */
#include "redact.h"
#include "redact_int.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define RD_REDACTED_LEN (sizeof CM_REDACTED - 1)

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

void
cm_rd_ctx_fini(struct rd_ctx *c)
{
	for (size_t k = 0; k < c->n; k++) {
		free(c->sec[k].lit);
		free(c->sec[k].fail);
	}
	c->n = 0;
}

int
cm_rd_ctx_init(struct rd_ctx *c, const struct cm_secrets *s)
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
			cm_rd_ctx_fini(c);
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
size_t
cm_rd_key_tail(const char *s, size_t end, char tail[RD_KEY_TAIL], bool *whole)
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

bool
cm_rd_tail_is(const char tail[RD_KEY_TAIL], size_t n, const char *word)
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
	size_t n = cm_rd_key_tail(in, j, tail, &whole);
	for (size_t k = 0; k < sizeof rd_text_keys / sizeof *rd_text_keys; k++)
		if (cm_rd_tail_is(tail, n, rd_text_keys[k].suffix))
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
char *
cm_rd_text(const struct rd_ctx *c, const char *in, size_t len, size_t *outlen)
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
	if (cm_rd_ctx_init(&c, s) < 0)
		return NULL;
	out = cm_rd_text(&c, in == NULL ? "" : in, len, &outlen);
	cm_rd_ctx_fini(&c);
	return out;
}

char *
cm_redact_text_max(
    const char *in, size_t len, const struct cm_secrets *s, size_t max)
{
	char *out = cm_redact_text(in, len, s);
	size_t n = out != NULL ? strlen(out) : 0;

	if (n <= max)
		return out;
	/* Back to the start of the character that crosses max. */
	while (max > 0 && ((unsigned char)out[max] & 0xC0) == 0x80)
		max--;
	out[max] = '\0';
	return out;
}
