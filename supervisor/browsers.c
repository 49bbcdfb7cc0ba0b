/*
 * browsers.c: the managed instances of a first start (browsers.h).
 *
 * The order: bundle.list (the "browser" bundle's id), instance.list (the
 * names registered by an earlier, interrupted start), then for each
 * instance instance.register unless its name is there, and binding.create.
 */
#include "browsers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "status.h"

#define BROWSERS_BUNDLE "browser"
#define BROWSERS_NAME "chromium-%d"

enum browsers_state {
	BR_BUNDLES,  /* bundle.list */
	BR_LIST,     /* instance.list */
	BR_REGISTER, /* instance.register */
	BR_BIND,     /* binding.create */
};

struct sup_browsers {
	const char *ws;
	enum browsers_state state;
	int want, next; /* instances wanted; the one under way */
	char bundle[CM_ID_MAX + 1];
	char name[CM_NAME_MAX + 1];
	char id[CM_ID_MAX + 1]; /* of the one under way */
	/* Ids of chromium-1.. registered already, "" for the rest. */
	char (*known)[CM_ID_MAX + 1];
};

/* An executable regular file, following links. */
static bool
browser_installed(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	       access(path, X_OK) == 0;
}

static enum sup_boot_step
browsers_fail(const char *what, enum cm_err e)
{
	cm_warnx("bootstrap: %s: %s", what, cm_err_code(e));
	return SUP_BOOT_FAILED;
}

static enum sup_boot_step
ask(struct sup_browsers *b, struct pr_req *q, enum browsers_state st,
    enum pr_op op)
{
	b->state = st;
	q->op = op;
	return SUP_BOOT_CALL;
}

/* Registers or binds instance b->next, or ends. */
static enum sup_boot_step
next_instance(struct sup_browsers *b, struct pr_req *q)
{
	if (b->next >= b->want) {
		cm_info("bootstrap: %d managed browser instances bound to "
		        "workspace default",
		    b->want);
		return SUP_BOOT_DONE;
	}
	snprintf(b->name, sizeof(b->name), BROWSERS_NAME, b->next + 1);
	if (b->known[b->next][0] != '\0') {
		snprintf(b->id, sizeof(b->id), "%s", b->known[b->next]);
		q->workspace_id = b->ws;
		q->browser_instance_id = b->id;
		return ask(b, q, BR_BIND, PR_OP_BINDING_CREATE);
	}
	q->name = b->name;
	q->driver = cm_driver_name(CM_DRIVER_MANAGED);
	q->bundle_id = b->bundle;
	return ask(b, q, BR_REGISTER, PR_OP_INSTANCE_REGISTER);
}

enum sup_boot_step
sup_browsers_begin(struct sup_browsers **out, const struct cm_config *cfg,
    const char *ws_id, struct pr_req *q)
{
	struct sup_browsers *b;

	*out = NULL;
	memset(q, 0, sizeof(*q));
	if (cfg->managed_browsers <= 0)
		return SUP_BOOT_DONE;
	if (!browser_installed(cfg->chromium_path)) {
		cm_info("bootstrap: no browser at chromium_path; no managed "
		        "instance registered");
		return SUP_BOOT_DONE;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL ||
	    (b->known = calloc(
	         (size_t)cfg->managed_browsers, sizeof(*b->known))) == NULL) {
		free(b);
		cm_warnx("bootstrap: out of memory");
		return SUP_BOOT_FAILED;
	}
	b->ws = ws_id;
	b->want = cfg->managed_browsers;
	*out = b;
	return ask(b, q, BR_BUNDLES, PR_OP_BUNDLE_LIST);
}

static enum sup_boot_step
on_bundles(struct sup_browsers *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err != CM_OK)
		return browsers_fail("bundle.list", r->err);
	for (size_t i = 0; i < r->n_bundles; i++)
		if (strcmp(r->bundles[i].name, BROWSERS_BUNDLE) == 0)
			snprintf(b->bundle, sizeof(b->bundle), "%s",
			    r->bundles[i].bundle_id);
	if (b->bundle[0] == '\0') {
		cm_warnx("bootstrap: no runtime bundle named %s; no managed "
		         "instance registered",
		    BROWSERS_BUNDLE);
		return SUP_BOOT_DONE;
	}
	return ask(b, q, BR_LIST, PR_OP_INSTANCE_LIST);
}

static enum sup_boot_step
on_list(struct sup_browsers *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err != CM_OK)
		return browsers_fail("instance.list", r->err);
	for (int k = 0; k < b->want; k++) {
		snprintf(b->name, sizeof(b->name), BROWSERS_NAME, k + 1);
		for (size_t i = 0; i < r->n_instances; i++)
			if (strcmp(r->instances[i].name, b->name) == 0)
				snprintf(b->known[k], sizeof(b->known[k]), "%s",
				    r->instances[i].browser_instance_id);
	}
	return next_instance(b, q);
}

enum sup_boot_step
sup_browsers_step(
    struct sup_browsers *b, const struct pr_rep *r, struct pr_req *q)
{
	memset(q, 0, sizeof(*q));
	switch (b->state) {
	case BR_BUNDLES:
		return on_bundles(b, r, q);
	case BR_LIST:
		return on_list(b, r, q);
	case BR_REGISTER:
		/* A conflict is a name taken since the list: start over. */
		if (r->err != CM_OK || r->n_instances != 1)
			return browsers_fail("instance.register", r->err);
		snprintf(b->known[b->next], sizeof(b->known[b->next]), "%s",
		    r->instances[0].browser_instance_id);
		return next_instance(b, q);
	case BR_BIND:
		if (r->err != CM_OK && r->err != CM_E_CONFLICT)
			return browsers_fail("binding.create", r->err);
		b->next++;
		return next_instance(b, q);
	}
	cm_fatalx("bootstrap: browsers in state %d", (int)b->state);
}

void
sup_browsers_free(struct sup_browsers *b)
{
	if (b == NULL)
		return;
	free(b->known);
	free(b);
}
