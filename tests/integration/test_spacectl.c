/*
 * spacectl, the built binary, run as a child process against the real
 * service with the fake runtime: each command's output and exit code (0
 * done, 1 an api error with its code, 2 a usage error, 3 spacectl out of
 * memory, shown with failalloc.c preloaded), every --json
 * output parsed with jansson, --wait printing events before the result,
 * events --follow resuming after the api is killed with no sequence
 * missing or repeated, and where the token and the URL come from.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "http_fixture.h"

#define CTL_BIN SPACED_BIN_DIR "/spacectl"
#define CTL_RUN_MS 60000 /* one command, --wait included */
#define CTL_ARGV_MAX 40
#define CTL_ENV_MAX 16

extern char **environ;

static struct hf_env env;

static void
fini(void)
{
	tk_cleanup();
}

TestSuite(spacectl, .timeout = 300);

/* What one run printed, and how it ended. */
struct run {
	int code; /* exit code; -1: killed */
	char *out, *err;
	size_t out_len;
};

static void
run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

/* The environment of a child: ours without any SPACED_ variable, then
 * extra ("NAME=value" strings, NULL-terminated; may be NULL). */
static char **
child_env(const char *const *extra)
{
	static char *envp[256 + CTL_ENV_MAX];
	size_t n = 0;

	for (size_t i = 0; environ[i] != NULL && n < 256; i++)
		if (strncmp(environ[i], "SPACED_", 7) != 0)
			envp[n++] = environ[i];
	for (size_t i = 0; extra != NULL && extra[i] != NULL; i++)
		envp[n++] = (char *)extra[i];
	envp[n] = NULL;
	return envp;
}

/* Starts spacectl with args (NULL-terminated) and env extras, its stdout
 * and stderr to files under the test's directory.  Returns its pid. */
static pid_t
ctl_spawn(const char *const *args, const char *const *extra, const char *tag)
{
	char *argv[CTL_ARGV_MAX + 2], out[256], err[256];
	char **envp = child_env(extra);
	size_t n = 0;
	pid_t pid;

	argv[n++] = (char *)"spacectl";
	for (; args[n - 1] != NULL && n <= CTL_ARGV_MAX; n++)
		argv[n] = (char *)args[n - 1];
	argv[n] = NULL;
	snprintf(out, sizeof(out), "%s/ctl-%s.out", env.sf.dir, tag);
	snprintf(err, sizeof(err), "%s/ctl-%s.err", env.sf.dir, tag);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(127);
		/* The child runs in the test's data_dir's parent: a relative
		 * default data_dir (./var) finds no token there. */
		if (chdir("/tmp") != 0)
			_exit(127);
		execve(CTL_BIN, argv, envp);
		_exit(127);
	}
	return pid;
}

/* Waits (bounded) for a spawned spacectl and reads what it printed. */
static struct run
ctl_reap(pid_t pid, const char *tag, int timeout_ms)
{
	struct run r = {.code = -1};
	int64_t deadline = cm_mono_ms() + timeout_ms;
	char path[256];
	int status;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (cm_mono_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		usleep(5000);
	}
	if (WIFEXITED(status))
		r.code = WEXITSTATUS(status);
	snprintf(path, sizeof(path), "%s/ctl-%s.out", env.sf.dir, tag);
	r.out = tk_read_file(path, &r.out_len);
	snprintf(path, sizeof(path), "%s/ctl-%s.err", env.sf.dir, tag);
	r.err = tk_read_file(path, NULL);
	cr_assert(r.out != NULL && r.err != NULL);
	return r;
}

static struct run
ctl_env(const char *const *args, const char *const *extra)
{
	return ctl_reap(ctl_spawn(args, extra, "run"), "run", CTL_RUN_MS);
}

/* spacectl --url <the api> --token token args... */
static struct run
ctl_as(const char *token, const char *const *args)
{
	const char *full[CTL_ARGV_MAX + 1];
	char tok[CM_TOKEN_MAX + 16];
	size_t n = 0;

	snprintf(tok, sizeof(tok), "--token=%s", token);
	full[n++] = "--url";
	full[n++] = env.sf.p.http_base;
	full[n++] = tok;
	for (size_t i = 0; args[i] != NULL && n < CTL_ARGV_MAX; i++)
		full[n++] = args[i];
	full[n] = NULL;
	return ctl_env(full, NULL);
}

#define CTL(token, ...) ctl_as(token, (const char *const[]){__VA_ARGS__, NULL})

/* The run ended with code; its output is kept in the log when not. */
static void
expect(const struct run *r, int code, const char *what)
{
	cr_assert_eq(r->code, code,
	    "%s: exit %d, not %d\nstdout: %s\nstderr: %s", what, r->code, code,
	    r->out, r->err);
}

/* stdout as one JSON document (caller decrefs). */
static json_t *
json_of(const struct run *r, const char *what)
{
	json_error_t je;
	json_t *v = json_loads(r->out, 0, &je);

	cr_assert(v != NULL, "%s: --json printed no JSON document (%s): %s",
	    what, je.text, r->out);
	return v;
}

static const char *
data_str(json_t *doc, const char *key)
{
	const char *s = json_string_value(
	    json_object_get(json_object_get(doc, "data"), key));

	cr_assert(s != NULL, "no data.%s", key);
	return s;
}

/* Each line of stdout as a JSON value, in an array (caller decrefs). */
static json_t *
json_lines(const struct run *r, const char *what)
{
	json_t *a = json_array();
	const char *line = r->out;

	while (*line != '\0') {
		size_t n = strcspn(line, "\n");
		json_t *v = json_loadb(line, n, 0, NULL);

		cr_assert(v != NULL, "%s: a line is not JSON: %.*s", what,
		    (int)n, line);
		json_array_append_new(a, v);
		line += n;
		if (*line == '\n')
			line++;
	}
	return a;
}

