/*
 * The first five minutes of a new user: a fresh clone, `make run`, and the
 * commands it prints, run exactly as printed; then the README's
 * walk-through with curl, against that same service.
 *
 * The clone's make points BUILD at this build tree, so nothing is built
 * twice; its own port and data dir come from HTTP_LISTEN and DATA_DIR.
 * make runs in a process group of its own, which is stopped (SIGTERM)
 * and then must empty within a bound; the fini kills what is left.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "pages.h"
#include "testkit.h"

#define CLONE_WAIT_MS 60000
/* setup.sh's check, a build with nothing to do, a first start. */
#define RUN_READY_WAIT_MS 240000
#define COMMAND_WAIT_MS 30000
#define STOP_WAIT_MS 30000
#define LINE_MAX_LEN 1024
/* The README's walk-through with curl, and its live stream's part. */
#define WALK_WAIT_MS 120000
#define WALK_SSE_S 3

TestSuite(first_five_minutes, .timeout = 420);

/* The process group of the make run under test, for the fini. */
static pid_t run_group;

static void
kill_group(void)
{
	if (run_group > 0) {
		kill(-run_group, SIGKILL);
		while (waitpid(run_group, NULL, 0) < 0 && errno == EINTR)
			;
	}
	run_group = 0;
}

/* Starts argv[0] (from PATH) in a process group of its own, in cwd, its
 * stdout and stderr into out.  env is NULL or "NAME=value" pairs to set. */
static pid_t
spawn(const char *cwd, const char *const *argv, const char *const *env,
    const char *out)
{
	pid_t pid = fork();

	cr_assert_geq(pid, 0);
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (chdir(cwd) != 0 || freopen(out, "w", stdout) == NULL ||
		    dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
			_exit(127);
		/* Not the jobserver of a make that runs this test, nor its
		 * command-line variables (make puts them in the environment:
		 * `make test CMAKE_FLAGS=...` would have the clone's make
		 * configure this build tree from the clone). */
		unsetenv("MAKEFLAGS");
		unsetenv("MFLAGS");
		unsetenv("MAKELEVEL");
		unsetenv("MAKEOVERRIDES");
		unsetenv("CMAKE_FLAGS");
		for (; env != NULL && *env != NULL; env++)
			putenv((char *)*env);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	setpgid(pid, pid);
	return pid;
}

/* Runs argv to its end within timeout_ms; its wait status. */
static int
run(const char *cwd, const char *const *argv, const char *out, int timeout_ms)
{
	struct tk_proc p = {.pid = spawn(cwd, argv, NULL, out)};
	pid_t pid = p.pid;
	int status = 0;

	if (tk_proc_wait(&p, timeout_ms, &status) != 0) {
		kill(-pid, SIGKILL);
		waitpid(pid, NULL, 0);
		cr_assert_fail(
		    "%s did not finish within %d ms", argv[0], timeout_ms);
	}
	return status;
}

/* The file's text (empty when it cannot be read); free it. */
static char *
slurp(const char *path)
{
	char *s = tk_read_file(path, NULL);

	return s != NULL ? s : strdup("");
}

struct ready {
	const char *out;
	pid_t make;
	bool exited;
};

/* The block is complete once its "Try it:" list ends in a blank line,
 * or make has exited (the test then fails, showing the output). */
static bool
block_printed(void *arg)
{
	struct ready *r = arg;
	char *s = slurp(r->out);
	const char *t = strstr(s, "\nTry it:\n");
	bool done = t != NULL && strstr(t + 1, "\n\n") != NULL;

	free(s);
	if (!done && waitpid(r->make, NULL, WNOHANG) == r->make)
		r->exited = done = true;
	return done;
}

/* Copies the rest of the line after prefix at the start of a line of s
 * (leading blanks skipped) into out; false when no line has it. */
static bool
line_after(const char *s, const char *prefix, char *out, size_t len)
{
	for (const char *l = s; l != NULL && *l != '\0';) {
		const char *end = strchr(l, '\n');
		size_t n = end != NULL ? (size_t)(end - l) : strlen(l);
		const char *p = l;

		while (*p == ' ' && p < l + n)
			p++;
		if ((size_t)(l + n - p) >= strlen(prefix) &&
		    strncmp(p, prefix, strlen(prefix)) == 0) {
			snprintf(out, len, "%.*s", (int)(l + n - p), p);
			return true;
		}
		l = end != NULL ? end + 1 : NULL;
	}
	return false;
}

/* As line_after, for the first line that holds part anywhere (a
 * command may begin with an environment assignment). */
static bool
line_with(const char *s, const char *part, char *out, size_t len)
{
	for (const char *l = s; l != NULL && *l != '\0';) {
		const char *end = strchr(l, '\n');
		size_t n = end != NULL ? (size_t)(end - l) : strlen(l);
		const char *p = l, *at = strstr(l, part);

		while (*p == ' ' && p < l + n)
			p++;
		if (at != NULL && at < l + n) {
			snprintf(out, len, "%.*s", (int)(l + n - p), p);
			return true;
		}
		l = end != NULL ? end + 1 : NULL;
	}
	return false;
}

static bool
group_gone(void *arg)
{
	pid_t pgid = *(pid_t *)arg;

	return kill(-pgid, 0) != 0 && errno == ESRCH;
}

/* s with every from replaced by to; free it. */
static char *
replace_all(const char *s, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), n = 0;
	const char *p;
	char *out, *o;

	for (p = s; (p = strstr(p, from)) != NULL; p += nf)
		n++;
	cr_assert_not_null(out = malloc(strlen(s) + n * nt + 1));
	for (o = out, p = s;;) {
		const char *at = strstr(p, from);

		if (at == NULL)
			break;
		memcpy(o, p, (size_t)(at - p));
		o += at - p;
		memcpy(o, to, nt);
		o += nt;
		p = at + nf;
	}
	memcpy(o, p, strlen(p) + 1);
	return out;
}

