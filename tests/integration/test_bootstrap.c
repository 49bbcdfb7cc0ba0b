/*
 * The first start of an empty data dir: an admin whose token is in
 * <data_dir>/admin.token (0600), a workspace "default" it manages, the
 * bundles of etc/bundles; a restart creates nothing more.  Then the
 * states a crash can leave, built through the store alone, and what the
 * next start of spaced makes of them.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "testkit.h"
#include "token.h"

#define WAIT_MS 15000

struct boot_env {
	char dir[128];
	char token_path[192];
	char out[192]; /* spaced's stdout and stderr */
	struct tk_proc p;
	nng_socket s;
	bool open;
};

static void
env_init(struct boot_env *e, const char *tag)
{
	memset(e, 0, sizeof(*e));
	tk_tmpdir(e->dir, sizeof(e->dir), tag);
	snprintf(
	    e->token_path, sizeof(e->token_path), "%s/admin.token", e->dir);
	snprintf(e->out, sizeof(e->out), "%s/spaced.out", e->dir);
}

/* spaced looks for etc/bundles beside its binaries, then in its working
 * directory: a build tree outside the source tree needs the latter. */
static void
spaced_start(struct boot_env *e)
{
	cr_assert_eq(chdir(SPACED_SOURCE_DIR), 0);
	cr_assert_eq(tk_spaced_start_logged(&e->p, e->dir, NULL, e->out), 0,
	    "spaced did not start (see %s)", e->out);
	cr_assert_eq(cm_rpc_open(&e->s, e->p.store_url), 0);
	e->open = true;
}

static void
store_start(struct boot_env *e)
{
	cr_assert_eq(tk_store_start(&e->p, e->dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&e->s, e->p.store_url), 0);
	e->open = true;
}

static void
env_stop(struct boot_env *e)
{
	if (e->open)
		nng_close(e->s);
	e->open = false;
	tk_proc_stop(&e->p, SIGTERM);
}

static bool
token_file_exists(void *arg)
{
	struct stat st;

	return stat(arg, &st) == 0 && st.st_size > 0;
}

/* The token in the file, checked for shape and mode; out holds it. */
static void
read_token(const struct boot_env *e, char out[CM_TOKEN_LEN])
{
	struct stat st;
	size_t len;
	char *text;

	cr_assert(
	    tk_wait_until(token_file_exists, (void *)e->token_path, WAIT_MS));
	cr_assert_eq(stat(e->token_path, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0600, "mode %o", st.st_mode & 07777);
	cr_assert_not_null(text = tk_read_file(e->token_path, &len));
	cr_assert_eq(len, CM_TOKEN_LEN, "%zu bytes", len);
	cr_assert_eq(text[len - 1], '\n');
	cr_assert(cm_token_valid(text, len - 1), "not a token: %s", text);
	memcpy(out, text, len - 1);
	out[len - 1] = '\0';
	free(text);
}

static void
write_file(const char *path, const char *text)
{
	int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void
hash_of(const char *token, char hash[CM_TOKEN_HASH_LEN])
{
	cr_assert_eq(cm_token_hash(token, strlen(token), hash), 0);
}

static size_t
count(struct boot_env *e, enum pr_op op)
{
	struct pr_req q;
	struct pr_rep r;
	size_t n;

	memset(&q, 0, sizeof(q));
	q.op = op;
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK);
	n = r.n_principals + r.n_workspaces + r.n_bundles;
	pr_rep_free(&r);
	return n;
}

/* The id of the one workspace named default ("" when there is none). */
static void
default_workspace(struct boot_env *e, char id[CM_ID_MAX + 1])
{
	struct pr_req q;
	struct pr_rep r;
	int found = 0;

	id[0] = '\0';
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_WORKSPACE_LIST;
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK);
	for (size_t i = 0; i < r.n_workspaces; i++) {
		if (strcmp(r.workspaces[i].name, "default") != 0)
			continue;
		snprintf(id, CM_ID_MAX + 1, "%s", r.workspaces[i].workspace_id);
		found++;
	}
	pr_rep_free(&r);
	cr_assert_leq(found, 1);
}

/* The token resolves to an enabled admin operator who manages the
 * workspace named default; its id goes to admin_id. */
static void
assert_admin_token(
    struct boot_env *e, const char *token, char admin_id[CM_ID_MAX + 1])
{
	char hash[CM_TOKEN_HASH_LEN], ws[CM_ID_MAX + 1];
	struct pr_req q;
	struct pr_rep r;
	bool manager = false;