#define WS_ID "--workspace=01900000-0000-7000-8000-000000000000"

/* What `spaced --version` prints after "spaced ", its newline included. */
static void
daemon_version(char *out, size_t len)
{
	FILE *p = popen(SPACED_BIN_DIR "/spaced --version", "r");
	char line[128];

	cr_assert(p != NULL);
	cr_assert(fgets(line, sizeof(line), p) != NULL, "spaced --version");
	cr_assert_eq(pclose(p), 0, "spaced --version failed");
	cr_assert(strncmp(line, "spaced ", 7) == 0, "%s", line);
	snprintf(out, len, "%s", line + 7);
}

/* --- no server needed ----------------------------------------------------- */

Test(spacectl, usage_errors_exit_2_and_every_command_has_help, .fini = fini)
{
	static const char *const cmds[][3] = {{"status"}, {"spaces", "list"},
	    {"spaces", "create"}, {"spaces", "get"}, {"spaces", "cancel"},
	    {"spaces", "close"}, {"tasks", "submit"}, {"tasks", "list"},
	    {"tasks", "get"}, {"artifacts", "get"}, {"events"},
	    {"instances", "bound"}, {"bundles", "bound"}, {"me"},
	    {"workspaces", "list"}, {"workspaces", "create"},
	    {"principals", "list"}, {"principals", "create"},
	    {"tokens", "issue"}, {"tokens", "revoke"}, {"members", "put"},
	    {"members", "remove"}, {"bundles", "list"}, {"bundles", "create"},
	    {"instances", "list"}, {"instances", "register"},
	    {"instances", "disable"}, {"instances", "enable"},
	    {"bindings", "create"}, {"bindings", "delete"}};
	const char *const *bad[] = {
	    (const char *const[]){NULL},
	    (const char *const[]){"nonsense", NULL},
	    (const char *const[]){"spaces", NULL},
	    (const char *const[]){"spaces", "list", "--bogus", NULL},
	    (const char *const[]){"spaces", "get", NULL},
	    (const char *const[]){"spaces", "get", "a", "b", NULL},
	    (const char *const[]){"spaces", "list", "--limit", "abc", NULL},
	    (const char *const[]){"spaces", "list", "--limit", "0", NULL},
	    (const char *const[]){"spaces", "list", "--follow", NULL},
	    (const char *const[]){"events", "s1", "--after", NULL},
	    (const char *const[]){
	        "tasks", "submit", "s1", "noop", "--args", "[1]", WS_ID, NULL},
	    (const char *const[]){"tasks", "submit", "s1", "noop", "--args",
	        "{nope", WS_ID, NULL},
	    (const char *const[]){
	        "tasks", "submit", "s1", "noop", "--timeout", "0", WS_ID, NULL},
	    /* Required options are checked before anything is resolved. */
	    (const char *const[]){"artifacts", "get", "s", "t", "n", NULL},
	    (const char *const[]){"spaces", "create", "--owner", "p", NULL},
	    (const char *const[]){"--json", "--json", "status", NULL},
	    /* What goes into a request is UTF-8 text. */
	    (const char *const[]){"workspaces", "create", "\xff", NULL},
	    (const char *const[]){
	        "spaces", "list", "--status", "\xc0\xaf", WS_ID, NULL},
	    (const char *const[]){
	        "tokens", "issue", "p", "--label", "\xed\xa0\x80", NULL},
	};
	char spaced[128];
	struct run r;

	tk_tmpdir(env.sf.dir, sizeof(env.sf.dir), "ctl-usage");
	r = ctl_env((const char *const[]){"--version", NULL}, NULL);
	expect(&r, 0, "--version");
	cr_assert(strncmp(r.out, "spacectl ", 9) == 0, "%s", r.out);
	/* The project's one version, as the daemon prints it. */
	daemon_version(spaced, sizeof(spaced));
	cr_assert(r.out[9] != '\0' && strcmp(r.out + 9, spaced) == 0,
	    "spacectl --version: %s, spaced --version: spaced %s", r.out,
	    spaced);
	run_free(&r);
	r = ctl_env((const char *const[]){"--help", NULL}, NULL);
	expect(&r, 0, "--help");
	cr_assert(strstr(r.out, "tasks submit") != NULL, "%s", r.out);
	run_free(&r);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const char *args[4] = {cmds[i][0], cmds[i][1], NULL, NULL};
		char want[64];

		args[cmds[i][1] ? 2 : 1] = "--help";
		r = ctl_env(args, NULL);
		expect(&r, 0, cmds[i][0]);
		snprintf(want, sizeof(want), "usage: spacectl %s%s%s",
		    cmds[i][0], cmds[i][1] ? " " : "",
		    cmds[i][1] ? cmds[i][1] : "");
		cr_assert(
		    strstr(r.out, want) != NULL, "%s --help: %s", want, r.out);
		run_free(&r);
	}
	/* Usage errors are found before any token or server is needed. */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = ctl_env(bad[i],
		    (const char *const[]){"SPACED_URL=http://127.0.0.1:1",
		        "SPACED_TOKEN=spd_x", NULL});
		expect(&r, 2, bad[i][0] ? bad[i][0] : "(nothing)");
		cr_assert(r.err[0] != '\0', "a usage error says why");
		run_free(&r);
	}
	/* UTF-8 beyond ASCII is text: the command gets as far as the api. */
	r = ctl_env((const char *const[]){"workspaces", "create",
	                "caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x99\x82", NULL},
	    (const char *const[]){
	        "SPACED_URL=http://127.0.0.1:1", "SPACED_TOKEN=spd_x", NULL});
	expect(&r, 1, "a UTF-8 name");
	cr_assert(strstr(r.err, "error: unreachable") == r.err, "%s", r.err);
	run_free(&r);
	tk_rmrf(env.sf.dir);
}

