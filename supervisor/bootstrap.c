/*
 * bootstrap.c: provisioning an empty store, so that a crash at any point
 * leaves a state the next start can finish.
 *
 * The order, and why:
 *   1. The token is written to <data_dir>/admin.token.tmp (O_EXCL, 0600)
 *      and fsync'd, with its directory, before the store hears of it.
 *      The file is the only copy of the raw token: were the hash issued
 *      first, a crash before the file was durable would leave an admin
 *      nobody can sign in as, and no way to tell.
 *   2. principal.create "admin" (operator, is_admin), only while the
 *      store holds no principal at all.
 *   3. token.issue of the file's hash, label "bootstrap".
 *   4. bundle.create for every .json file in etc/bundles (conflict: it is
 *      there already).
 *   5. the workspace "default": reused when it exists, else created.
 *   5b. the managed instances of a first start (browsers.h), when
 *      chromium_path is installed: registered and bound to default.
 *   6. member.put manager.  The last write: an admin with a membership
 *      marks a finished bootstrap.
 *   7. admin.token.tmp is renamed to admin.token, and the directory
 *      fsync'd.  So admin.token exists only once the token in it
 *      authenticates, and the supervisor says it is ready only after.
 *
 * What a start finds after a crash, and what it does ("the file" is
 * admin.token, else admin.token.tmp; a start before step 7 existed wrote
 * admin.token in step 1, and is read the same way):
 *   - no principal, no file: starts at 1.
 *   - no principal, a file: died in 1, or before 2 took effect.  No row
 *     names that token (a token needs a principal), so a well-formed one
 *     is reused and a torn one replaced; then 2..7.
 *   - principals, and a file whose token does not resolve while the only
 *     principal is an enabled admin: died between 2 and 3; 3..7.  Had the
 *     token been issued and revoked since, token.issue answers conflict
 *     (the hash is unique) and nothing changes.
 *   - principals, and a file whose token resolves to an admin with no
 *     membership: died in 4..6; 4..7 again, each of them idempotent.
 *   - principals, and a file whose token resolves to an admin with a
 *     membership: finished, or died before 7; 7 when the file is still
 *     admin.token.tmp.
 *   - anything else is a store an operator has changed: nothing is
 *     created, and a state that looks wrong gets a warning saying what to
 *     do.  Principals without the file is not a crash state (the file
 *     comes first): the operator has taken it away, or the data dir
 *     predates the bootstrap.
 * Every write carries an op_id, kept across the attempts of that call,
 * and the store answers a repeated op_id with its first reply: a store
 * that restarts mid-call applies the write once.  A second admin is never
 * created, because 2 happens only while the store has no principal.
 *
 * Cost: a dozen store calls, once per start, each an asynchronous call on
 * the supervisor's loop.
 */
#include "bootstrap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "browsers.h"
#include "log.h"
#include "token.h"
#include "tokenfile.h"

#define BOOT_ADMIN_NAME "admin"
#define BOOT_WORKSPACE "default"
#define BOOT_TOKEN_LABEL "bootstrap"
/* workspace.list then .create, twice at most: a conflict means the
 * workspace appeared since the list. */
#define BOOT_WS_ROUNDS 2

/* The request whose reply the next step takes. */
enum boot_state {
	BS_LIST,         /* principal.list */
	BS_CREATE_ADMIN, /* principal.create (step 2) */
	BS_ISSUE,        /* token.issue (step 3) */
	BS_RESOLVE,      /* auth.resolve of the file's token */
	BS_REISSUE,      /* token.issue after a crash between 2 and 3 */
	BS_BUNDLE,       /* bundle.create (step 4) */
	BS_WS_LIST,      /* workspace.list (step 5) */
	BS_WS_CREATE,    /* workspace.create (step 5) */
	BS_BROWSERS,     /* a request of browsers.h (step 5b) */
	BS_MEMBER,       /* member.put (step 6) */
};

