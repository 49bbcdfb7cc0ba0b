#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
#define CFG_NAME_MAX 64 /* longest spelling of a key we build */

enum cfg_kind { CFG_STR, CFG_INT, CFG_BOOL, CFG_BACKEND };

struct cfg_key {
	const char *name;
	enum cfg_kind kind;
	size_t off, size;
	int min, max;
	bool empty_ok;
	/* Extra check of a string value: NULL when fine, else why not. */
	const char *(*check)(const char *v);
};

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

static const struct cfg_key cfg_keys[] = {
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
};

/*
 * The keys that are secrets (SPEC 4): a parent never puts them on a child's
 * command line or in its environment, and no message prints their value.
 */
static const char *const cfg_secret_keys[] = {"postgres_dsn"};

/*
 * Past the keys, two names that are not keys: "config" names the file and
 * "config_fd" the memfd that replaces file and environment.
 */
#define CFG_NKEYS (sizeof cfg_keys / sizeof cfg_keys[0])
#define CFG_CONFIG CFG_NKEYS
#define CFG_CONFIG_FD (CFG_NKEYS + 1)
#define CFG_NNAMES (CFG_NKEYS + 2)

/* The seals a config fd must carry: nobody can change it once sent. */
#define CFG_FD_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* How the environment and the command line spell a key. */
enum cfg_src { CFG_SRC_ENV, CFG_SRC_FLAG, CFG_NSRC };
static const struct {
	const char *prefix, *what;
	char sep;
	bool upper;
} cfg_spelling[CFG_NSRC] = {
    [CFG_SRC_ENV] = {"SPACED_", "environment ", '_', true},
    [CFG_SRC_FLAG] = {"--", "flag ", '-', false},
};

__attribute__((format(printf, 3, 4))) static int
cfg_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static const char *
cfg_name(size_t i)
{
	return i < CFG_NKEYS     ? cfg_keys[i].name
	       : i == CFG_CONFIG ? "config"
	                         : "config_fd";
}

/* "data_dir" as "--data-dir" or "SPACED_DATA_DIR". */
static void
cfg_spell(size_t i, enum cfg_src s, char *buf, size_t len)
{
	const char *name = cfg_name(i);
	size_t n = (size_t)snprintf(buf, len, "%s", cfg_spelling[s].prefix);

	for (; *name != '\0' && n + 1 < len; name++)
		buf[n++] = *name == '_' ? cfg_spelling[s].sep
		           : cfg_spelling[s].upper
		               ? (char)toupper((unsigned char)*name)
		               : *name;
	buf[n] = '\0';
}

/* The key (or CFG_CONFIG) spelt exactly as len bytes of text, or -1. */
static int
cfg_lookup(enum cfg_src s, const char *text, size_t len)
{
	char buf[CFG_NAME_MAX];

	for (size_t i = 0; i < CFG_NNAMES; i++) {
		cfg_spell(i, s, buf, sizeof buf);
		if (strlen(buf) == len && memcmp(buf, text, len) == 0)
			return (int)i;
	}
	return -1;
}