/* An allocation spacectl cannot do without fails: it exits 3, with no
 * request sent (the URL is dead anyway) and the reason on stderr.  The
 * manifest's buffer is the one allocation of CM_MANIFEST_MAX bytes and
 * more; FAILALLOC_MIN_BYTES makes exactly those fail. */
Test(spacectl, out_of_memory_exits_3, .fini = fini)
{
#ifdef SPACED_SANITIZED
	cr_skip_test("a sanitizer's runtime cannot be preceded by a preload");
#else
	char manifest[256], min[64];
	const char *pre = "LD_PRELOAD=" FAILALLOC_SO;
	const char *const args[] = {"--url", "http://127.0.0.1:1", "--token",
	    "spd_x", "bundles", "create", manifest, NULL};
	struct run r;
	FILE *f;

	tk_tmpdir(env.sf.dir, sizeof(env.sf.dir), "ctl-oom");
	snprintf(manifest, sizeof(manifest), "%s/manifest.json", env.sf.dir);
	f = fopen(manifest, "w");
	cr_assert(f != NULL);
	fputs("{}\n", f);
	fclose(f);
	snprintf(min, sizeof(min), "FAILALLOC_MIN_BYTES=%d", CM_MANIFEST_MAX);

	/* Without the failure the same command gets as far as the api. */
	r = ctl_env(args, (const char *const[]){pre, NULL});
	expect(&r, 1, "bundles create, a dead url");
	cr_assert(strstr(r.err, "error: unreachable") == r.err, "%s", r.err);
	run_free(&r);
	r = ctl_env(args, (const char *const[]){pre, min, NULL});
	expect(&r, 3, "bundles create, out of memory");
	cr_assert(
	    strstr(r.err, "spacectl: out of memory") == r.err, "%s", r.err);
	run_free(&r);
	tk_rmrf(env.sf.dir);
#endif
}

/* Whether w is a command word (a group or a verb): lower case, not an
 * argument's name (SPACE, TASK, ...). */
static bool
command_word(const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (w[i] < 'a' || w[i] > 'z')
			return false;
	return n > 0;
}

/* Every route of api/openapi.json under /api/v1 (but the document
 * itself) is the route of a command, as that command's --help names it:
 * a route the api gains without a command fails here. */
Test(spacectl, every_api_route_has_a_command, .fini = fini)
{
	json_t *spec, *item, *op, *routes = json_object();
	const char *path, *method, *line, *end;
	struct run r, h;
	size_t n_cmds = 0;

	tk_tmpdir(env.sf.dir, sizeof(env.sf.dir), "ctl-routes");
	r = ctl_env((const char *const[]){"--help", NULL}, NULL);
	expect(&r, 0, "--help");
	line = strstr(r.out, "commands:\n");
	cr_assert_not_null(line, "%s", r.out);
	end = strstr(line, "\n\n");
	cr_assert_not_null(end);
	for (line = strchr(line, '\n') + 1; line < end;
	     line = strchr(line, '\n') + 1) {
		const char *args[4] = {NULL, NULL, NULL, NULL}, *w = line;
		char words[2][64], *rt;
		size_t k = 0, n, at;

		while (k < 2) {
			w += strspn(w, " ");
			n = strcspn(w, " \n");
			if (!command_word(w, n))
				break;
			snprintf(words[k], sizeof(words[k]), "%.*s", (int)n, w);
			args[k] = words[k];
			k++;
			w += n;
		}
		cr_assert_gt(k, 0, "a command line of --help: %.40s", line);
		args[k] = "--help";
		h = ctl_env(args, NULL);
		expect(&h, 0, args[0]);
		rt = strstr(h.out, "\napi route: ");
		cr_assert_not_null(
		    rt, "%s %s names no route", args[0], k > 1 ? args[1] : "");
		rt += strlen("\napi route: ");
		at = strcspn(rt, "\n");
		rt[at] = '\0';
		json_object_set_new(routes, rt, json_true());
		run_free(&h);
		n_cmds++;
	}
	run_free(&r);
	cr_assert_gt(n_cmds, 20);

	spec = json_load_file(SPACED_SOURCE_DIR "/api/openapi.json", 0, NULL);
	cr_assert_not_null(spec);
	json_object_foreach(json_object_get(spec, "paths"), path, item)
	{
		size_t len = strlen(path);

		/* MCP's routes carry JSON-RPC for MCP clients (an agent's
		 * host), not a person's commands: test_mcp drives them.  The
		 * live view's are a stream of pictures for eyes and the
		 * pointer of the person watching them, the console's: a
		 * terminal has neither (test_live drives them). */
		if (strncmp(path, "/api/v1/", 8) != 0 ||
		    strcmp(path, "/api/v1/openapi.json") == 0 ||
		    (len > 4 && strcmp(path + len - 4, "/mcp") == 0) ||
		    (len > 5 && strcmp(path + len - 5, "/live") == 0) ||
		    (len > 11 && strcmp(path + len - 11, "/live/input") == 0))
			continue;
		json_object_foreach(item, method, op)
		{
			char want[512];
			size_t i;

			if (strcmp(method, "parameters") == 0)
				continue;
			snprintf(want, sizeof(want), "%s %s", method, path);
			for (i = 0; want[i] != ' '; i++)
				want[i] = (char)(want[i] - 'a' + 'A');
			cr_assert_not_null(json_object_get(routes, want),
			    "no spacectl command calls %s", want);
		}
	}
	json_decref(spec);
	json_decref(routes);
	tk_rmrf(env.sf.dir);
}

/* --- the walk-through ------------------------------------------------------
 */

