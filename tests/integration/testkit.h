/*
 * testkit.h: what integration tests and benchmarks share: temporary
 * directories, starting the real binaries, bounded waits, provisioning.
 */
#ifndef TK_TESTKIT_H
#define TK_TESTKIT_H

#include <nng/nng.h>
#include <stdbool.h>
#include <sys/types.h>

#include "proto.h"
#include "rpc.h"

struct tk_proc {
	pid_t pid;
	char dir[128]; /* data_dir */
	char run_dir[160];
	char store_url[256];
	char events_url[256];
	int http_port;      /* spaced: the api's port, on 127.0.0.1 */
	char http_base[64]; /* "http://127.0.0.1:<port>" */
};

/* A TCP port on 127.0.0.1 that was free a moment ago, outside the
 * kernel's range for outgoing connections where it can. */
int tk_free_port(void);

/*
 * Where the binaries a test starts are: $TK_BIN_DIR when set (make
 * test-tsan: the daemons of a ThreadSanitizer build, driven by tests that
 * are not, as Criterion's runner cannot run under TSan), else the build
 * tree the test was built in.
 */
const char *tk_bin_dir(void);

/* Makes a fresh directory /tmp/spaced-<tag>-XXXXXX; aborts on failure. */
void tk_tmpdir(char *out, size_t len, const char *tag);
/* The libpq DSN in the state file of tests/pg/cluster.sh (its last line
 * that is not a comment) into out.  Returns 0, or -1 when it has none. */
int tk_pg_dsn(const char *state, char *out, size_t len);
/* The PostgreSQL schema that testkit's config for data dir dir names
 * (a spaced started under TK_PG_STATE) into out.  Returns 0, or -1 when
 * dir has no such config. */
int tk_pg_schema(const char *dir, char *out, size_t len);
/*
 * The database of the spaced on data dir dir, read the same on both
 * backends: SQLite's <dir>/spaced.db (read-only: the store keeps writing
 * it) or, for a spaced started under TK_PG_STATE, the PostgreSQL schema
 * testkit gave it (tk_pg_schema), through a connection of the caller's
 * own to the cluster (tk_pg_dsn) with that schema as search_path.
 *
 * tk_db_count runs SELECT count(*) ... with at most one text parameter,
 * written ? (arg; NULL: none).  Returns the count, or -1 (why on stderr).
 *
 * tk_db_each hands cell every value but NULLs of every row of every table
 * the catalog lists (SQLite's sqlite_master; on PostgreSQL
 * information_schema.tables for the schema), never a list of the
 * caller's: n bytes, not NUL-terminated.  PostgreSQL's values come in its
 * binary format, so a text or bytea column is its bytes as stored, not
 * escaped.  Returns how many tables there were, or -1 (why on stderr).
 */
long long tk_db_count(const char *dir, const char *sql, const char *arg);
/* SQLite's <dir>/spaced.db alone, read-only, for what only SQLite has:
 * NULL (why on stderr) when it cannot be opened.  sqlite3_close it. */
struct sqlite3 *tk_db_sqlite(const char *dir);
typedef void (*tk_db_cell)(
    void *arg, const char *table, const char *col, const void *value, size_t n);
int tk_db_each(const char *dir, tk_db_cell cell, void *arg);
/* Removes a directory tree (only under /tmp/spaced-). */
void tk_rmrf(const char *dir);

/*
 * Starts spaced-store from the build tree on data_dir dir, with extra
 * config flags (NULL-terminated, may be NULL), and waits (bounded) for its
 * readiness line.  Returns 0, or -1 if it exited or never became ready.
 */
int tk_store_start(
    struct tk_proc *p, const char *dir, const char *const *flags);
