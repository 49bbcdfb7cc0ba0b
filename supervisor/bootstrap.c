/*
 * bootstrap.c: provisioning an empty store, so that a crash at any point
 * leaves a state the next start can finish.
 *
 * The order, and why:
 *   1. <data_dir>/admin.token is written (O_EXCL, 0600) and fsync'd, with
 *      its directory, before the store hears of the token.  The file is
 *      the only copy of the raw token: were the hash issued first, a
 *      crash before the file was durable would leave an admin nobody can
 *      sign in as, and no way to tell.
 *   2. principal.create "admin" (operator, is_admin), only while the
 *      store holds no principal at all.
 *   3. token.issue of the file's hash, label "bootstrap".
 *   4. bundle.create for every .json file in etc/bundles (conflict: it is
 *      there already).
 *   5. the workspace "default": reused when it exists, else created.
 *   6. member.put manager.  The last write: an admin with a membership
 *      marks a finished bootstrap.
 *
 * What a start finds after a crash, and what it does:
 *   - no principal, no file: starts at 1.
 *   - no principal, a file: died in 1, or before 2 took effect.  No row
 *     names that token (a token needs a principal), so a well-formed one
 *     is reused and a torn one replaced; then 2..6.
 *   - principals, and a file whose token does not resolve while the only
 *     principal is an enabled admin: died between 2 and 3; 3..6.  Had the
 *     token been issued and revoked since, token.issue answers conflict
 *     (the hash is unique) and nothing changes.
 *   - principals, and a file whose token resolves to an admin with no
 *     membership: died in 4..6; 4..6 again, each of them idempotent.
 *   - anything else is a finished bootstrap, or a store an operator has
 *     changed: nothing is created, and a state that looks wrong gets a
 *     warning saying what to do.  Principals without the file is not a
 *     crash state (the file comes first): the operator has taken it away,
 *     or the data dir predates the bootstrap.
 * Every write carries an op_id, kept across the retries of that call, and
 * the store answers a repeated op_id with its first reply: a store that
 * restarts mid-call applies the write once.  A second admin is never
 * created, because 2 happens only while the store has no principal.
 *
 * Cost: a dozen store calls on the supervisor's loop, once per start.
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

#include "ids.h"
#include "log.h"
#include "rpc.h"
#include "token.h"

#define BOOT_CALL_MS 3000
#define BOOT_ATTEMPTS 3
#define BOOT_ADMIN_NAME "admin"
#define BOOT_WORKSPACE "default"
#define BOOT_TOKEN_LABEL "bootstrap"

struct boot {
	nng_socket store;
	const struct cm_config *cfg;
	const char *bin_dir;
	char dir[CM_PATH_MAX];       /* data_dir, absolute when possible */
	char path[CM_PATH_MAX + 16]; /* <dir>/admin.token */
	char token[CM_TOKEN_LEN];    /* secret: never logged */
	char hash[CM_TOKEN_HASH_LEN];
	char admin_id[CM_ID_MAX + 1];
	bool show_token; /* the file holds the admin's live token */
};

/*
 * One store call.  A write gets its op_id here, so that every retry
 * carries the same one.  Returns the store's verdict, or
 * CM_E_STORE_UNAVAILABLE after BOOT_ATTEMPTS calls without an answer;
 * *r is to be freed whatever the outcome.
 */
static enum cm_err
boot_call(struct boot *b, struct pr_req *q, struct pr_rep *r)
{
	char op_id[CM_UUID_LEN];
	enum cm_err e = CM_E_STORE_UNAVAILABLE;

	if (pr_op_is_write(q->op)) {
		cm_uuid7(op_id);
		q->op_id = op_id;
	}
	for (int i = 0; i < BOOT_ATTEMPTS; i++) {
		if (i > 0) {
			pr_rep_free(r);
			cm_warnx("bootstrap: %s: no answer from the store, "
			         "trying again (%d of %d)",
			    pr_op_name(q->op), i + 1, BOOT_ATTEMPTS);
		}
		e = cm_rpc_call(b->store, q, r, BOOT_CALL_MS);
		if (e != CM_E_STORE_UNAVAILABLE)
			break;
	}
	q->op_id = NULL; /* it lived in this frame */
	return e == CM_OK ? r->err : e;
}

