/*
 * out.c: what spacectl prints on stdout: JSON documents for scripts, and
 * tables and records for people.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

void
ctl_print_json(const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (text != NULL)
		printf("%s\n", text);
	free(text);
	fflush(stdout);
}

void
ctl_cell(const json_t *v, char *buf, size_t len)
{
	char *text;

	if (v == NULL || json_is_null(v)) {
		snprintf(buf, len, "-");
	} else if (json_is_string(v)) {
		snprintf(buf, len, "%s", json_string_value(v));
	} else if (json_is_array(v) && json_array_size(v) > 0 &&
	           json_is_string(json_array_get(v, 0))) {
		/* A list of names, as the --grant flag takes it. */
		size_t i, off = 0;
		json_t *e;

		buf[0] = '\0';
		json_array_foreach(v, i, e)
		{
			int n = snprintf(buf + off, len - off, "%s%s",
			    i ? "," : "", json_string_value(e));

			if (n < 0 || (size_t)n >= len - off)
				break;
			off += (size_t)n;
		}
	} else {
		text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		snprintf(buf, len, "%s", text ? text : "?");
		free(text);
	}
	/* A cell is one line. */
	for (char *p = buf; *p != '\0'; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
}

void
ctl_print_table(const json_t *rows, const char *const *cols)
{
	size_t n_cols = 0, width[16] = {0}, i, k;
	char cell[CM_CTL_COL_MAX + 1];
	json_t *row;

	while (cols[n_cols] != NULL && n_cols < 16)
		n_cols++;
	for (k = 0; k < n_cols; k++)
		width[k] = strlen(cols[k]);
	json_array_foreach(rows, i, row)
	{
		for (k = 0; k < n_cols; k++) {
			ctl_cell(
			    json_object_get(row, cols[k]), cell, sizeof(cell));
			if (strlen(cell) > width[k])
				width[k] = strlen(cell);
		}
	}
	for (k = 0; k < n_cols; k++) {
		char up[CM_CTL_COL_MAX + 1];
		size_t j;

		for (j = 0; cols[k][j] && j < CM_CTL_COL_MAX; j++)
			up[j] = (char)(cols[k][j] >= 'a' && cols[k][j] <= 'z'
			                   ? cols[k][j] - 'a' + 'A'
			                   : cols[k][j]);
		up[j] = '\0';
		printf("%-*s%s", k + 1 < n_cols ? (int)width[k] : 0, up,
		    k + 1 < n_cols ? "  " : "\n");
	}
	json_array_foreach(rows, i, row)
	{
		for (k = 0; k < n_cols; k++) {
			ctl_cell(
			    json_object_get(row, cols[k]), cell, sizeof(cell));
			printf("%-*s%s", k + 1 < n_cols ? (int)width[k] : 0,
			    cell, k + 1 < n_cols ? "  " : "\n");
		}
	}
	fflush(stdout);
}

void
ctl_print_record(const json_t *obj)
{
	const char *key;
	json_t *v;
	size_t w = 0;

	json_object_foreach((json_t *)obj, key, v)
	{
		if (strlen(key) > w)
			w = strlen(key);
	}
	json_object_foreach((json_t *)obj, key, v)
	{
		char *text = NULL;

		if (json_is_object(v) ||
		    (json_is_array(v) && json_array_size(v) &&
		        !json_is_string(json_array_get(v, 0))))
			text = json_dumps(v, JSON_INDENT(2));
		if (text != NULL) {
			printf("%-*s  %s\n", (int)w, key, text);
			free(text);
		} else {
			char cell[CM_CTL_SSE_LINE_MAX];

			ctl_cell(v, cell, sizeof(cell));
			printf("%-*s  %s\n", (int)w, key, cell);
		}
	}
	fflush(stdout);
}

bool
ctl_escape(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
		    ch == '.' || ch == '~') {
			if (o + 1 >= len)
				return false;
			buf[o++] = (char)ch;
		} else {
			if (o + 3 >= len)
				return false;
			buf[o++] = '%';
			buf[o++] = hex[ch >> 4];
			buf[o++] = hex[ch & 15];
		}
	}
	buf[o] = '\0';
	return true;
}

bool
ctl_path(char *out, size_t len, const char *fmt, const char *const *ids,
    size_t n_ids)
{
	char esc[3 * CM_NAME_MAX + 1];
	size_t o = 0, k = 0;

	for (const char *p = fmt; *p != '\0'; p++) {
		size_t n;

		if (*p != '%') {
			if (o + 1 >= len)
				return false;
			out[o++] = *p;
			continue;
		}
		if (k == n_ids || ids[k] == NULL ||
		    strlen(ids[k]) > CM_NAME_MAX ||
		    !ctl_escape(ids[k], esc, sizeof(esc)))
			return false;
		k++;
		if ((n = strlen(esc)) + o >= len)
			return false;
		memcpy(out + o, esc, n);
		o += n;
	}
	out[o] = '\0';
	return true;
}

void
ctl_show(const struct ctl *c, json_t *res, const char *const *cols)
{
	json_t *data = json_object_get(res, "data");

	if (c->json)
		ctl_print_json(res);
	else if (json_is_array(data) && cols != NULL)
		ctl_print_table(data, cols);
	else if (json_is_object(data))
		ctl_print_record(data);
}

int
ctl_call_show(struct ctl *c, const char *method, const char *path, json_t *body,
    const char *const *cols)
{
	json_t *res;
	int status, rc = ctl_call(c, method, path, body, &status, &res);

	json_decref(body);
	if (rc == CTL_EXIT_OK)
		ctl_show(c, res, cols);
	json_decref(res);
	return rc;
}
