/*
 * notify.c: the store's listening connection to PostgreSQL (notify.h).
 *
 * A small state machine the loop drives: waiting to connect, connecting
 * (PQconnectStart and PQconnectPoll, the socket polled in the direction
 * libpq asks), LISTEN sent, listening.  Every libpq call here is one that
 * does not wait for the server: the connection is non-blocking once made,
 * input is read with PQconsumeInput only when poll() says there is some,
 * and notifications come out of libpq's queue with PQnotifies.
 */
#include "notify.h"

#include <errno.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"

enum nt_state {
	NT_WAIT,       /* no connection: the next attempt at due */
	NT_CONNECTING, /* PQconnectPoll has more to do */
	NT_LISTEN,     /* LISTEN sent, its result not yet read */
	NT_READY,      /* listening */
};

struct st_notify {
	char *dsn;
	int64_t self[CM_PG_WRITERS]; /* the writing connections' processes */
	size_t n_self;
	PGconn *conn;
	enum nt_state state;
	PostgresPollingStatusType dir; /* NT_CONNECTING: what libpq waits on */
	bool flushing;                 /* output waits for the socket */
	int64_t due;                   /* NT_WAIT: next attempt; else timeout */
	int64_t backoff;
};

int
st_notify_open(
    struct st_notify **out, const char *dsn, const int64_t *self, size_t n_self)
{
	struct st_notify *n;

	*out = NULL;
	if ((n = calloc(1, sizeof(*n))) == NULL ||
	    (n->dsn = strdup(dsn)) == NULL) {
		free(n);
		return -1;
	}
	for (; n->n_self < n_self && n->n_self < CM_PG_WRITERS; n->n_self++)
		n->self[n->n_self] = self[n->n_self];
	n->state = NT_WAIT;
	n->due = cm_mono_ms(); /* the first attempt at once */
	n->backoff = CM_NOTIFY_RETRY_MIN_MS;
	*out = n;
	return 0;
}

void
st_notify_close(struct st_notify *n)
{
	if (n == NULL)
		return;
	PQfinish(n->conn);
	/* The DSN is a secret: wiped before its memory goes back. */
	explicit_bzero(n->dsn, strlen(n->dsn));
	free(n->dsn);
	free(n);
}

/* Drops the connection and waits the backoff before the next attempt. */
static void
nt_lost(struct st_notify *n, int64_t now, const char *why)
{
	char msg[CM_PG_ERRMSG_MAX];
	size_t len;

	/* libpq's message names the server, never the password. */
	snprintf(msg, sizeof(msg), "%s",
	    why != NULL ? why
	    : n->conn   ? PQerrorMessage(n->conn)
	                : "out of memory");
	len = strlen(msg);
	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		msg[--len] = '\0';
	cm_warnx("store: not listening for other stores' events (%s); trying"
	         " again in %lld ms",
	    msg, (long long)n->backoff);
	PQfinish(n->conn);
	n->conn = NULL;
	n->state = NT_WAIT;
	n->flushing = false;
	n->due = now + n->backoff;
	n->backoff = n->backoff * 2 > CM_NOTIFY_RETRY_MAX_MS
	                 ? CM_NOTIFY_RETRY_MAX_MS
	                 : n->backoff * 2;
}