struct sup_boot {
	const struct cm_config *cfg;
	const char *bin_dir;
	enum boot_state state;
	struct cm_tokenfile file; /* holds the token: a secret */
	char hash[CM_TOKEN_HASH_LEN];
	char admin_id[CM_ID_MAX + 1];
	/* The store's only principal, when it is an enabled admin named
	 * admin (from principal.list). */
	char only_admin[CM_ID_MAX + 1];
	char ws[CM_ID_MAX + 1];
	int ws_rounds;
	char bundles[CM_PATH_MAX + 32]; /* the etc/bundles directory */
	struct dirent **names;          /* its manifests, from scandir */
	int n_names, next_name;
	char manifest_path[CM_PATH_MAX + 320];
	char *manifest;  /* the one being sent */
	bool show_token; /* the file holds the admin's live token */
	struct sup_browsers *browsers; /* step 5b, while under way */
};

static enum sup_boot_step
ask(struct sup_boot *b, struct pr_req *q, enum boot_state st, enum pr_op op)
{
	b->state = st;
	q->op = op;
	return SUP_BOOT_CALL;
}

static enum sup_boot_step
fail(const char *what, enum cm_err e)
{
	cm_warnx("bootstrap: %s: %s", what, cm_err_code(e));
	return SUP_BOOT_FAILED;
}

static void
copy_id(char dst[CM_ID_MAX + 1], const char *src)
{
	snprintf(dst, CM_ID_MAX + 1, "%s", src != NULL ? src : "");
}

/* Whether snprintf's n bytes fit in len and name a directory at out. */
static bool
is_dir(const char *out, int n, size_t len)
{
	struct stat st;

	return n > 0 && (size_t)n < len && stat(out, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

/* First bundles/ beside the config file that was read (an installed
 * /etc/spaced/spaced.conf), then <bin_dir>/../etc/bundles (the build
 * tree), then the working directory's etc/bundles. */
static int
bundles_dir(const struct sup_boot *b, char *out, size_t len)
{
	const char *conf = b->cfg->config_path;
	const char *slash = strrchr(conf, '/');

	if (slash != NULL &&
	    is_dir(out,
	        snprintf(out, len, "%.*s/bundles", (int)(slash - conf), conf),
	        len))
		return 0;
	if (b->bin_dir != NULL &&
	    is_dir(
	        out, snprintf(out, len, "%s/../etc/bundles", b->bin_dir), len))
		return 0;
	return is_dir(out, snprintf(out, len, "./etc/bundles"), len) ? 0 : -1;
}

static int
is_manifest_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 &&
	       strcmp(d->d_name + n - 5, ".json") == 0;
}

/* A whole manifest, NUL-terminated, at most CM_MANIFEST_MAX bytes.
 * NULL (logged) when it cannot be read or breaks the bound. */
static char *
read_manifest(const char *path)
{
	char *buf = NULL;
	bool ok = false;
	ssize_t n = -1;
	int fd;

	/* One byte over the bound is read, so an oversized file shows. */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
	    (buf = malloc(CM_MANIFEST_MAX + 2)) == NULL ||
	    (n = cm_read_all(fd, buf, CM_MANIFEST_MAX + 1)) < 0) {
		cm_warn("bootstrap: %s", path);
	} else if (n > CM_MANIFEST_MAX) {
		cm_warnx("bootstrap: %s: over %d bytes", path, CM_MANIFEST_MAX);
	} else {
		buf[n] = '\0';
		if (!(ok = strlen(buf) == (size_t)n))
			cm_warnx("bootstrap: %s: holds a NUL byte", path);
	}
	if (fd >= 0)
		close(fd);
	if (!ok) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* ---- step 7 and the end ------------------------------------------------ */

/* Where the token is and where the console will be, for a person. */
static enum sup_boot_step
done(struct sup_boot *b)
{
	if (b->show_token) {
		if (cm_tokenfile_publish(&b->file) != 0)
			return SUP_BOOT_FAILED;
		cm_info("bootstrap: the admin token is in %s", b->file.path);
		fprintf(stderr, "spaced: admin token in %s\n", b->file.path);
	}
	fprintf(stderr, "spaced: console at http://%s/\n", b->cfg->http_listen);
	return SUP_BOOT_DONE;
}

/* ---- steps 4..6 ------------------------------------------------------- */

static enum sup_boot_step
ask_workspaces(struct sup_boot *b, struct pr_req *q)
{
	if (++b->ws_rounds > BOOT_WS_ROUNDS)
		return fail("workspace.create", CM_E_CONFLICT);
	return ask(b, q, BS_WS_LIST, PR_OP_WORKSPACE_LIST);
}

/* The next manifest that can be read, or step 5.  A manifest that cannot
 * be read or that the store rejects is skipped with a warning: trying
 * again would not change it. */
static enum sup_boot_step
next_bundle(struct sup_boot *b, struct pr_req *q)
{
	free(b->manifest);
	b->manifest = NULL;
	while (b->manifest == NULL && b->next_name < b->n_names) {
		const char *name = b->names[b->next_name++]->d_name;
		int n = snprintf(b->manifest_path, sizeof(b->manifest_path),
		    "%s/%s", b->bundles, name);

		if (n > 0 && (size_t)n < sizeof(b->manifest_path))
			b->manifest = read_manifest(b->manifest_path);
	}
	if (b->manifest == NULL)
		return ask_workspaces(b, q);
	q->manifest = b->manifest;
	return ask(b, q, BS_BUNDLE, PR_OP_BUNDLE_CREATE);
}

static enum sup_boot_step
finish(struct sup_boot *b, struct pr_req *q)
{
	if (bundles_dir(b, b->bundles, sizeof(b->bundles)) != 0) {
		cm_warnx("bootstrap: no etc/bundles directory; no runtime "
		         "bundle loaded");
		return ask_workspaces(b, q);
	}
	if ((b->n_names = scandir(
	         b->bundles, &b->names, is_manifest_name, alphasort)) < 0) {
		cm_warn("bootstrap: %s", b->bundles);
		b->n_names = 0;
		b->names = NULL;
	}
	return next_bundle(b, q);
}

static enum sup_boot_step
on_bundle(struct sup_boot *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err == CM_OK && r->n_bundles == 1)
		cm_info("bootstrap: runtime bundle %s %s loaded",
		    r->bundles[0].name, r->bundles[0].version);
	else if (r->err == CM_E_CONFLICT)
		cm_debug("bootstrap: %s: already loaded", b->manifest_path);
	else if (r->err == CM_E_INVALID_REQUEST)
		cm_warnx("bootstrap: %s: %s", b->manifest_path,
		    r->msg ? r->msg : "rejected");
	else
		return fail("bundle.create", r->err);
	return next_bundle(b, q);
}

