/*
 * config.c: the configuration's keys and cm_config_load.  It owns the key
 * table (what each key accepts: cm_cfg_set, and its value back as text),
 * how flags and the environment spell a key, the defaults, the checks
 * that span keys once every source is in, and the order in which the
 * sources are applied.  The sources themselves are read elsewhere:
 * flags and the environment in config_args.c, the file in config_file.c,
 * a parent's sealed memfd in config_fd.c; config_out.c prints and hands
 * the environment to children.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_int.h"
#include "log.h"

/*
 * Decisions the header leaves open, kept here so every binary agrees:
 *
 * - Every SPACED_* environment variable must be a key (SPACED_DATA_DIR) or
 *   SPACED_CONFIG; anything else is an error, as a misspelt flag is.  A
 *   typo such as SPACED_DATADIR would otherwise be silently ignored.  The
 *   supervisor's children read --config-fd and not the environment, so
 *   this cannot make a child fail where its parent did not.  Tools that
 *   want SPACED_-prefixed variables of their own must
 *   not share this prefix.  Extra (binary-specific) flags come from the
 *   command line only.
 * - A key given twice in one source (two flags, two lines of the file) is
 *   an error rather than "last wins": one of the two is always a mistake.
 * - A bare boolean flag means true and never takes the next argument, so
 *   "--allow-fake-driver false" is an error, not a silent true.  A bare
 *   extra flag takes the next argument unless there is none or it starts
 *   with "--", in which case its value is "true".  A config key given as
 *   "--key value" refuses a value that starts with "--"; use "--key=--x".
 * - An empty value is a value: it is an error for keys that need one, and
 *   means "derive it" for run_dir, events_url and host_id.
 * - Control characters are refused in every value: they cannot come from
 *   the file and would corrupt argv, logs and URLs.
 * - File values in double quotes are taken literally (no escapes); text
 *   after the closing quote may only be a comment.
 * - --config-fd names a sealed memfd holding a parent's resolved
 *   configuration (cm_config_to_fd).  It stands for the parent's file and
 *   environment together, so neither is read again: a parent's flag that
 *   overrode its environment must not lose to that environment in the
 *   child.  The child's own flags still win, as for anyone started by hand.
 *   It is a flag only: an fd number in the environment would be inherited
 *   by every grandchild, long after the fd was closed.
 */

#define CFG_DEFAULT_PATH "etc/spaced.conf"

static const char *
cfg_check_listen(const char *v)
{
	const char *colon = strrchr(v, ':');
	long port = 0;

	if (colon == NULL || colon == v)
		return "must be host:port";
	if (v[0] == '[' ? colon[-1] != ']' || colon - v < 3
	                : memchr(v, ':', (size_t)(colon - v)) != NULL)
		return "must be host:port, with an IPv6 host in brackets";
	for (const char *p = colon + 1; *p != '\0' && port <= 65535; p++) {
		if (!isdigit((unsigned char)*p))
			return "port must be 1..65535";
		port = port * 10 + (*p - '0');
	}
	return port < 1 || port > 65535 ? "port must be 1..65535" : NULL;
}

static const char *
cfg_check_level(const char *v)
{
	return cm_log_level_parse(v, NULL) == 0
	           ? NULL
	           : "must be debug, info, warn or error";
}

/* Host names, comma-separated: letters, digits, '-' and '.', or an IPv6
 * address in brackets; each at most CM_HOST_MAX, at most
 * CM_PUBLIC_HOSTS_MAX of them. */
