/*
 * prom_text.c: the text exposition format's syntax (prom_text.h).
 */
#include "prom_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void
reserve(struct api_prom *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	if (b->oom || b->len + more + 1 <= b->cap)
		return;
	while (cap < b->len + more + 1)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->oom = true;
		return;
	}
	b->p = p;
	b->cap = cap;
}

void
api_prom_printf(struct api_prom *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	reserve(b, (size_t)n);
	if (b->oom)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/*
 * Label values escape backslash, double quote and line feed; HELP text
 * only backslash and line feed, so quote_too is false there.
 */
static void
escaped(struct api_prom *b, const char *s, bool quote_too)
{
	reserve(b, 2 * strlen(s));
	for (; !b->oom && *s != '\0'; s++) {
		if (*s == '\\')
			api_prom_printf(b, "\\\\");
		else if (*s == '\n')
			api_prom_printf(b, "\\n");
		else if (*s == '"' && quote_too)
			api_prom_printf(b, "\\\"");
		else
			api_prom_printf(b, "%c", *s);
	}
}

void
api_prom_family(
    struct api_prom *b, const char *name, const char *type, const char *help)
{
	api_prom_printf(b, "# HELP %s ", name);
	escaped(b, help, false);
	api_prom_printf(b, "\n# TYPE %s %s\n", name, type);
}

void
api_prom_label(
    struct api_prom *b, const char *name, const char *value, bool comma)
{
	api_prom_printf(b, "%s%s=\"", comma ? "," : "", name);
	escaped(b, value, true);
	api_prom_printf(b, "\"");
}

void
api_prom_double(struct api_prom *b, double v)
{
	char tmp[40];

	for (int prec = 15; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	api_prom_printf(b, "%s", tmp);
}

void
api_prom_histogram(struct api_prom *b, const char *name, const char *labels,
    const uint64_t *in, const double *le, size_t n, double sum)
{
	const char *sep = labels[0] ? "," : "";
	const char *open = labels[0] ? "{" : "", *close = labels[0] ? "}" : "";
	uint64_t cum = 0;

	for (size_t i = 0; i < n; i++) {
		cum += in[i];
		api_prom_printf(b, "%s_bucket{%s%sle=\"", name, labels, sep);
		api_prom_double(b, le[i]);
		api_prom_printf(b, "\"} %llu\n", (unsigned long long)cum);
	}
	cum += in[n];
	api_prom_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels,
	    sep, (unsigned long long)cum);
	api_prom_printf(b, "%s_sum%s%s%s ", name, open, labels, close);
	api_prom_double(b, sum);
	api_prom_printf(b, "\n%s_count%s%s%s %llu\n", name, open, labels, close,
	    (unsigned long long)cum);
}

char *
api_prom_finish(struct api_prom *b)
{
	char *text;

	reserve(b, 0);
	text = b->oom ? NULL : b->p;
	if (text == NULL)
		free(b->p);
	else
		text[b->len] = '\0';
	memset(b, 0, sizeof(*b));
	return text;
}
