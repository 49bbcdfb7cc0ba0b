/*
 * ctl.h: what spacectl's files share.  Internal to spacectl.
 *
 * main.c parses the command line into a struct ctl and runs one command
 * of the table in cmds_*.c; opts.c reads a command's options, exit.c
 * prints the message of a usage error or an internal failure; http.c is
 * the only code that talks to the api (libcurl), and out.c the only code
 * that prints tables.
 *
 * Exit codes (main.c's --help lists them too):
 *   CTL_EXIT_OK        0  done
 *   CTL_EXIT_API       1  the api answered an error, or could not be
 *                         reached: the reason is on stderr, an api error
 *                         as "error: <code>: <message>"
 *   CTL_EXIT_USAGE     2  the command line (ctl_usage)
 *   CTL_EXIT_INTERNAL  3  spacectl itself failed: out of memory, or
 *                         libcurl did not start (ctl_internal); no
 *                         request was sent, or its answer was not read
 *
 * The token is a secret: no message, --verbose line or table carries it.
 */
#ifndef CTL_CTL_H
#define CTL_CTL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "limits.h"

enum {
	CTL_EXIT_OK = 0,
	CTL_EXIT_API = 1,
	CTL_EXIT_USAGE = 2,
	CTL_EXIT_INTERNAL = 3,
};

/* What an option's value must be: checked once, before any command runs
 * or anything is resolved, so that every usage error exits 2 at once. */
enum ctl_type {
	CTL_FLAG, /* no value */
	CTL_STR,  /* any text (UTF-8, as JSON's strings are) */
	CTL_PATH, /* a file's name: any bytes, never sent */
	CTL_INT,  /* an integer in [lo, hi] */
	CTL_OBJ,  /* a JSON object, at most CM_BODY_MAX bytes */
};

/* X(enum tail, long name, type, lo, hi, help) */
#define CTL_OPTIONS(X)                                                      \
	X(URL, "url", CTL_STR, 0, 0,                                        \
	    "the api's base URL (default: SPACED_URL, then "                \
	    "the config's http_listen)")                                    \
	X(TOKEN, "token", CTL_STR, 0, 0,                                    \
	    "bearer token (default: SPACED_TOKEN, then "                    \
	    "<data_dir>/admin.token)")                                      \
	X(CONFIG, "config", CTL_PATH, 0, 0,                                 \
	    "the spaced config file to read data_dir "                      \
	    "and http_listen from")                                         \
	X(JSON, "json", CTL_FLAG, 0, 0,                                     \
	    "print the api's JSON instead of a table")                      \
	X(VERBOSE, "verbose", CTL_FLAG, 0, 0,                               \
	    "print each request and status on stderr")                      \
	X(HELP, "help", CTL_FLAG, 0, 0, "this help")                        \
	X(VERSION, "version", CTL_FLAG, 0, 0, "print the version")          \
	X(WORKSPACE, "workspace", CTL_STR, 0, 0,                            \
	    "workspace id, or name (resolved by an admin token); default: " \
	    "default")                                                      \
	X(STATUS, "status", CTL_STR, 0, 0, "only Spaces with this status")  \
	X(OWNER, "owner", CTL_STR, 0, 0, "owner principal id")              \
	X(OWNER_TYPE, "owner-type", CTL_STR, 0, 0,                          \
	    "operator or runtime_agent "                                    \
	    "(default: operator)")                                          \
	X(LIMIT, "limit", CTL_INT, 1, CM_LIST_LIMIT_MAX,                    \
	    "at most this many rows")                                       \
	X(INSTANCE, "instance", CTL_STR, 0, 0, "browser instance id")       \
	X(BINDING, "binding", CTL_STR, 0, 0, "binding id")                  \
	X(GRANT, "grant", CTL_STR, 0, 0,                                    \
	    "granted capabilities, comma-separated")                        \
	X(REQUEST_ID, "request-id", CTL_STR, 0, 0,                          \
	    "idempotency key (default: a new one)")                         \
	X(TASK, "task", CTL_STR, 0, 0, "task id")                           \
	X(ARGS, "args", CTL_OBJ, 0, 0,                                      \
	    "the capability's arguments, a JSON object")                    \
	X(TIMEOUT, "timeout", CTL_INT, CM_TIMEOUT_MIN_S, CM_TIMEOUT_MAX_S,  \
	    "task timeout in seconds")                                      \
	X(TTL, "ttl", CTL_INT, 1, CM_TAKEOVER_TTL_MAX_S,                    \
	    "how long the hold lasts, in seconds (default: takeover_ttl)")  \
	X(WAIT, "wait", CTL_FLAG, 0, 0,                                     \
	    "show the task's events live, then its result")                 \
	X(AFTER, "after", CTL_INT, 0, INT32_MAX,                            \
	    "events after this sequence number")                            \
	X(FOLLOW, "follow", CTL_FLAG, 0, 0,                                 \
	    "stream events live, resuming after a "                         \
	    "dropped connection")                                           \
	X(OUTPUT, "output", CTL_PATH, 0, 0, "the file to write (-o)")       \
	X(ADMIN, "admin", CTL_FLAG, 0, 0, "the principal is an admin")      \
	X(LABEL, "label", CTL_STR, 0, 0, "the token's label")               \
	X(EXPIRES_IN, "expires-in", CTL_INT, 1, CM_TOKEN_TTL_MAX_S,         \
	    "the token's lifetime in seconds")                              \
	X(DRIVER, "driver", CTL_STR, 0, 0, "managed, cdp or fake")          \
	X(BUNDLE, "bundle", CTL_STR, 0, 0, "runtime bundle id")             \
	X(ENDPOINT_FILE, "endpoint-file", CTL_PATH, 0, 0,                   \
	    "a file holding the instance's endpoint (a secret: never an "   \
	    "argument)")                                                    \
	X(INSTANCE_CONFIG, "instance-config", CTL_OBJ, 0, 0,                \
	    "the instance's driver config, a JSON object")                  \
	X(POLICY, "network-policy", CTL_OBJ, 0, 0,                          \
	    "network policy, a JSON object")                                \
	X(PROFILE, "profile", CTL_STR, 0, 0, "profile mode")                \
	X(HOST, "host", CTL_STR, 0, 0, "the host that runs the instance")   \
	X(DIALOGS, "dialogs", CTL_STR, 0, 0,                                \
	    "accept or dismiss every dialog of the page (default: each "    \
	    "stays open for handle_dialog)")                                \
	X(FILE_NAME, "name", CTL_STR, 0, 0,                                 \
	    "the file's name on the Space (default: the file's own)")

