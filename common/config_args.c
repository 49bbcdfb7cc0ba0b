/*
 * config_args.c: the command line and the environment as sources of
 * cm_config_load: a binary's extra flags (set up, set, read back with
 * cm_config_extra) and the scans of argv and envp that collect each key's
 * value by source, borrowed, for config.c to apply in order.  The rules
 * they follow (unknown SPACED_* refused, bare flags, a key given twice)
 * are the decisions listed at the top of config.c.
 */
#include "config.h"
#include "config_int.h"

#include <stdio.h>
#include <string.h>

/* The key (or CFG_CONFIG) spelt exactly as len bytes of text, or -1. */
static int
cfg_lookup(enum cfg_src s, const char *text, size_t len)
{
	char buf[CFG_NAME_MAX];

	for (size_t i = 0; i < CFG_NNAMES; i++) {
		cm_cfg_spell(i, s, buf, sizeof buf);
		if (strlen(buf) == len && memcmp(buf, text, len) == 0)
			return (int)i;
	}
	return -1;
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

int
cm_cfg_setup_extra(
    struct cm_config *cfg, const char *const *extra, char *err, size_t errlen)
{
	char flag[CFG_NAME_MAX];

	for (size_t i = 0; extra != NULL && extra[i] != NULL; i++) {
		size_t len = strlen(extra[i]);

		if (i >= CM_CONFIG_EXTRA_MAX)
			return cm_cfg_fail(err, errlen,
			    "more than %d extra flags", CM_CONFIG_EXTRA_MAX);
		if (len == 0 || len >= sizeof cfg->extra[i].name)
			return cm_cfg_fail(err, errlen,
			    "extra flag name '%s' is empty or too long",
			    extra[i]);
		snprintf(flag, sizeof flag, "--%s", extra[i]);
		if (cfg_lookup(CFG_SRC_FLAG, flag, strlen(flag)) >= 0 ||
		    cfg_extra_index(cfg, extra[i], len) >= 0)
			return cm_cfg_fail(err, errlen,
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
		return cm_cfg_fail(
		    err, errlen, "flag --%s given twice", cfg->extra[x].name);
	if (vlen >= sizeof cfg->extra[x].value)
		return cm_cfg_fail(err, errlen,
		    "flag --%s: value longer than %zu bytes",
		    cfg->extra[x].name, sizeof cfg->extra[x].value - 1);
	memcpy(cfg->extra[x].value, val, vlen + 1);
	cfg->extra[x].set = true;
	return 0;
}

int
cm_cfg_scan_argv(struct cm_config *cfg, cfg_values vals, int argc,
    char *const *argv, char *err, size_t errlen)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val;
		size_t len;
		int ki, x = -1;

		/* Up to any '=': "postgres-dsn=..." must not reach a log. */
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0' || a[2] == '=')
			return cm_cfg_fail(err, errlen,
			    "unexpected argument '%.*s'", (int)strcspn(a, "="),
			    a);
		eq = strchr(a, '=');
		len = eq != NULL ? (size_t)(eq - a) : strlen(a);
		ki = cfg_lookup(CFG_SRC_FLAG, a, len);
		if (ki < 0 && (x = cfg_extra_index(cfg, a + 2, len - 2)) < 0)
			return cm_cfg_fail(
			    err, errlen, "unknown flag %.*s", (int)len, a);

		if (eq != NULL)
			val = eq + 1;
		else if (ki >= 0 && ki < (int)CFG_NKEYS &&
		         cm_cfg_keys[ki].kind == CFG_BOOL)
			val = "true";
		else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0)
			val = argv[++i];
		else if (x >= 0)
			val = "true";
		else
			return cm_cfg_fail(err, errlen,
			    "flag %.*s: %s: no value", (int)len, a,
			    cm_cfg_name((size_t)ki));

		if (x >= 0) {
			if (cfg_set_extra(cfg, x, val, err, errlen) != 0)
				return -1;
			continue;
		}
		if (vals[CFG_SRC_FLAG][ki] != NULL)
			return cm_cfg_fail(err, errlen,
			    "flag %.*s: %s given twice", (int)len, a,
			    cm_cfg_name((size_t)ki));
		vals[CFG_SRC_FLAG][ki] = val;
	}
	return 0;
}

int
cm_cfg_scan_env(cfg_values vals, char *const *envp, char *err, size_t errlen)
{
	const char *prefix = cm_cfg_spelling[CFG_SRC_ENV].prefix;

	for (size_t i = 0; envp != NULL && envp[i] != NULL; i++) {
		const char *e = envp[i], *eq = strchr(e, '=');
		int ki;

		if (strncmp(e, prefix, strlen(prefix)) != 0 || eq == NULL)
			continue;
		ki = cfg_lookup(CFG_SRC_ENV, e, (size_t)(eq - e));
		if (ki == (int)CFG_CONFIG_FD)
			return cm_cfg_fail(err, errlen,
			    "environment %.*s: only the flag --config-fd is "
			    "read",
			    (int)(eq - e), e);
		if (ki < 0)
			return cm_cfg_fail(err, errlen,
			    "unknown environment variable %.*s", (int)(eq - e),
			    e);
		if (vals[CFG_SRC_ENV][ki] != NULL)
			return cm_cfg_fail(err, errlen,
			    "environment %.*s: %s given twice", (int)(eq - e),
			    e, cm_cfg_name((size_t)ki));
		vals[CFG_SRC_ENV][ki] = eq + 1;
	}
	return 0;
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