/* Provisioning as the admin, through spacectl only. */
static void
provision(const char *admin)
{
	char ws[CM_ID_MAX + 1], person[CM_ID_MAX + 1], inst[CM_ID_MAX + 1];
	char tok_id[CM_ID_MAX + 1], binding[CM_ID_MAX + 1];
	char tok[CM_TOKEN_MAX + 1];
	json_t *doc;
	struct run r;

	r = CTL(admin, "--json", "workspaces", "create", "team-ctl");
	expect(&r, 0, "workspaces create");
	doc = json_of(&r, "workspaces create");
	snprintf(ws, sizeof(ws), "%s", data_str(doc, "workspace_id"));
	json_decref(doc);
	run_free(&r);
	r = CTL(admin, "workspaces", "list");
	expect(&r, 0, "workspaces list");
	cr_assert(strstr(r.out, "WORKSPACE_ID") && strstr(r.out, "team-ctl") &&
	              strstr(r.out, ws),
	    "%s", r.out);
	run_free(&r);
	r = CTL(admin, "workspaces", "create", "team-ctl");
	expect(&r, 1, "a second workspace of that name");
	cr_assert(strstr(r.err, "error: conflict: ") == r.err, "%s", r.err);
	run_free(&r);

	r = CTL(admin, "--json", "principals", "create", "operator", "alice");
	expect(&r, 0, "principals create");
	doc = json_of(&r, "principals create");
	snprintf(person, sizeof(person), "%s", data_str(doc, "principal_id"));
	json_decref(doc);
	run_free(&r);
	r = CTL(admin, "principals", "list");
	expect(&r, 0, "principals list");
	cr_assert(strstr(r.out, "alice") != NULL, "%s", r.out);
	run_free(&r);
	r = CTL(admin, "--json", "members", "put", ws, person, "manager");
	expect(&r, 0, "members put");
	json_decref(json_of(&r, "members put"));
	run_free(&r);

	r = CTL(admin, "--json", "tokens", "issue", person, "--label", "ci",
	    "--expires-in", "3600");
	expect(&r, 0, "tokens issue");
	doc = json_of(&r, "tokens issue");
	snprintf(tok_id, sizeof(tok_id), "%s", data_str(doc, "token_id"));
	/* The new token works for its principal. */
	snprintf(tok, sizeof(tok), "%s", data_str(doc, "token"));
	json_decref(doc);
	run_free(&r);
	/* The new token works for its principal, until it is revoked. */
	r = CTL(tok, "spaces", "list", "--workspace", ws);
	expect(&r, 0, "spaces list with the new token");
	run_free(&r);
	r = CTL(admin, "tokens", "revoke", tok_id);
	expect(&r, 0, "tokens revoke");
	run_free(&r);
	r = CTL(tok, "spaces", "list", "--workspace", ws);
	expect(&r, 1, "a revoked token");
	cr_assert(
	    strstr(r.err, "error: unauthenticated") == r.err, "%s", r.err);
	/* A token is never printed back, not even one refused. */
	cr_assert(strstr(r.err, tok) == NULL && strstr(r.out, tok) == NULL);
	run_free(&r);

	r = CTL(admin, "bundles", "list");
	expect(&r, 0, "bundles list");
	cr_assert(strstr(r.out, env.sf.w.bundle_id) != NULL, "%s", r.out);
	run_free(&r);
	r = CTL(admin, "--json", "instances", "register", "ctl-fake",
	    "--driver", "fake", "--bundle", env.sf.w.bundle_id);
	expect(&r, 0, "instances register");
	doc = json_of(&r, "instances register");
	snprintf(
	    inst, sizeof(inst), "%s", data_str(doc, "browser_instance_id"));
	json_decref(doc);
	run_free(&r);
	r = CTL(admin, "--json", "bindings", "create", ws, inst);
	expect(&r, 0, "bindings create");
	doc = json_of(&r, "bindings create");
	snprintf(binding, sizeof(binding), "%s", data_str(doc, "binding_id"));
	json_decref(doc);
	run_free(&r);
	r = CTL(admin, "instances", "bound", "--workspace", ws);
	expect(&r, 0, "instances bound");
	cr_assert(strstr(r.out, inst) != NULL, "%s", r.out);
	run_free(&r);
	r = CTL(admin, "--json", "instances", "disable", inst);
	expect(&r, 0, "instances disable");
	doc = json_of(&r, "instances disable");
	cr_assert_str_eq(data_str(doc, "status"), "disabled");
	json_decref(doc);
	run_free(&r);
	r = CTL(admin, "instances", "enable", inst);
	expect(&r, 0, "instances enable");
	cr_assert(strstr(r.out, "ready") != NULL, "%s", r.out);
	run_free(&r);
	r = CTL(admin, "instances", "list");
	expect(&r, 0, "instances list");
	cr_assert(strstr(r.out, "ctl-fake") != NULL, "%s", r.out);
	run_free(&r);
	r = CTL(admin, "bindings", "delete", binding);
	expect(&r, 0, "bindings delete");
	run_free(&r);
	r = CTL(admin, "bindings", "delete", binding);
	expect(&r, 1, "a deleted binding");
	cr_assert(strstr(r.err, "error: not_found") == r.err, "%s", r.err);
	run_free(&r);
	r = CTL(admin, "members", "remove", ws, person);
	expect(&r, 0, "members remove");
	run_free(&r);
}

struct lines_wait {
	const char *path;
	size_t want;
};

static bool
has_lines(void *arg)
{
	const struct lines_wait *w = arg;
	size_t n = 0, len;
	char *text = tk_read_file(w->path, &len);

	for (size_t i = 0; text != NULL && i < len; i++)
		n += text[i] == '\n';
	free(text);
	return n >= w->want;
}

/* Index of needle in the run's stdout, or -1. */
static long
at(const struct run *r, const char *needle)
{
	const char *p = strstr(r->out, needle);

	return p ? (long)(p - r->out) : -1;
}