/*
 * Starts the supervisor, spaced, from the build tree (the api listening on
 * a free port of this test's own unless flags give --http-listen) on data_dir
 * dir with the fake driver allowed and extra flags, and waits (bounded) for its
 * readiness line: the store is up and the first scan of Spaces is done.
 * Unless flags say otherwise, it starts with --managed-browsers=0 (the
 * first start registers no managed instance) and --warm-standby=false (no
 * browser runs that a test did not ask for): pass --managed-browsers=N or
 * --warm-standby=true to turn them on.
 */
int tk_spaced_start(
    struct tk_proc *p, const char *dir, const char *const *flags);
/* The same, with the service's stdout and stderr (its log, and that of
 * every child it starts) appended to the file output (NULL: inherited). */
int tk_spaced_start_logged(struct tk_proc *p, const char *dir,
    const char *const *flags, const char *output);

/*
 * Starts spaced as tk_spaced_start_logged does, in a process group of its
 * own when own_group, and returns at once: *ready_fd is the read end of
 * its readiness pipe (see tk_ready_wait).  Returns 0, or -1.
 */
int tk_spaced_spawn(struct tk_proc *p, const char *dir,
    const char *const *flags, const char *output, bool own_group,
    int *ready_fd);
/* Waits up to timeout_ms for the readiness line on fd, then closes fd.
 * True when "ready" came. */
bool tk_ready_wait(int fd, int timeout_ms);

/*
 * Starts any binary of the build tree (spaced-actor, spaced-api, ...) on
 * data_dir dir with extra flags, its stdout and stderr appended to output
 * (NULL: inherited), and waits (bounded) for its readiness line, as
 * tk_store_start does.  Returns 0, or -1 if it exited or never got ready.
 */
int tk_bin_start(struct tk_proc *p, const char *binary, const char *dir,
    const char *const *flags, const char *output);

/*
 * Waits up to timeout_ms for p to exit and reaps it.  Returns 0 with its
 * wait status in *status, or -1 when it is still running (it is left
 * alone).
 */
int tk_proc_wait(struct tk_proc *p, int timeout_ms, int *status);

/* One process as /proc/<pid>/stat shows it. */
struct tk_ps {
	pid_t pid, ppid, pgrp;
	char state; /* 'Z': a zombie */
};
/* Every process there is now, at most max of them, into out.  Returns
 * how many.  O(processes): two syscalls and a read each. */
int tk_ps_read(struct tk_ps *out, int max);

/*
 * True when pid can run no code of its own again: it is gone, a zombie,
 * exiting (PF_EXITING in the flags of /proc/pid/stat), or SIGKILL is
 * pending for it (the kernel acts on it before the process runs again).
 * A process killed a moment ago counts as ended without a wait.
 */
bool tk_pid_ended(pid_t pid);

/* Pids of the running spaced-actor children of parent, for space_id (or
 * any Space when NULL), read from /proc.  Returns how many were found. */
int tk_actor_pids(pid_t parent, const char *space_id, pid_t *pids, int max);

/* Kills (SIGKILL) and reaps every process this test started and did not
 * stop yet.  Use as a Criterion .fini so a failed assertion leaves nothing
 * running; it also runs at exit. */
void tk_cleanup(void);

/* Sends sig and reaps the process. */
void tk_proc_stop(struct tk_proc *p, int sig);

/* Polls cond every few ms until it holds or timeout_ms passes. */
bool tk_wait_until(bool (*cond)(void *), void *arg, int timeout_ms);

/* A provisioned world: one workspace, an operator who manages it, the fake
 * bundle and n_instances fake instances bound to the workspace. */
#define TK_MAX_INSTANCES 1024
struct tk_world {
	char workspace_id[CM_ID_MAX + 1];
	char operator_id[CM_ID_MAX + 1];
	char bundle_id[CM_ID_MAX + 1];
	size_t n_instances;
	char instance_id[TK_MAX_INSTANCES][CM_ID_MAX + 1];
};
int tk_provision(nng_socket s, struct tk_world *w, size_t n_instances);
/* The same, registering every instance with this config JSON (NULL: none). */
int tk_provision_with(nng_socket s, struct tk_world *w, size_t n_instances,
    const char *instance_config);
