/*
 * spacectl: the command-line client of spaced's api, a command for each
 * of its routes (test_spacectl fails on a route without one).
 *
 *   spacectl [global options] GROUP [VERB] [ARGS...] [options]
 *
 * Options may come anywhere after the program's name, as --name=value or
 * --name value.  The URL is --url, else SPACED_URL, else the config's
 * http_listen; the token is --token, else SPACED_TOKEN, else
 * <data_dir>/admin.token, with data_dir and http_listen resolved as the
 * daemon resolves them (common/config.h; --config names the file).
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "ctl.h"
#include "json.h"
#include "log.h"
#include "tokenfile.h"

extern char **environ;

static const struct {
	const char *name;
	enum ctl_type type;
	long long lo, hi;
	const char *help;
} options[CTL_O__COUNT] = {
#define CTL_OPT_ROW(e, n, t, lo, hi, h) [CTL_O_##e] = {n, t, lo, hi, h},
    CTL_OPTIONS(CTL_OPT_ROW)
#undef CTL_OPT_ROW
};

static const struct ctl_cmd *const tables[] = {ctl_space_cmds, ctl_admin_cmds};

/* The value of option o has its type; false after a usage message. */
static bool
opt_valid(enum ctl_opt o, const char *v)
{
	char err[128], *end;
	json_t *obj = NULL;
	long long n;
	bool ok;

	switch (options[o].type) {
	case CTL_INT:
		errno = 0;
		n = strtoll(v, &end, 10);
		if (*v != '\0' && *end == '\0' && errno == 0 &&
		    n >= options[o].lo && n <= options[o].hi)
			return true;
		ctl_usage("--%s must be an integer in %lld..%lld",
		    options[o].name, options[o].lo, options[o].hi);
		return false;
	case CTL_OBJ:
		ok = cm_json_parse(v, strlen(v), CM_BODY_MAX, CM_JSON_DEPTH_MAX,
		         &obj, err, sizeof(err)) == 0 &&
		     json_is_object(obj);
		json_decref(obj);
		if (!ok)
			ctl_usage(
			    "--%s must be a JSON object", options[o].name);
		return ok;
	case CTL_STR:
		if (ctl_utf8(v, strlen(v)))
			return true;
		ctl_usage("--%s is not UTF-8 text", options[o].name);
		return false;
	default:
		return true;
	}
}

/* --- help -------------------------------------------------------------- */

static void
each_cmd(void (*fn)(const struct ctl_cmd *, void *), void *arg)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct ctl_cmd *k = tables[t]; k->group; k++)
			fn(k, arg);
}

/* Where help goes (stdout for --help, stderr after a usage error) and
 * which group's commands it lists (NULL: all). */
struct help_to {
	FILE *f;
	const char *group;
};

static void
line_of(const struct ctl_cmd *k, void *arg)
{
	const struct help_to *h = arg;

	if (h->group != NULL && strcmp(h->group, k->group) != 0)
		return;
	fprintf(h->f, "  %s%s%s %s\n", k->group, k->verb ? " " : "",
	    k->verb ? k->verb : "", k->synopsis);
}

static void
help_all(FILE *f, const char *group)
{
	struct help_to h = {f, group};

	fprintf(f, "usage: spacectl [options] COMMAND [ARGS...] [options]\n\n"
	           "commands:\n");
	each_cmd(line_of, &h);
	fprintf(f, "\nglobal options:\n");
	for (int o = 0; o < CTL_O_WORKSPACE; o++)
		fprintf(f, "  --%-16s %s\n", options[o].name, options[o].help);
	fprintf(f, "\n'spacectl COMMAND --help' describes a command.  Exit "
	           "codes: 0 success, 1 an api error, 2 a usage error, 3 "
	           "spacectl itself failed (out of memory, say).\n");
}

static void
help_cmd(const struct ctl_cmd *k)
{
	printf("usage: spacectl %s%s%s %s [options]\n\n%s\n", k->group,
	    k->verb ? " " : "", k->verb ? k->verb : "", k->synopsis, k->help);
	printf("\napi route: %s\n", k->route);
	printf("\noptions:\n");
	for (int o = 0; o < CTL_O__COUNT; o++)
		if ((k->opts | CTL_GLOBAL) & (UINT64_C(1) << o))
			printf(
			    "  --%-16s %s\n", options[o].name, options[o].help);
}