Test(spacectl, walk_through, .fini = fini)
{
	const char *ws, *mgr;
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], file[256];
	json_t *doc, *lines, *last;
	struct run r;
	char *png;
	size_t png_len, i;

	hf_start(&env, "ctl-walk", 2, NULL);
	ws = hf_ws(&env);
	mgr = env.manager;
	provision(env.af.admin);

	/* status: the supervisor's children, admin only. */
	r = CTL(env.af.admin, "status");
	expect(&r, 0, "status");
	cr_assert(at(&r, "KIND") == 0 && at(&r, "store") > 0 &&
	              at(&r, "api") > 0 && at(&r, "ready") > 0,
	    "%s", r.out);
	run_free(&r);
	r = CTL(env.af.admin, "--json", "status");
	expect(&r, 0, "status --json");
	json_decref(json_of(&r, "status --json"));
	run_free(&r);
	r = CTL(mgr, "status");
	expect(&r, 1, "status as a manager");
	cr_assert(strstr(r.err, "error: forbidden") == r.err, "%s", r.err);
	run_free(&r);

	/* me: who the token is, with its workspace and role. */
	r = CTL(mgr, "me");
	expect(&r, 0, "me");
	cr_assert(at(&r, "principal_id") >= 0 &&
	              at(&r, env.sf.w.operator_id) > 0 && at(&r, ws) > 0 &&
	              at(&r, "manager") > 0,
	    "%s", r.out);
	run_free(&r);
	r = CTL(mgr, "--json", "me");
	expect(&r, 0, "me --json");
	doc = json_of(&r, "me --json");
	cr_assert_str_eq(data_str(doc, "principal_id"), env.sf.w.operator_id);
	json_decref(doc);
	run_free(&r);
	/* bundles bound: the bound instances' bundles, to a member. */
	r = CTL(mgr, "bundles", "bound", "--workspace", ws);
	expect(&r, 0, "bundles bound");
	cr_assert(at(&r, "BUNDLE_ID") == 0 && at(&r, env.sf.w.bundle_id) > 0,
	    "%s", r.out);
	run_free(&r);
	r = CTL(mgr, "--json", "bundles", "bound", "--workspace", ws);
	expect(&r, 0, "bundles bound --json");
	doc = json_of(&r, "bundles bound --json");
	cr_assert(
	    json_is_object(json_object_get(
	        json_array_get(json_object_get(doc, "data"), 0), "manifest")),
	    "%s", r.out);
	json_decref(doc);
	run_free(&r);

	/* A Space, by the workspace's manager (its id: no admin lookup). */
	r = CTL(mgr, "--json", "spaces", "create", "--workspace", ws,
	    "--instance", env.sf.w.instance_id[0], "--owner",
	    env.sf.w.operator_id, "--grant", "sleep,screenshot,snapshot");
	expect(&r, 0, "spaces create");
	doc = json_of(&r, "spaces create");
	snprintf(space, sizeof(space), "%s", data_str(doc, "space_id"));
	cr_assert_str_eq(data_str(doc, "workspace_id"), ws);
	json_decref(doc);
	run_free(&r);
	r = CTL(mgr, "spaces", "create", "--workspace", ws, "--instance",
	    env.sf.w.instance_id[0], "--owner", env.sf.w.operator_id);
	expect(&r, 1, "a second Space on the instance");
	cr_assert(strstr(r.err, "error: browser_instance_in_use: ") == r.err,
	    "%s", r.err);
	run_free(&r);
	/* The admin names the workspace by its name. */
	r = CTL(env.af.admin, "spaces", "list", "--workspace", "default");
	expect(&r, 0, "spaces list by name");
	cr_assert(at(&r, "SPACE_ID") == 0 && at(&r, space) > 0, "%s", r.out);
	run_free(&r);
	r = CTL(mgr, "--json", "spaces", "list", "--workspace", ws);
	expect(&r, 0, "spaces list --json");
	doc = json_of(&r, "spaces list --json");
	cr_assert_eq(json_array_size(json_object_get(doc, "data")), 1);
	json_decref(doc);
	run_free(&r);
	r = CTL(mgr, "spaces", "get", "--workspace", ws, space);
	expect(&r, 0, "spaces get");
	cr_assert(at(&r, "status") >= 0 && at(&r, "idle") > 0, "%s", r.out);
	run_free(&r);
	r = CTL(mgr, "spaces", "get", "--workspace", ws,
	    "01900000-0000-7000-8000-000000000000");
	expect(&r, 1, "an unknown Space");
	cr_assert(strstr(r.err, "error: not_found: ") == r.err, "%s", r.err);
	run_free(&r);

	/* --wait: the task's events as they come, then its result. */
	r = CTL(mgr, "tasks", "submit", "--workspace", ws, space, "sleep",
	    "--args", "{\"ms\": 300}", "--wait");
	expect(&r, 0, "tasks submit --wait");
	cr_assert(at(&r, "queued") > 0 &&
	              at(&r, "started") > at(&r, "queued") &&
	              at(&r, "  completed") > at(&r, "started"),
	    "%s", r.out);
	cr_assert(at(&r, "ms  #") > 0, "no elapsed time: %s", r.out);
	cr_assert(at(&r, "result") > at(&r, "  completed") &&
	              at(&r, "\"slept\": true") > at(&r, "result"),
	    "the result comes after the events: %s", r.out);
	run_free(&r);
	r = CTL(mgr, "--json", "tasks", "submit", "--workspace", ws, space,
	    "snapshot", "--request-id", "ctl-snap-1", "--wait");
	expect(&r, 0, "tasks submit --wait --json");
	lines = json_lines(&r, "tasks submit --wait --json");
	cr_assert_geq(json_array_size(lines), 4, "%s", r.out);
	last = json_object_get(
	    json_array_get(lines, json_array_size(lines) - 1), "data");
	cr_assert_str_eq(
	    json_string_value(json_object_get(last, "status")), "completed");
	cr_assert_str_eq(json_string_value(json_object_get(last, "request_id")),
	    "ctl-snap-1");
	snprintf(task, sizeof(task), "%s",
	    json_string_value(json_object_get(last, "task_id")));
	for (i = 0; i + 1 < json_array_size(lines); i++)
		cr_assert_str_eq(json_string_value(json_object_get(
		                     json_array_get(lines, i), "task_id")),
		    task);
	cr_assert_str_eq(json_string_value(json_object_get(
	                     json_array_get(lines, i - 1), "kind")),
	    "completed");
	json_decref(lines);
	run_free(&r);

	r = CTL(mgr, "tasks", "get", "--workspace", ws, space, task);
	expect(&r, 0, "tasks get");
	cr_assert(at(&r, task) > 0 && at(&r, "completed") > 0, "%s", r.out);
	run_free(&r);
	r = CTL(mgr, "--json", "tasks", "list", "--workspace", ws, space);
	expect(&r, 0, "tasks list");
	doc = json_of(&r, "tasks list");
	cr_assert_eq(json_array_size(json_object_get(doc, "data")), 2);
	json_decref(doc);
	run_free(&r);
	r = CTL(mgr, "tasks", "submit", "--workspace", ws, space, "navigate",
	    "--args", "{\"url\": \"http://example.com/\"}");
	expect(&r, 1, "an ungranted capability");
	cr_assert(strstr(r.err, "error: capability_not_granted") == r.err, "%s",
	    r.err);
	run_free(&r);

	/* A screenshot: where its artifact is, then the bytes to a file. */
	r = CTL(mgr, "--json", "tasks", "submit", "--workspace", ws, space,
	    "screenshot", "--wait");
	expect(&r, 0, "screenshot --wait");
	lines = json_lines(&r, "screenshot");
	last = json_object_get(
	    json_array_get(lines, json_array_size(lines) - 1), "data");
	snprintf(task, sizeof(task), "%s",
	    json_string_value(json_object_get(last, "task_id")));
	json_decref(lines);
	run_free(&r);
	snprintf(file, sizeof(file), "%s/shot.png", env.sf.dir);
	r = CTL(mgr, "artifacts", "get", "--workspace", ws, space, task,
	    "screenshot.png", "-o", file);
	expect(&r, 0, "artifacts get");
	cr_assert(at(&r, "image/png") > 0, "%s", r.out);
	run_free(&r);
	png = tk_read_file(file, &png_len);
	cr_assert(png != NULL && png_len > 8 &&
	          memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0);
	free(png);
	r = CTL(mgr, "artifacts", "get", "--workspace", ws, space, task,
	    "other.png", "-o", file);
	expect(&r, 1, "an unknown artifact");
	cr_assert(strstr(r.err, "error: not_found") == r.err, "%s", r.err);
	run_free(&r);

	/* Events, replayed. */
	r = CTL(mgr, "events", "--workspace", ws, space);
	expect(&r, 0, "events");
	cr_assert(
	    at(&r, "SEQUENCE") == 0 && at(&r, "space_opened") > 0, "%s", r.out);
	run_free(&r);
	r = CTL(mgr, "--json", "events", "--workspace", ws, space, "--after",
	    "2", "--limit", "3");
	expect(&r, 0, "events --json");
	doc = json_of(&r, "events --json");
	cr_assert_eq(json_array_size(json_object_get(doc, "data")), 3);
	cr_assert_eq(
	    json_integer_value(json_object_get(
	        json_array_get(json_object_get(doc, "data"), 0), "sequence")),
	    3);
	json_decref(doc);
	run_free(&r);

	/* --wait is live: a long task's "started" is printed while it runs
	 * (the task is cancelled only once that line is seen). */
	{
		char tok[CM_TOKEN_MAX + 16], path[256];
		const char *args[] = {"--url", env.sf.p.http_base, tok, "tasks",
		    "submit", "--workspace", ws, space, "sleep", "--args",
		    "{\"ms\": 60000}", "--wait", NULL};
		struct lines_wait lw;
		pid_t waiter;

		snprintf(tok, sizeof(tok), "--token=%s", mgr);
		waiter = ctl_spawn(args, NULL, "live");
		snprintf(path, sizeof(path), "%s/ctl-live.out", env.sf.dir);
		/* task ... accepted, then its queued and started */
		lw = (struct lines_wait){path, 3};
		cr_assert(tk_wait_until(has_lines, &lw, HF_WAIT_MS),
		    "--wait printed no live event");
		r = CTL(mgr, "spaces", "cancel", "--workspace", ws, space);
		expect(&r, 0, "spaces cancel");
		run_free(&r);
		r = ctl_reap(waiter, "live", CTL_RUN_MS);
		expect(&r, 1, "--wait on a cancelled task");
		cr_assert(at(&r, "  queued") > 0 &&
		              at(&r, "  started") > at(&r, "  queued") &&
		              at(&r, "  cancelled") > at(&r, "  started"),
		    "%s", r.out);
		cr_assert(sscanf(r.out, "task %64s accepted", task) == 1);
		run_free(&r);
		cr_assert(hf_wait_task(&env, space, task, "cancelled"));
	}

	/* Cancel a long task, then close. */
	r = CTL(mgr, "--json", "tasks", "submit", "--workspace", ws, space,
	    "sleep", "--args", "{\"ms\": 30000}");
	expect(&r, 0, "tasks submit");
	doc = json_of(&r, "tasks submit");
	snprintf(task, sizeof(task), "%s", data_str(doc, "task_id"));
	json_decref(doc);
	run_free(&r);
	cr_assert(hf_wait_task(&env, space, task, "running"));
	r = CTL(mgr, "spaces", "cancel", "--workspace", ws, space);
	expect(&r, 0, "spaces cancel");
	cr_assert(at(&r, task) > 0, "%s", r.out);
	run_free(&r);
	cr_assert(hf_wait_task(&env, space, task, "cancelled"));
	r = CTL(mgr, "--json", "spaces", "close", "--workspace", ws, space);
	expect(&r, 0, "spaces close");
	json_decref(json_of(&r, "spaces close"));
	run_free(&r);
	r = CTL(mgr, "tasks", "submit", "--workspace", ws, space, "snapshot");
	expect(&r, 1, "a task on a closed Space");
	cr_assert(strstr(r.err, "error: space_closed: ") == r.err, "%s", r.err);
	run_free(&r);
	hf_stop(&env);
}

