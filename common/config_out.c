/*
 * config_out.c: what of a configuration is shown or passed on by the
 * environment: cm_config_print (a file that reads back as the same
 * values) and cm_config_child_env (a child's environment).  It owns the
 * list of secret keys, whose values neither of them lets out.
 */
#include "config.h"
#include "config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The keys that are secrets: no process's command line or environment may
 * carry one, so a parent never puts them on a child's command line or in its
 * environment, and no message prints their value.
 */
static const char *const cfg_secret_keys[] = {"postgres_dsn"};

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
		const char *v = cm_cfg_value_text(cfg, i, num, sizeof num);

		/* A secret's value never leaves the process this way. */
		if (cfg_is_secret(cm_cfg_keys[i].name) && v[0] != '\0')
			fprintf(f, "# %s = (set; a secret, not shown)\n",
			    cm_cfg_keys[i].name);
		else if (cfg_needs_quotes(v))
			fprintf(f, "%s = \"%s\"\n", cm_cfg_keys[i].name, v);
		else
			fprintf(f, "%s = %s\n", cm_cfg_keys[i].name, v);
	}
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
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

			cm_cfg_spell(
			    (size_t)cm_cfg_lookup_file(cfg_secret_keys[j]),
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