/* --- the command line -------------------------------------------------- */

static int
parse(struct ctl *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq;
		size_t len;
		int o;

		if (strcmp(a, "-o") == 0)
			a = "--output";
		if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
			if (c->n_arg == CM_CTL_ARGS_MAX)
				return ctl_usage("too many arguments");
			/* Names and ids, sent in a body or a path: a file
			 * argument (bundles create) is named in UTF-8 too. */
			if (!ctl_utf8(a, strlen(a)))
				return ctl_usage(
				    "an argument is not UTF-8 text");
			c->arg[c->n_arg++] = a;
			continue;
		}
		a += 2;
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a) : strlen(a);
		for (o = 0; o < CTL_O__COUNT; o++)
			if (strlen(options[o].name) == len &&
			    strncmp(options[o].name, a, len) == 0)
				break;
		if (o == CTL_O__COUNT)
			return ctl_usage("unknown option --%.*s", (int)len, a);
		if (c->opt[o] != NULL)
			return ctl_usage("--%s given twice", options[o].name);
		if (options[o].type == CTL_FLAG) {
			if (eq != NULL)
				return ctl_usage(
				    "--%s takes no value", options[o].name);
			c->opt[o] = "";
		} else if (eq != NULL) {
			c->opt[o] = eq + 1;
		} else if (i + 1 < argc) {
			c->opt[o] = argv[++i];
		} else {
			return ctl_usage("--%s needs a value", options[o].name);
		}
		if (!opt_valid((enum ctl_opt)o, c->opt[o]))
			return CTL_EXIT_USAGE;
	}
	return CTL_EXIT_OK;
}

/* The command the first arguments name; *used: how many they were. */
static const struct ctl_cmd *
find(const struct ctl *c, size_t *used, bool *group_known)
{
	*group_known = false;
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct ctl_cmd *k = tables[t]; k->group; k++) {
			if (c->n_arg < 1 || strcmp(k->group, c->arg[0]) != 0)
				continue;
			*group_known = true;
			if (k->verb == NULL) {
				*used = 1;
				return k;
			}
			if (c->n_arg >= 2 && strcmp(k->verb, c->arg[1]) == 0) {
				*used = 2;
				return k;
			}
		}
	return NULL;
}

/* SPACED_TOKEN and SPACED_URL are spacectl's, not config keys: the
 * config loader refuses a SPACED_ variable it does not know. */
static char **
config_env(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	if ((env = calloc(n + 1, sizeof(*env))) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "SPACED_TOKEN=", 13) != 0 &&
		    strncmp(environ[i], "SPACED_URL=", 11) != 0)
			env[k++] = environ[i];
	return env;
}