/* --- events --follow across a killed api -----------------------------------
 */

static pid_t
api_pid(void)
{
	struct run r = CTL(env.af.admin, "--json", "status");
	json_t *doc, *row;
	pid_t pid = 0;
	size_t i;

	expect(&r, 0, "status");
	doc = json_of(&r, "status");
	json_array_foreach(json_object_get(doc, "data"), i, row)
	{
		if (strcmp(json_string_value(json_object_get(row, "kind")),
		        "api") == 0)
			pid = (pid_t)json_integer_value(
			    json_object_get(row, "pid"));
	}
	json_decref(doc);
	run_free(&r);
	cr_assert_gt(pid, 0);
	return pid;
}

/* Another api than old is ready: the supervisor restarted it. */
static bool
api_replaced(void *arg)
{
	pid_t old = *(pid_t *)arg;
	char *body = NULL;
	json_t *doc, *row;
	bool ok = false;
	size_t i;

	if (tk_http(&env.sf.p, "GET", "/api/v1/admin/status", env.af.admin,
	        NULL, NULL, &body) != 200) {
		free(body);
		return false;
	}
	doc = json_loads(body, 0, NULL);
	free(body);
	json_array_foreach(json_object_get(doc, "data"), i, row)
	{
		const char *kind =
		    json_string_value(json_object_get(row, "kind"));
		const char *st =
		    json_string_value(json_object_get(row, "state"));

		if (kind && st && strcmp(kind, "api") == 0 &&
		    strcmp(st, "ready") == 0 &&
		    json_integer_value(json_object_get(row, "pid")) != old)
			ok = true;
	}
	json_decref(doc);
	return ok;
}

