/*
 * config.h: the one configuration loader every binary shares: every binary
 * accepts the same keys (docs/operations.md lists them).
 *
 * Precedence, first set wins: --key-with-dashes=value on the command line,
 * SPACED_KEY in the environment, then the config file (`key = value`,
 * `#` comments).  The file is etc/spaced.conf relative to the working
 * directory unless --config=PATH or SPACED_CONFIG names another; a missing
 * default file is not an error, a missing named file is.
 *
 * --config-fd=N instead reads a parent's resolved configuration from a
 * sealed memfd (cm_config_to_fd), in place of both the file and the
 * environment, neither of which is read then; flags still win over it.
 * cm_config_load closes fd N whatever happens.
 */
#ifndef CM_CONFIG_H
#define CM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "limits.h"

enum cm_store_backend { CM_STORE_SQLITE, CM_STORE_POSTGRES };

struct cm_config {
	char data_dir[CM_PATH_MAX];          /* ./var */
	char run_dir[CM_PATH_MAX];           /* <data_dir>/run */
	char http_listen[CM_CONF_VALUE_MAX]; /* 127.0.0.1:8080 */
	char events_url[CM_CONF_VALUE_MAX];  /* ipc://<run_dir>/events.ipc */
	bool allow_fake_driver;              /* false */
	int managed_browsers;                /* 2 */
	char chromium_path[CM_PATH_MAX];     /* /usr/bin/chromium */
	bool warm_standby; /* true: an idle managed instance keeps a browser */
	int max_spaces_per_workspace; /* 64 */
	int task_timeout_default;     /* 60, seconds */
	int task_timeout_max;         /* 600, seconds */
	int takeover_ttl; /* 600, seconds: a hold's, when a take-over names none
	                   */
	char log_level[16]; /* info */
	char log_format[8]; /* auto | json | text; cm_startup resolves auto */
	enum cm_store_backend store_backend; /* sqlite */
	char postgres_dsn[CM_CONF_VALUE_MAX];
	char host_id[CM_HOST_MAX + 1]; /* gethostname() */
	int probe_interval_ms;         /* 10000: cdp instances are probed */
	int egress_connections;      /* a Space's egress proxy: open at once */
	int egress_bytes_per_second; /* a Space's egress proxy: both ways */
	/* The names clients reach the api by besides loopback and
	 * http_listen's host (a reverse proxy's), comma-separated: the
	 * MCP routes' Host and Origin checks take them.  "": none. */
	char public_hosts[CM_CONF_VALUE_MAX];
	char config_path[CM_PATH_MAX]; /* the file that was read, or "" */

	/* Binary-specific flags named in the extra list passed to load. */
#define CM_CONFIG_EXTRA_MAX 8
	size_t n_extra;
	struct {
		char name[32];
		char value[CM_CONF_VALUE_MAX];
		bool set;
	} extra[CM_CONFIG_EXTRA_MAX];
};

/*
 * Loads cfg from defaults, file, environment (envp, as in main's third
 * argument; NULL means the process environment) and argv[1..argc-1].
 * extra is a NULL-terminated list of flag names (with dashes, no leading
 * "--") that this binary accepts besides the config keys; NULL for none.
 * A flag may be given as --name=value or as --name value.
 * Derived defaults (run_dir, events_url) are filled in after all sources.
 * An unknown key or flag, or a bad value, returns -1 with err naming the
 * key.  Returns 0 on success.
 */
int cm_config_load(struct cm_config *cfg, int argc, char *const *argv,
    char *const *envp, const char *const *extra, char *err, size_t errlen);

/* The value of an extra flag, or NULL when it was not given. */
const char *cm_config_extra(const struct cm_config *cfg, const char *name);

/*
 * Writes the effective configuration (every key, and config_path) into a
 * new memfd, sealed against any change, for a parent to hand to the
 * children it execs as --config-fd=N: no value, secrets included, ever
 * appears on a command line.  The fd is close-on-exec; the caller clears
 * that in the child and keeps the fd for as long as it may start children
 * (each child reads it with pread, so one fd serves them all).  Returns
 * the fd, or -1.
 */
int cm_config_to_fd(const struct cm_config *cfg);

/*
 * Writes every key of cfg to f as "key = value" lines, in the table's
 * order and in the config file's syntax, values as loaded (derived ones
 * filled in), quoted where the file's reader would otherwise trim them
 * or cut a comment off them, so that the text loads as the same
 * configuration.  A secret key that is set is a comment line without its
 * value.  0, or -1 when f failed.
 */
int cm_config_print(const struct cm_config *cfg, FILE *f);

/*
 * The environment to give a child: envp (NULL: the process environment)
 * less the SPACED_ variables of secret keys (postgres_dsn), which the
 * child gets through --config-fd instead.  A malloc'd NULL-terminated
 * array of pointers borrowed from envp: free the array only, and only
 * while envp lives.  NULL on allocation failure.
 */
char **cm_config_child_env(char *const *envp);

#endif
