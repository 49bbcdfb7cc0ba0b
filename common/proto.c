/*
 * proto.c: one table-driven msgpack codec for every message in proto.h.
 *
 * Each message shape is a table of {wire name, type, offset, max} rows
 * generated from the X-macros in proto.h, so a field is declared exactly
 * once and the encoder, the decoder and the bounds can never disagree.
 */
#include "proto.h"

#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena -------------------------------------------------------------- */

#define PR_CHUNK_SIZE 4096
/*
 * An arena's first chunk, header included, fits glibc's per-thread cache
 * (about a kilobyte); most messages need no more.  Later chunks are
 * PR_CHUNK_SIZE.
 */
#define PR_CHUNK_FIRST (1024 - sizeof(struct pr_chunk))
/* Bigger blocks get a chunk of their own so they never waste a chunk. */
#define PR_CHUNK_BIG (PR_CHUNK_SIZE / 4)

struct pr_chunk {
	struct pr_chunk *next;
	size_t used;
	size_t cap;
	max_align_t data[];
};

/* Chunks come from malloc: only what pr_arena_alloc hands out is zeroed. */
static void *
arena_take(struct pr_arena *a, size_t n, size_t align)
{
	struct pr_chunk *c = a->head;
	size_t at, cap;

	if (n == 0)
		n = 1; /* NULL means out of memory, so hand out a real byte */
	if (c != NULL) {
		at = (c->used + align - 1) & ~(align - 1);
		if (at <= c->cap && n <= c->cap - at) {
			c->used = at + n;
			return (unsigned char *)c->data + at;
		}
	}
	if (n > PR_CHUNK_BIG)
		cap = n;
	else if (a->head == NULL && n <= PR_CHUNK_FIRST)
		cap = PR_CHUNK_FIRST;
	else
		cap = PR_CHUNK_SIZE;
	if (cap > SIZE_MAX - sizeof(*c))
		return NULL;
	if ((c = malloc(sizeof(*c) + cap)) == NULL)
		return NULL;
	c->cap = cap;
	c->used = n;
	if (cap == n && a->head != NULL) {
		/* Link a private chunk behind the head, whose room stays
		 * usable. */
		c->next = a->head->next;
		a->head->next = c;
	} else {
		c->next = a->head;
		a->head = c;
	}
	return c->data;
}

void *
pr_arena_alloc(struct pr_arena *a, size_t n)
{
	void *p = arena_take(a, n, _Alignof(max_align_t));

	if (p != NULL)
		memset(p, 0, n);
	return p;
}