static void
nt_quiet(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static void
nt_connect(struct st_notify *n, int64_t now)
{
	n->conn = PQconnectStart(n->dsn);
	if (n->conn == NULL || PQstatus(n->conn) == CONNECTION_BAD) {
		nt_lost(n, now, NULL);
		return;
	}
	PQsetNoticeProcessor(n->conn, nt_quiet, NULL);
	n->state = NT_CONNECTING;
	/* libpq: before the first PQconnectPoll, wait to write. */
	n->dir = PGRES_POLLING_WRITING;
	n->due = now + CM_NOTIFY_CONNECT_MS;
}

/* Sends what libpq holds; false when the connection failed. */
static bool
nt_flush(struct st_notify *n)
{
	int rc = PQflush(n->conn);

	n->flushing = rc == 1;
	return rc >= 0;
}

static void
nt_connected(struct st_notify *n, int64_t now)
{
	if (PQsetnonblocking(n->conn, 1) != 0 ||
	    PQsendQuery(n->conn, "LISTEN " ST_NOTIFY_CHANNEL) != 1 ||
	    !nt_flush(n)) {
		nt_lost(n, now, NULL);
		return;
	}
	n->state = NT_LISTEN;
}

/* Reads what arrived and the LISTEN's result; false once lost. */
static bool
nt_read(struct st_notify *n, int64_t now)
{
	PGresult *res;

	if (PQconsumeInput(n->conn) != 1) {
		nt_lost(n, now, NULL);
		return false;
	}
	while (!PQisBusy(n->conn) && (res = PQgetResult(n->conn)) != NULL) {
		bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;

		PQclear(res);
		if (!ok) {
			nt_lost(n, now, NULL);
			return false;
		}
		if (n->state == NT_LISTEN) {
			n->state = NT_READY;
			n->backoff = CM_NOTIFY_RETRY_MIN_MS;
			cm_info("store: listening for other stores' events");
		}
	}
	if (PQstatus(n->conn) == CONNECTION_BAD) {
		nt_lost(n, now, NULL);
		return false;
	}
	return true;
}

void
st_notify_tend(struct st_notify *n, int64_t now)
{
	struct pollfd p;
	int fd;

	if (n->state == NT_WAIT) {
		if (now >= n->due)
			nt_connect(n, now);
		return;
	}
	/* What the socket holds now; poll() with no wait never blocks. */
	if ((fd = st_notify_fd(n, &p.events)) < 0) {
		nt_lost(n, now, "the connection has no socket");
		return;
	}
	p.fd = fd;
	p.revents = 0;
	if (poll(&p, 1, 0) < 0 && errno != EINTR)
		return;
	if (n->state == NT_CONNECTING) {
		if (p.revents == 0) {
			if (now >= n->due)
				nt_lost(n, now, "connecting took too long");
			return;
		}
		n->dir = PQconnectPoll(n->conn);
		if (n->dir == PGRES_POLLING_FAILED)
			nt_lost(n, now, NULL);
		else if (n->dir == PGRES_POLLING_OK)
			nt_connected(n, now);
		return;
	}
	if ((p.revents & POLLOUT) && !nt_flush(n)) {
		nt_lost(n, now, NULL);
		return;
	}
	if (p.revents & (POLLIN | POLLERR | POLLHUP))
		nt_read(n, now);
}

int
st_notify_fd(const struct st_notify *n, short *events)
{
	*events = 0;
	if (n->conn == NULL || n->state == NT_WAIT)
		return -1;
	if (n->state == NT_CONNECTING)
		*events = n->dir == PGRES_POLLING_READING ? POLLIN : POLLOUT;
	else
		*events = (short)(POLLIN | (n->flushing ? POLLOUT : 0));
	return PQsocket(n->conn);
}

int64_t
st_notify_due(const struct st_notify *n)
{
	return n->state == NT_WAIT || n->state == NT_CONNECTING ? n->due
	                                                        : INT64_MAX;
}

bool
st_notify_listening(const struct st_notify *n)
{
	return n->state == NT_READY;
}

/* "<space_id> <sequence>" or "<space_id> 0 <kind>" into *out. */
static bool
nt_parse(const char *s, struct st_heard *out)
{
	const char *sp = strchr(s, ' ');
	const char *kind;
	char *end;
	size_t len;

	if (sp == NULL || (len = (size_t)(sp - s)) == 0 || len > CM_ID_MAX)
		return false;
	memcpy(out->space_id, s, len);
	out->space_id[len] = '\0';
	errno = 0;
	out->sequence = strtoll(sp + 1, &end, 10);
	if (errno != 0 || end == sp + 1 || out->sequence < 0)
		return false;
	out->kind[0] = '\0';
	if (out->sequence > 0)
		return *end == '\0';
	if (*end != ' ' || (len = strlen(kind = end + 1)) == 0 ||
	    len > CM_ID_MAX)
		return false;
	memcpy(out->kind, kind, len + 1);
	return true;
}

/* Whether a server process is one of the store's own writers. */
static bool
nt_own(const struct st_notify *n, int pid)
{
	for (size_t i = 0; i < n->n_self; i++)
		if (n->self[i] == (int64_t)pid)
			return true;
	return false;
}

bool
st_notify_next(struct st_notify *n, struct st_heard *out)
{
	PGnotify *nf;

	if (n->conn == NULL)
		return false;
	while ((nf = PQnotifies(n->conn)) != NULL) {
		bool ok;

		/* Its own: the loop published them when they committed. */
		if (nt_own(n, nf->be_pid)) {
			PQfreemem(nf);
			continue;
		}
		ok = nt_parse(nf->extra, out);
		if (!ok)
			cm_warnx("store: a malformed announcement on %s: %.80s",
			    ST_NOTIFY_CHANNEL, nf->extra);
		PQfreemem(nf);
		if (ok)
			return true;
	}
	return false;
}
