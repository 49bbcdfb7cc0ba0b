#include "testkit.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "clock.h"
#include "token.h"

extern char **environ;

/* Binds 127.0.0.1:port (0: any) and returns the port bound, or -1. */
static int
try_port(int port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), got = -1;

	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		got = ntohs(sa.sin_port);
	close(fd);
	return got;
}

/*
 * A port outside the kernel's ephemeral range: a port the kernel handed
 * out and took back can go to any test's next outgoing connection (curl,
 * wrk) before the server binds it.  Outside the range, only another test
 * choosing the very same port at the same moment could take it.
 */
int
tk_free_port(void)
{
	unsigned lo = 32768, hi = 60999, first, span;
	char *range =
	    tk_read_file("/proc/sys/net/ipv4/ip_local_port_range", NULL);

	if (range != NULL) {
		if (sscanf(range, "%u %u", &lo, &hi) != 2 || lo > hi ||
		    hi > 65535) {
			lo = 32768;
			hi = 60999;
		}
		free(range);
	}
	/* Below the range if there is room there, else above it. */
	if (lo > 10000) {
		first = 10000;
		span = lo - 10000;
	} else {
		first = hi + 1;
		span = 65536 - first;
	}
	if (span > 0) {
		unsigned start = (unsigned)getpid() * 7919u +
		                 (unsigned)(cm_mono_ns() / 1000);

		for (unsigned i = 0; i < 64; i++) {
			int port = (int)(first + (start + i * 104729u) % span);

			if (try_port(port) == port)
				return port;
		}
	}
	return try_port(0);
}