char *
pr_arena_strndup(struct pr_arena *a, const char *s, size_t n)
{
	char *p;

	if (s == NULL)
		return NULL;
	n = strnlen(s, n);
	if (n == SIZE_MAX || (p = arena_take(a, n + 1, 1)) == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
pr_arena_strdup(struct pr_arena *a, const char *s)
{
	return s == NULL ? NULL : pr_arena_strndup(a, s, strlen(s));
}

void
pr_arena_free(struct pr_arena *a)
{
	struct pr_chunk *c, *next;

	if (a == NULL)
		return;
	for (c = a->head; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

/* ---- tables -------------------------------------------------------------- */

/* Kinds that only the codec itself knows, beyond the wire types. */
enum { PR_K_OP = PR_BIN + 1, PR_K_ERR, PR_K_RECS };

struct pr_fdesc {
	const char *name;
	int type;
	size_t off;
	size_t max; /* bytes, items, or for PR_K_RECS the record index */
};

struct pr_rdesc {
	size_t size;
	size_t list_off, n_off; /* the list and its count in struct pr_rep */
	const struct pr_fdesc *f;
	size_t nf;
};

/* A seen-keys bitmask is one uint64_t, so no map may have more keys. */
#define PR_KEYS_MAX 64

static const struct {
	const char *name;
	bool write;
	uint64_t req, opt;
} pr_op_tab[PR_OP__COUNT] = {
#define PR_OP_ROW(e, n, w, rq, op) [PR_OP_##e] = {n, w, rq, op},
    PR_OPS(PR_OP_ROW)
#undef PR_OP_ROW
};

/* Row 0 is "op" (encoded first); field e is row 1 + PR_F_e. */
static const struct pr_fdesc pr_req_tab[1 + PR_F__COUNT] = {
    [0] = {"op", PR_K_OP, offsetof(struct pr_req, op), 0},
#define PR_REQ_ROW(e, m, t, max) \
	[1 + PR_F_##e] = {#m, t, offsetof(struct pr_req, m), max},
    PR_REQ_FIELDS(PR_REQ_ROW)
#undef PR_REQ_ROW
};
_Static_assert(1 + PR_F__COUNT <= PR_KEYS_MAX, "too many request fields");

enum {
#define PR_R_ENUM(tag, list, fields) PR_R_##tag,
	PR_RECORDS(PR_R_ENUM)
#undef PR_R_ENUM
	    PR_R__COUNT
};

/*
 * Record rows need offsetof(struct pr_<tag>, m) but the field macros do not
 * name their struct, so each case gets a block-scope typedef for it.
 */
#define PR_ROW(m, t, max) {#m, t, offsetof(pr_cur_t, m), max},
static const struct pr_rdesc *
pr_rec(size_t i)
{
	switch (i) {
#define PR_REC_CASE(tag, list, fields)                                  \
	case PR_R_##tag: {                                              \
		typedef struct pr_##tag pr_cur_t;                       \
		static const struct pr_fdesc f[] = {fields(PR_ROW)};    \
		static const struct pr_rdesc d = {sizeof(pr_cur_t),     \
		    offsetof(struct pr_rep, list),                      \
		    offsetof(struct pr_rep, n_##list), f,               \
		    sizeof(f) / sizeof(f[0])};                          \
		_Static_assert(sizeof(f) / sizeof(f[0]) <= PR_KEYS_MAX, \
		    "too many record fields");                          \
		return &d;                                              \
	}
		PR_RECORDS(PR_REC_CASE)
#undef PR_REC_CASE
	}
	abort(); /* only ever called with an index from pr_rep_tab */
}
#undef PR_ROW

static const struct pr_fdesc pr_rep_tab[] = {
    {"err", PR_K_ERR, offsetof(struct pr_rep, err), CM_ERROR_CODE_MAX},
    {"msg", PR_STR, offsetof(struct pr_rep, msg), CM_ERROR_MESSAGE_MAX},
    {"created", PR_BOOL, offsetof(struct pr_rep, created), 0},
    {"cancel_requested", PR_BOOL, offsetof(struct pr_rep, cancel_requested), 0},
    {"close_requested", PR_BOOL, offsetof(struct pr_rep, close_requested), 0},
    {"task_queued", PR_BOOL, offsetof(struct pr_rep, task_queued), 0},
    {"args", PR_STR, offsetof(struct pr_rep, args), CM_ARGS_MAX},
    {"count", PR_INT, offsetof(struct pr_rep, count), 0},
#define PR_REP_ROW(tag, list, fields) \
	{#list, PR_K_RECS, offsetof(struct pr_rep, list), PR_R_##tag},
    PR_RECORDS(PR_REP_ROW)
#undef PR_REP_ROW
};
#define PR_NROWS(t) (sizeof(t) / sizeof((t)[0]))
_Static_assert(PR_NROWS(pr_rep_tab) <= PR_KEYS_MAX, "too many reply keys");

const char *
pr_op_name(enum pr_op op)
{
	/* Never NULL, so a caller can log it; "unknown" never decodes. */
	if ((unsigned)op >= PR_OP__COUNT)
		return "unknown";
	return pr_op_tab[op].name;
}

bool
pr_op_is_write(enum pr_op op)
{
	return (unsigned)op < PR_OP__COUNT && pr_op_tab[op].write;
}

size_t
pr_req_max(enum pr_op op)
{
	if ((unsigned)op < PR_OP__COUNT &&
	    ((pr_op_tab[op].req | pr_op_tab[op].opt) & PRM(ARTIFACT)))
		return CM_STORE_RECV_MAX;
	return CM_REQ_MSG_MAX;
}

/* ---- encoding ------------------------------------------------------------ */

static bool
enc_present(const struct pr_fdesc *f, const void *base)
{
	const char *p = (const char *)base + f->off;

	switch (f->type) {
	case PR_STR:
		return *(const char *const *)p != NULL;
	case PR_INT:
		return *(const int64_t *)p != 0;
	case PR_BOOL:
		return *(const bool *)p;
	case PR_STRLIST:
		return ((const struct pr_strlist *)p)->n != 0;
	case PR_BIN:
		return ((const struct pr_bin *)p)->n != 0;
	case PR_K_OP:
		return true;
	case PR_K_ERR:
		return *(const enum cm_err *)p != CM_OK;
	default: /* PR_K_RECS */
		return *(const size_t *)((const char *)base +
		                         pr_rec(f->max)->n_off) != 0;
	}
}

static int
enc_str(msgpack_packer *pk, const char *s, size_t max)
{
	/* strnlen: a bound violation costs at most max + 1 bytes of reading. */
	size_t n = s == NULL ? max + 1 : strnlen(s, max + 1);

	if (n > max)
		return -1;
	return msgpack_pack_str(pk, n) || msgpack_pack_str_body(pk, s, n);
}

static int enc_map(msgpack_packer *pk, const struct pr_fdesc *tab, size_t nt,
    const void *base);

static int
enc_value(msgpack_packer *pk, const struct pr_fdesc *f, const void *base)
{
	const char *p = (const char *)base + f->off;
	const struct pr_strlist *sl;
	const struct pr_rdesc *rd;
	const struct pr_bin *bin;
	const char *items;
	size_t i, n;

	switch (f->type) {
	case PR_STR:
		return enc_str(pk, *(const char *const *)p, f->max);
	case PR_INT:
		return msgpack_pack_int64(pk, *(const int64_t *)p);
	case PR_BOOL:
		return msgpack_pack_true(pk);
	case PR_STRLIST:
		sl = (const struct pr_strlist *)p;
		if (sl->n > f->max || sl->v == NULL ||
		    msgpack_pack_array(pk, sl->n) != 0)
			return -1;
		for (i = 0; i < sl->n; i++)
			if (enc_str(pk, sl->v[i], CM_CAPABILITY_MAX) != 0)
				return -1;
		return 0;
	case PR_BIN:
		bin = (const struct pr_bin *)p;
		if (bin->n > f->max || bin->p == NULL)
			return -1;
		return msgpack_pack_bin(pk, bin->n) ||
		       msgpack_pack_bin_body(pk, bin->p, bin->n);
	case PR_K_OP:
		n = *(const enum pr_op *)p; /* negative: huge, so refused */
		if (n >= PR_OP__COUNT)
			return -1;
		return enc_str(pk, pr_op_tab[n].name, CM_NAME_MAX);
	case PR_K_ERR:
		n = *(const enum cm_err *)p;
		if (n >= CM_ERR__COUNT)
			return -1;
		return enc_str(pk, cm_err_code((enum cm_err)n), f->max);
	default: /* PR_K_RECS */
		rd = pr_rec(f->max);
		items = *(const char *const *)p;
		n = *(const size_t *)((const char *)base + rd->n_off);
		if (n > CM_PROTO_LIST_MAX || items == NULL ||
		    msgpack_pack_array(pk, n) != 0)
			return -1;
		for (i = 0; i < n; i++)
			if (enc_map(pk, rd->f, rd->nf, items + i * rd->size))
				return -1;
		return 0;
	}
}

/* Omitted rows (enc_present false) are what the decoder leaves zeroed. */
static int
enc_map(
    msgpack_packer *pk, const struct pr_fdesc *tab, size_t nt, const void *base)
{
	size_t i, n = 0;

	for (i = 0; i < nt; i++)
		n += enc_present(&tab[i], base);
	if (msgpack_pack_map(pk, n) != 0)
		return -1;
	for (i = 0; i < nt; i++) {
		if (!enc_present(&tab[i], base))
			continue;
		if (enc_str(pk, tab[i].name, CM_NAME_MAX) != 0 ||
		    enc_value(pk, &tab[i], base) != 0)
			return -1;
	}
	return 0;
}

/*
 * An encode buffer starts small enough for the allocator's per-thread
 * cache (about a kilobyte in glibc); msgpack's own first allocation is
 * 8 KiB, which every request, reply and event would take from the heap's
 * bins and give back.  Most messages fit; a larger one doubles as usual.
 */
#define PR_ENC_FIRST 960
#define PR_DEC_ZONE_FIRST 896

static void
enc_init(msgpack_sbuffer *sb, msgpack_packer *pk)
{
	msgpack_sbuffer_init(sb);
	if ((sb->data = malloc(PR_ENC_FIRST)) != NULL)
		sb->alloc = PR_ENC_FIRST;
	msgpack_packer_init(pk, sb, msgpack_sbuffer_write);
}

/* Takes rv from the packing; hands the buffer over only on success. */
static int
enc_finish(msgpack_sbuffer *sb, int rv, char **buf, size_t *len)
{
	if (rv != 0 || sb->size > CM_MSG_MAX) {
		msgpack_sbuffer_destroy(sb);
		return -1;
	}
	*buf = sb->data;
	*len = sb->size;
	return 0;
}

int
pr_req_encode(const struct pr_req *r, char **buf, size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	uint64_t allowed, bit;
	bool present;
	size_t i;

	*buf = NULL;
	*len = 0;
	if ((unsigned)r->op >= PR_OP__COUNT)
		return -1;
	/* Refuse what the receiver would refuse, so the bug shows up here. */
	allowed = pr_op_tab[r->op].req | pr_op_tab[r->op].opt;
	for (i = 0; i < PR_F__COUNT; i++) {
		bit = UINT64_C(1) << i;
		present = enc_present(&pr_req_tab[1 + i], r);
		if ((present && !(allowed & bit)) ||
		    (!present && (pr_op_tab[r->op].req & bit)))
			return -1;
	}
	enc_init(&sb, &pk);
	if (enc_finish(&sb, enc_map(&pk, pr_req_tab, PR_NROWS(pr_req_tab), r),
	        buf, len) != 0)
		return -1;
	if (*len > pr_req_max(r->op)) {
		free(*buf);
		*buf = NULL;
		*len = 0;
		return -1;
	}
	return 0;
}

int
pr_rep_encode(const struct pr_rep *r, char **buf, size_t *len)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;

	*buf = NULL;
	*len = 0;
	enc_init(&sb, &pk);
	return enc_finish(
	    &sb, enc_map(&pk, pr_rep_tab, PR_NROWS(pr_rep_tab), r), buf, len);
}

/* ---- decoding ------------------------------------------------------------ */

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
 * present and nothing after the top-level map.  msgpack-c then only ever
 * sees at most len objects, so its allocations stay proportional to len.
 */
static int
dec_prescan(struct pr_dec *d, const unsigned char *p, size_t len)
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
	if (i != len)
		return dec_fail(d, "%zu trailing bytes", len - i);
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
		if ((bp = arena_take(d->arena, o->via.bin.size, 1)) == NULL)
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

static int
dec_top(struct pr_dec *d, const void *buf, size_t len,
    const struct pr_fdesc *tab, size_t nt, void *base, uint64_t *seen)
{
	msgpack_unpack_return ur;
	msgpack_zone zone;
	msgpack_object obj;
	size_t off = 0;
	int rv;

	if (len > CM_MSG_MAX)
		return dec_fail(d, "message of %zu bytes", len);
	if (dec_prescan(d, buf, len) != 0)
		return -1;
	/* The object tree lives in the zone only until dec_map has copied
	 * what it keeps into the arena.  A small first chunk, as above. */
	if (!msgpack_zone_init(&zone, PR_DEC_ZONE_FIRST))
		return dec_fail(d, "out of memory");
	/* A zone that cannot grow is not the sender's fault: a reader that
	 * logs "malformed" as a sibling's bug would blame the wrong side. */
	ur = msgpack_unpack(buf, len, &off, &zone, &obj);
	if (ur == MSGPACK_UNPACK_NOMEM_ERROR)
		rv = dec_fail(d, "out of memory");
	else if (ur != MSGPACK_UNPACK_SUCCESS || off != len)
		rv = dec_fail(d, "malformed msgpack");
	else
		rv = dec_map(d, &obj, tab, nt, base, seen);
	msgpack_zone_destroy(&zone);
	return rv;
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

void
pr_req_free(struct pr_req *r)
{
	if (r == NULL)
		return;
	pr_arena_free(&r->arena);
	memset(r, 0, sizeof(*r)); /* no pointer may outlive its arena */
}

void
pr_rep_free(struct pr_rep *r)
{
	if (r == NULL)
		return;
	pr_arena_free(&r->arena);
	memset(r, 0, sizeof(*r));
}

/* ---- reply building ------------------------------------------------------ */

const char *
pr_rep_strdup(struct pr_rep *r, const char *s)
{
	return pr_arena_strdup(&r->arena, s);
}

void *
pr_rep_alloc(struct pr_rep *r, size_t n)
{
	return pr_arena_alloc(&r->arena, n);
}

void
pr_rep_error(struct pr_rep *r, enum cm_err err, const char *fmt, ...)
{
	/* One spare byte shows whether the text ran past the limit. */
	size_t cap = CM_ERROR_MESSAGE_MAX + 2, cut;
	va_list ap;
	char *buf;
	int n;

	r->err = err;
	r->msg = NULL;
	if (fmt == NULL || (buf = pr_arena_alloc(&r->arena, cap)) == NULL)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > CM_ERROR_MESSAGE_MAX) {
		/* Cut before a split UTF-8 character: msg may end up in JSON.
		 */
		cut = CM_ERROR_MESSAGE_MAX;
		while (cut > CM_ERROR_MESSAGE_MAX - 3 &&
		       ((unsigned char)buf[cut] & 0xc0) == 0x80)
			cut--;
		buf[cut] = '\0';
	}
	r->msg = buf;
}

/* ---- internal events ----------------------------------------------------- */

int
pr_event_topic(
    const char *workspace_id, const char *space_id, char *buf, size_t len)
{
	int n;

	/* A '/' inside an id would move the topic's field boundaries. */
	if (workspace_id == NULL || space_id == NULL ||
	    strchr(workspace_id, '/') != NULL || strchr(space_id, '/') != NULL)
		return -1;
	n = snprintf(buf, len, "ev/%s/%s/", workspace_id, space_id);
	if (n < 0 || (size_t)n >= len || n >= CM_TOPIC_MAX)
		return -1;
	return n;
}

int
pr_pub_encode(const struct pr_event *ev, char **buf, size_t *len)
{
	const struct pr_rdesc *rd = pr_rec(PR_R_event);
	char topic[CM_TOPIC_MAX];
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int n;

	*buf = NULL;
	*len = 0;
	if ((n = pr_event_topic(
	         ev->workspace_id, ev->space_id, topic, sizeof(topic))) < 0)
		return -1;
	enc_init(&sb, &pk);
	return enc_finish(&sb,
	    msgpack_sbuffer_write(&sb, topic, (size_t)n) ||
	        enc_map(&pk, rd->f, rd->nf, ev),
	    buf, len);
}

static bool
mem_is(const char *p, size_t n, const char *s)
{
	return s != NULL && strlen(s) == n && memcmp(p, s, n) == 0;
}

int
pr_pub_decode(const void *buf, size_t len, struct pr_event *out,
    struct pr_arena *arena, char *err, size_t errlen)
{
	const struct pr_rdesc *rd = pr_rec(PR_R_event);
	struct pr_dec d = {arena, err, errlen};
	const char *p = buf, *ws = NULL, *sp = NULL, *body = NULL;
	size_t scan = len < CM_TOPIC_MAX ? len : CM_TOPIC_MAX;
	uint64_t seen = 0;

	memset(out, 0, sizeof(*out));
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
	/* Strings already in the caller's arena stay until it is freed. */
	if (dec_top(&d, body, len - (size_t)(body - p), rd->f, rd->nf, out,
	        &seen) != 0)
		goto fail;
	if (!mem_is(ws, (size_t)(sp - 1 - ws), out->workspace_id) ||
	    !mem_is(sp, (size_t)(body - 1 - sp), out->space_id)) {
		dec_fail(&d, "topic does not match the event's ids");
		goto fail;
	}
	return 0;
fail:
	memset(out, 0, sizeof(*out));
	return -1;
}