static const char *
cfg_check_hosts(const char *v)
{
	int n = 0;

	while (*v != '\0') {
		size_t len = strcspn(v, ",");
		bool v6 = v[0] == '[';

		if (len == 0 || len > CM_HOST_MAX || ++n > CM_PUBLIC_HOSTS_MAX)
			return "must be at most " CM_STR(
			    CM_PUBLIC_HOSTS_MAX) " host names, comma-separated";
		if (v6 && (len < 3 || v[len - 1] != ']'))
			return "an IPv6 address must be in brackets";
		for (size_t i = v6 ? 1 : 0; i < (v6 ? len - 1 : len); i++)
			if (!(isalnum((unsigned char)v[i]) || v[i] == '-' ||
			        v[i] == '.' || (v6 && v[i] == ':')))
				return "a host name has letters, digits, '-' "
				       "and '.' only (no port, no scheme)";
		v += len;
		if (*v == ',' && *++v == '\0')
			return "must not end with a comma";
	}
	return NULL;
}

static const char *
cfg_check_format(const char *v)
{
	return strcmp(v, "auto") == 0 || strcmp(v, "json") == 0 ||
	               strcmp(v, "text") == 0
	           ? NULL
	           : "must be auto, json or text";
}

#define CFG_FIELD(f) \
	offsetof(struct cm_config, f), sizeof(((struct cm_config *)0)->f)

const struct cfg_key cm_cfg_keys[] = {
    {"data_dir", CFG_STR, CFG_FIELD(data_dir), 0, 0, false, NULL},
    {"run_dir", CFG_STR, CFG_FIELD(run_dir), 0, 0, true, NULL},
    {"http_listen", CFG_STR, CFG_FIELD(http_listen), 0, 0, false,
        cfg_check_listen},
    {"events_url", CFG_STR, CFG_FIELD(events_url), 0, 0, true, NULL},
    {"allow_fake_driver", CFG_BOOL, CFG_FIELD(allow_fake_driver), 0, 0, false,
        NULL},
    {"managed_browsers", CFG_INT, CFG_FIELD(managed_browsers), 0,
        CM_MANAGED_BROWSERS_MAX, false, NULL},
    {"chromium_path", CFG_STR, CFG_FIELD(chromium_path), 0, 0, false, NULL},
    {"warm_standby", CFG_BOOL, CFG_FIELD(warm_standby), 0, 0, false, NULL},
    {"max_spaces_per_workspace", CFG_INT, CFG_FIELD(max_spaces_per_workspace),
        1, CM_SPACES_PER_WS_MAX, false, NULL},
    /* Checked against task_timeout_max once every source is in. */
    {"task_timeout_default", CFG_INT, CFG_FIELD(task_timeout_default),
        CM_TIMEOUT_MIN_S, CM_TIMEOUT_MAX_S, false, NULL},
    {"task_timeout_max", CFG_INT, CFG_FIELD(task_timeout_max), CM_TIMEOUT_MIN_S,
        CM_TIMEOUT_MAX_S, false, NULL},
    {"takeover_ttl", CFG_INT, CFG_FIELD(takeover_ttl), 1, CM_TAKEOVER_TTL_MAX_S,
        false, NULL},
    {"log_level", CFG_STR, CFG_FIELD(log_level), 0, 0, false, cfg_check_level},
    {"log_format", CFG_STR, CFG_FIELD(log_format), 0, 0, false,
        cfg_check_format},
    {"store_backend", CFG_BACKEND, CFG_FIELD(store_backend), 0, 0, false, NULL},
    {"postgres_dsn", CFG_STR, CFG_FIELD(postgres_dsn), 0, 0, true, NULL},
    {"host_id", CFG_STR, CFG_FIELD(host_id), 0, 0, true, NULL},
    {"probe_interval_ms", CFG_INT, CFG_FIELD(probe_interval_ms),
        CM_PROBE_INTERVAL_MIN_MS, CM_PROBE_INTERVAL_MAX_MS, false, NULL},
    {"egress_connections", CFG_INT, CFG_FIELD(egress_connections), 1,
        CM_EGRESS_CONNS_MAX, false, NULL},
    {"egress_bytes_per_second", CFG_INT, CFG_FIELD(egress_bytes_per_second),
        CM_EGRESS_BPS_MIN, CM_EGRESS_BPS_MAX, false, NULL},
    {"public_hosts", CFG_STR, CFG_FIELD(public_hosts), 0, 0, true,
        cfg_check_hosts},
};