/* The URL and token, from flags, the environment, then the config. */
static int
resolve(struct ctl *c)
{
	const char *url = c->opt[CTL_O_URL], *tok = c->opt[CTL_O_TOKEN];
	struct cm_config cfg;
	char err[256], flag[CM_PATH_MAX + 16], **env;
	char *argv[3] = {"spacectl", NULL, NULL};
	int rc = 0, n;

	if (url == NULL)
		url = getenv("SPACED_URL");
	if (tok == NULL)
		tok = getenv("SPACED_TOKEN");
	if (url == NULL || tok == NULL) {
		if (c->opt[CTL_O_CONFIG] != NULL) {
			snprintf(flag, sizeof(flag), "--config=%s",
			    c->opt[CTL_O_CONFIG]);
			argv[1] = flag;
		}
		if ((env = config_env()) == NULL)
			return ctl_internal("out of memory");
		rc = cm_config_load(
		    &cfg, argv[1] ? 2 : 1, argv, env, NULL, err, sizeof(err));
		free(env);
		if (rc != 0)
			return ctl_usage("config: %s", err);
	}
	if (url != NULL) {
		n = snprintf(c->url, sizeof(c->url), "%s", url);
	} else if (strncmp(cfg.http_listen, "0.0.0.0:", 8) == 0) {
		/* A wildcard listen address is reached on loopback. */
		n = snprintf(c->url, sizeof(c->url), "http://127.0.0.1:%s",
		    cfg.http_listen + 8);
	} else {
		n = snprintf(
		    c->url, sizeof(c->url), "http://%s", cfg.http_listen);
	}
	if (n < 0 || (size_t)n >= sizeof(c->url))
		return ctl_usage("the URL is over %d bytes", CM_URL_MAX);
	while (c->url[0] && c->url[strlen(c->url) - 1] == '/')
		c->url[strlen(c->url) - 1] = '\0';
	if (tok != NULL) {
		if (strlen(tok) == 0 || strlen(tok) > CM_TOKEN_MAX)
			return ctl_usage("the token is empty or too long");
		snprintf(c->token, sizeof(c->token), "%s", tok);
	} else {
		struct cm_tokenfile f;

		if (cm_tokenfile_init(&f, cfg.data_dir) != 0 ||
		    cm_tokenfile_read(&f) != CM_TOKENFILE_OK)
			return ctl_usage("no token: give --token, set "
			                 "SPACED_TOKEN, or run where %s/%s is "
			                 "readable",
			    cfg.data_dir, CM_ADMIN_TOKEN_FILE);
		snprintf(c->token, sizeof(c->token), "%s", f.token);
		explicit_bzero(f.token, sizeof(f.token));
	}
	return CTL_EXIT_OK;
}

int
main(int argc, char **argv)
{
	static struct ctl c;
	const struct ctl_cmd *k;
	bool group_known;
	size_t used = 0;
	int rc;

	/* What common/ logs (the token file's checks) is for a person. */
	cm_log_init("spacectl", CM_LOG_WARN, false);
	if ((rc = parse(&c, argc, argv)) != 0)
		return rc;
	if (c.opt[CTL_O_VERSION] != NULL) {
		printf("spacectl %s\n", SPACED_VERSION);
		return CTL_EXIT_OK;
	}
	k = find(&c, &used, &group_known);
	if (c.opt[CTL_O_HELP] != NULL) {
		if (k != NULL)
			help_cmd(k);
		else
			help_all(stdout, group_known ? c.arg[0] : NULL);
		return CTL_EXIT_OK;
	}
	if (k == NULL) {
		if (c.n_arg == 0 || group_known) {
			help_all(stderr, group_known ? c.arg[0] : NULL);
			return CTL_EXIT_USAGE;
		}
		return ctl_usage("unknown command '%s%s%s' (see spacectl "
		                 "--help)",
		    c.arg[0], c.n_arg > 1 ? " " : "",
		    c.n_arg > 1 ? c.arg[1] : "");
	}
	for (int o = 0; o < CTL_O__COUNT; o++)
		if (c.opt[o] != NULL &&
		    !((k->opts | CTL_GLOBAL) & (UINT64_C(1) << o)))
			return ctl_usage("%s%s%s takes no --%s", k->group,
			    k->verb ? " " : "", k->verb ? k->verb : "",
			    options[o].name);
	for (int o = 0; o < CTL_O__COUNT; o++)
		if (c.opt[o] == NULL && (k->need & (UINT64_C(1) << o)))
			return ctl_usage("%s%s%s needs --%s", k->group,
			    k->verb ? " " : "", k->verb ? k->verb : "",
			    options[o].name);
	if (c.n_arg - used != k->n_arg)
		return ctl_usage("usage: spacectl %s%s%s %s", k->group,
		    k->verb ? " " : "", k->verb ? k->verb : "", k->synopsis);
	memmove(c.arg, c.arg + used, (c.n_arg - used) * sizeof(c.arg[0]));
	c.n_arg -= used;
	c.json = c.opt[CTL_O_JSON] != NULL;
	c.verbose = c.opt[CTL_O_VERBOSE] != NULL;
	if ((rc = resolve(&c)) != 0)
		return rc;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return ctl_internal("libcurl did not start");
	rc = k->fn(&c);
	explicit_bzero(c.token, sizeof(c.token));
	curl_global_cleanup();
	return rc;
}