/* The first ```sh block after heading in the README text; free it. */
static char *
readme_block(const char *readme, const char *heading)
{
	const char *h = strstr(readme, heading), *b, *e;

	cr_assert_not_null(h, "the README has no \"%s\"", heading);
	cr_assert_not_null(b = strstr(h, "```sh\n"));
	b += strlen("```sh\n");
	cr_assert_not_null(e = strstr(b, "\n```"));
	return strndup(b, (size_t)(e - b) + 1);
}

static int
count(const char *s, const char *part)
{
	int n = 0;

	for (; (s = strstr(s, part)) != NULL; s += strlen(part))
		n++;
	return n;
}

/*
 * The README's walk-through with curl, run as written in the clone
 * against this make run: only its address, its token's path and the page
 * change (a page of the test's own server stands in for
 * https://example.com/), and the live event stream, which a person stops
 * with Ctrl-C, stops after WALK_SSE_S.  Every step must succeed and show
 * what the README says it shows.
 */
static void
readme_walkthrough(const char *dir, const char *repo, int port)
{
	char path[256], from[64], to[256], *readme, *a, *b, *got, *png;
	const char *argv[] = {"bash", "-c", NULL, NULL};
	struct tk_pages *pages;
	int pport, st;
	size_t len = 0;
	FILE *f;

	cr_assert_not_null(pages = tk_pages_start(&pport));
	snprintf(path, sizeof(path), "%s/README.md", repo);
	cr_assert_not_null(readme = tk_read_file(path, NULL));
	a = readme_block(readme, "### A walk-through with curl");
	free(readme);
	snprintf(to, sizeof(to), "U=http://127.0.0.1:%d\n", port);
	b = replace_all(a, "U=http://127.0.0.1:8080\n", to);
	free(a);
	snprintf(to, sizeof(to), "%s/var/admin.token", dir);
	a = replace_all(b, "var/admin.token", to);
	free(b);
	snprintf(to, sizeof(to), "http://127.0.0.1:%d/", pport);
	b = replace_all(a, "https://example.com/", to);
	free(a);
	snprintf(from, sizeof(from), "text/event-stream' $S/events\n");
	snprintf(to, sizeof(to),
	    "text/event-stream' --max-time %d $S/events || test $? -eq 28\n",
	    WALK_SSE_S);
	a = replace_all(b, from, to);
	cr_assert_neq(strcmp(a, b), 0, "the walk-through has no live stream");
	free(b);

	snprintf(path, sizeof(path), "%s/walk.sh", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fprintf(f, "set -eo pipefail\n%s", a);
	fclose(f);
	free(a);
	snprintf(path, sizeof(path), "%s/walk.out", dir);
	snprintf(to, sizeof(to), "bash %s/walk.sh", dir);
	argv[2] = to;
	st = run(repo, argv, path, WALK_WAIT_MS);
	got = slurp(path);
	tk_pages_stop(pages);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the README's walk-through failed:\n%s", got);
	/* navigate's result, the snapshot's outline with a ref, the
	 * click, the log with the four tasks, the live stream, the close. */
	cr_assert_not_null(strstr(got, "\"Home\""), "%s", got);
	cr_assert_not_null(strstr(got, "link \"Next page\" [ref=e"), "%s", got);
	cr_assert_not_null(strstr(got, "\"clicked\": true"), "%s", got);
	cr_assert_eq(count(got, "\"completed\"]"), 4, "%s", got);
	cr_assert_not_null(strstr(got, "event: "), "%s", got);
	cr_assert_not_null(strstr(got, "\"close_requested\""), "%s", got);
	free(got);
	snprintf(path, sizeof(path), "%s/screenshot.png", repo);
	cr_assert_not_null(png = tk_read_file(path, &len), "no screenshot.png");
	cr_assert(len > 8 && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0,
	    "screenshot.png is not a PNG");
	free(png);
}

Test(first_five_minutes, make_run_in_a_fresh_clone_then_the_printed_commands,
    .fini = kill_group)
{
	char dir[128], repo[160], out[192], cmd_out[192], spacectl[512];
	char build[512], listen[64], data[192], url[LINE_MAX_LEN];
	char curl[LINE_MAX_LEN], ctl[LINE_MAX_LEN];
	const char *const clone[] = {
	    "git", "clone", "-q", SPACED_SOURCE_DIR, "repo", NULL};
	const char *const env[] = {"SPACED_WARM_STANDBY=false", NULL};
	struct ready r = {0};
	struct tk_proc mk = {0};
	bool has_ctl;
	char *text;
	int port = tk_free_port(), st;

	tk_tmpdir(dir, sizeof(dir), "fivemin");
	snprintf(repo, sizeof(repo), "%s/repo", dir);
	snprintf(out, sizeof(out), "%s/make-run.out", dir);
	snprintf(cmd_out, sizeof(cmd_out), "%s/command.out", dir);
	st = run(dir, clone, out, CLONE_WAIT_MS);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "git clone failed");

	snprintf(build, sizeof(build), "BUILD=%s", SPACED_BIN_DIR);
	snprintf(listen, sizeof(listen), "HTTP_LISTEN=127.0.0.1:%d", port);
	snprintf(data, sizeof(data), "DATA_DIR=%s/var", dir);
	{
		const char *const argv[] = {
		    "make", "run", build, listen, data, NULL};

		r.out = out;
		r.make = run_group = mk.pid = spawn(repo, argv, env, out);
	}
	cr_assert(tk_wait_until(block_printed, &r, RUN_READY_WAIT_MS),
	    "make run printed no block within %d ms", RUN_READY_WAIT_MS);
	text = slurp(out);
	cr_assert_not(r.exited, "make run exited:\n%s", text);

	/* Nothing but the service's own lines and the block. */
	cr_assert_null(strstr(text, "Entering directory"), "%s", text);
	cr_assert_null(strstr(text, "Built target"), "%s", text);
	cr_assert_null(strstr(text, "-- Configuring"), "%s", text);

	cr_assert(line_after(text, "Console:", url, sizeof(url)), "%s", text);
	snprintf(listen, sizeof(listen), "http://127.0.0.1:%d/", port);
	cr_assert_not_null(strstr(url, listen), "%s", url);
	/* The console answers at the URL printed (it once answered 404). */
	{
		char get[LINE_MAX_LEN + 32];
		const char *argv[] = {"bash", "-c", get, NULL};
		char *got;

		snprintf(
		    get, sizeof(get), "curl -fsS %s", url + strlen("Console:"));
		st = run(repo, argv, cmd_out, COMMAND_WAIT_MS);
		got = slurp(cmd_out);
		cr_assert(
		    WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s", get, got);
		cr_assert_not_null(strstr(got, "<title>spaced console</title>"),
		    "%s answered %s", get, got);
		free(got);
	}
	cr_assert(line_after(text, "Admin token:", data, sizeof(data)));
	cr_assert_not_null(strstr(data, dir),
	    "the token is not in the data "
	    "dir: %s",
	    data);
	cr_assert(line_after(text, "Stop:", ctl, sizeof(ctl)));
	cr_assert_not_null(strstr(ctl, "Ctrl-C"), "%s", ctl);

	/* The curl command, as printed, lists default's Spaces. */
	cr_assert(line_after(text, "curl ", curl, sizeof(curl)), "%s", text);
	{
		const char *const argv[] = {"bash", "-c", curl, NULL};
		json_t *body;
		char *got;

		st = run(repo, argv, cmd_out, COMMAND_WAIT_MS);
		got = slurp(cmd_out);
		cr_assert(
		    WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s", curl, got);
		body = json_loads(got, 0, NULL);
		cr_assert(json_is_array(json_object_get(body, "data")),
		    "%s answered %s", curl, got);
		json_decref(body);
		free(got);
	}

	/* spacectl's line is printed exactly when it is built, and works. */
	snprintf(spacectl, sizeof(spacectl), "%s/spacectl", SPACED_BIN_DIR);
	has_ctl = access(spacectl, X_OK) == 0;
	snprintf(spacectl, sizeof(spacectl), "%s/spacectl ", SPACED_BIN_DIR);
	cr_assert_eq(line_with(text, spacectl, ctl, sizeof(ctl)), has_ctl,
	    "spacectl %s built, and the block %s:\n%s",
	    has_ctl ? "is" : "is not",
	    has_ctl ? "has no line for it" : "names it", text);
	cr_assert(
	    has_ctl || strstr(strstr(text, "\nTry it:\n"), "spacectl") == NULL,
	    "a line names spacectl, which is not built:\n%s", text);
	if (has_ctl) {
		const char *const argv[] = {"bash", "-c", ctl, NULL};
		char *got;

		st = run(repo, argv, cmd_out, COMMAND_WAIT_MS);
		got = slurp(cmd_out);
		cr_assert(
		    WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s", ctl, got);
		free(got);
	}
	free(text);
	readme_walkthrough(dir, repo, port);

	/* Stopped as Ctrl-C would, the whole group goes within the bound. */
	cr_assert_eq(kill(-run_group, SIGTERM), 0);
	cr_assert_eq(tk_proc_wait(&mk, STOP_WAIT_MS, &st), 0,
	    "make run still runs %d ms after SIGTERM", STOP_WAIT_MS);
	cr_assert(tk_wait_until(group_gone, &run_group, STOP_WAIT_MS),
	    "processes of make run remain %d ms after SIGTERM", STOP_WAIT_MS);
	run_group = 0;
	tk_rmrf(dir);
}