static enum sup_boot_step
ask_member(struct sup_boot *b, struct pr_req *q)
{
	q->workspace_id = b->ws;
	q->principal_id = b->admin_id;
	q->role = "manager";
	return ask(b, q, BS_MEMBER, PR_OP_MEMBER_PUT);
}

/* Step 5b, then 6. */
static enum sup_boot_step
ask_browsers(struct sup_boot *b, struct pr_req *q)
{
	enum sup_boot_step st;

	sup_browsers_free(b->browsers);
	st = sup_browsers_begin(&b->browsers, b->cfg, b->ws, q);
	if (st == SUP_BOOT_CALL) {
		b->state = BS_BROWSERS;
		return st;
	}
	return st == SUP_BOOT_DONE ? ask_member(b, q) : st;
}

static enum sup_boot_step
on_browsers(struct sup_boot *b, const struct pr_rep *r, struct pr_req *q)
{
	enum sup_boot_step st = sup_browsers_step(b->browsers, r, q);

	if (st != SUP_BOOT_DONE)
		return st;
	memset(q, 0, sizeof(*q));
	return ask_member(b, q);
}

static enum sup_boot_step
on_ws_list(struct sup_boot *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err != CM_OK)
		return fail("workspace.list", r->err);
	for (size_t i = 0; i < r->n_workspaces; i++)
		if (strcmp(r->workspaces[i].name, BOOT_WORKSPACE) == 0)
			copy_id(b->ws, r->workspaces[i].workspace_id);
	if (b->ws[0] != '\0')
		return ask_browsers(b, q);
	q->name = BOOT_WORKSPACE;
	return ask(b, q, BS_WS_CREATE, PR_OP_WORKSPACE_CREATE);
}