enum ctl_opt {
#define CTL_OPT_ENUM(e, name, type, lo, hi, help) CTL_O_##e,
	CTL_OPTIONS(CTL_OPT_ENUM)
#undef CTL_OPT_ENUM
	    CTL_O__COUNT
};

#define CTL_BIT(o) (UINT64_C(1) << CTL_O_##o)
/* Options every command takes. */
#define CTL_GLOBAL                                                         \
	(CTL_BIT(URL) | CTL_BIT(TOKEN) | CTL_BIT(CONFIG) | CTL_BIT(JSON) | \
	    CTL_BIT(VERBOSE) | CTL_BIT(HELP) | CTL_BIT(VERSION))

/* One parsed command line. */
struct ctl {
	const char *opt[CTL_O__COUNT]; /* value, "" for a flag; NULL: absent */
	const char *arg[CM_CTL_ARGS_MAX];
	size_t n_arg;
	bool json, verbose;
	char url[CM_URL_MAX + 1]; /* no trailing '/' */
	char token[CM_TOKEN_MAX + 1];
	char ws[CM_ID_MAX + 1]; /* the workspace's id, for commands with one */
};

/* One command: group and verb (NULL for a group of one command). */
struct ctl_cmd {
	const char *group, *verb;
	const char *synopsis; /* positional arguments, for help */
	size_t n_arg;         /* how many positional arguments it takes */
	uint64_t opts;        /* CTL_BIT()s besides CTL_GLOBAL */
	int (*fn)(struct ctl *c);
	const char *help;
	uint64_t need; /* the CTL_BIT()s of opts it cannot do without */
	/* "METHOD /path" of the api route it calls, as api/openapi.json
	 * names it (shown by its --help: every route has a command). */
	const char *route;
};

/* The command tables (cmds_admin.c, cmds_space.c), NULL-group ended. */
/* A runtime bundle's columns (cmds_admin.c), for either list of them. */
extern const char *const ctl_bundle_cols[];
extern const struct ctl_cmd ctl_admin_cmds[];
extern const struct ctl_cmd ctl_space_cmds[];

/* --- exit messages (exit.c) --------------------------------------------- */