/* One more fake instance of w's bundle named name, on host (NULL: the
 * store's own host_id) with config (NULL: none), bound to w's workspace;
 * its id goes to out.  Returns 0, or -1 when the store refused. */
int tk_instance_on(nng_socket s, const struct tk_world *w, const char *name,
    const char *host, const char *config, char out[CM_ID_MAX + 1]);

/*
 * One HTTP request to the api of p with libcurl: method, path (with any
 * query), an optional bearer token and body (sent as application/json),
 * extra headers (NULL-terminated, may be NULL).  Returns the status, or -1
 * when no answer came; *body gets the malloc'd response body (caller
 * frees) when body is not NULL.
 */
int tk_http(const struct tk_proc *p, const char *method, const char *path,
    const char *token, const char *req_body, const char *const *headers,
    char **body);
/*
 * POST path with body (may be NULL) as token; on 201 copies the answer's
 * data.<key> into out.  Returns 0, or -1 with the reason on stderr.
 */
int tk_http_created(const struct tk_proc *p, const char *path,
    const char *token, const char *body, const char *key, char *out,
    size_t len);
/*
 * Waits at most timeout_ms until the bootstrap's <p->dir>/admin.token
 * exists and authenticates; the token goes to out.  The file may come
 * before the store knows it, so both are checked.
 */
bool tk_admin_token(
    const struct tk_proc *p, char *out, size_t len, int timeout_ms);
/*
 * GET path with a token (may be NULL): returns the status, or -1 when no
 * answer came; *body gets the raw bytes of the body and *len their count,
 * *head the response's header lines as text (both malloc'd, caller frees;
 * NULL when there were none).
 */
int tk_http_bytes(const struct tk_proc *p, const char *path, const char *token,
    char **body, size_t *len, char **head);
/* Any request, as tk_http, with *head the response's header lines as
 * text; *body and *head are malloc'd (caller frees; NULL when there were
 * none).  Returns the status, or -1 when no answer came. */
int tk_http_head(const struct tk_proc *p, const char *method, const char *path,
    const char *token, const char *req_body, const char *const *headers,
    char **body, char **head);
/* The value of header name (any case) in head, header lines as
 * tk_http_head gives them, into out.  False when there is none or it
 * does not fit. */
bool tk_head_value(const char *head, const char *name, char *out, size_t len);
/* The value of the sample of a Prometheus text whose name and labels are
 * exactly key; -1 when the text has none. */
double tk_prom_sample(const char *text, const char *key);
/* Polls GET /healthz until the api answers 200 (bounded). */
bool tk_http_ready(const struct tk_proc *p, int timeout_ms);

/* npm ci for dir, a directory of the source tree ("tests/mcp"), by
 * scripts/npm_ci.sh: a no-op once installed from its lock file.  Returns
 * 0, or -1 when it failed (npm said why on stderr). */
int tk_npm_ci(const char *dir);

/*
 * Starts argv (found on PATH) in a process group of its own, so that
 * whatever it launches (a browser) can go with it, with env
 * (NULL-terminated, at most TK_SPAWN_ENV_MAX) added to this environment
 * less this one's variables that begin with prefix (a value of the
 * caller's own is the one the child sees).  Its stdin is in_fd and its
 * stdout out_fd, each unless -1 (then this process's).  Returns its pid,
 * the group's id, or -1; the caller reaps it and ends the group.
 */
#define TK_SPAWN_ENV_MAX 16
#define TK_SPAWN_INHERIT_MAX 256
pid_t tk_spawn_group(char *const argv[], char *const env[], const char *prefix,
    int in_fd, int out_fd);

/* ---- for benchmarks */

/* The integer environment knob name in lo..hi, dflt when unset; -1 (said
 * why on stderr) when set to anything else. */