static enum sup_boot_step
on_ws_create(struct sup_boot *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err == CM_E_CONFLICT)
		return ask_workspaces(b, q);
	if (r->err != CM_OK || r->n_workspaces != 1)
		return fail("workspace.create", r->err);
	copy_id(b->ws, r->workspaces[0].workspace_id);
	return ask_browsers(b, q);
}

static enum sup_boot_step
on_member(struct sup_boot *b, const struct pr_rep *r)
{
	if (r->err != CM_OK)
		return fail("member.put", r->err);
	cm_info("bootstrap: admin %s manages workspace %s (%s)", b->admin_id,
	    BOOT_WORKSPACE, b->ws);
	b->show_token = true;
	return done(b);
}

/* ---- steps 1..3 on an empty store --------------------------------------- */

static enum sup_boot_step
fresh(struct sup_boot *b, struct pr_req *q)
{
	if (cm_tokenfile_ensure(&b->file) != 0 ||
	    cm_token_hash(b->file.token, strlen(b->file.token), b->hash) != 0)
		return SUP_BOOT_FAILED;
	q->kind = "operator";
	q->name = BOOT_ADMIN_NAME;
	q->is_admin = true;
	return ask(b, q, BS_CREATE_ADMIN, PR_OP_PRINCIPAL_CREATE);
}

static enum sup_boot_step
ask_issue(struct sup_boot *b, struct pr_req *q, enum boot_state st)
{
	q->principal_id = b->admin_id;
	q->token_hash = b->hash;
	q->label = BOOT_TOKEN_LABEL;
	return ask(b, q, st, PR_OP_TOKEN_ISSUE);
}

static enum sup_boot_step
on_create_admin(struct sup_boot *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err != CM_OK || r->n_principals != 1)
		return fail("principal.create", r->err);
	copy_id(b->admin_id, r->principals[0].principal_id);
	cm_info("bootstrap: admin operator %s created", b->admin_id);
	return ask_issue(b, q, BS_ISSUE);
}

static enum sup_boot_step
on_issue(struct sup_boot *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err != CM_OK)
		return fail("token.issue", r->err);
	return finish(b, q);
}

/* ---- a store with principals -------------------------------------------- */

static bool
is_enabled_admin(const struct pr_principal *p)
{
	return p->is_admin && !p->disabled && strcmp(p->kind, "operator") == 0;
}

/* A store with principals and no token file: not ours to change. */
static enum sup_boot_step
no_token_file(struct sup_boot *b, const struct pr_rep *principals)
{
	for (size_t i = 0; i < principals->n_principals; i++) {
		if (is_enabled_admin(&principals->principals[i])) {
			cm_info("bootstrap: nothing to do: the store has an "
			        "admin and %s is gone (with no admin token "
			        "left, the way back is an empty data_dir)",
			    b->file.path);
			return done(b);
		}
	}
	cm_warnx("bootstrap: the store has principals but no enabled admin, "
	         "and %s is absent; nothing is created.  To bootstrap again, "
	         "stop spaced and start it on an empty data_dir",
	    b->file.path);
	return done(b);
}

static enum sup_boot_step
not_accepted(struct sup_boot *b)
{
	cm_warnx("bootstrap: %s holds a token the store does not accept "
	         "(revoked, or not an enabled admin's); it is not used.  "
	         "Remove the file.  Without another admin token, the way "
	         "back is to start spaced on an empty data_dir",
	    cm_tokenfile_name(&b->file));
	return done(b);
}

/* Finish what a crash left, or confirm that the file holds the admin's
 * live token. */