void
tk_tmpdir(char *out, size_t len, const char *tag)
{
	if ((size_t)snprintf(out, len, "/tmp/spaced-%s-XXXXXX", tag) >= len ||
	    mkdtemp(out) == NULL) {
		perror("mkdtemp");
		abort();
	}
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
tk_rmrf(const char *dir)
{
	if (strncmp(dir, "/tmp/spaced-", 12) != 0)
		return;
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

bool
tk_wait_until(bool (*cond)(void *), void *arg, int timeout_ms)
{
	int64_t deadline = cm_mono_ms() + timeout_ms;
	struct timespec ts = {0, 2 * 1000 * 1000};

	for (;;) {
		if (cond(arg))
			return true;
		if (cm_mono_ms() >= deadline)
			return false;
		nanosleep(&ts, NULL);
	}
}

/*
 * Every process a test started, by pid, so that a failed assertion still
 * leaves none behind (tk_cleanup runs as the Criterion fini and at exit).
 * Pids, not tk_proc pointers: a failed assertion unwinds the test's stack,
 * so a tk_proc that lived there is gone by the time the fini runs.
 */
#define TK_PROCS_MAX 16
static pid_t tk_started[TK_PROCS_MAX];

static void
reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void
tk_cleanup(void)
{
	for (int i = 0; i < TK_PROCS_MAX; i++) {
		if (tk_started[i] > 0) {
			kill(tk_started[i], SIGKILL);
			reap(tk_started[i]);
		}
		tk_started[i] = 0;
	}
}

static void
track(pid_t pid)
{
	static bool registered;

	if (!registered) {
		atexit(tk_cleanup);
		registered = true;
	}
	for (int i = 0; i < TK_PROCS_MAX; i++) {
		if (tk_started[i] <= 0) {
			tk_started[i] = pid;
			return;
		}
	}
}

static void
untrack(pid_t pid)
{
	for (int i = 0; i < TK_PROCS_MAX; i++)
		if (tk_started[i] == pid)
			tk_started[i] = 0;
}

const char *
tk_bin_dir(void)
{
	const char *dir = getenv("TK_BIN_DIR");

	return dir != NULL && dir[0] != '\0' ? dir : SPACED_BIN_DIR;
}

/* spaced_defaults: at most four flags and the NULL. */
#define TK_DEFAULTS 5

/* True when flags set the config key whose flag is prefix ("--key="). */
static bool
has_flag(const char *const *flags, const char *prefix)
{
	for (size_t i = 0; flags && flags[i]; i++)
		if (strncmp(flags[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

int
tk_pg_dsn(const char *state, char *out, size_t len)
{
	char *text = tk_read_file(state, NULL), *line, *nl;

	out[0] = '\0';
	for (line = text; line != NULL && *line != '\0'; line = nl + 1) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl = '\0';
		if (line[0] != '#' && line[0] != '\0')
			snprintf(out, len, "%s", line);
		if (nl == NULL)
			break;
	}
	free(text);
	return out[0] != '\0' ? 0 : -1;
}

int
tk_pg_schema(const char *dir, char *out, size_t len)
{
	static const char key[] = "search_path=";
	char path[256], *text, *at;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/pg.conf", dir);
	out[0] = '\0';
	if ((text = tk_read_file(path, NULL)) == NULL)
		return -1;
	if ((at = strstr(text, key)) != NULL) {
		at += sizeof(key) - 1;
		while ((isalnum((unsigned char)at[n]) || at[n] == '_') &&
		       n + 1 < len)
			n++;
		snprintf(out, len, "%.*s", (int)n, at);
	}
	free(text);
	return out[0] != '\0' ? 0 : -1;
}

/* How long a read of the database waits for the store's write lock. */
#define TK_DB_BUSY_MS 5000

/* Whether the spaced a test starts use PostgreSQL. */
static bool
db_is_pg(void)
{
	return getenv("TK_PG_STATE") != NULL;
}

/* A connection to the schema of the spaced on dir, its name to schema
 * (CM_ID_MAX + 1 bytes); NULL (why on stderr) when there is none. */
static PGconn *
db_pg_open(const char *dir, char *schema)
{
	char dsn[1024], sql[CM_ID_MAX + 32];
	PGconn *c;
	PGresult *r;
	bool ok;

	if (tk_pg_dsn(getenv("TK_PG_STATE"), dsn, sizeof(dsn)) != 0 ||
	    tk_pg_schema(dir, schema, CM_ID_MAX + 1) != 0) {
		tk_fail("testkit", "no PostgreSQL schema for %s", dir);
		return NULL;
	}
	c = PQconnectdb(dsn);
	if (PQstatus(c) != CONNECTION_OK) {
		tk_fail("testkit", "%s", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	snprintf(sql, sizeof(sql), "SET search_path TO \"%s\"", schema);
	r = PQexec(c, sql);
	if (!(ok = PQresultStatus(r) == PGRES_COMMAND_OK))
		tk_fail("testkit", "%s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	if (!ok) {
		PQfinish(c);
		return NULL;
	}
	return c;
}

sqlite3 *
tk_db_sqlite(const char *dir)
{
	char path[512];
	sqlite3 *db = NULL;

	snprintf(path, sizeof(path), "%s/spaced.db", dir);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		tk_fail("testkit", "cannot open %s", path);
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, TK_DB_BUSY_MS);
	return db;
}

static long long
db_pg_count(const char *dir, const char *sql, const char *arg)
{
	char schema[CM_ID_MAX + 1], pg_sql[1024];
	const char *q = strchr(sql, '?');
	PGconn *c = db_pg_open(dir, schema);
	PGresult *r;
	long long n = -1;

	if (c == NULL)
		return -1;
	/* PostgreSQL numbers its parameters. */
	if (q != NULL)
		snprintf(pg_sql, sizeof(pg_sql), "%.*s$1%s", (int)(q - sql),
		    sql, q + 1);
	else
		snprintf(pg_sql, sizeof(pg_sql), "%s", sql);
	r = PQexecParams(c, pg_sql, arg != NULL, NULL, &arg, NULL, NULL, 0);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		n = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	else
		tk_fail("testkit", "%s: %s", pg_sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return n;
}

long long
tk_db_count(const char *dir, const char *sql, const char *arg)
{
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	long long n = -1;

	if (db_is_pg())
		return db_pg_count(dir, sql, arg);
	if ((db = tk_db_sqlite(dir)) == NULL)
		return -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    (arg == NULL || sqlite3_bind_text(st, 1, arg, -1,
	                        SQLITE_TRANSIENT) == SQLITE_OK) &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	else
		tk_fail("testkit", "%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static int
db_pg_each(const char *dir, tk_db_cell cell, void *arg)
{
	char schema[CM_ID_MAX + 1], sql[256];
	const char *param[1] = {schema};
	PGconn *c = db_pg_open(dir, schema);
	PGresult *tables, *rows;
	int n_tables = -1;

	if (c == NULL)
		return -1;
	tables = PQexecParams(c,
	    "SELECT table_name FROM information_schema.tables "
	    "WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
	    1, NULL, param, NULL, NULL, 0);
	if (PQresultStatus(tables) != PGRES_TUPLES_OK) {
		tk_fail("testkit", "the tables: %s", PQerrorMessage(c));
		goto out;
	}
	for (int t = 0; t < PQntuples(tables); t++) {
		const char *table = PQgetvalue(tables, t, 0);

		snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\".\"%s\"",
		    schema, table);
		/* Binary results: every value as its bytes. */
		rows = PQexecParams(c, sql, 0, NULL, NULL, NULL, NULL, 1);
		if (PQresultStatus(rows) != PGRES_TUPLES_OK) {
			tk_fail("testkit", "%s: %s", sql, PQerrorMessage(c));
			PQclear(rows);
			goto out;
		}
		for (int i = 0; i < PQntuples(rows); i++)
			for (int k = 0; k < PQnfields(rows); k++)
				if (!PQgetisnull(rows, i, k))
					cell(arg, table, PQfname(rows, k),
					    PQgetvalue(rows, i, k),
					    (size_t)PQgetlength(rows, i, k));
		PQclear(rows);
	}
	n_tables = PQntuples(tables);
out:
	PQclear(tables);
	PQfinish(c);
	return n_tables;
}

int
tk_db_each(const char *dir, tk_db_cell cell, void *arg)
{
	sqlite3 *db;
	sqlite3_stmt *tables = NULL, *rows = NULL;
	char sql[256];
	int n_tables = 0;

	if (db_is_pg())
		return db_pg_each(dir, cell, arg);
	if ((db = tk_db_sqlite(dir)) == NULL)
		return -1;
	if (sqlite3_prepare_v2(db,
	        "SELECT name FROM sqlite_master WHERE type = 'table'", -1,
	        &tables, NULL) != SQLITE_OK) {
		n_tables = tk_fail("testkit", "%s", sqlite3_errmsg(db));
		goto out;
	}
	while (sqlite3_step(tables) == SQLITE_ROW) {
		const char *table =
		    (const char *)sqlite3_column_text(tables, 0);

		snprintf(sql, sizeof(sql), "SELECT * FROM \"%s\"", table);
		if (sqlite3_prepare_v2(db, sql, -1, &rows, NULL) != SQLITE_OK) {
			n_tables = tk_fail(
			    "testkit", "%s: %s", sql, sqlite3_errmsg(db));
			goto out;
		}
		n_tables++;
		while (sqlite3_step(rows) == SQLITE_ROW)
			for (int k = 0; k < sqlite3_column_count(rows); k++)
				if (sqlite3_column_type(rows, k) != SQLITE_NULL)
					cell(arg, table,
					    sqlite3_column_name(rows, k),
					    sqlite3_column_blob(rows, k),
					    (size_t)sqlite3_column_bytes(
					        rows, k));
		sqlite3_finalize(rows);
	}
out:
	sqlite3_finalize(tables);
	sqlite3_close(db);
	return n_tables;
}

/*
 * The --config flag of a binary started on dir: /dev/null, or with
 * TK_PG_STATE naming the state file of tests/pg/cluster.sh, a config file
 * <dir>/pg.conf (made once, so a restart finds the same data) whose
 * postgres_dsn names a fresh schema of the cluster.  The variable is the
 * test's, not spaced's: it starts with TK_, which spaced does not read.
 */
static int
pg_conf(const char *dir, char *flag, size_t len)
{
	static unsigned seq;
	const char *state = getenv("TK_PG_STATE");
	char path[256], base[768], schema[64], sql[128];
	PGconn *c;
	PGresult *r;
	FILE *f;
	bool ok;

	if (state == NULL) {
		snprintf(flag, len, "--config=/dev/null");
		return 0;
	}
	snprintf(path, sizeof(path), "%s/pg.conf", dir);
	snprintf(flag, len, "--config=%s", path);
	if (access(path, F_OK) == 0)
		return 0;
	if (tk_pg_dsn(state, base, sizeof(base)) != 0)
		return -1;
	snprintf(schema, sizeof(schema), "tk_%d_%u", (int)getpid(), seq++);
	snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", schema);
	c = PQconnectdb(base);
	r = PQexec(c, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "testkit: %s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	if (!ok || (f = fopen(path, "w")) == NULL)
		return -1;
	fprintf(f,
	    "store_backend = postgres\n"
	    "postgres_dsn = \"%s options='-csearch_path=%s'\"\n",
	    base, schema);
	return fclose(f) == 0 ? 0 : -1;
}

/* fork+exec of a binary from the build tree, without waiting: *ready_fd
 * gets the read end of its --notify-fd pipe. */
static int
spawn_bin(struct tk_proc *p, const char *binary, const char *dir,
    const char *const *defaults, const char *const *flags, const char *output,
    bool own_group, int *ready_fd)
{
	char bin[512], data[300], fdarg[32], conf[300];
	const char *argv[48];
	size_t argc = 0;
	int fds[2];

	memset(p, 0, sizeof(*p));
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	snprintf(p->run_dir, sizeof(p->run_dir), "%s/run", dir);
	cm_ipc_url(p->store_url, sizeof(p->store_url), p->run_dir, "store.ipc");
	cm_ipc_url(p->events_url, sizeof(p->events_url), p->run_dir,
	    "store-events.ipc");
	snprintf(bin, sizeof(bin), "%s/%s", tk_bin_dir(), binary);
	snprintf(data, sizeof(data), "--data-dir=%s", dir);
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	snprintf(fdarg, sizeof(fdarg), "--notify-fd=%d", fds[1]);
	argv[argc++] = bin;
	argv[argc++] = data;
	argv[argc++] = fdarg;
	argv[argc++] = "--log-format=text";
	/* No config file but the one a test names (a DSN goes only there),
	 * or, under TK_PG_STATE, one naming a PostgreSQL schema of the data
	 * dir's own. */
	if (!has_flag(flags, "--config=")) {
		if (pg_conf(dir, conf, sizeof(conf)) != 0)
			return -1;
		argv[argc++] = conf;
	}
	for (size_t i = 0; defaults && defaults[i] && argc < 30; i++)
		argv[argc++] = defaults[i];
	for (size_t i = 0; flags && flags[i] && argc < 46; i++)
		argv[argc++] = flags[i];
	argv[argc] = NULL;

	if ((p->pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (p->pid == 0) {
		/* The write end survives exec: clear close-on-exec on it.  The
		 * service dies with the test that started it. */
		fcntl(fds[1], F_SETFD, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (own_group)
			setpgid(0, 0);
		if (output != NULL) {
			int out = open(output,
			    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

			if (out < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
				_exit(127);
		}
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	/* Here too: whichever of parent and child runs first. */
	if (own_group)
		setpgid(p->pid, p->pid);
	track(p->pid);
	close(fds[1]);
	*ready_fd = fds[0];
	return 0;
}

bool
tk_ready_wait(int fd, int timeout_ms)
{
	struct pollfd pfd = {fd, POLLIN, 0};
	char line[16];
	ssize_t n = 0;

	if (poll(&pfd, 1, timeout_ms) == 1)
		n = read(fd, line, sizeof(line));
	close(fd);
	return n > 0 && strncmp(line, "ready", 5) == 0;
}

static int
start_bin(struct tk_proc *p, const char *binary, const char *dir,
    const char *const *defaults, const char *const *flags, const char *output)
{
	int fd;

	if (spawn_bin(p, binary, dir, defaults, flags, output, false, &fd) != 0)
		return -1;
	if (!tk_ready_wait(fd, 30000)) {
		tk_proc_stop(p, SIGKILL);
		return -1;
	}
	return 0;
}

int
tk_store_start(struct tk_proc *p, const char *dir, const char *const *flags)
{
	return start_bin(p, "spaced-store", dir, NULL, flags, NULL);
}

int
tk_spaced_start(struct tk_proc *p, const char *dir, const char *const *flags)
{
	return tk_spaced_start_logged(p, dir, flags, NULL);
}

/*
 * spaced's default flags: the fake driver; no managed instance registered
 * at the first start and no warm standby, unless flags set
 * --managed-browsers or --warm-standby (so a test counting instances or
 * browsers sees only its own); and an api port of the test's own unless
 * flags name one, which goes to *http_port.
 */
static int
spaced_defaults(const char *const *flags, const char *defaults[TK_DEFAULTS],
    char *listen, size_t len, int *http_port)
{
	static const char prefix[] = "--http-listen=";
	const char *port = NULL;
	size_t n = 0;

	defaults[n++] = "--allow-fake-driver=true";
	if (!has_flag(flags, "--managed-browsers="))
		defaults[n++] = "--managed-browsers=0";
	if (!has_flag(flags, "--warm-standby"))
		defaults[n++] = "--warm-standby=false";
	*http_port = -1;
	for (size_t i = 0; flags && flags[i]; i++)
		if (strncmp(flags[i], prefix, sizeof(prefix) - 1) == 0 &&
		    (port = strrchr(flags[i], ':')) != NULL)
			*http_port = (int)strtol(port + 1, NULL, 10);
	if (port == NULL) {
		if ((*http_port = tk_free_port()) < 0)
			return -1;
		snprintf(listen, len, "%s127.0.0.1:%d", prefix, *http_port);
		defaults[n++] = listen;
	}
	defaults[n] = NULL;
	return 0;
}

static void
set_http(struct tk_proc *p, int http_port)
{
	p->http_port = http_port;
	snprintf(p->http_base, sizeof(p->http_base), "http://127.0.0.1:%d",
	    http_port);
}

int
tk_spaced_start_logged(struct tk_proc *p, const char *dir,
    const char *const *flags, const char *output)
{
	const char *defaults[TK_DEFAULTS];
	char listen[64];
	int http_port, rc;

	if (spaced_defaults(
	        flags, defaults, listen, sizeof(listen), &http_port) != 0)
		return -1;
	rc = start_bin(p, "spaced", dir, defaults, flags, output);
	set_http(p, http_port);
	return rc;
}

int
tk_spaced_spawn(struct tk_proc *p, const char *dir, const char *const *flags,
    const char *output, bool own_group, int *ready_fd)
{
	const char *defaults[TK_DEFAULTS];
	char listen[64];
	int http_port;

	if (spaced_defaults(
	        flags, defaults, listen, sizeof(listen), &http_port) != 0 ||
	    spawn_bin(p, "spaced", dir, defaults, flags, output, own_group,
	        ready_fd) != 0)
		return -1;
	set_http(p, http_port);
	return 0;
}

int
tk_bin_start(struct tk_proc *p, const char *binary, const char *dir,
    const char *const *flags, const char *output)
{
	return start_bin(p, binary, dir, NULL, flags, output);
}

int
tk_proc_wait(struct tk_proc *p, int timeout_ms, int *status)
{
	struct timespec ts = {0, 2 * 1000 * 1000};
	int64_t deadline = cm_mono_ms() + timeout_ms;
	pid_t r;

	if (p->pid <= 0)
		return -1;
	for (;;) {
		if ((r = waitpid(p->pid, status, WNOHANG)) == p->pid) {
			untrack(p->pid);
			p->pid = 0;
			return 0;
		}
		if (r < 0 && errno != EINTR)
			return -1;
		if (cm_mono_ms() >= deadline)
			return -1;
		nanosleep(&ts, NULL);
	}
}

int
tk_ps_read(struct tk_ps *out, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	while (d != NULL && n < max && (de = readdir(d)) != NULL) {
		char path[64], *text, *p, *end;
		long pid = strtol(de->d_name, &end, 10), ppid, pgrp;

		if (*end != '\0' || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((text = tk_read_file(path, NULL)) == NULL)
			continue;
		/* pid (comm) state ppid pgrp: comm may hold spaces. */
		if ((p = strrchr(text, ')')) != NULL &&
		    sscanf(p + 1, " %c %ld %ld", &out[n].state, &ppid, &pgrp) ==
		        3) {
			out[n].pid = (pid_t)pid;
			out[n].ppid = (pid_t)ppid;
			out[n].pgrp = (pid_t)pgrp;
			n++;
		}
		free(text);
	}
	if (d != NULL)
		closedir(d);
	return n;
}

bool
tk_pid_ended(pid_t pid)
{
	char path[64], buf[2048], *p;
	unsigned long long pnd;
	unsigned long flags = 0;
	bool ended = false;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return true;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL)
		return true; /* gone while being read */
	if (p[2] == 'Z' || p[2] == 'X' ||
	    (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %lu", &flags) == 1 &&
	        (flags & 0x4) != 0))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return true;
	while (fgets(buf, sizeof(buf), f) != NULL)
		if ((sscanf(buf, "SigPnd: %llx", &pnd) == 1 ||
		        sscanf(buf, "ShdPnd: %llx", &pnd) == 1) &&
		    (pnd & (1ULL << (SIGKILL - 1))) != 0)
			ended = true;
	fclose(f);
	return ended;
}

int
tk_actor_pids(pid_t parent, const char *space_id, pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char path[300], buf[4096], want[128];
		char *status;
		long pid, ppid = -1;
		size_t len = 0;
		char *end;
		FILE *f;

		pid = strtol(e->d_name, &end, 10);
		if (*end != '\0' || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/status", pid);
		if ((status = tk_read_file(path, NULL)) == NULL)
			continue;
		{
			char *pp = strstr(status, "\nPPid:");
			if (pp != NULL)
				ppid = strtol(pp + 6, NULL, 10);
		}
		free(status);
		if (ppid != parent)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
		if ((f = fopen(path, "rb")) == NULL)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		for (size_t i = 0; i < len; i++)
			if (buf[i] == '\0')
				buf[i] = ' ';
		if (strstr(buf, "spaced-actor") == NULL)
			continue;
		snprintf(
		    want, sizeof(want), "--space=%s", space_id ? space_id : "");
		if (space_id != NULL && strstr(buf, want) == NULL)
			continue;
		if (found < max)
			pids[found] = (pid_t)pid;
		found++;
	}
	closedir(d);
	return found;
}

void
tk_proc_stop(struct tk_proc *p, int sig)
{
	if (p->pid <= 0)
		return;
	kill(p->pid, sig);
	reap(p->pid);
	untrack(p->pid);
	p->pid = 0;
}

struct tk_buf {
	char *data;
	size_t len;
};

static size_t
http_collect(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct tk_buf *b = arg;
	size_t n = size * nmemb;
	char *grown = realloc(b->data, b->len + n + 1);

	if (grown == NULL)
		return 0;
	memcpy(grown + b->len, ptr, n);
	b->data = grown;
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

/* One request; the body into buf and, unless head is NULL, the header
 * lines into head.  Returns the status, or -1. */
static long
http_request(const struct tk_proc *p, const char *method, const char *path,
    const char *token, const char *req_body, const char *const *headers,
    struct tk_buf *buf, struct tk_buf *head)
{
	struct curl_slist *hdrs = NULL;
	char url[512], auth[CM_TOKEN_MAX + 32];
	long status = -1;
	CURL *c;

	if ((c = curl_easy_init()) == NULL)
		return -1;
	snprintf(url, sizeof(url), "%s%s", p->http_base, path);
	if (token != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		hdrs = curl_slist_append(hdrs, auth);
	}
	if (req_body != NULL) {
		hdrs =
		    curl_slist_append(hdrs, "Content-Type: application/json");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, req_body);
		curl_easy_setopt(
		    c, CURLOPT_POSTFIELDSIZE, (long)strlen(req_body));
	}
	for (size_t i = 0; headers && headers[i]; i++)
		hdrs = curl_slist_append(hdrs, headers[i]);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, buf);
	if (head != NULL) {
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, http_collect);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, head);
	}
	/* Long enough for a stream that lasts a whole test under ASan. */
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 180000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(hdrs);
	curl_easy_cleanup(c);
	return status;
}

int
tk_http(const struct tk_proc *p, const char *method, const char *path,
    const char *token, const char *req_body, const char *const *headers,
    char **body)
{
	struct tk_buf buf = {NULL, 0};
	long status;

	if (body != NULL)
		*body = NULL;
	status =
	    http_request(p, method, path, token, req_body, headers, &buf, NULL);
	if (body != NULL && status >= 0)
		*body = buf.data;
	else
		free(buf.data);
	return (int)status;
}

int
tk_http_bytes(const struct tk_proc *p, const char *path, const char *token,
    char **body, size_t *len, char **head)
{
	struct tk_buf buf = {NULL, 0}, hbuf = {NULL, 0};
	long status =
	    http_request(p, "GET", path, token, NULL, NULL, &buf, &hbuf);

	*body = buf.data;
	*len = buf.len;
	*head = hbuf.data;
	return (int)status;
}

int
tk_npm_ci(const char *dir)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s/scripts/npm_ci.sh %s/%s",
	    SPACED_SOURCE_DIR, SPACED_SOURCE_DIR, dir);
	return system(cmd) == 0 ? 0 : -1;
}

pid_t
tk_spawn_group(char *const argv[], char *const env[], const char *prefix,
    int in_fd, int out_fd)
{
	char *envp[TK_SPAWN_INHERIT_MAX + TK_SPAWN_ENV_MAX + 1];
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	pid_t pid;
	size_t n = 0;
	int rc;

	for (char **e = environ; *e != NULL && n < TK_SPAWN_INHERIT_MAX; e++)
		if (strncmp(*e, prefix, strlen(prefix)) != 0)
			envp[n++] = *e;
	for (size_t i = 0; env[i] != NULL && i < TK_SPAWN_ENV_MAX; i++)
		envp[n++] = env[i];
	envp[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	if (in_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, in_fd, STDIN_FILENO);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	return rc == 0 ? pid : -1;
}

int
tk_http_head(const struct tk_proc *p, const char *method, const char *path,
    const char *token, const char *req_body, const char *const *headers,
    char **body, char **head)
{
	struct tk_buf buf = {NULL, 0}, hbuf = {NULL, 0};
	long status = http_request(
	    p, method, path, token, req_body, headers, &buf, &hbuf);

	*body = buf.data;
	*head = hbuf.data;
	return (int)status;
}

bool
tk_head_value(const char *head, const char *name, char *out, size_t len)
{
	size_t k = strlen(name);

	for (const char *l = head; l != NULL && *l != '\0';) {
		const char *end = strchr(l, '\n');
		size_t n = end != NULL ? (size_t)(end - l) : strlen(l);

		if (n > k && strncasecmp(l, name, k) == 0 && l[k] == ':') {
			const char *v = l + k + 1;

			n -= k + 1;
			while (n > 0 && *v == ' ')
				v++, n--;
			while (n > 0 && (v[n - 1] == '\r' || v[n - 1] == ' '))
				n--;
			snprintf(out, len, "%.*s", (int)n, v);
			return n < len;
		}
		l = end != NULL ? end + 1 : NULL;
	}
	return false;
}

static bool
http_healthy(void *arg)
{
	return tk_http(arg, "GET", "/healthz", NULL, NULL, NULL, NULL) == 200;
}

bool
tk_http_ready(const struct tk_proc *p, int timeout_ms)
{
	return tk_wait_until(http_healthy, (void *)p, timeout_ms);
}

/* The command line of pid with NULs made spaces, when pid is a live
 * child of parent; NULL otherwise. */
static char *
child_cmdline(pid_t pid, pid_t parent)
{
	char path[64], *text, *p;
	long ppid = -1;
	bool zombie = false;
	size_t len = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((text = tk_read_file(path, NULL)) == NULL)
		return NULL;
	if ((p = strstr(text, "\nState:")) != NULL)
		zombie = p[strspn(p + 7, " \t") + 7] == 'Z';
	if ((p = strstr(text, "\nPPid:")) != NULL)
		ppid = strtol(p + 6, NULL, 10);
	free(text);
	if (zombie || ppid != (long)parent)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((text = tk_read_file(path, &len)) == NULL)
		return NULL;
	for (size_t i = 0; i + 1 < len; i++)
		if (text[i] == '\0')
			text[i] = ' ';
	return text;
}

pid_t
tk_child_with(pid_t parent, const char *want, char *arg, size_t arglen)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	while (d != NULL && found == 0 && (de = readdir(d)) != NULL) {
		char *end, *cmd, *at;
		long pid = strtol(de->d_name, &end, 10);

		if (*end != '\0' || pid <= 0 ||
		    (cmd = child_cmdline((pid_t)pid, parent)) == NULL)
			continue;
		if ((at = strstr(cmd, want)) != NULL) {
			found = (pid_t)pid;
			if (arg != NULL)
				snprintf(arg, arglen, "%.*s",
				    (int)strcspn(at + strlen(want), " "),
				    at + strlen(want));
		}
		free(cmd);
	}
	if (d != NULL)
		closedir(d);
	return found;
}

bool
tk_dir_holds(const char *dir, const char *part)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	while (d != NULL && !found && (de = readdir(d)) != NULL)
		found = strstr(de->d_name, part) != NULL;
	if (d != NULL)
		closedir(d);
	return found;
}

char *
tk_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap + 1), *grown;

	if (f == NULL || buf == NULL) {
		if (f != NULL)
			fclose(f);
		free(buf);
		return NULL;
	}
	/* Read to EOF: /proc files report a size of 0. */
	for (;;) {
		size_t got = fread(buf + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
		if (n == cap) {
			if ((grown = realloc(buf, cap * 2 + 1)) == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = grown;
			cap *= 2;
		}
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

enum cm_err
tk_call(nng_socket s, const struct pr_req *req, struct pr_rep *rep)
{
	if (cm_rpc_call(s, req, rep, 15000) != CM_OK) {
		fprintf(stderr, "testkit: %s: no answer from the store\n",
		    pr_op_name(req->op));
		abort();
	}
	return rep->err;
}

static int
copy_id(char *dst, const char *src)
{
	if (src == NULL)
		return -1;
	snprintf(dst, CM_ID_MAX + 1, "%s", src);
	return 0;
}

/* The id of the workspace or bundle called name, into out ("" when there
 * is none): spaced bootstraps a workspace "default" and etc/bundles. */
static void
find_named(nng_socket s, enum pr_op op, const char *name, char *out)
{
	struct pr_req q;
	struct pr_rep r;

	memset(&q, 0, sizeof(q));
	q.op = op;
	out[0] = '\0';
	if (tk_call(s, &q, &r) == CM_OK) {
		for (size_t i = 0; i < r.n_workspaces; i++)
			if (strcmp(r.workspaces[i].name, name) == 0)
				copy_id(out, r.workspaces[i].workspace_id);
		for (size_t i = 0; i < r.n_bundles; i++)
			if (strcmp(r.bundles[i].name, name) == 0)
				copy_id(out, r.bundles[i].bundle_id);
	}
	pr_rep_free(&r);
}

int
tk_provision(nng_socket s, struct tk_world *w, size_t n_instances)
{
	return tk_provision_with(s, w, n_instances, NULL);
}

int
tk_provision_with(nng_socket s, struct tk_world *w, size_t n_instances,
    const char *instance_config)
{
	char path[512], name[64];
	struct pr_req q;
	struct pr_rep r;
	char *manifest;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	if (n_instances > TK_MAX_INSTANCES)
		return -1;

	find_named(s, PR_OP_WORKSPACE_LIST, "default", w->workspace_id);
	if (w->workspace_id[0] == '\0') {
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_WORKSPACE_CREATE;
		q.name = "default";
		if (tk_call(s, &q, &r) != CM_OK)
			rc = -1;
		else
			rc = copy_id(
			    w->workspace_id, r.workspaces[0].workspace_id);
		pr_rep_free(&r);
	}

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_PRINCIPAL_CREATE;
	q.kind = "operator";
	q.name = "op";
	if (rc != 0 || tk_call(s, &q, &r) != CM_OK)
		rc = -1;
	else
		rc = copy_id(w->operator_id, r.principals[0].principal_id);
	pr_rep_free(&r);

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_MEMBER_PUT;
	q.workspace_id = w->workspace_id;
	q.principal_id = w->operator_id;
	q.role = "manager";
	if (rc != 0 || tk_call(s, &q, &r) != CM_OK)
		rc = -1;
	pr_rep_free(&r);

	find_named(s, PR_OP_BUNDLE_LIST, "fake", w->bundle_id);
	snprintf(
	    path, sizeof(path), "%s/etc/bundles/fake.json", SPACED_SOURCE_DIR);
	if (w->bundle_id[0] == '\0') {
		if ((manifest = tk_read_file(path, NULL)) == NULL)
			return -1;
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_BUNDLE_CREATE;
		q.manifest = manifest;
		if (rc != 0 || tk_call(s, &q, &r) != CM_OK)
			rc = -1;
		else
			rc = copy_id(w->bundle_id, r.bundles[0].bundle_id);
		pr_rep_free(&r);
		free(manifest);
	}

	for (size_t i = 0; rc == 0 && i < n_instances; i++) {
		snprintf(name, sizeof(name), "fake-%zu", i);
		rc = tk_instance_on(
		    s, w, name, NULL, instance_config, w->instance_id[i]);
		w->n_instances = i + 1;
	}
	return rc;
}

int
tk_instance_on(nng_socket s, const struct tk_world *w, const char *name,
    const char *host, const char *config, char out[CM_ID_MAX + 1])
{
	struct pr_req q;
	struct pr_rep r;
	int rc;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_INSTANCE_REGISTER;
	q.name = name;
	q.driver = "fake";
	q.bundle_id = w->bundle_id;
	q.config = config;
	q.host = host;
	if (tk_call(s, &q, &r) != CM_OK)
		rc = -1;
	else
		rc = copy_id(out, r.instances[0].browser_instance_id);
	pr_rep_free(&r);

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_BINDING_CREATE;
	q.workspace_id = w->workspace_id;
	q.browser_instance_id = out;
	if (rc != 0 || tk_call(s, &q, &r) != CM_OK)
		rc = -1;
	pr_rep_free(&r);
	return rc;
}

void
tk_req_create(struct pr_req *q, const struct tk_world *w, size_t i)
{
	memset(q, 0, sizeof(*q));
	q->op = PR_OP_SPACE_CREATE;
	q->workspace_id = w->workspace_id;
	q->browser_instance_id = w->instance_id[i];
	q->owner_type = "operator";
	q->owner_id = w->operator_id;
}

void
tk_req_submit(struct pr_req *q, const char *workspace_id, const char *space_id,
    const char *request_id)
{
	memset(q, 0, sizeof(*q));
	q->op = PR_OP_TASK_SUBMIT;
	q->workspace_id = workspace_id;
	q->space_id = space_id;
	q->request_id = request_id;
	q->capability = "noop";
}

void
tk_req_claim(struct pr_req *q, const char *space_id, const char *holder)
{
	memset(q, 0, sizeof(*q));
	q->op = PR_OP_ACTOR_CLAIM;
	q->space_id = space_id;
	q->lease_holder = holder;
}

bool
tk_held_send(struct tk_held *h, nng_socket s, const char *space_id,
    const char *holder, int64_t wait_ms)
{
	struct pr_req q;
	nng_msg *m;
	int rv;

	tk_req_claim(&q, space_id, holder);
	q.wait_ms = wait_ms;
	if (cm_rpc_request(&q, &m) != 0)
		return tk_fail("testkit", "cannot encode a claim") == 0;
	if ((rv = nng_ctx_open(&h->ctx, s)) != 0 ||
	    (rv = nng_aio_alloc(&h->aio, NULL, NULL)) != 0) {
		nng_msg_free(m);
		return tk_fail("testkit", "claim: %s", nng_strerror(rv)) == 0;
	}
	nng_aio_set_msg(h->aio, m);
	nng_ctx_send(h->ctx, h->aio);
	nng_aio_wait(h->aio);
	if ((rv = nng_aio_result(h->aio)) != 0) {
		nng_msg_free(nng_aio_get_msg(h->aio));
		nng_ctx_close(h->ctx);
		nng_aio_free(h->aio);
		return tk_fail("testkit", "claim: %s", nng_strerror(rv)) == 0;
	}
	return true;
}

int
tk_held_answer(struct tk_held *h, int timeout_ms, struct pr_rep *r)
{
	char err[128];
	nng_msg *m;
	int got = 0;

	memset(r, 0, sizeof(*r));
	nng_aio_set_timeout(h->aio, timeout_ms);
	nng_ctx_recv(h->ctx, h->aio);
	nng_aio_wait(h->aio);
	if (nng_aio_result(h->aio) == 0) {
		m = nng_aio_get_msg(h->aio);
		got = pr_rep_decode(nng_msg_body(m), nng_msg_len(m), r, err,
		          sizeof(err)) == 0
		          ? 1
		          : tk_fail("testkit", "claim's answer: %s", err);
		nng_msg_free(m);
	}
	nng_ctx_close(h->ctx);
	nng_aio_free(h->aio);
	return got;
}

void
tk_req_finish(struct pr_req *q, const char *task_id, const char *holder)
{
	memset(q, 0, sizeof(*q));
	q->op = PR_OP_ACTOR_FINISH;
	q->task_id = task_id;
	q->lease_holder = holder;
	q->status = "completed";
	q->result = "{\"ok\":true}";
}

int64_t
tk_proc_ticks(pid_t pid)
{
	char path[64], *text, *p, *end;
	int64_t v = 0;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((text = tk_read_file(path, NULL)) == NULL)
		return 0;
	if ((p = strrchr(text, ')')) != NULL) {
		p += 2; /* field 3, the state */
		for (int f = 3; f <= 15 && *p != '\0'; f++) {
			if (f == 3) {
				p += 2;
				continue;
			}
			long long x = strtoll(p, &end, 10);
			if (end == p)
				break;
			if (f >= 14)
				v += x;
			p = end;
		}
	}
	free(text);
	return v;
}

int
tk_cpu_read(struct tk_cpu *out)
{
	long long v[8] = {0};
	char *text;
	int n;

	memset(out, 0, sizeof(*out));
	if ((text = tk_read_file("/proc/stat", NULL)) == NULL)
		return -1;
	/* cpu user nice system idle iowait irq softirq steal ... */
	n = sscanf(text, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0],
	    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	free(text);
	if (n != 8)
		return -1;
	out->busy = v[0] + v[1] + v[2] + v[5] + v[6];
	out->idle = v[3];
	out->iowait = v[4];
	out->steal = v[7];
	return 0;
}

void
tk_cpu_print(const char *who, const struct tk_cpu *a, const struct tk_cpu *b)
{
	double busy = (double)(b->busy - a->busy);
	double idle = (double)(b->idle - a->idle);
	double iowait = (double)(b->iowait - a->iowait);
	double steal = (double)(b->steal - a->steal);
	double all = busy + idle + iowait + steal;

	if (all <= 0)
		return;
	printf("%s: machine: busy %.0f%%, idle %.0f%%, iowait %.0f%%, steal "
	       "%.0f%% of %ld CPUs\n",
	    who, 100 * busy / all, 100 * idle / all, 100 * iowait / all,
	    100 * steal / all, sysconf(_SC_NPROCESSORS_ONLN));
}

int
tk_http_created(const struct tk_proc *p, const char *path, const char *token,
    const char *body, const char *key, char *out, size_t len)
{
	char *text = NULL;
	int status = tk_http(p, "POST", path, token, body, NULL, &text);
	json_t *res = text ? json_loads(text, 0, NULL) : NULL;
	const char *v = json_string_value(
	    json_object_get(json_object_get(res, "data"), key));
	int rc = -1;

	if (status != 201 || v == NULL || strlen(v) >= len) {
		fprintf(stderr, "POST %s: %d %s\n", path, status,
		    text ? text : "(no body)");
	} else {
		snprintf(out, len, "%s", v);
		rc = 0;
	}
	json_decref(res);
	free(text);
	return rc;
}

struct admin_wait {
	const struct tk_proc *p;
	char *out;
	size_t len;
};

static bool
admin_token_works(void *arg)
{
	struct admin_wait *w = arg;
	char path[256], *text;
	size_t len = 0;
	bool ok;

	snprintf(path, sizeof(path), "%s/admin.token", w->p->dir);
	if ((text = tk_read_file(path, &len)) == NULL)
		return false;
	ok = len > 1 && len <= w->len && text[len - 1] == '\n';
	if (ok)
		snprintf(w->out, w->len, "%.*s", (int)(len - 1), text);
	free(text);
	return ok && tk_http(w->p, "GET", "/api/v1/admin/runtime-bundles",
	                 w->out, NULL, NULL, NULL) == 200;
}

bool
tk_admin_token(const struct tk_proc *p, char *out, size_t len, int timeout_ms)
{
	struct admin_wait w = {p, out, len};

	return tk_wait_until(admin_token_works, &w, timeout_ms);
}

int
tk_knob(const char *name, int dflt, int lo, int hi)
{
	const char *env = getenv(name);
	char *end;
	long v;

	if (env == NULL)
		return dflt;
	errno = 0;
	v = strtol(env, &end, 10);
	if (end == env || *end != '\0' || errno != 0 || v < lo || v > hi) {
		fprintf(stderr, "%s must be %d..%d\n", name, lo, hi);
		return -1;
	}
	return (int)v;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

void
tk_sort_i64(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
}

int64_t
tk_pct(const int64_t *v, size_t n, int p)
{
	size_t rank;

	if (n == 0)
		return 0;
	rank = ((size_t)p * n + 99) / 100;
	if (rank == 0)
		rank = 1;
	return v[rank - 1];
}

const char *
tk_ms(int64_t ns, char *buf, size_t len)
{
	/* Truncated toward zero, the sign once: a difference of runs may
	 * be below zero. */
	int64_t us = ns < 0 ? -(ns / 1000) : ns / 1000;

	snprintf(buf, len, "%s%lld.%03lld", ns <= -1000 ? "-" : "",
	    (long long)(us / 1000), (long long)(us % 1000));
	return buf;
}

int
tk_fail(const char *who, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

int64_t
tk_report(const char *bench, const char *name, int64_t *v, int n)
{
	char a[32], b[32], c[32];

	tk_sort_i64(v, (size_t)n);
	printf("%s: %s runs=%d p50_ms=%s p99_ms=%s min_ms=%s\n", bench, name, n,
	    tk_ms(tk_pct(v, (size_t)n, 50), a, sizeof(a)),
	    tk_ms(tk_pct(v, (size_t)n, 99), b, sizeof(b)),
	    tk_ms(v[0], c, sizeof(c)));
	return tk_pct(v, (size_t)n, 50);
}

double
tk_prom_sample(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; (p = strstr(p, key)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

int
tk_token_issue(nng_socket s, const char *principal_id, char token[CM_TOKEN_LEN])
{
	char hash[CM_TOKEN_HASH_LEN];
	struct pr_req q;
	struct pr_rep r;
	int rc;

	cm_token_new(token);
	if (cm_token_hash(token, strlen(token), hash) != 0)
		return -1;
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TOKEN_ISSUE;
	q.principal_id = principal_id;
	q.token_hash = hash;
	q.label = "test";
	rc = tk_call(s, &q, &r) == CM_OK && r.err == CM_OK ? 0 : -1;
	pr_rep_free(&r);
	return rc;
}

long
tk_pss_kib(pid_t pid)
{
	char path[64], *text, *p;
	long kib = -1;

	snprintf(path, sizeof(path), "/proc/%ld/smaps_rollup", (long)pid);
	if ((text = tk_read_file(path, NULL)) == NULL)
		return -1;
	if ((p = strstr(text, "\nPss:")) != NULL)
		kib = strtol(p + 5, NULL, 10);
	free(text);
	return kib;
}