_Static_assert(sizeof cm_cfg_keys / sizeof cm_cfg_keys[0] == CFG_NKEYS,
    "CFG_NKEYS in config_int.h must count cm_cfg_keys");

const struct cfg_spelling cm_cfg_spelling[CFG_NSRC] = {
    [CFG_SRC_ENV] = {"SPACED_", "environment ", '_', true},
    [CFG_SRC_FLAG] = {"--", "flag ", '-', false},
};

int
cm_cfg_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

const char *
cm_cfg_name(size_t i)
{
	return i < CFG_NKEYS     ? cm_cfg_keys[i].name
	       : i == CFG_CONFIG ? "config"
	                         : "config_fd";
}

/* "data_dir" as "--data-dir" or "SPACED_DATA_DIR". */
void
cm_cfg_spell(size_t i, enum cfg_src s, char *buf, size_t len)
{
	const char *name = cm_cfg_name(i);
	size_t n = (size_t)snprintf(buf, len, "%s", cm_cfg_spelling[s].prefix);

	for (; *name != '\0' && n + 1 < len; name++)
		buf[n++] = *name == '_' ? cm_cfg_spelling[s].sep
		           : cm_cfg_spelling[s].upper
		               ? (char)toupper((unsigned char)*name)
		               : *name;
	buf[n] = '\0';
}

int
cm_cfg_lookup_file(const char *key)
{
	for (size_t i = 0; i < CFG_NKEYS; i++)
		if (strcmp(cm_cfg_keys[i].name, key) == 0)
			return (int)i;
	return -1;
}

static int
cfg_parse_bool(const char *v, bool *out)
{
	static const char *const words[] = {
	    "false", "true", "0", "1", "no", "yes"};

	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
		if (strcasecmp(v, words[i]) == 0) {
			*out = i % 2 == 1;
			return 0;
		}
	}
	return -1;
}

int
cm_cfg_parse_int(const char *v, long *out)
{
	char *end;

	/* strtol would also take leading blanks and '+'. */
	if (!isdigit((unsigned char)v[0]) && v[0] != '-')
		return -1;
	errno = 0;
	*out = strtol(v, &end, 10);
	return errno != 0 || end == v || *end != '\0' ? -1 : 0;
}

/* Sets one key from one source; where names the source for errors. */
int
cm_cfg_set(struct cm_config *cfg, const struct cfg_key *k, const char *v,
    const char *where, char *err, size_t errlen)
{
	char *field = (char *)cfg + k->off;
	size_t len = strlen(v);
	const char *why = NULL;
	char buf[64];
	long n;
	bool b;

	/* Not iscntrl(): a locale may count UTF-8 bytes as controls. */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			why = "control character in value";
	if (why != NULL)
		return cm_cfg_fail(
		    err, errlen, "%s: %s: %s", where, k->name, why);
	switch (k->kind) {
	case CFG_STR:
		snprintf(buf, sizeof buf, "value longer than %zu bytes",
		    k->size - 1);
		why = len >= k->size             ? buf
		      : len == 0 && !k->empty_ok ? "empty value"
		      : k->check != NULL         ? k->check(v)
		                                 : NULL;
		if (why == NULL)
			memcpy(field, v, len + 1);
		break;
	case CFG_INT:
		snprintf(buf, sizeof buf, "must be an integer in %d..%d",
		    k->min, k->max);
		if (cm_cfg_parse_int(v, &n) != 0 || n < k->min || n > k->max)
			why = buf;
		else
			*(int *)(void *)field = (int)n;
		break;
	case CFG_BOOL:
		if (cfg_parse_bool(v, &b) != 0)
			why = "must be true, false, 1, 0, yes or no";
		else
			*(bool *)(void *)field = b;
		break;
	case CFG_BACKEND:
		if (strcmp(v, "sqlite") == 0)
			cfg->store_backend = CM_STORE_SQLITE;
		else if (strcmp(v, "postgres") == 0)
			cfg->store_backend = CM_STORE_POSTGRES;
		else
			why = "must be sqlite or postgres";
		break;
	}
	if (why != NULL)
		return cm_cfg_fail(
		    err, errlen, "%s: %s: %s", where, k->name, why);
	return 0;
}