int tk_knob(const char *name, int dflt, int lo, int hi);
/* Sorts n samples ascending. */
void tk_sort_i64(int64_t *v, size_t n);
/* The nearest-rank percentile p of n sorted samples (0 when n is 0). */
int64_t tk_pct(const int64_t *v, size_t n, int p);
/* ns as "M.UUU" ms in buf, truncated to the microsecond; returns buf. */
const char *tk_ms(int64_t ns, char *buf, size_t len);
/* Prints "<who>: <message>" on stderr; returns -1. */
__attribute__((format(printf, 2, 3))) int tk_fail(
    const char *who, const char *fmt, ...);
/* Prints "<bench>: <name> runs=n p50_ms= p99_ms= min_ms=" for n samples
 * in ns (sorted in place); returns the p50. */
int64_t tk_report(const char *bench, const char *name, int64_t *v, int n);

/* Reads a whole file into a malloc'd NUL-terminated buffer. */
char *tk_read_file(const char *path, size_t *len);
/* The Pss of pid in KiB, from /proc/<pid>/smaps_rollup; -1 when it
 * cannot be read (the process is gone). */
long tk_pss_kib(pid_t pid);

/*
 * The first live (not zombie) child of parent whose command line (its
 * arguments joined by spaces) holds want; 0 when there is none.  When
 * arg is not NULL, the rest of the word after want goes to it.
 */
pid_t tk_child_with(pid_t parent, const char *want, char *arg, size_t arglen);

/* True when the name of some entry of directory dir holds part. */
bool tk_dir_holds(const char *dir, const char *part);

/* utime + stime of process pid from /proc/<pid>/stat, in clock ticks
 * (sysconf(_SC_CLK_TCK) a second); 0 when it cannot be read. */
int64_t tk_proc_ticks(pid_t pid);

/*
 * The whole machine's CPU time from /proc/stat, in clock ticks summed over
 * every CPU: what a bench's figures shared the machine with.  steal is
 * time a virtual machine's CPUs were ready to run and the host ran
 * something else.  Returns 0, or -1 when /proc/stat cannot be read.
 */
struct tk_cpu {
	int64_t busy, idle, iowait, steal;
};
int tk_cpu_read(struct tk_cpu *out);
/* Prints "machine: busy B%, idle I%, iowait W%, steal S% of N CPUs"
 * for the time between a and b. */
void tk_cpu_print(
    const char *who, const struct tk_cpu *a, const struct tk_cpu *b);

/*
 * Store requests of the task cycle, built in q (zeroed first): create a
 * Space of w's operator on w's instance i; submit a noop under
 * request_id; claim under holder; finish as completed with {"ok":true}.
 */
void tk_req_create(struct pr_req *q, const struct tk_world *w, size_t i);
void tk_req_submit(struct pr_req *q, const char *workspace_id,
    const char *space_id, const char *request_id);
void tk_req_claim(struct pr_req *q, const char *space_id, const char *holder);
/*
 * An actor.claim with wait_ms, sent on a context of its own of s ahead of
 * whatever the thread sends on s next (one pipe carries both, in order),
 * so that the store holds it before it reads the next request; false when
 * it could not be sent.  tk_held_answer then waits up to timeout_ms for
 * its answer into r and closes the context: 1 answered, 0 none came, -1
 * an answer that does not decode.
 */
struct tk_held {
	nng_ctx ctx;
	nng_aio *aio;
};
bool tk_held_send(struct tk_held *h, nng_socket s, const char *space_id,
    const char *holder, int64_t wait_ms);
int tk_held_answer(struct tk_held *h, int timeout_ms, struct pr_rep *r);
void tk_req_finish(struct pr_req *q, const char *task_id, const char *holder);

/* Issues a new bearer token (written to token) of principal_id through
 * the store.  Returns 0, or -1 when the store refused. */
int tk_token_issue(
    nng_socket s, const char *principal_id, char token[CM_TOKEN_LEN]);

/* Calls the store and aborts the test if transport fails. */
enum cm_err tk_call(nng_socket s, const struct pr_req *req, struct pr_rep *rep);

#endif