	default_workspace(e, ws);
	cr_assert_str_not_empty(ws, "no workspace named default");
	hash_of(token, hash);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_AUTH_RESOLVE;
	q.token_hash = hash;
	cr_assert_eq(
	    tk_call(e->s, &q, &r), CM_OK, "the token does not resolve");
	cr_assert_eq(r.n_principals, 1);
	cr_assert(r.principals[0].is_admin);
	cr_assert_str_eq(r.principals[0].kind, "operator");
	cr_assert_str_eq(r.principals[0].name, "admin");
	cr_assert_eq(r.n_tokens, 1);
	cr_assert_str_eq(r.tokens[0].label, "bootstrap");
	for (size_t i = 0; i < r.n_memberships; i++)
		if (strcmp(r.memberships[i].workspace_id, ws) == 0 &&
		    strcmp(r.memberships[i].role, "manager") == 0)
			manager = true;
	cr_assert(manager, "the admin does not manage default");
	if (admin_id != NULL)
		snprintf(admin_id, CM_ID_MAX + 1, "%s",
		    r.principals[0].principal_id);
	pr_rep_free(&r);
}

static void
assert_bundles(struct boot_env *e)
{
	struct pr_req q;
	struct pr_rep r;
	bool fake = false, browser = false;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_BUNDLE_LIST;
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK);
	for (size_t i = 0; i < r.n_bundles; i++) {
		fake |= strcmp(r.bundles[i].name, "fake") == 0;
		browser |= strcmp(r.bundles[i].name, "browser") == 0;
	}
	pr_rep_free(&r);
	cr_assert(fake, "no bundle fake");
	cr_assert(browser, "no bundle browser");
}

static void
assert_log_has(const struct boot_env *e, const char *needle, bool want)
{
	char *log = tk_read_file(e->out, NULL);

	cr_assert_not_null(log);
	cr_assert_eq(strstr(log, needle) != NULL, want, "%s \"%s\" in %s",
	    want ? "no" : "a", needle, e->out);
	free(log);
}

static void
create_principal(
    struct boot_env *e, const char *name, bool is_admin, char id[CM_ID_MAX + 1])
{
	struct pr_req q;
	struct pr_rep r;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_PRINCIPAL_CREATE;
	q.kind = "operator";
	q.name = name;
	q.is_admin = is_admin;
	cr_assert_eq(tk_call(e->s, &q, &r), CM_OK);
	snprintf(id, CM_ID_MAX + 1, "%s", r.principals[0].principal_id);
	pr_rep_free(&r);
}

static enum cm_err
issue(struct boot_env *e, const char *principal_id, const char *token,
    const char *label)
{
	char hash[CM_TOKEN_HASH_LEN];
	struct pr_req q;
	struct pr_rep r;
	enum cm_err err;

	hash_of(token, hash);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TOKEN_ISSUE;
	q.principal_id = principal_id;
	q.token_hash = hash;
	q.label = label;
	err = tk_call(e->s, &q, &r);
	pr_rep_free(&r);
	return err;
}

Test(bootstrap, first_start_then_restart, .fini = tk_cleanup)
{
	static struct boot_env e;
	char token[CM_TOKEN_LEN], again[CM_TOKEN_LEN], line[300];
	char admin[CM_ID_MAX + 1], admin2[CM_ID_MAX + 1];
	char ws[CM_ID_MAX + 1], ws2[CM_ID_MAX + 1];
	struct stat st, st2;
	char *real;

	env_init(&e, "boot");
	spaced_start(&e);
	read_token(&e, token);
	cr_assert_eq(stat(e.token_path, &st), 0);
	assert_admin_token(&e, token, admin);
	assert_bundles(&e);
	cr_assert_eq(count(&e, PR_OP_PRINCIPAL_LIST), 1);
	default_workspace(&e, ws);

	/* Where the token is, for a person; the token itself never. */
	cr_assert_not_null(real = realpath(e.token_path, NULL));
	snprintf(line, sizeof(line), "spaced: admin token in %s\n", real);
	free(real);
	assert_log_has(&e, line, true);
	assert_log_has(&e, "spaced: console at http://127.0.0.1:", true);
	assert_log_has(&e, token, false);
	assert_log_has(&e, token + 4, false);

	/* A restart on the same dir creates nothing. */
	env_stop(&e);
	spaced_start(&e);
	read_token(&e, again);
	cr_assert_str_eq(again, token);
	cr_assert_eq(stat(e.token_path, &st2), 0);
	cr_assert_eq(st2.st_ino, st.st_ino);
	cr_assert_eq(st2.st_mtim.tv_sec, st.st_mtim.tv_sec);
	cr_assert_eq(st2.st_mtim.tv_nsec, st.st_mtim.tv_nsec);
	assert_admin_token(&e, token, admin2);
	cr_assert_str_eq(admin2, admin);
	cr_assert_eq(count(&e, PR_OP_PRINCIPAL_LIST), 1);
	default_workspace(&e, ws2);
	cr_assert_str_eq(ws2, ws);
	cr_assert_eq(count(&e, PR_OP_WORKSPACE_LIST), 1);
	cr_assert_eq(count(&e, PR_OP_BUNDLE_LIST), 2);
	assert_log_has(&e, token, false);
	env_stop(&e);
	tk_rmrf(e.dir);
}