Test(spacectl, follow_resumes_after_the_api_is_killed, .fini = fini)
{
	char space[CM_ID_MAX + 1], task[CM_ID_MAX + 1], rid[32], out[256];
	const char *ws;
	struct lines_wait lw;
	json_t *lines;
	struct run r;
	pid_t follower, api;
	size_t i, n;

	hf_start(&env, "ctl-follow", 1, NULL);
	ws = hf_ws(&env);
	hf_create_ok(&env, 0, NULL, space);
	cr_assert_eq(
	    sf_submit(&env.sf, space, "f-1", "noop", "{}", 60000, task), CM_OK);
	cr_assert(sf_wait_task(&env.sf, space, task, "completed", HF_WAIT_MS));

	{
		char tok[CM_TOKEN_MAX + 16];
		const char *args[] = {"--url", env.sf.p.http_base, tok,
		    "--json", "--verbose", "events", "--workspace", ws, space,
		    "--follow", NULL};

		snprintf(tok, sizeof(tok), "--token=%s", env.manager);
		follower = ctl_spawn(args, NULL, "follow");
	}
	/* space_opened and the task's queued, started, completed. */
	snprintf(out, sizeof(out), "%s/ctl-follow.out", env.sf.dir);
	lw = (struct lines_wait){out, 4};
	cr_assert(tk_wait_until(has_lines, &lw, HF_WAIT_MS),
	    "the stream never replayed the log");

	/* The api dies mid-stream; events happen while it is away (through
	 * the store), and more once the supervisor has started another. */
	api = api_pid();
	cr_assert_eq(kill(api, SIGKILL), 0);
	for (i = 0; i < 3; i++) {
		snprintf(rid, sizeof(rid), "away-%zu", i);
		cr_assert_eq(
		    sf_submit(&env.sf, space, rid, "noop", "{}", 60000, task),
		    CM_OK);
		cr_assert(sf_wait_task(
		    &env.sf, space, task, "completed", HF_WAIT_MS));
	}
	cr_assert(tk_wait_until(api_replaced, &api, HF_WAIT_MS));
	cr_assert_eq(
	    sf_submit(&env.sf, space, "back", "noop", "{}", 60000, task),
	    CM_OK);
	cr_assert(sf_wait_task(&env.sf, space, task, "completed", HF_WAIT_MS));
	{
		int st = hf_post(&env, env.manager, space, "close", NULL, NULL);

		cr_assert(st == 200 || st == 202, "close: %d", st);
	}

	/* The stream ends after space_closed, and spacectl with it. */
	r = ctl_reap(follower, "follow", HF_WAIT_MS * 2);
	expect(&r, 0, "events --follow");
	cr_assert(strstr(r.err, "resuming after") != NULL,
	    "the stream was never resumed: %s", r.err);
	/* The first request starts at 0 (no --after); a resumed one after
	 * what was printed before the kill (4 events at least), which the
	 * api skips: Last-Event-ID is sent, not only repeats dropped. */
	{
		const char *h = strstr(r.err, "Last-Event-ID: ");
		long long first, resumed = -1;

		cr_assert_not_null(h, "no Last-Event-ID: %s", r.err);
		first = strtoll(h + 15, NULL, 10);
		cr_assert_eq(first, 0, "%s", r.err);
		while ((h = strstr(h + 1, "Last-Event-ID: ")) != NULL)
			if (resumed < 0)
				resumed = strtoll(h + 15, NULL, 10);
		cr_assert_geq(
		    resumed, 4, "resumed with %lld: %s", resumed, r.err);
	}
	lines = json_lines(&r, "events --follow");
	n = json_array_size(lines);
	/* 1 space_opened, 5 tasks of 3 events, space_closed: every sequence
	 * once, in order. */
	cr_assert_eq(n, 17, "%zu events: %s", n, r.out);
	for (i = 0; i < n; i++)
		cr_assert_eq(json_integer_value(json_object_get(
		                 json_array_get(lines, i), "sequence")),
		    (json_int_t)i + 1, "event %zu: %s", i, r.out);
	cr_assert_str_eq(json_string_value(json_object_get(
	                     json_array_get(lines, n - 1), "kind")),
	    "space_closed");
	/* --verbose never shows the token. */
	cr_assert(strstr(r.err, env.manager) == NULL);
	json_decref(lines);
	run_free(&r);
	hf_stop(&env);
}

