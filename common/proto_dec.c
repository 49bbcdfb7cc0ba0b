/*
 * proto_dec.c: the decoder of the codec in proto.c, driven by the same
 * tables (proto_int.h): requests, replies and internal events.  Before a
 * message's fields are read its size and shape are checked (a prescan of
 * the raw bytes bounds depth, lengths and key counts), unknown keys and
 * wrong types are refused, and everything kept is copied into the
 * message's arena.
 */
#include "proto.h"
#include "proto_int.h"

#include <msgpack.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The decoder's msgpack zone starts small, for the reason PR_ENC_FIRST
 * does (proto.c): the allocator's per-thread cache. */
#define PR_DEC_ZONE_FIRST 896

/* Top map, record list, record map, string list: nothing nests deeper. */
#define PR_DEPTH_MAX 4

struct pr_dec {
	struct pr_arena *arena;
	char *err;
	size_t errlen;
};

static int dec_fail(struct pr_dec *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
dec_fail(struct pr_dec *d, const char *fmt, ...)
{
	va_list ap;

	if (d->err != NULL && d->errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(d->err, d->errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static size_t
be_read(const unsigned char *p, size_t w)
{
	size_t v = 0;

	while (w-- > 0)
		v = v << 8 | *p++;
	return v;
}

/*
 * msgpack-c allocates an array's or map's storage from its declared count
 * before it reads one element, so six bytes can ask for 128 GB.  This pass
 * walks the raw bytes first (O(len), no allocation) and admits only what our
 * messages can hold: int, bool, str, array and map, at most PR_DEPTH_MAX
 * deep, within the key and list limits, with every declared element really
 * present; *used is the length of the top-level value, and what may follow
 * it is the caller's to judge.  msgpack-c then only ever sees at most len
 * objects, so its allocations stay proportional to len.
 */
static int
dec_prescan(struct pr_dec *d, const unsigned char *p, size_t len, size_t *used)
{
	size_t pending[PR_DEPTH_MAX + 1] = {1}; /* elements left per depth */
	size_t depth = 0, i = 0, n, w;
	unsigned char b;

	for (;;) {
		while (depth > 0 && pending[depth] == 0)
			depth--;
		if (pending[depth] == 0)
			break;
		pending[depth]--;
		if (i >= len)
			return dec_fail(d, "truncated message");
		b = p[i++];
		if (b <= 0x7f || b >= 0xe0 || b == 0xc2 || b == 0xc3)
			continue;             /* fixint, bool */
		if (b >= 0xcc && b <= 0xd3) { /* uint and int 8..64 */
			w = (size_t)1 << (b & 3);
			if (w > len - i)
				return dec_fail(d, "truncated message");
			i += w;
			continue;
		}
		if (b >= 0x80 && b <= 0xbf) { /* fixmap, fixarray, fixstr */
			n = b >= 0xa0 ? b & 0x1fu : b & 0x0fu;
		} else if (b >= 0xd9 && b <= 0xdf) {
			/* str8/16/32, then array16/32 and map16/32 */
			w = b <= 0xdb ? (size_t)1 << (b - 0xd9) : b & 1 ? 4 : 2;
			if (w > len - i)
				return dec_fail(d, "truncated message");
			n = be_read(p + i, w);
			i += w;
		} else if (b >= 0xc4 && b <= 0xc6) { /* bin8/16/32 */
			w = (size_t)1 << (b - 0xc4);
			if (w > len - i)
				return dec_fail(d, "truncated message");
			n = be_read(p + i, w);
			i += w;
			if (n > len - i)
				return dec_fail(d, "truncated message");
			i += n;
			continue;
		} else {
			return dec_fail(d, "nil, float or ext value");
		}
		if (b >= 0xa0 && b <= 0xdb) { /* str */
			if (n > len - i)
				return dec_fail(d, "truncated message");
			i += n;
			continue;
		}
		if (depth == PR_DEPTH_MAX)
			return dec_fail(d, "nested too deep");
		if (b <= 0x8f || b >= 0xde) { /* map */
			if (n > PR_KEYS_MAX)
				return dec_fail(d, "map of %zu keys", n);
			n *= 2;
		} else if (n > CM_PROTO_LIST_MAX) {
			return dec_fail(d, "array of %zu items", n);
		}
		if (n > len - i)
			return dec_fail(d, "truncated message");
		pending[++depth] = n;
	}
	*used = i;
	return 0;
}

static int
dec_str(struct pr_dec *d, const struct pr_fdesc *f, const msgpack_object *o,
    size_t max, const char **out)
{
	if (o->type != MSGPACK_OBJECT_STR)
		return dec_fail(d, "%s: not a string", f->name);
	if (o->via.str.size > max)
		return dec_fail(d, "%s: over %zu bytes", f->name, max);
	if (memchr(o->via.str.ptr, '\0', o->via.str.size) != NULL)
		return dec_fail(d, "%s: NUL byte in string", f->name);
	*out = pr_arena_strndup(d->arena, o->via.str.ptr, o->via.str.size);
	return *out == NULL ? dec_fail(d, "out of memory") : 0;
}

static bool
str_is(const msgpack_object_str *s, const char *name)
{
	return s->size == strlen(name) && memcmp(s->ptr, name, s->size) == 0;
}

static int dec_map(struct pr_dec *d, const msgpack_object *o,
    const struct pr_fdesc *tab, size_t nt, void *base, uint64_t *seen);

static int
dec_value(struct pr_dec *d, const struct pr_fdesc *f, const msgpack_object *o,
    void *base)
{
	char *p = (char *)base + f->off;
	const msgpack_object_array *a = &o->via.array;
	const struct pr_rdesc *rd;
	struct pr_strlist *sl;
	const char *code;
	unsigned char *bp;
	uint64_t seen;
	char *items;
	size_t i;

	switch (f->type) {
	case PR_STR:
		return dec_str(d, f, o, f->max, (const char **)p);
	case PR_INT:
		if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
			*(int64_t *)p = o->via.i64;
		else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
		         o->via.u64 <= INT64_MAX)
			*(int64_t *)p = (int64_t)o->via.u64;
		else
			return dec_fail(d, "%s: not an int64", f->name);
		return 0;
	case PR_BOOL:
		if (o->type != MSGPACK_OBJECT_BOOLEAN)
			return dec_fail(d, "%s: not a bool", f->name);
		*(bool *)p = o->via.boolean;
		return 0;
	case PR_STRLIST:
		sl = (struct pr_strlist *)p;
		if (o->type != MSGPACK_OBJECT_ARRAY || a->size > f->max)
			return dec_fail(d, "%s: not a list of at most %zu",
			    f->name, f->max);
		if (a->size == 0)
			return 0;
		sl->v = pr_arena_alloc(d->arena, a->size * sizeof(*sl->v));
		if (sl->v == NULL)
			return dec_fail(d, "out of memory");
		for (; sl->n < a->size; sl->n++)
			if (dec_str(d, f, &a->ptr[sl->n], CM_CAPABILITY_MAX,
			        &sl->v[sl->n]) != 0)
				return -1;
		return 0;
	case PR_BIN:
		if (o->type != MSGPACK_OBJECT_BIN)
			return dec_fail(d, "%s: not bytes", f->name);
		if (o->via.bin.size > f->max)
			return dec_fail(
			    d, "%s: over %zu bytes", f->name, f->max);
		if (o->via.bin.size == 0)
			return 0;
		if ((bp = pr_arena_take(d->arena, o->via.bin.size, 1)) == NULL)
			return dec_fail(d, "out of memory");
		memcpy(bp, o->via.bin.ptr, o->via.bin.size);
		((struct pr_bin *)p)->p = bp;
		((struct pr_bin *)p)->n = o->via.bin.size;
		return 0;
	case PR_K_OP:
		if (o->type != MSGPACK_OBJECT_STR)
			return dec_fail(d, "op: not a string");
		for (i = 0; i < PR_OP__COUNT; i++)
			if (str_is(&o->via.str, pr_op_tab[i].name)) {
				*(enum pr_op *)p = (enum pr_op)i;
				return 0;
			}
		return dec_fail(d, "unknown op");
	case PR_K_ERR:
		if (dec_str(d, f, o, f->max, &code) != 0)
			return -1;
		if ((*(enum cm_err *)p = cm_err_from_code(code)) ==
		    CM_ERR__COUNT)
			return dec_fail(d, "err: unknown code");
		return 0;
	default: /* PR_K_RECS */
		rd = pr_rec(f->max);
		if (o->type != MSGPACK_OBJECT_ARRAY ||
		    a->size > CM_PROTO_LIST_MAX)
			return dec_fail(d, "%s: not a list of at most %d",
			    f->name, CM_PROTO_LIST_MAX);
		if (a->size == 0)
			return 0;
		/* Not a declared count: msgpack-c parsed every one of them. */
		items = pr_arena_alloc(d->arena, a->size * rd->size);
		if (items == NULL)
			return dec_fail(d, "out of memory");
		*(char **)p = items;
		*(size_t *)((char *)base + rd->n_off) = a->size;
		for (i = 0; i < a->size; i++) {
			seen = 0;
			if (dec_map(d, &a->ptr[i], rd->f, rd->nf,
			        items + i * rd->size, &seen) != 0)
				return -1;
		}
		return 0;
	}
}

static void
key_printable(const msgpack_object_str *k, char *out, size_t outlen)
{
	size_t i, n = k->size < outlen - 1 ? k->size : outlen - 1;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)k->ptr[i];
		out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[n] = '\0';
}

/* Records hold no lists of records, so this recurses exactly once. */
static int
dec_map(struct pr_dec *d, const msgpack_object *o, const struct pr_fdesc *tab,
    size_t nt, void *base, uint64_t *seen)
{
	const msgpack_object_kv *kv;
	char key[33];
	uint32_t i;
	size_t r;

	if (o->type != MSGPACK_OBJECT_MAP)
		return dec_fail(d, "not a map");
	for (i = 0; i < o->via.map.size; i++) {
		kv = &o->via.map.ptr[i];
		if (kv->key.type != MSGPACK_OBJECT_STR)
			return dec_fail(d, "key is not a string");
		for (r = 0; r < nt; r++)
			if (str_is(&kv->key.via.str, tab[r].name))
				break;
		if (r == nt) {
			key_printable(&kv->key.via.str, key, sizeof(key));
			return dec_fail(d, "unknown key \"%s\"", key);
		}
		if (*seen & UINT64_C(1) << r)
			return dec_fail(d, "%s: duplicate key", tab[r].name);
		*seen |= UINT64_C(1) << r;
		if (dec_value(d, &tab[r], &kv->val, base) != 0)
			return -1;
	}
	return 0;
}

/* The map at the start of buf into base; *used is its length (what
 * follows is not read). */
static int
dec_first(struct pr_dec *d, const void *buf, size_t len, size_t *used,
    const struct pr_fdesc *tab, size_t nt, void *base, uint64_t *seen)
{
	msgpack_unpack_return ur;
	msgpack_zone zone;
	msgpack_object obj;
	size_t off = 0;
	int rv;

	if (len > CM_MSG_MAX)
		return dec_fail(d, "message of %zu bytes", len);
	if (dec_prescan(d, buf, len, used) != 0)
		return -1;
	/* The object tree lives in the zone only until dec_map has copied
	 * what it keeps into the arena.  A small first chunk, as above. */
	if (!msgpack_zone_init(&zone, PR_DEC_ZONE_FIRST))
		return dec_fail(d, "out of memory");
	/* A zone that cannot grow is not the sender's fault: a reader that
	 * logs "malformed" as a sibling's bug would blame the wrong side. */
	ur = msgpack_unpack(buf, *used, &off, &zone, &obj);
	if (ur == MSGPACK_UNPACK_NOMEM_ERROR)
		rv = dec_fail(d, "out of memory");
	else if (ur != MSGPACK_UNPACK_SUCCESS || off != *used)
		rv = dec_fail(d, "malformed msgpack");
	else
		rv = dec_map(d, &obj, tab, nt, base, seen);
	msgpack_zone_destroy(&zone);
	return rv;
}

/* A message that is one map, nothing after it. */
static int
dec_top(struct pr_dec *d, const void *buf, size_t len,
    const struct pr_fdesc *tab, size_t nt, void *base, uint64_t *seen)
{
	size_t used;

	if (dec_first(d, buf, len, &used, tab, nt, base, seen) != 0)
		return -1;
	if (used != len)
		return dec_fail(d, "%zu trailing bytes", len - used);
	return 0;
}

int
pr_req_decode(
    const void *buf, size_t len, struct pr_req *out, char *err, size_t errlen)
{
	struct pr_dec d = {&out->arena, err, errlen};
	uint64_t seen = 0, have, bad;
	const char *op;

	memset(out, 0, sizeof(*out));
	if (dec_top(&d, buf, len, pr_req_tab, PR_NROWS(pr_req_tab), out,
	        &seen) != 0)
		goto fail;
	if (!(seen & 1)) {
		dec_fail(&d, "no op");
		goto fail;
	}
	op = pr_op_tab[out->op].name;
	have = seen >> 1;
	if ((bad = have & ~(pr_op_tab[out->op].req | pr_op_tab[out->op].opt))) {
		dec_fail(&d, "%s: not a field of %s",
		    pr_req_tab[1 + __builtin_ctzll(bad)].name, op);
		goto fail;
	}
	if ((bad = pr_op_tab[out->op].req & ~have)) {
		dec_fail(&d, "%s: required by %s",
		    pr_req_tab[1 + __builtin_ctzll(bad)].name, op);
		goto fail;
	}
	/* Each field is within its bound; the whole is bounded per op too,
	 * so only an op that may carry an artifact is ever that large. */
	if (len > pr_req_max(out->op)) {
		dec_fail(&d, "%s of %zu bytes", op, len);
		goto fail;
	}
	return 0;
fail:
	pr_req_free(out);
	return -1;
}

int
pr_rep_decode(
    const void *buf, size_t len, struct pr_rep *out, char *err, size_t errlen)
{
	struct pr_dec d = {&out->arena, err, errlen};
	uint64_t seen = 0;

	memset(out, 0, sizeof(*out));
	if (dec_top(&d, buf, len, pr_rep_tab, PR_NROWS(pr_rep_tab), out,
	        &seen) != 0) {
		pr_rep_free(out);
		return -1;
	}
	return 0;
}

/* ---- internal events ----------------------------------------------------- */

static bool
mem_is(const char *p, size_t n, const char *s)
{
	return s != NULL && strlen(s) == n && memcmp(p, s, n) == 0;
}

int
pr_pub_decode(const void *buf, size_t len, struct pr_event *out,
    struct pr_task *task, struct pr_arena *arena, char *err, size_t errlen)
{
	const struct pr_rdesc *rd = pr_rec(PR_R_event);
	const struct pr_rdesc *td = pr_rec(PR_R_task);
	struct pr_dec d = {arena, err, errlen};
	const char *p = buf, *ws = NULL, *sp = NULL, *body = NULL;
	size_t scan = len < CM_TOPIC_MAX ? len : CM_TOPIC_MAX;
	struct pr_task dropped;
	size_t blen, used;
	uint64_t seen = 0;

	memset(out, 0, sizeof(*out));
	memset(&dropped, 0, sizeof(dropped));
	if (task != NULL)
		memset(task, 0, sizeof(*task));
	if (len > CM_MSG_MAX)
		return dec_fail(&d, "message of %zu bytes", len);
	/* The topic lies within its first CM_TOPIC_MAX bytes or not at all. */
	if (scan >= 3 && memcmp(p, "ev/", 3) == 0) {
		ws = p + 3;
		if ((sp = memchr(ws, '/', scan - 3)) != NULL) {
			sp++;
			body = memchr(sp, '/', scan - (size_t)(sp - p));
		}
	}
	if (body == NULL)
		return dec_fail(&d, "no ev/<workspace>/<space>/ topic");
	body++;
	blen = len - (size_t)(body - p);
	/* Strings already in the caller's arena stay until it is freed. */
	if (dec_first(&d, body, blen, &used, rd->f, rd->nf, out, &seen) != 0)
		goto fail;
	if (!mem_is(ws, (size_t)(sp - 1 - ws), out->workspace_id) ||
	    !mem_is(sp, (size_t)(body - 1 - sp), out->space_id)) {
		dec_fail(&d, "topic does not match the event's ids");
		goto fail;
	}
	if (used == blen)
		return 0;
	/* The task the event ends, as its commit left it: checked as fully
	 * when the caller drops it. */
	seen = 0;
	if (task == NULL)
		task = &dropped;
	if (dec_top(&d, body + used, blen - used, td->f, td->nf, task, &seen) !=
	    0)
		goto fail;
	if (!pr_pub_task_fits(out, task)) {
		dec_fail(&d, "the task is not the event's");
		goto fail;
	}
	return 0;
fail:
	memset(out, 0, sizeof(*out));
	if (task != NULL)
		memset(task, 0, sizeof(*task));
	return -1;
}

int
pr_beat_decode(const void *buf, size_t len, int64_t *serial)
{
	size_t n = strlen(PR_BEAT_TOPIC), m, w;
	const unsigned char *p = (const unsigned char *)buf + n;
	uint64_t v = 0;

	*serial = 0;
	if (len <= n || memcmp(buf, PR_BEAT_TOPIC, n) != 0)
		return -1;
	/* A msgpack unsigned integer, read here byte by byte: a general
	 * unpacker sizes its memory from the header, which a hostile one
	 * sets to 4 G elements (found by fuzz_proto). */
	m = len - n;
	w = p[0] <= 0x7f   ? 0
	    : p[0] == 0xcc ? 1
	    : p[0] == 0xcd ? 2
	    : p[0] == 0xce ? 4
	    : p[0] == 0xcf ? 8
	                   : SIZE_MAX;
	if (w == SIZE_MAX || m != w + 1)
		return -1;
	if (w == 0)
		v = p[0];
	for (size_t i = 1; i <= w; i++)
		v = v << 8 | p[i];
	if (v > INT64_MAX)
		return -1;
	*serial = (int64_t)v;
	return 0;
}

int
pr_frame_decode(const void *buf, size_t len, struct pr_frame *out,
    struct pr_arena *arena, char *err, size_t errlen)
{
	const struct pr_rdesc *rd = pr_rec(PR_R_frame);
	struct pr_dec d = {arena, err, errlen};
	uint64_t seen = 0;

	memset(out, 0, sizeof(*out));
	if (len > CM_LIVE_MSG_MAX)
		return dec_fail(&d, "frame of %zu bytes", len);
	if (dec_top(&d, buf, len, rd->f, rd->nf, out, &seen) != 0)
		goto fail;
	if (out->seq <= 0 || out->width <= 0 || out->height <= 0 ||
	    out->at <= 0 || out->jpeg.n == 0) {
		dec_fail(&d, "a frame needs seq, width, height, at and jpeg");
		goto fail;
	}
	return 0;
fail:
	memset(out, 0, sizeof(*out));
	return -1;
}