static enum sup_boot_step
resume(struct sup_boot *b, const struct pr_rep *principals, struct pr_req *q)
{
	const struct pr_principal *only =
	    principals->n_principals == 1 ? &principals->principals[0] : NULL;

	if (only != NULL && is_enabled_admin(only) &&
	    strcmp(only->name, BOOT_ADMIN_NAME) == 0)
		copy_id(b->only_admin, only->principal_id);
	switch (cm_tokenfile_read(&b->file)) {
	case CM_TOKENFILE_OK:
		break;
	case CM_TOKENFILE_ABSENT:
		return no_token_file(b, principals);
	case CM_TOKENFILE_MALFORMED:
		cm_warnx("bootstrap: %s does not hold a token and the store "
		         "has principals: the file is not used; remove it",
		    cm_tokenfile_name(&b->file));
		return done(b);
	case CM_TOKENFILE_ERROR:
		return SUP_BOOT_FAILED;
	}
	if (cm_token_hash(b->file.token, strlen(b->file.token), b->hash) != 0)
		return SUP_BOOT_FAILED;
	q->token_hash = b->hash;
	return ask(b, q, BS_RESOLVE, PR_OP_AUTH_RESOLVE);
}

static enum sup_boot_step
on_resolve(struct sup_boot *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err == CM_OK && r->n_principals == 1 &&
	    is_enabled_admin(&r->principals[0])) {
		copy_id(b->admin_id, r->principals[0].principal_id);
		if (r->n_memberships > 0) {
			b->show_token = true;
			return done(b);
		}
		cm_info("bootstrap: resuming after the admin token");
		return finish(b, q);
	}
	if (r->err != CM_OK && r->err != CM_E_UNAUTHENTICATED)
		return fail("auth.resolve", r->err);
	if (r->err == CM_E_UNAUTHENTICATED && b->only_admin[0] != '\0') {
		copy_id(b->admin_id, b->only_admin);
		return ask_issue(b, q, BS_REISSUE);
	}
	return not_accepted(b);
}

static enum sup_boot_step
on_reissue(struct sup_boot *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err == CM_E_CONFLICT)
		return not_accepted(b);
	if (r->err != CM_OK)
		return fail("token.issue", r->err);
	cm_info("bootstrap: resuming after the admin operator");
	return finish(b, q);
}

static enum sup_boot_step
on_list(struct sup_boot *b, const struct pr_rep *r, struct pr_req *q)
{
	if (r->err != CM_OK)
		return fail("principal.list", r->err);
	return r->n_principals == 0 ? fresh(b, q) : resume(b, r, q);
}

/* ---- the machine -------------------------------------------------------- */

int
sup_boot_new(
    struct sup_boot **out, const struct cm_config *cfg, const char *bin_dir)
{
	struct sup_boot *b;

	*out = NULL;
	if ((b = calloc(1, sizeof(*b))) == NULL) {
		cm_warnx("bootstrap: out of memory");
		return -1;
	}
	b->cfg = cfg;
	b->bin_dir = bin_dir;
	if (cm_tokenfile_init(&b->file, cfg->data_dir) != 0) {
		free(b);
		return -1;
	}
	*out = b;
	return 0;
}

void
sup_boot_free(struct sup_boot *b)
{
	if (b == NULL)
		return;
	for (int i = 0; i < b->n_names; i++)
		free(b->names[i]);
	free(b->names);
	free(b->manifest);
	sup_browsers_free(b->browsers);
	explicit_bzero(b, sizeof(*b));
	free(b);
}

enum sup_boot_step
sup_boot_step(struct sup_boot *b, const struct pr_rep *rep, struct pr_req *q)
{
	memset(q, 0, sizeof(*q));
	if (rep == NULL)
		return ask(b, q, BS_LIST, PR_OP_PRINCIPAL_LIST);
	switch (b->state) {
	case BS_LIST:
		return on_list(b, rep, q);
	case BS_CREATE_ADMIN:
		return on_create_admin(b, rep, q);
	case BS_ISSUE:
		return on_issue(b, rep, q);
	case BS_RESOLVE:
		return on_resolve(b, rep, q);
	case BS_REISSUE:
		return on_reissue(b, rep, q);
	case BS_BUNDLE:
		return on_bundle(b, rep, q);
	case BS_WS_LIST:
		return on_ws_list(b, rep, q);
	case BS_WS_CREATE:
		return on_ws_create(b, rep, q);
	case BS_BROWSERS:
		return on_browsers(b, rep, q);
	case BS_MEMBER:
		return on_member(b, rep);
	}
	cm_fatalx("bootstrap: step in state %d", (int)b->state);
}