/* --- where the token and the URL come from ----------------------------------
 */

Test(spacectl, token_and_url_precedence, .fini = fini)
{
	char tok_env[CM_TOKEN_MAX + 32], url_env[128], dir_env[200];
	char listen_env[64], tok_flag[CM_TOKEN_MAX + 16], conf[256], text[512];
	const char *bad_tok = "SPACED_TOKEN=spd_notatokenatall";
	struct run r;
	FILE *f;

	hf_start(&env, "ctl-prec", 1, NULL);
	snprintf(tok_env, sizeof(tok_env), "SPACED_TOKEN=%s", env.af.admin);
	snprintf(tok_flag, sizeof(tok_flag), "--token=%s", env.af.admin);
	snprintf(url_env, sizeof(url_env), "SPACED_URL=%s", env.sf.p.http_base);
	snprintf(dir_env, sizeof(dir_env), "SPACED_DATA_DIR=%s", env.sf.dir);
	snprintf(listen_env, sizeof(listen_env),
	    "SPACED_HTTP_LISTEN=127.0.0.1:%d", env.sf.p.http_port);

	/* The token: the file under data_dir... */
	r = ctl_env((const char *const[]){"workspaces", "list", NULL},
	    (const char *const[]){url_env, dir_env, NULL});
	expect(&r, 0, "the token file");
	run_free(&r);
	/* ...loses to SPACED_TOKEN... */
	r = ctl_env((const char *const[]){"workspaces", "list", NULL},
	    (const char *const[]){url_env, dir_env, bad_tok, NULL});
	expect(&r, 1, "SPACED_TOKEN over the file");
	cr_assert(
	    strstr(r.err, "error: unauthenticated") == r.err, "%s", r.err);
	cr_assert(strstr(r.err, "spd_notatokenatall") == NULL);
	run_free(&r);
	/* ...which loses to --token. */
	r = ctl_env((const char *const[]){tok_flag, "workspaces", "list", NULL},
	    (const char *const[]){url_env, dir_env, bad_tok, NULL});
	expect(&r, 0, "--token over SPACED_TOKEN");
	run_free(&r);
	r = ctl_env((const char *const[]){"--token", "spd_notatokenatall",
	                "workspaces", "list", NULL},
	    (const char *const[]){url_env, dir_env, tok_env, NULL});
	expect(&r, 1, "a bad --token over a good SPACED_TOKEN");
	run_free(&r);
	/* No token anywhere is a usage error. */
	r = ctl_env((const char *const[]){"workspaces", "list", NULL},
	    (const char *const[]){url_env, NULL});
	expect(&r, 2, "no token");
	run_free(&r);

	/* The URL: http_listen from the config... */
	r = ctl_env((const char *const[]){"workspaces", "list", NULL},
	    (const char *const[]){tok_env, listen_env, NULL});
	expect(&r, 0, "http_listen");
	run_free(&r);
	/* ...loses to SPACED_URL... */
	r = ctl_env((const char *const[]){"workspaces", "list", NULL},
	    (const char *const[]){
	        tok_env, listen_env, "SPACED_URL=http://127.0.0.1:1", NULL});
	expect(&r, 1, "SPACED_URL over http_listen");
	cr_assert(strstr(r.err, "error: unreachable") == r.err, "%s", r.err);
	run_free(&r);
	/* ...which loses to --url. */
	r = ctl_env((const char *const[]){"--url", env.sf.p.http_base,
	                "workspaces", "list", NULL},
	    (const char *const[]){
	        tok_env, "SPACED_URL=http://127.0.0.1:1", NULL});
	expect(&r, 0, "--url over SPACED_URL");
	run_free(&r);
	r = ctl_env((const char *const[]){"--url", "http://127.0.0.1:1",
	                "workspaces", "list", NULL},
	    (const char *const[]){tok_env, url_env, NULL});
	expect(&r, 1, "a dead --url over a good SPACED_URL");
	run_free(&r);

	/* A config file alone gives both: what `make run` prints. */
	snprintf(conf, sizeof(conf), "%s/ctl.conf", env.sf.dir);
	f = fopen(conf, "w");
	cr_assert(f != NULL);
	fprintf(f, "data_dir = %s\nhttp_listen = 127.0.0.1:%d\n", env.sf.dir,
	    env.sf.p.http_port);
	fclose(f);
	r = ctl_env((const char *const[]){"--config", conf, "spaces", "list",
	                "--workspace", "default", NULL},
	    NULL);
	expect(&r, 0, "--config");
	cr_assert(strstr(r.out, "SPACE_ID") == r.out, "%s", r.out);
	run_free(&r);
	snprintf(text, sizeof(text), "%s", env.af.admin);
	r = ctl_env((const char *const[]){"--config", conf, "--verbose",
	                "status", NULL},
	    NULL);
	expect(&r, 0, "--verbose");
	cr_assert(strstr(r.err, "> GET ") != NULL, "%s", r.err);
	cr_assert(strstr(r.err, text) == NULL && strstr(r.out, text) == NULL,
	    "the token was printed");
	run_free(&r);
	hf_stop(&env);
}