static int
cfg_lookup_file(const char *key)
{
	for (size_t i = 0; i < CFG_NKEYS; i++)
		if (strcmp(cfg_keys[i].name, key) == 0)
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

static int
cfg_parse_int(const char *v, long *out)
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
static int
cfg_set(struct cm_config *cfg, const struct cfg_key *k, const char *v,
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
		return cfg_fail(err, errlen, "%s: %s: %s", where, k->name, why);
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
		if (cfg_parse_int(v, &n) != 0 || n < k->min || n > k->max)
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
		return cfg_fail(err, errlen, "%s: %s: %s", where, k->name, why);
	return 0;
}

static int
cfg_extra_index(const struct cm_config *cfg, const char *name, size_t len)
{
	for (size_t i = 0; i < cfg->n_extra; i++)
		if (strlen(cfg->extra[i].name) == len &&
		    memcmp(cfg->extra[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

static int
cfg_setup_extra(
    struct cm_config *cfg, const char *const *extra, char *err, size_t errlen)
{
	char flag[CFG_NAME_MAX];

	for (size_t i = 0; extra != NULL && extra[i] != NULL; i++) {
		size_t len = strlen(extra[i]);

		if (i >= CM_CONFIG_EXTRA_MAX)
			return cfg_fail(err, errlen, "more than %d extra flags",
			    CM_CONFIG_EXTRA_MAX);
		if (len == 0 || len >= sizeof cfg->extra[i].name)
			return cfg_fail(err, errlen,
			    "extra flag name '%s' is empty or too long",
			    extra[i]);
		snprintf(flag, sizeof flag, "--%s", extra[i]);
		if (cfg_lookup(CFG_SRC_FLAG, flag, strlen(flag)) >= 0 ||
		    cfg_extra_index(cfg, extra[i], len) >= 0)
			return cfg_fail(err, errlen,
			    "extra flag %s is already a flag", flag);
		memcpy(cfg->extra[i].name, extra[i], len + 1);
		cfg->n_extra = i + 1;
	}
	return 0;
}

static int
cfg_set_extra(
    struct cm_config *cfg, int x, const char *val, char *err, size_t errlen)
{
	size_t vlen = strlen(val);

	if (cfg->extra[x].set)
		return cfg_fail(
		    err, errlen, "flag --%s given twice", cfg->extra[x].name);
	if (vlen >= sizeof cfg->extra[x].value)
		return cfg_fail(err, errlen,
		    "flag --%s: value longer than %zu bytes",
		    cfg->extra[x].name, sizeof cfg->extra[x].value - 1);
	memcpy(cfg->extra[x].value, val, vlen + 1);
	cfg->extra[x].set = true;
	return 0;
}

/* Values by source and name (a key, CFG_CONFIG or CFG_CONFIG_FD),
 * borrowed from argv and envp. */
typedef const char *cfg_values[CFG_NSRC][CFG_NNAMES];

static int
cfg_scan_argv(struct cm_config *cfg, cfg_values vals, int argc,
    char *const *argv, char *err, size_t errlen)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val;
		size_t len;
		int ki, x = -1;

		/* Up to any '=': "postgres-dsn=..." must not reach a log. */
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0' || a[2] == '=')
			return cfg_fail(err, errlen,
			    "unexpected argument '%.*s'", (int)strcspn(a, "="),
			    a);
		eq = strchr(a, '=');
		len = eq != NULL ? (size_t)(eq - a) : strlen(a);
		ki = cfg_lookup(CFG_SRC_FLAG, a, len);
		if (ki < 0 && (x = cfg_extra_index(cfg, a + 2, len - 2)) < 0)
			return cfg_fail(
			    err, errlen, "unknown flag %.*s", (int)len, a);

		if (eq != NULL)
			val = eq + 1;
		else if (ki >= 0 && ki < (int)CFG_NKEYS &&
		         cfg_keys[ki].kind == CFG_BOOL)
			val = "true";
		else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
			val = argv[++i];
		else if (x >= 0)
			val = "true";
		else
			return cfg_fail(err, errlen, "flag %.*s: %s: no value",
			    (int)len, a, cfg_name((size_t)ki));

		if (x >= 0) {
			if (cfg_set_extra(cfg, x, val, err, errlen) != 0)
				return -1;
			continue;
		}
		if (vals[CFG_SRC_FLAG][ki] != NULL)
			return cfg_fail(err, errlen,
			    "flag %.*s: %s given twice", (int)len, a,
			    cfg_name((size_t)ki));
		vals[CFG_SRC_FLAG][ki] = val;
	}
	return 0;
}

static int
cfg_scan_env(cfg_values vals, char *const *envp, char *err, size_t errlen)
{
	const char *prefix = cfg_spelling[CFG_SRC_ENV].prefix;

	for (size_t i = 0; envp != NULL && envp[i] != NULL; i++) {
		const char *e = envp[i], *eq = strchr(e, '=');
		int ki;

		if (strncmp(e, prefix, strlen(prefix)) != 0 || eq == NULL)
			continue;
		ki = cfg_lookup(CFG_SRC_ENV, e, (size_t)(eq - e));
		if (ki == (int)CFG_CONFIG_FD)
			return cfg_fail(err, errlen,
			    "environment %.*s: only the flag --config-fd is "
			    "read",
			    (int)(eq - e), e);
		if (ki < 0)
			return cfg_fail(err, errlen,
			    "unknown environment variable %.*s", (int)(eq - e),
			    e);
		if (vals[CFG_SRC_ENV][ki] != NULL)
			return cfg_fail(err, errlen,
			    "environment %.*s: %s given twice", (int)(eq - e),
			    e, cfg_name((size_t)ki));
		vals[CFG_SRC_ENV][ki] = eq + 1;
	}
	return 0;
}

/*
 * Reads one line into buf (at most CM_CONF_LINE_MAX bytes of it, the rest
 * is consumed).  Returns 1 for a line, 0 at end of file.
 */
static int
cfg_read_line(FILE *f, char *buf, bool *too_long, bool *nul)
{
	int c;
	size_t n = 0;
	bool any = false;

	*too_long = *nul = false;
	while ((c = getc(f)) != EOF) {
		any = true;
		if (c == '\n')
			break;
		if (c == '\0')
			*nul = true;
		if (n < CM_CONF_LINE_MAX)
			buf[n++] = (char)c;
		else
			*too_long = true;
	}
	buf[n] = '\0';
	return any ? 1 : 0;
}

static char *
cfg_trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	n = strlen(s);
	while (
	    n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/* Splits one non-comment line into key and value, in place. */
static int
cfg_split_line(char *line, char **key, char **val, const char *where, char *err,
    size_t errlen)
{
	char *eq = strchr(line, '=');
	char *v, *rest;

	if (eq == NULL)
		return cfg_fail(err, errlen, "%s: expected key = value", where);
	*eq = '\0';
	*key = cfg_trim(line);
	if (**key == '\0')
		return cfg_fail(
		    err, errlen, "%s: missing key before '='", where);
	/* The blanks cfg_trim takes off: a value whose first character
	 * after them is '"' is quoted, whatever blank came before it. */
	v = cfg_trim(eq + 1);
	if (*v == '"') {
		char *close = strchr(v + 1, '"');

		if (close == NULL)
			return cfg_fail(err, errlen,
			    "%s: %s: unterminated quote", where, *key);
		*close = '\0';
		rest = cfg_trim(close + 1);
		if (*rest != '\0' && *rest != '#')
			return cfg_fail(err, errlen,
			    "%s: %s: text after closing quote", where, *key);
		*val = v + 1;
		return 0;
	}
	/* A '#' starts a comment only after a blank: "a#b" is a value. */
	for (char *p = v; *p != '\0'; p++) {
		if (*p == '#' && (p == v || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			break;
		}
	}
	*val = cfg_trim(v);
	return 0;
}

static int
cfg_read_file(struct cm_config *cfg, const char *path, bool named, char *err,
    size_t errlen)
{
	char line[CM_CONF_LINE_MAX + 1];
	char where[CM_PATH_MAX + 32];
	unsigned first_line[CFG_NKEYS] = {0};
	unsigned lineno = 0;
	bool too_long, nul;
	FILE *f;
	int rc = 0;

	if (strlen(path) >= sizeof cfg->config_path)
		return cfg_fail(err, errlen,
		    "config: path longer than %zu bytes",
		    sizeof cfg->config_path - 1);
	f = fopen(path, "re");
	if (f == NULL) {
		char ebuf[128];

		if (!named && errno == ENOENT)
			return 0;
		return cfg_fail(err, errlen, "config file %s: %s", path,
		    strerror_r(errno, ebuf, sizeof ebuf));
	}
	snprintf(cfg->config_path, sizeof cfg->config_path, "%s", path);

	while (rc == 0 && cfg_read_line(f, line, &too_long, &nul) == 1) {
		char *p = cfg_trim(line), *key = NULL, *val = NULL;
		int ki;

		lineno++;
		snprintf(where, sizeof where, "%s:%u", path, lineno);
		if (too_long) {
			/* Name the key if the line starts with one. */
			size_t kl = strcspn(p, " \t=");

			rc = cfg_fail(err, errlen,
			    "%s: %.*s%sline longer than %d bytes", where,
			    (int)(kl < CFG_NAME_MAX ? kl : CFG_NAME_MAX), p,
			    kl > 0 ? ": " : "", CM_CONF_LINE_MAX);
			break;
		}
		if (nul) {
			rc = cfg_fail(
			    err, errlen, "%s: NUL byte in line", where);
			break;
		}
		if (*p == '\0' || *p == '#')
			continue;
		if ((rc = cfg_split_line(p, &key, &val, where, err, errlen)) !=
		    0)
			break;
		if ((ki = cfg_lookup_file(key)) < 0) {
			rc = cfg_fail(
			    err, errlen, "%s: unknown key '%s'", where, key);
			break;
		}
		if (first_line[ki] != 0) {
			rc = cfg_fail(err, errlen,
			    "%s: %s: duplicate (first set on line %u)", where,
			    key, first_line[ki]);
			break;
		}
		first_line[ki] = lineno;
		rc = cfg_set(cfg, &cfg_keys[ki], val, where, err, errlen);
	}
	if (rc == 0 && ferror(f))
		rc = cfg_fail(err, errlen, "config file %s: read error", path);
	fclose(f);
	return rc;
}

/* Reads the whole of a config fd into a malloc'd string; NULL and err. */
static char *
cfg_slurp_fd(int fd, char *err, size_t errlen)
{
	struct stat st;
	size_t size, got = 0;
	int seals = fcntl(fd, F_GET_SEALS);
	char *buf;

	/* Unsealed, the sender could change what a later reader sees. */
	if (seals < 0 || (seals & CFG_FD_SEALS) != CFG_FD_SEALS) {
		cfg_fail(
		    err, errlen, "config_fd: %d is not a sealed memfd", fd);
		return NULL;
	}
	if (fstat(fd, &st) != 0 || st.st_size < 0 ||
	    st.st_size > CM_CONFIG_FD_MAX) {
		cfg_fail(err, errlen, "config_fd: larger than %d bytes",
		    CM_CONFIG_FD_MAX);
		return NULL;
	}
	size = (size_t)st.st_size;
	if ((buf = malloc(size + 1)) == NULL) {
		cfg_fail(err, errlen, "config_fd: out of memory");
		return NULL;
	}
	/* pread: every child shares the one file offset of the memfd. */
	while (got < size) {
		ssize_t r = pread(fd, buf + got, size - got, (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(buf);
			cfg_fail(err, errlen, "config_fd: read error");
			return NULL;
		}
		got += (size_t)r;
	}
	buf[size] = '\0';
	if (strlen(buf) != size) {
		free(buf);
		cfg_fail(err, errlen, "config_fd: NUL byte");
		return NULL;
	}
	return buf;
}

/* Applies one "name=value" line of a config fd. */
static int
cfg_fd_line(struct cm_config *cfg, char *line, unsigned lineno,
    bool seen[CFG_NNAMES], char *err, size_t errlen)
{
	char *eq = strchr(line, '=');
	char where[32];
	int ki;

	snprintf(where, sizeof where, "config_fd:%u", lineno);
	if (eq == NULL)
		return cfg_fail(err, errlen, "%s: expected name=value", where);
	*eq = '\0';
	ki = strcmp(line, "config") == 0 ? (int)CFG_CONFIG
	                                 : cfg_lookup_file(line);
	if (ki < 0)
		return cfg_fail(err, errlen, "%s: unknown key '%.*s'", where,
		    CFG_NAME_MAX, line);
	if (seen[ki])
		return cfg_fail(err, errlen, "%s: %s: duplicate", where, line);
	seen[ki] = true;
	if (ki < (int)CFG_NKEYS)
		return cfg_set(cfg, &cfg_keys[ki], eq + 1, where, err, errlen);
	if (strlen(eq + 1) >= sizeof cfg->config_path)
		return cfg_fail(
		    err, errlen, "%s: config: path too long", where);
	snprintf(cfg->config_path, sizeof cfg->config_path, "%s", eq + 1);
	return 0;
}

/* The fd is the caller's to consume: it is closed whatever happens, so
 * that it never reaches a process this one starts. */
static int
cfg_read_fd(struct cm_config *cfg, const char *arg, char *err, size_t errlen)
{
	bool seen[CFG_NNAMES] = {false};
	unsigned lineno = 0;
	char *buf, *line, *next;
	long fd;
	int rc = 0;

	if (cfg_parse_int(arg, &fd) != 0 || fd < 0 || fd > INT32_MAX)
		return cfg_fail(
		    err, errlen, "config_fd: must be a file descriptor number");
	buf = cfg_slurp_fd((int)fd, err, errlen);
	close((int)fd);
	if (buf == NULL)
		return -1;
	for (line = buf; rc == 0 && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) == NULL) {
			rc = cfg_fail(
			    err, errlen, "config_fd: last line has no newline");
			break;
		}
		*next++ = '\0';
		rc = cfg_fd_line(cfg, line, ++lineno, seen, err, errlen);
	}
	/* Every key, so that a short fd is never taken for the defaults. */
	for (size_t i = 0; rc == 0 && i < CFG_NKEYS; i++)
		if (!seen[i])
			rc = cfg_fail(err, errlen, "config_fd: %s missing",
			    cfg_keys[i].name);
	free(buf);
	return rc;
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
			return cfg_fail(err, errlen,
			    "host_id: not set and gethostname failed");
		if (strlen(host) >= sizeof cfg->host_id)
			return cfg_fail(err, errlen,
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
			return cfg_fail(err, errlen,
			    "run_dir: <data_dir>/run longer than %zu bytes",
			    sizeof cfg->run_dir - 1);
	}
	if (cfg->events_url[0] == '\0') {
		derived = true;
		n = snprintf(cfg->events_url, sizeof cfg->events_url,
		    "ipc://%s/events.ipc", cfg->run_dir);
		if (n < 0 || (size_t)n >= sizeof cfg->events_url)
			return cfg_fail(err, errlen,
			    "events_url: ipc://<run_dir>/events.ipc longer "
			    "than %zu bytes",
			    sizeof cfg->events_url - 1);
	}
	if (strncmp(cfg->events_url, "ipc://", 6) == 0 &&
	    strlen(cfg->events_url + 6) > CM_IPC_PATH_MAX)
		return cfg_fail(err, errlen,
		    "events_url: ipc path%s longer than %d bytes: %s",
		    derived ? " (derived from run_dir)" : "", CM_IPC_PATH_MAX,
		    cfg->events_url + 6);
	if (cfg->task_timeout_default > cfg->task_timeout_max)
		return cfg_fail(err, errlen,
		    "task_timeout_default: %d is above task_timeout_max %d",
		    cfg->task_timeout_default, cfg->task_timeout_max);
	if (cfg->store_backend == CM_STORE_POSTGRES &&
	    cfg->postgres_dsn[0] == '\0')
		return cfg_fail(err, errlen,
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
		return cfg_fail(err, errlen, "no config to fill");
	cfg_defaults(cfg);
	if (cfg_setup_extra(cfg, extra, err, errlen) != 0 ||
	    cfg_scan_argv(cfg, vals, argc, argv, err, errlen) != 0)
		return -1;

	fd_arg = vals[CFG_SRC_FLAG][CFG_CONFIG_FD];
	if (fd_arg != NULL) {
		if (vals[CFG_SRC_FLAG][CFG_CONFIG] != NULL)
			return cfg_fail(err, errlen,
			    "config_fd: --config and --config-fd exclude each "
			    "other");
		if (cfg_read_fd(cfg, fd_arg, err, errlen) != 0)
			return -1;
	} else {
		if (cfg_scan_env(
		        vals, envp != NULL ? envp : environ, err, errlen) != 0)
			return -1;
		path = vals[CFG_SRC_FLAG][CFG_CONFIG];
		if (path == NULL)
			path = vals[CFG_SRC_ENV][CFG_CONFIG];
		if (path != NULL && path[0] == '\0')
			return cfg_fail(err, errlen, "config: empty path");
		if (cfg_read_file(cfg, path != NULL ? path : CFG_DEFAULT_PATH,
		        path != NULL, err, errlen) != 0)
			return -1;
	}

	/* Lowest precedence first, so the command line is applied last. */
	for (int s = CFG_SRC_ENV; s < CFG_NSRC; s++) {
		for (size_t i = 0; i < CFG_NKEYS; i++) {
			size_t n;

			if (vals[s][i] == NULL)
				continue;
			n = (size_t)snprintf(
			    where, sizeof where, "%s", cfg_spelling[s].what);
			cfg_spell(
			    i, (enum cfg_src)s, where + n, sizeof where - n);
			if (cfg_set(cfg, &cfg_keys[i], vals[s][i], where, err,
			        errlen) != 0)
				return -1;
		}
	}
	return cfg_finish(cfg, err, errlen);
}

const char *
cm_config_extra(const struct cm_config *cfg, const char *name)
{
	int i;

	if (cfg == NULL || name == NULL)
		return NULL;
	i = cfg_extra_index(cfg, name, strlen(name));
	return i >= 0 && cfg->extra[i].set ? cfg->extra[i].value : NULL;
}

/* Key i's value (or config_path for CFG_CONFIG) as text, in num when it
 * is a number. */
static const char *
cfg_value_text(const struct cm_config *cfg, size_t i, char *num, size_t len)
{
	const struct cfg_key *k;
	const char *field;

	if (i == CFG_CONFIG)
		return cfg->config_path;
	k = &cfg_keys[i];
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

static bool
cfg_is_secret(const char *name)
{
	for (size_t j = 0;
	     j < sizeof cfg_secret_keys / sizeof cfg_secret_keys[0]; j++)
		if (strcmp(cfg_secret_keys[j], name) == 0)
			return true;
	return false;
}

/*
 * Whether v reads back as itself only quoted: the file's reader trims
 * blanks around a value, takes '#' after a blank as a comment and a
 * leading '"' as a quote.  A quoted value ends at its first '"', so a value
 * that needs quotes and holds one has no spelling; only the environment
 * or a flag can give such a value.
 */
static bool
cfg_needs_quotes(const char *v)
{
	size_t n = strlen(v);

	if (n == 0)
		return false;
	if (v[0] == ' ' || v[0] == '\t' || v[0] == '"' || v[n - 1] == ' ' ||
	    v[n - 1] == '\t')
		return true;
	for (size_t i = 0; i < n; i++)
		if (v[i] == '#' &&
		    (i == 0 || v[i - 1] == ' ' || v[i - 1] == '\t'))
			return true;
	return false;
}

int
cm_config_print(const struct cm_config *cfg, FILE *f)
{
	char num[24];

	for (size_t i = 0; i < CFG_NKEYS; i++) {
		const char *v = cfg_value_text(cfg, i, num, sizeof num);

		/* A secret's value never leaves the process this way. */
		if (cfg_is_secret(cfg_keys[i].name) && v[0] != '\0')
			fprintf(f, "# %s = (set; a secret, not shown)\n",
			    cfg_keys[i].name);
		else if (cfg_needs_quotes(v))
			fprintf(f, "%s = \"%s\"\n", cfg_keys[i].name, v);
		else
			fprintf(f, "%s = %s\n", cfg_keys[i].name, v);
	}
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

/* Every name and the longest value of any field fit in the fd. */
_Static_assert(CFG_NNAMES *(CFG_NAME_MAX + CM_PATH_MAX + 2) <= CM_CONFIG_FD_MAX,
    "CM_CONFIG_FD_MAX cannot hold every key");

/*
 * The fd holds "name=value" lines, the value taken literally up to the
 * newline: control characters are refused in every value, so a value
 * cannot hold one.  Extra flags are not written: they belong to one binary
 * and a child of another kind would reject them.
 */
int
cm_config_to_fd(const struct cm_config *cfg)
{
	char *buf, num[24];
	size_t n = 0, off = 0;
	int fd = -1;

	if (cfg == NULL || (buf = malloc(CM_CONFIG_FD_MAX)) == NULL)
		return -1;
	for (size_t i = 0; i <= CFG_CONFIG; i++) {
		int w = snprintf(buf + n, CM_CONFIG_FD_MAX - n, "%s=%s\n",
		    cfg_name(i), cfg_value_text(cfg, i, num, sizeof num));

		if (w < 0 || (size_t)w >= CM_CONFIG_FD_MAX - n)
			goto out;
		n += (size_t)w;
	}
	fd = memfd_create("spaced-config", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	while (fd >= 0 && off < n) {
		ssize_t w = write(fd, buf + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			fd = -1;
		} else {
			off += (size_t)w;
		}
	}
	if (fd >= 0 && fcntl(fd, F_ADD_SEALS, CFG_FD_SEALS) != 0) {
		close(fd);
		fd = -1;
	}
out:
	free(buf);
	return fd;
}

char **
cm_config_child_env(char *const *envp)
{
	size_t n = 0, k = 0;
	char **out;

	if (envp == NULL)
		envp = environ;
	while (envp[n] != NULL)
		n++;
	if ((out = calloc(n + 1, sizeof *out)) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool secret = false;

		for (size_t j = 0;
		     j < sizeof cfg_secret_keys / sizeof cfg_secret_keys[0];
		     j++) {
			char name[CFG_NAME_MAX];
			size_t len;

			cfg_spell((size_t)cfg_lookup_file(cfg_secret_keys[j]),
			    CFG_SRC_ENV, name, sizeof name);
			len = strlen(name);
			secret |= strncmp(envp[i], name, len) == 0 &&
			          envp[i][len] == '=';
		}
		if (!secret)
			out[k++] = envp[i];
	}
	out[k] = NULL;
	return out;
}
