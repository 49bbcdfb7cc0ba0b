/*
 * prom_text.h: a writer of the Prometheus text exposition format, version
 * 0.0.4 (what GET /metrics answers).  It knows the syntax only: HELP and
 * TYPE lines, label escaping, histogram lines and float formatting; what
 * is measured is metrics.c's business.
 */
#ifndef API_PROM_TEXT_H
#define API_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing text; a zeroed one is empty.  After an allocation failure
 * every call is a no-op and api_prom_finish returns NULL. */
struct api_prom {
	char *p;
	size_t len, cap;
	bool oom;
};

void api_prom_printf(struct api_prom *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "# HELP name help" (help escaped) and "# TYPE name type". */
void api_prom_family(
    struct api_prom *b, const char *name, const char *type, const char *help);

/* name="value", value escaped (backslash, double quote, line feed), with
 * a comma before it when comma. */
void api_prom_label(
    struct api_prom *b, const char *name, const char *value, bool comma);

/* A float as the shortest decimal that reads back as the same double. */
void api_prom_double(struct api_prom *b, double v);

/*
 * A histogram's _bucket lines (cumulative, le = each of the n bounds and
 * then +Inf), _sum and _count.  in holds n + 1 per-bucket counts, not
 * cumulative, the last for values above every bound.  labels is what goes
 * inside the braces before le, already escaped ("" for none).
 */
void api_prom_histogram(struct api_prom *b, const char *name,
    const char *labels, const uint64_t *in, const double *le, size_t n,
    double sum);

/* The NUL-terminated text (the caller frees), or NULL after an allocation
 * failure; b is empty again either way. */
char *api_prom_finish(struct api_prom *b);

#endif