/* Prints "spacectl: <message>" on stderr and returns code. */
int ctl_fail(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A usage error: returns CTL_EXIT_USAGE. */
#define ctl_usage(...) ctl_fail(CTL_EXIT_USAGE, __VA_ARGS__)
/* spacectl itself failed (out of memory): returns CTL_EXIT_INTERNAL. */
#define ctl_internal(...) ctl_fail(CTL_EXIT_INTERNAL, __VA_ARGS__)

/* --- a command's options (opts.c) ---------------------------------------- */

/* --workspace (default: "default") into c->ws, once: an id as it is, a
 * name looked up in the admin's list of workspaces.  An exit code. */
int ctl_workspace(struct ctl *c);
/* A CTL_INT option's value (checked when parsed), dflt when absent. */
long long ctl_opt_int(const struct ctl *c, enum ctl_opt o, long long dflt);
/* A CTL_OBJ option's value parsed (a new reference), NULL when absent or
 * out of memory. */
json_t *ctl_opt_obj(const struct ctl *c, enum ctl_opt o);
/*
 * s[0..len) is UTF-8 as JSON takes it (no overlong form, surrogate or
 * code point over U+10FFFF).  Text that goes into a request is checked
 * with it first (main.c checks every argument and CTL_STR value), so
 * that a body that cannot be built means out of memory, nothing else.
 */
bool ctl_utf8(const char *s, size_t len);

/* --- the api (http.c) ---------------------------------------------------- */

/*
 * One request: method, path (with any query, already escaped), a JSON
 * body (borrowed).  GET and DELETE send none (NULL); every POST and PUT
 * sends one, an empty object when it has nothing to say, so a NULL body
 * there is one that could not be built: nothing is sent and the answer
 * is CTL_EXIT_INTERNAL.  On a 2xx answer returns CTL_EXIT_OK with
 * *status set and *out the parsed answer (the caller decrefs; NULL for
 * an empty one).  Otherwise prints why and returns CTL_EXIT_API, or
 * CTL_EXIT_INTERNAL when spacectl ran out of memory.
 */
int ctl_call(struct ctl *c, const char *method, const char *path, json_t *body,
    int *status, json_t **out);
/*
 * Sets (*obj)[key] to v, taking v, for a body built a member at a time.
 * When v is NULL or the set fails (out of memory), *obj is released and
 * set to NULL, which ctl_call then refuses; a NULL *obj stays NULL.
 */
void ctl_set(json_t **obj, const char *key, json_t *v);
/* ctl_call for a PUT of n raw bytes at p with Content-Type mime (a file
 * kept on a Space), not JSON. */
int ctl_put_bytes(struct ctl *c, const char *path, const void *p, size_t n,
    const char *mime, int *status, json_t **out);
/* ctl_call for GET, answering the answer's "data" member (a new
 * reference). */
int ctl_get(struct ctl *c, const char *path, json_t **data);
/* GET path and write its body (at most CM_ARTIFACT_MAX bytes) to file;
 * the content type into mime (may be NULL). */
int ctl_download(struct ctl *c, const char *path, const char *file, char *mime,
    size_t mime_len, size_t *size);

/*
 * Streams a Space's events (path: .../events) from after sequence *last,
 * calling fn with each event (borrowed) whose sequence is above *last, in
 * order, then setting *last to it.  fn returns true to stop.  A dropped
 * connection is resumed with Last-Event-ID: *last after a bounded backoff
 * (CM_CTL_BACKOFF_*); the stream ends when the api ends it after
 * space_closed.  Returns CTL_EXIT_OK, or CTL_EXIT_API after an api error
 * or CM_CTL_RESUME_MAX fruitless attempts.
 */
int ctl_stream(struct ctl *c, const char *path, int64_t *last,
    bool (*fn)(void *arg, json_t *ev), void *arg);

/* --- output (out.c) ------------------------------------------------------ */

/* Prints v as one JSON document on stdout. */
void ctl_print_json(const json_t *v);
/*
 * Prints rows (an array of objects) as a table with these columns (keys
 * of each object, NULL-terminated); cells are cut at CM_CTL_COL_MAX.
 */
void ctl_print_table(const json_t *rows, const char *const *cols);
/* Prints one object as "key: value" lines, in its own key order. */
void ctl_print_record(const json_t *obj);
/* A cell's text: strings as they are, null as "-", others as JSON. */
void ctl_cell(const json_t *v, char *buf, size_t len);

/*
 * fmt into out (len bytes) with each '%' replaced by the next of the n_ids
 * ids, percent-escaped.  False when an id is missing, longer than
 * CM_NAME_MAX, or the path does not fit.
 */
bool ctl_path(char *out, size_t len, const char *fmt, const char *const *ids,
    size_t n_ids);
/* Prints a whole answer: the JSON document with --json; otherwise its data
 * as a table of cols (an array) or a record (an object). */
void ctl_show(const struct ctl *c, json_t *res, const char *const *cols);
/* ctl_call, then ctl_show; takes the reference to body (may be NULL). */
int ctl_call_show(struct ctl *c, const char *method, const char *path,
    json_t *body, const char *const *cols);

/* Percent-escapes s into buf for a query value; false when it does not
 * fit. */
bool ctl_escape(const char *s, char *buf, size_t len);

#endif
