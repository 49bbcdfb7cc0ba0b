/*
 * db_pg_row.c: the PostgreSQL backend's rows: stepping through a
 * statement's result and reading its columns.  Rows come as text:
 * booleans read as 1 and 0, and a bytea column is unescaped when it is
 * read.
 */
#include "db.h"
#include "db_backend.h"
#include "db_pg_int.h"

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

int
st_pg_step(struct st_stmt *s)
{
	if (s->rc != ST_OK)
		return s->rc;
	PQfreemem(s->bytes);
	s->bytes = NULL;
	if (s->row + 1 < s->n_rows) {
		s->row++;
		return ST_ROW;
	}
	s->row = s->n_rows;
	return ST_DONE;
}

const char *
st_pg_col_text(struct st_stmt *s, int col)
{
	if (PQgetisnull(s->res, s->row, col))
		return NULL;
	return PQgetvalue(s->res, s->row, col);
}

/* Booleans come back as t and f: they read as SQLite's 1 and 0. */
int64_t
st_pg_col_int(struct st_stmt *s, int col)
{
	const char *v = PQgetvalue(s->res, s->row, col);

	if (v[0] == 't' || v[0] == 'f')
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

/*
 * A bytea column arrives escaped (text results) and is unescaped here;
 * the bytes stay valid until the next step or done, or until another
 * bytea column of the same row is read.
 */
const void *
st_pg_col_blob(struct st_stmt *s, int col, size_t *len)
{
	const char *v;

	*len = 0;
	if (PQgetisnull(s->res, s->row, col))
		return NULL;
	v = PQgetvalue(s->res, s->row, col);
	if (PQftype(s->res, col) != PG_BYTEA_OID) {
		*len = (size_t)PQgetlength(s->res, s->row, col);
		return v;
	}
	if (s->bytes == NULL || s->bytes_col != col) {
		PQfreemem(s->bytes);
		s->bytes = PQunescapeBytea((const unsigned char *)v, len);
		s->bytes_col = col;
		if (s->bytes == NULL)
			*len = 0;
		return s->bytes;
	}
	return s->bytes;
}

bool
st_pg_col_null(struct st_stmt *s, int col)
{
	return PQgetisnull(s->res, s->row, col) != 0;
}