static void
boot_req(struct pr_req *q, enum pr_op op)
{
	memset(q, 0, sizeof(*q));
	q->op = op;
}

static void
copy_id(char dst[CM_ID_MAX + 1], const char *src)
{
	snprintf(dst, CM_ID_MAX + 1, "%s", src != NULL ? src : "");
}

/* ---- the token file ------------------------------------------------- */

static int
sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0) {
		cm_warn("bootstrap: %s", dir);
		return -1;
	}
	if ((rc = fsync(fd)) != 0)
		cm_warn("bootstrap: fsync %s", dir);
	close(fd);
	return rc;
}

enum boot_file { BF_OK, BF_ABSENT, BF_MALFORMED, BF_ERROR };

/* Reads fd to its end into buf, at most cap bytes.  Returns the length
 * (cap: the file may hold more), or -1 on a read error. */
static ssize_t
read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n < cap) {
		ssize_t got = read(fd, buf + n, cap - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		n += (size_t)got;
	}
	return (ssize_t)n;
}

/* Reads the token file into b->token and makes it durable (a previous
 * start may have died before its fsync). */
static enum boot_file
token_file_read(struct boot *b)
{
	char buf[CM_TOKEN_MAX + 2];
	enum boot_file rc = BF_ERROR;
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(b->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno == ENOENT)
			return BF_ABSENT;
		cm_warn("bootstrap: %s", b->path);
		return BF_ERROR;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		cm_warnx("bootstrap: %s is not a regular file", b->path);
	} else if ((n = read_all(fd, buf, sizeof(buf))) < 0 || fsync(fd) != 0) {
		cm_warn("bootstrap: %s", b->path);
	} else {
		if (n > 0 && buf[n - 1] == '\n')
			n--;
		if (!cm_token_valid(buf, (size_t)n)) {
			rc = BF_MALFORMED;
		} else {
			memcpy(b->token, buf, (size_t)n);
			b->token[n] = '\0';
			rc = sync_dir(b->dir) == 0 ? BF_OK : BF_ERROR;
		}
	}
	if (rc == BF_OK && (st.st_mode & 077))
		cm_warnx("bootstrap: %s is readable by others; chmod 600 it",
		    b->path);
	close(fd);
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