static void
cfg_defaults(struct cm_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	snprintf(cfg->data_dir, sizeof cfg->data_dir, "./var");
	snprintf(cfg->http_listen, sizeof cfg->http_listen, "127.0.0.1:8080");
	cfg->managed_browsers = CM_MANAGED_BROWSERS_DEFAULT;
	snprintf(
	    cfg->chromium_path, sizeof cfg->chromium_path, "/usr/bin/chromium");
	cfg->warm_standby = true;
	cfg->max_spaces_per_workspace = CM_SPACES_PER_WS_DEFAULT;
	cfg->task_timeout_default = CM_TIMEOUT_DEFAULT_S;
	cfg->task_timeout_max = CM_TIMEOUT_MAX_S;
	cfg->takeover_ttl = CM_TAKEOVER_TTL_DEFAULT_S;
	snprintf(cfg->log_level, sizeof cfg->log_level, "info");
	snprintf(cfg->log_format, sizeof cfg->log_format, "auto");
	cfg->store_backend = CM_STORE_SQLITE;
	cfg->probe_interval_ms = CM_PROBE_INTERVAL_MS;
	cfg->egress_connections = CM_EGRESS_CONNS_DEFAULT;
	cfg->egress_bytes_per_second = CM_EGRESS_BPS_DEFAULT;
}

/* Derived values and checks that span keys, after every source. */
static int
cfg_finish(struct cm_config *cfg, char *err, size_t errlen)
{
	bool derived = false;
	int n;

	if (cfg->host_id[0] == '\0') {
		char host[CM_HOST_MAX + 2] = {0};

		if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0')
			return cm_cfg_fail(err, errlen,
			    "host_id: not set and gethostname failed");
		if (strlen(host) >= sizeof cfg->host_id)
			return cm_cfg_fail(err, errlen,
			    "host_id: hostname longer than %d bytes",
			    CM_HOST_MAX);
		memcpy(cfg->host_id, host, strlen(host) + 1);
	}
	if (cfg->run_dir[0] == '\0') {
		size_t dl = strlen(cfg->data_dir);

		/* "./var/" must not become "./var//run", nor "/" "//run". */
		while (dl > 0 && cfg->data_dir[dl - 1] == '/')
			dl--;
		n = snprintf(cfg->run_dir, sizeof cfg->run_dir, "%.*s/run",
		    (int)dl, cfg->data_dir);
		if (n < 0 || (size_t)n >= sizeof cfg->run_dir)
			return cm_cfg_fail(err, errlen,
			    "run_dir: <data_dir>/run longer than %zu bytes",
			    sizeof cfg->run_dir - 1);
	}
	if (cfg->events_url[0] == '\0') {
		derived = true;
		n = snprintf(cfg->events_url, sizeof cfg->events_url,
		    "ipc://%s/events.ipc", cfg->run_dir);
		if (n < 0 || (size_t)n >= sizeof cfg->events_url)
			return cm_cfg_fail(err, errlen,
			    "events_url: ipc://<run_dir>/events.ipc longer "
			    "than %zu bytes",
			    sizeof cfg->events_url - 1);
	}
	if (strncmp(cfg->events_url, "ipc://", 6) == 0 &&
	    strlen(cfg->events_url + 6) > CM_IPC_PATH_MAX)
		return cm_cfg_fail(err, errlen,
		    "events_url: ipc path%s longer than %d bytes: %s",
		    derived ? " (derived from run_dir)" : "", CM_IPC_PATH_MAX,
		    cfg->events_url + 6);
	if (cfg->task_timeout_default > cfg->task_timeout_max)
		return cm_cfg_fail(err, errlen,
		    "task_timeout_default: %d is above task_timeout_max %d",
		    cfg->task_timeout_default, cfg->task_timeout_max);
	if (cfg->store_backend == CM_STORE_POSTGRES &&
	    cfg->postgres_dsn[0] == '\0')
		return cm_cfg_fail(err, errlen,
		    "postgres_dsn: required when store_backend is postgres");
	return 0;
}