/* Under systemd (etc/spaced.service is Type=notify): READY=1 reaches
 * $NOTIFY_SOCKET once spaced is ready, or systemd would time the start
 * out and kill it. */
Test(bootstrap, tells_systemd_when_it_is_ready, .fini = tk_cleanup)
{
	static struct boot_env e;
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct pollfd pfd;
	char msg[256];
	ssize_t n;
	int fd;

	env_init(&e, "notify");
	cr_assert_lt(
	    snprintf(a.sun_path, sizeof(a.sun_path), "%s/notify.sock", e.dir),
	    (int)sizeof(a.sun_path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	cr_assert_eq(setenv("NOTIFY_SOCKET", a.sun_path, 1), 0);
	spaced_start(&e);
	unsetenv("NOTIFY_SOCKET");
	pfd = (struct pollfd){.fd = fd, .events = POLLIN};
	cr_assert_eq(
	    poll(&pfd, 1, WAIT_MS), 1, "no notification in %d ms", WAIT_MS);
	n = recv(fd, msg, sizeof(msg) - 1, 0);
	cr_assert_gt(n, 0);
	msg[n] = '\0';
	cr_assert_not_null(strstr(msg, "READY=1"), "%s", msg);
	close(fd);
	/* Ready means serving: the store answers at once.  (The call also
	 * lets the test's own dialer finish connecting before its close,
	 * which nng otherwise completes after the process has exited.) */
	cr_assert_eq(count(&e, PR_OP_WORKSPACE_LIST), 1);
	env_stop(&e);
	tk_rmrf(e.dir);
}

/* Died after writing the file, before the store heard of the token: the
 * same token is used. */
Test(bootstrap, resumes_with_the_token_file_alone, .fini = tk_cleanup)
{
	static struct boot_env e;
	char token[CM_TOKEN_LEN], line[CM_TOKEN_LEN + 1], got[CM_TOKEN_LEN];

	env_init(&e, "boot-file");
	cm_token_new(token);
	snprintf(line, sizeof(line), "%s\n", token);
	write_file(e.token_path, line);
	spaced_start(&e);
	read_token(&e, got);
	cr_assert_str_eq(got, token);
	assert_admin_token(&e, token, NULL);
	assert_bundles(&e);
	cr_assert_eq(count(&e, PR_OP_PRINCIPAL_LIST), 1);
	env_stop(&e);
	tk_rmrf(e.dir);
}

/* Died while writing the file: with no principal, nothing can name the
 * torn token, so it is replaced. */
Test(bootstrap, replaces_a_torn_token_file, .fini = tk_cleanup)
{
	static struct boot_env e;
	char token[CM_TOKEN_LEN];

	env_init(&e, "boot-torn");
	write_file(e.token_path, "spd_abc");
	spaced_start(&e);
	read_token(&e, token);
	assert_admin_token(&e, token, NULL);
	cr_assert_eq(count(&e, PR_OP_PRINCIPAL_LIST), 1);
	env_stop(&e);
	tk_rmrf(e.dir);
}

/* Died between principal.create and token.issue: the token is issued to
 * that admin; no second admin. */
Test(bootstrap, resumes_after_the_admin_was_created, .fini = tk_cleanup)
{
	static struct boot_env e;
	char token[CM_TOKEN_LEN], line[CM_TOKEN_LEN + 1];
	char admin[CM_ID_MAX + 1], got[CM_ID_MAX + 1];

	env_init(&e, "boot-admin");
	store_start(&e);
	create_principal(&e, "admin", true, admin);
	env_stop(&e);
	cm_token_new(token);
	snprintf(line, sizeof(line), "%s\n", token);
	write_file(e.token_path, line);

	spaced_start(&e);
	assert_admin_token(&e, token, got);
	cr_assert_str_eq(got, admin);
	assert_bundles(&e);
	cr_assert_eq(count(&e, PR_OP_PRINCIPAL_LIST), 1);
	env_stop(&e);
	tk_rmrf(e.dir);
}

/* Died after token.issue, before the workspace and its membership: they
 * are made, with the bundles, and a default that exists is reused. */
Test(bootstrap, resumes_after_the_token_was_issued, .fini = tk_cleanup)
{
	static struct boot_env e;
	char token[CM_TOKEN_LEN], line[CM_TOKEN_LEN + 1];
	char admin[CM_ID_MAX + 1], ws[CM_ID_MAX + 1], ws2[CM_ID_MAX + 1];
	struct pr_req q;
	struct pr_rep r;

	env_init(&e, "boot-issued");
	store_start(&e);
	create_principal(&e, "admin", true, admin);
	cm_token_new(token);
	cr_assert_eq(issue(&e, admin, token, "bootstrap"), CM_OK);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_WORKSPACE_CREATE;
	q.name = "default";
	cr_assert_eq(tk_call(e.s, &q, &r), CM_OK);
	snprintf(ws, sizeof(ws), "%s", r.workspaces[0].workspace_id);
	pr_rep_free(&r);
	env_stop(&e);
	snprintf(line, sizeof(line), "%s\n", token);
	write_file(e.token_path, line);

	spaced_start(&e);
	assert_admin_token(&e, token, NULL);
	default_workspace(&e, ws2);
	cr_assert_str_eq(ws2, ws);
	cr_assert_eq(count(&e, PR_OP_WORKSPACE_LIST), 1);
	assert_bundles(&e);
	cr_assert_eq(count(&e, PR_OP_PRINCIPAL_LIST), 1);
	env_stop(&e);
	tk_rmrf(e.dir);
}

/* A store with principals and no token file is not bootstrapped again:
 * no admin, no file; a warning says what to do. */
Test(bootstrap, principals_without_file_create_nothing, .fini = tk_cleanup)
{
	static struct boot_env e;
	char someone[CM_ID_MAX + 1], ws[CM_ID_MAX + 1];
	struct stat st;

	env_init(&e, "boot-none");
	store_start(&e);
	create_principal(&e, "someone", false, someone);
	env_stop(&e);

	spaced_start(&e);
	cr_assert_neq(stat(e.token_path, &st), 0);
	cr_assert_eq(count(&e, PR_OP_PRINCIPAL_LIST), 1);
	default_workspace(&e, ws);
	cr_assert_str_empty(ws);
	assert_log_has(&e, "no enabled admin", true);
	assert_log_has(&e, "spaced: admin token in", false);
	env_stop(&e);
	tk_rmrf(e.dir);
}

/* A revoked bootstrap token stays revoked across a restart: token.issue
 * of the same hash is refused, nothing else is created. */
Test(bootstrap, revoked_token_is_not_revived, .fini = tk_cleanup)
{
	static struct boot_env e;
	char token[CM_TOKEN_LEN], hash[CM_TOKEN_HASH_LEN];
	struct pr_req q;
	struct pr_rep r;
	char token_id[CM_ID_MAX + 1];

	env_init(&e, "boot-revoked");
	spaced_start(&e);
	read_token(&e, token);
	hash_of(token, hash);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_AUTH_RESOLVE;
	q.token_hash = hash;
	cr_assert_eq(tk_call(e.s, &q, &r), CM_OK);
	snprintf(token_id, sizeof(token_id), "%s", r.tokens[0].token_id);
	pr_rep_free(&r);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_TOKEN_REVOKE;
	q.token_id = token_id;
	cr_assert_eq(tk_call(e.s, &q, &r), CM_OK);
	pr_rep_free(&r);
	env_stop(&e);

	spaced_start(&e);
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_AUTH_RESOLVE;
	q.token_hash = hash;
	cr_assert_eq(tk_call(e.s, &q, &r), CM_E_UNAUTHENTICATED);
	pr_rep_free(&r);
	cr_assert_eq(count(&e, PR_OP_PRINCIPAL_LIST), 1);
	cr_assert_eq(count(&e, PR_OP_WORKSPACE_LIST), 1);
	assert_log_has(&e, "does not accept", true);
	env_stop(&e);
	tk_rmrf(e.dir);
}