/* Writes a new token to a file that must not exist yet, durably. */
static int
token_file_create(struct boot *b)
{
	char line[CM_TOKEN_LEN + 1];
	size_t len, off = 0;
	int fd;

	fd = open(b->path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		cm_warn("bootstrap: %s", b->path);
		return -1;
	}
	cm_token_new(b->token);
	len = (size_t)snprintf(line, sizeof(line), "%s\n", b->token);
	/* 0600 whatever the umask says. */
	if (fchmod(fd, 0600) != 0)
		goto failed;
	while (off < len) {
		ssize_t n = write(fd, line + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto failed;
		off += (size_t)n;
	}
	if (fsync(fd) != 0)
		goto failed;
	close(fd);
	explicit_bzero(line, sizeof(line));
	return sync_dir(b->dir);

failed:
	cm_warn("bootstrap: %s", b->path);
	close(fd);
	explicit_bzero(line, sizeof(line));
	/* Nothing names this token yet: the next start writes another. */
	unlink(b->path);
	return -1;
}

/* Step 1, with no principal in the store. */
static int
token_file_ensure(struct boot *b)
{
	switch (token_file_read(b)) {
	case BF_OK:
		cm_info("bootstrap: resuming with the token already in %s",
		    b->path);
		return 0;
	case BF_ABSENT:
		return token_file_create(b);
	case BF_MALFORMED:
		/* Torn by a crash before its fsync, or not ours: with no
		 * principal in the store, no row can name it. */
		cm_warnx("bootstrap: %s does not hold a token; replacing it",
		    b->path);
		if (unlink(b->path) != 0) {
			cm_warn("bootstrap: %s", b->path);
			return -1;
		}
		return token_file_create(b);
	case BF_ERROR:
		break;
	}
	return -1;
}

/* ---- store steps ------------------------------------------------------ */

static int
create_admin(struct boot *b)
{
	struct pr_req q;
	struct pr_rep r;
	enum cm_err e;

	boot_req(&q, PR_OP_PRINCIPAL_CREATE);
	q.kind = "operator";
	q.name = BOOT_ADMIN_NAME;
	q.is_admin = true;
	if ((e = boot_call(b, &q, &r)) == CM_OK && r.n_principals == 1)
		copy_id(b->admin_id, r.principals[0].principal_id);
	else
		cm_warnx("bootstrap: principal.create: %s", cm_err_code(e));
	pr_rep_free(&r);
	return b->admin_id[0] != '\0' ? 0 : -1;
}

/* Step 3.  Returns the store's verdict; conflict means the hash was
 * issued before (and, since it does not resolve, revoked). */
static enum cm_err
issue_token(struct boot *b)
{
	struct pr_req q;
	struct pr_rep r;
	enum cm_err e;

	boot_req(&q, PR_OP_TOKEN_ISSUE);
	q.principal_id = b->admin_id;
	q.token_hash = b->hash;
	q.label = BOOT_TOKEN_LABEL;
	if ((e = boot_call(b, &q, &r)) != CM_OK && e != CM_E_CONFLICT)
		cm_warnx("bootstrap: token.issue: %s", cm_err_code(e));
	pr_rep_free(&r);
	return e;
}

/* First <bin_dir>/../etc/bundles (the build or install tree), then the
 * working directory's etc/bundles. */
static int
bundles_dir(const struct boot *b, char *out, size_t len)
{
	struct stat st;
	int n;

	if (b->bin_dir != NULL) {
		n = snprintf(out, len, "%s/../etc/bundles", b->bin_dir);
		if (n > 0 && (size_t)n < len && stat(out, &st) == 0 &&
		    S_ISDIR(st.st_mode))
			return 0;
	}
	n = snprintf(out, len, "./etc/bundles");
	return n > 0 && (size_t)n < len && stat(out, &st) == 0 &&
	               S_ISDIR(st.st_mode)
	           ? 0
	           : -1;
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
	    (n = read_all(fd, buf, CM_MANIFEST_MAX + 1)) < 0) {
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

/* Step 4.  A manifest that cannot be read or that the store rejects is
 * skipped with a warning: trying again would not change it. */
static int
load_bundles(struct boot *b)
{
	char dir[CM_PATH_MAX + 32], path[CM_PATH_MAX + 320];
	struct dirent **names = NULL;
	int n, rc = 0;

	if (bundles_dir(b, dir, sizeof(dir)) != 0) {
		cm_warnx("bootstrap: no etc/bundles directory; no runtime "
		         "bundle loaded");
		return 0;
	}
	if ((n = scandir(dir, &names, is_manifest_name, alphasort)) < 0) {
		cm_warn("bootstrap: %s", dir);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		struct pr_req q;
		struct pr_rep r;
		char *manifest = NULL;
		enum cm_err e;

		if (rc == 0 && (size_t)snprintf(path, sizeof(path), "%s/%s",
		                   dir, names[i]->d_name) < sizeof(path))
			manifest = read_manifest(path);
		free(names[i]);
		if (manifest == NULL)
			continue;
		boot_req(&q, PR_OP_BUNDLE_CREATE);
		q.manifest = manifest;
		e = boot_call(b, &q, &r);
		if (e == CM_OK && r.n_bundles == 1)
			cm_info("bootstrap: runtime bundle %s %s loaded",
			    r.bundles[0].name, r.bundles[0].version);
		else if (e == CM_E_CONFLICT)
			cm_debug("bootstrap: %s: already loaded", path);
		else if (e == CM_E_INVALID_REQUEST)
			cm_warnx("bootstrap: %s: %s", path,
			    r.msg ? r.msg : "rejected");
		else
			rc = -1;
		pr_rep_free(&r);
		free(manifest);
	}
	free(names);
	if (rc != 0)
		cm_warnx("bootstrap: bundle.create: the store failed");
	return rc;
}

/* Step 5: the id of the workspace named default, created if need be. */
static int
default_workspace(struct boot *b, char id[CM_ID_MAX + 1])
{
	struct pr_req q;
	struct pr_rep r;
	enum cm_err e;

	id[0] = '\0';
	/* Twice at most: a conflict means it appeared since the list. */
	for (int round = 0; round < 2 && id[0] == '\0'; round++) {
		boot_req(&q, PR_OP_WORKSPACE_LIST);
		if ((e = boot_call(b, &q, &r)) != CM_OK) {
			cm_warnx(
			    "bootstrap: workspace.list: %s", cm_err_code(e));
			pr_rep_free(&r);
			return -1;
		}
		for (size_t i = 0; i < r.n_workspaces; i++)
			if (strcmp(r.workspaces[i].name, BOOT_WORKSPACE) == 0)
				copy_id(id, r.workspaces[i].workspace_id);
		pr_rep_free(&r);
		if (id[0] != '\0')
			break;
		boot_req(&q, PR_OP_WORKSPACE_CREATE);
		q.name = BOOT_WORKSPACE;
		e = boot_call(b, &q, &r);
		if (e == CM_OK && r.n_workspaces == 1)
			copy_id(id, r.workspaces[0].workspace_id);
		else if (e != CM_E_CONFLICT)
			cm_warnx(
			    "bootstrap: workspace.create: %s", cm_err_code(e));
		pr_rep_free(&r);
		if (e != CM_OK && e != CM_E_CONFLICT)
			return -1;
	}
	return id[0] != '\0' ? 0 : -1;
}

/* Steps 4..6. */
static int
finish(struct boot *b)
{
	char ws[CM_ID_MAX + 1];
	struct pr_req q;
	struct pr_rep r;
	enum cm_err e;

	if (load_bundles(b) != 0 || default_workspace(b, ws) != 0)
		return -1;
	boot_req(&q, PR_OP_MEMBER_PUT);
	q.workspace_id = ws;
	q.principal_id = b->admin_id;
	q.role = "manager";
	e = boot_call(b, &q, &r);
	pr_rep_free(&r);
	if (e != CM_OK) {
		cm_warnx("bootstrap: member.put: %s", cm_err_code(e));
		return -1;
	}
	cm_info("bootstrap: admin %s manages workspace %s (%s)", b->admin_id,
	    BOOT_WORKSPACE, ws);
	b->show_token = true;
	return 0;
}

/* ---- the decision ------------------------------------------------------ */

/* An empty store: every step, from the token file on. */
static int
fresh(struct boot *b)
{
	if (token_file_ensure(b) != 0 ||
	    cm_token_hash(b->token, strlen(b->token), b->hash) != 0 ||
	    create_admin(b) != 0)
		return -1;
	cm_info("bootstrap: admin operator %s created", b->admin_id);
	if (issue_token(b) != CM_OK)
		return -1;
	return finish(b);
}

static bool
is_enabled_admin(const struct pr_principal *p)
{
	return p->is_admin && !p->disabled && strcmp(p->kind, "operator") == 0;
}

/* A store with principals and no token file: not ours to change. */
static int
no_token_file(struct boot *b, const struct pr_rep *principals)
{
	for (size_t i = 0; i < principals->n_principals; i++) {
		if (is_enabled_admin(&principals->principals[i])) {
			cm_info("bootstrap: nothing to do: the store has an "
			        "admin and %s is gone (with no admin token "
			        "left, the way back is an empty data_dir)",
			    b->path);
			return 0;
		}
	}
	cm_warnx("bootstrap: the store has principals but no enabled admin, "
	         "and %s is absent; nothing is created.  To bootstrap again, "
	         "stop spaced and start it on an empty data_dir",
	    b->path);
	return 0;
}

/* A store with principals and a token file: finish what a crash left,
 * or confirm that the file holds the admin's live token. */
static int
resume(struct boot *b, const struct pr_rep *principals)
{
	const struct pr_principal *only =
	    principals->n_principals == 1 ? &principals->principals[0] : NULL;
	struct pr_req q;
	struct pr_rep r;
	enum cm_err e;

	switch (token_file_read(b)) {
	case BF_OK:
		break;
	case BF_ABSENT:
		return no_token_file(b, principals);
	case BF_MALFORMED:
		cm_warnx("bootstrap: %s does not hold a token and the store "
		         "has principals: the file is not used; remove it",
		    b->path);
		return 0;
	case BF_ERROR:
		return -1;
	}
	if (cm_token_hash(b->token, strlen(b->token), b->hash) != 0)
		return -1;
	boot_req(&q, PR_OP_AUTH_RESOLVE);
	q.token_hash = b->hash;
	e = boot_call(b, &q, &r);
	if (e == CM_OK && r.n_principals == 1 &&
	    is_enabled_admin(&r.principals[0])) {
		size_t members = r.n_memberships;

		copy_id(b->admin_id, r.principals[0].principal_id);
		pr_rep_free(&r);
		if (members > 0) {
			b->show_token = true;
			return 0;
		}
		cm_info("bootstrap: resuming after the admin token");
		return finish(b);
	}
	pr_rep_free(&r);
	if (e != CM_OK && e != CM_E_UNAUTHENTICATED) {
		cm_warnx("bootstrap: auth.resolve: %s", cm_err_code(e));
		return -1;
	}
	if (e == CM_E_UNAUTHENTICATED && only != NULL &&
	    is_enabled_admin(only) &&
	    strcmp(only->name, BOOT_ADMIN_NAME) == 0) {
		copy_id(b->admin_id, only->principal_id);
		if ((e = issue_token(b)) == CM_OK) {
			cm_info("bootstrap: resuming after the admin operator");
			return finish(b);
		}
		if (e != CM_E_CONFLICT)
			return -1;
	}
	cm_warnx("bootstrap: %s holds a token the store does not accept "
	         "(revoked, or not an enabled admin's); it is not used.  "
	         "Remove the file.  Without another admin token, the way "
	         "back is to start spaced on an empty data_dir",
	    b->path);
	return 0;
}

/* Where the token is and where the console will be, for a person. */
static void
announce(const struct boot *b)
{
	if (b->show_token) {
		cm_info("bootstrap: the admin token is in %s", b->path);
		fprintf(stderr, "spaced: admin token in %s\n", b->path);
	}
	fprintf(stderr, "spaced: console at http://%s/\n", b->cfg->http_listen);
}

int
sup_bootstrap(
    nng_socket store, const struct cm_config *cfg, const char *bin_dir)
{
	struct boot b; /* holds the token: wiped before returning */
	struct pr_req q;
	char *abs;
	struct pr_rep r;
	enum cm_err e;
	int n, rc;

	memset(&b, 0, sizeof(b));
	b.store = store;
	b.cfg = cfg;
	b.bin_dir = bin_dir;
	/* Absolute, for the person who reads where the token is. */
	abs = realpath(cfg->data_dir, NULL);
	snprintf(b.dir, sizeof(b.dir), "%s",
	    abs != NULL && strlen(abs) < sizeof(b.dir) ? abs : cfg->data_dir);
	free(abs);
	n = snprintf(b.path, sizeof(b.path), "%s/" SUP_ADMIN_TOKEN_FILE, b.dir);
	if (n < 0 || (size_t)n >= sizeof(b.path)) {
		cm_warnx("bootstrap: the data_dir path is too long");
		return -1;
	}

	boot_req(&q, PR_OP_PRINCIPAL_LIST);
	if ((e = boot_call(&b, &q, &r)) != CM_OK) {
		cm_warnx("bootstrap: principal.list: %s", cm_err_code(e));
		rc = -1;
	} else if (r.n_principals == 0) {
		rc = fresh(&b);
	} else {
		rc = resume(&b, &r);
	}
	pr_rep_free(&r);
	if (rc == 0)
		announce(&b);
	else
		cm_warnx("bootstrap: not finished; it resumes when the store "
		         "is next ready, or at the next start");
	explicit_bzero(&b, sizeof(b));
	return rc;
}