int
cm_config_load(struct cm_config *cfg, int argc, char *const *argv,
    char *const *envp, const char *const *extra, char *err, size_t errlen)
{
	cfg_values vals = {{0}};
	char where[CFG_NAME_MAX + 16];
	const char *path, *fd_arg;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (cfg == NULL)
		return cm_cfg_fail(err, errlen, "no config to fill");
	cfg_defaults(cfg);
	if (cm_cfg_setup_extra(cfg, extra, err, errlen) != 0 ||
	    cm_cfg_scan_argv(cfg, vals, argc, argv, err, errlen) != 0)
		return -1;

	fd_arg = vals[CFG_SRC_FLAG][CFG_CONFIG_FD];
	if (fd_arg != NULL) {
		if (vals[CFG_SRC_FLAG][CFG_CONFIG] != NULL)
			return cm_cfg_fail(err, errlen,
			    "config_fd: --config and --config-fd exclude each "
			    "other");
		if (cm_cfg_read_fd(cfg, fd_arg, err, errlen) != 0)
			return -1;
	} else {
		if (cm_cfg_scan_env(
		        vals, envp != NULL ? envp : environ, err, errlen) != 0)
			return -1;
		path = vals[CFG_SRC_FLAG][CFG_CONFIG];
		if (path == NULL)
			path = vals[CFG_SRC_ENV][CFG_CONFIG];
		if (path != NULL && path[0] == '\0')
			return cm_cfg_fail(err, errlen, "config: empty path");
		if (cm_cfg_read_file(cfg,
		        path != NULL ? path : CFG_DEFAULT_PATH, path != NULL,
		        err, errlen) != 0)
			return -1;
	}

	/* Lowest precedence first, so the command line is applied last. */
	for (int s = CFG_SRC_ENV; s < CFG_NSRC; s++) {
		for (size_t i = 0; i < CFG_NKEYS; i++) {
			size_t n;

			if (vals[s][i] == NULL)
				continue;
			n = (size_t)snprintf(
			    where, sizeof where, "%s", cm_cfg_spelling[s].what);
			cm_cfg_spell(
			    i, (enum cfg_src)s, where + n, sizeof where - n);
			if (cm_cfg_set(cfg, &cm_cfg_keys[i], vals[s][i], where,
			        err, errlen) != 0)
				return -1;
		}
	}
	return cfg_finish(cfg, err, errlen);
}

/* Key i's value (or config_path for CFG_CONFIG) as text, in num when it
 * is a number. */
const char *
cm_cfg_value_text(const struct cm_config *cfg, size_t i, char *num, size_t len)
{
	const struct cfg_key *k;
	const char *field;

	if (i == CFG_CONFIG)
		return cfg->config_path;
	k = &cm_cfg_keys[i];
	field = (const char *)cfg + k->off;
	switch (k->kind) {
	case CFG_STR:
		return field;
	case CFG_INT:
		snprintf(num, len, "%d", *(const int *)(const void *)field);
		return num;
	case CFG_BOOL:
		return *(const bool *)(const void *)field ? "true" : "false";
	case CFG_BACKEND:
		break;
	}
	return cfg->store_backend == CM_STORE_POSTGRES ? "postgres" : "sqlite";
}
