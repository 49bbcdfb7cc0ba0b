/*
 * config_file.c: the config file as a source of cm_config_load: lines of
 * "key = value" with '#' comments and double-quoted values taken
 * literally, read into cfg as they come (cm_cfg_set); a key given twice,
 * an unknown key, a NUL byte or an overlong line is an error naming the
 * file and line.
 */
#include "config.h"
#include "config_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
		return cm_cfg_fail(
		    err, errlen, "%s: expected key = value", where);
	*eq = '\0';
	*key = cfg_trim(line);
	if (**key == '\0')
		return cm_cfg_fail(
		    err, errlen, "%s: missing key before '='", where);
	/* The blanks cfg_trim takes off: a value whose first character
	 * after them is '"' is quoted, whatever blank came before it. */
	v = cfg_trim(eq + 1);
	if (*v == '"') {
		char *close = strchr(v + 1, '"');

		if (close == NULL)
			return cm_cfg_fail(err, errlen,
			    "%s: %s: unterminated quote", where, *key);
		*close = '\0';
		rest = cfg_trim(close + 1);
		if (*rest != '\0' && *rest != '#')
			return cm_cfg_fail(err, errlen,
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

int
cm_cfg_read_file(struct cm_config *cfg, const char *path, bool named, char *err,
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
		return cm_cfg_fail(err, errlen,
		    "config: path longer than %zu bytes",
		    sizeof cfg->config_path - 1);
	f = fopen(path, "re");
	if (f == NULL) {
		char ebuf[128];

		if (!named && errno == ENOENT)
			return 0;
		return cm_cfg_fail(err, errlen, "config file %s: %s", path,
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

			rc = cm_cfg_fail(err, errlen,
			    "%s: %.*s%sline longer than %d bytes", where,
			    (int)(kl < CFG_NAME_MAX ? kl : CFG_NAME_MAX), p,
			    kl > 0 ? ": " : "", CM_CONF_LINE_MAX);
			break;
		}
		if (nul) {
			rc = cm_cfg_fail(
			    err, errlen, "%s: NUL byte in line", where);
			break;
		}
		if (*p == '\0' || *p == '#')
			continue;
		if ((rc = cfg_split_line(p, &key, &val, where, err, errlen)) !=
		    0)
			break;
		if ((ki = cm_cfg_lookup_file(key)) < 0) {
			rc = cm_cfg_fail(
			    err, errlen, "%s: unknown key '%s'", where, key);
			break;
		}
		if (first_line[ki] != 0) {
			rc = cm_cfg_fail(err, errlen,
			    "%s: %s: duplicate (first set on line %u)", where,
			    key, first_line[ki]);
			break;
		}
		first_line[ki] = lineno;
		rc = cm_cfg_set(cfg, &cm_cfg_keys[ki], val, where, err, errlen);
	}
	if (rc == 0 && ferror(f))
		rc = cm_cfg_fail(
		    err, errlen, "config file %s: read error", path);
	fclose(f);
	return rc;
}
