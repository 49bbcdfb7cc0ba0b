/*
 * test_console_http.c: how spaced-api serves the operator console and the
 * two routes it signs in with.
 *
 * Every file of api/console/ is served at /console/<name> (and index.html
 * at /) byte for byte, with its exact content type and the console's
 * headers (a strict Content-Security-Policy, nosniff, no-referrer,
 * no-cache), and with no token.  Any other name, and any path that tries
 * to leave the table (dot segments, percent-encoded or not), is 404.  A
 * token carried in a query string is never logged.  GET /api/v1/me names
 * the caller and its workspaces; GET .../runtime-bundles gives the
 * bundles of the workspace's bound instances, and only to its members.
 *
 * Requests that must reach the server unnormalised go over a raw socket.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_fixture.h"

#define CONSOLE_DIR SPACED_SOURCE_DIR "/api/console"
#define RAW_MAX (1024 * 1024)

TestSuite(console_http, .timeout = 120);

static const char csp[] =
    "Content-Security-Policy: default-src 'none'; script-src 'self'; "
    "style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n";

/* One request written as is (target unnormalised); the whole answer,
 * head and body, into a malloc'd buffer (caller frees). */
static char *
raw_get(const struct tk_proc *p, const char *target, size_t *len)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	char req[2048], *buf = malloc(RAW_MAX + 1);
	size_t n = 0;
	ssize_t got;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert(fd >= 0 && buf != NULL);
	a.sin_port = htons((uint16_t)p->http_port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, sizeof(req),
	    "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
	    target);
	cr_assert_eq(write(fd, req, strlen(req)), (ssize_t)strlen(req));
	/* The server closes after its answer (Connection: close), and its
	 * own deadlines bound how long that takes. */
	while (n < RAW_MAX && (got = read(fd, buf + n, RAW_MAX - n)) > 0)
		n += (size_t)got;
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int
raw_status(const char *answer)
{
	int status = -1;

	sscanf(answer, "HTTP/1.1 %d", &status);
	return status;
}

/* Asserts target is 404 and serves nothing of the console. */
static void
expect_404(const struct tk_proc *p, const char *target)
{
	size_t len;
	char *a = raw_get(p, target, &len);

	cr_assert_eq(raw_status(a), 404, "%s: %.80s", target, a);
	cr_assert_null(strstr(a, "<html"), "%s served a page", target);
	cr_assert_null(strstr(a, "use strict"), "%s served the script", target);
	free(a);
}

static const char *
type_of(const char *name)
{
	const char *dot = strrchr(name, '.');

	if (dot != NULL && strcmp(dot, ".html") == 0)
		return "text/html; charset=utf-8";
	if (dot != NULL && strcmp(dot, ".js") == 0)
		return "text/javascript; charset=utf-8";
	if (dot != NULL && strcmp(dot, ".css") == 0)
		return "text/css; charset=utf-8";
	return NULL;
}

/* GET target answers 200 with exactly the file at path, of type type,
 * with every console header. */
static void
expect_file(const struct tk_proc *p, const char *target, const char *path,
    const char *type)
{
	size_t len, flen;
	char *a = raw_get(p, target, &len), *file = tk_read_file(path, &flen);
	char want[256], *head;
	const char *body = strstr(a, "\r\n\r\n");

	cr_assert_not_null(file, "cannot read %s", path);
	cr_assert_eq(raw_status(a), 200, "%s: %.80s", target, a);
	cr_assert_not_null(body);
	/* The head alone: the body may say anything. */
	cr_assert_not_null(head = strndup(a, (size_t)(body - a) + 2));
	snprintf(want, sizeof(want), "\r\nContent-Type: %s\r\n", type);
	cr_assert_not_null(strstr(head, want), "%s: no %s", target, want);
	cr_assert_not_null(strstr(head, csp), "%s: no strict CSP", target);
	cr_assert_not_null(
	    strstr(head, "\r\nX-Content-Type-Options: nosniff\r\n"));
	cr_assert_not_null(
	    strstr(head, "\r\nReferrer-Policy: no-referrer\r\n"));
	cr_assert_not_null(strstr(head, "\r\nCache-Control: no-cache\r\n"));
	cr_assert_null(
	    strstr(head, "no-store"), "%s: two cache policies", target);
	snprintf(want, sizeof(want), "\r\nContent-Length: %zu\r\n", flen);
	cr_assert_not_null(strstr(head, want), "%s: no %s", target, want);
	free(head);
	body += 4;
	cr_assert_eq((size_t)(a + len - body), flen, "%s: length", target);
	cr_assert_eq(memcmp(body, file, flen), 0, "%s: not the file", target);
	free(file);
	free(a);
}

Test(console_http, every_file_is_served_with_its_type_and_headers,
    .fini = tk_cleanup)
{
	static struct hf_env e;
	char target[300], path[600];
	struct dirent *d;
	DIR *dir;
	int files = 0;

	hf_start(&e, "console-files", 0, NULL);
	cr_assert_not_null(dir = opendir(CONSOLE_DIR));
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.')
			continue;
		cr_assert_not_null(type_of(d->d_name),
		    "api/console/%s: no type for it", d->d_name);
		snprintf(target, sizeof(target), "/console/%s", d->d_name);
		snprintf(path, sizeof(path), "%s/%s", CONSOLE_DIR, d->d_name);
		expect_file(&e.sf.p, target, path, type_of(d->d_name));
		files++;
	}
	closedir(dir);
	cr_assert_geq(files, 3, "api/console/ holds %d files", files);
	expect_file(&e.sf.p, "/", CONSOLE_DIR "/index.html",
	    "text/html; charset=utf-8");
	/* No token is needed, and a wrong one changes nothing. */
	cr_assert_eq(tk_http(&e.sf.p, "GET", "/console/app.js", "wrong-token",
	                 NULL, NULL, NULL),
	    200);
	/* The API's own answers keep their policy. */
	{
		size_t len;
		char *a = raw_get(&e.sf.p, "/healthz", &len);

		cr_assert_not_null(
		    strstr(a, "\r\nCache-Control: no-store\r\n"));
		free(a);
	}
	hf_stop(&e);
}

Test(console_http, no_other_name_and_no_way_out, .fini = tk_cleanup)
{
	static const char *const targets[] = {
	    "/console/../api/v1/openapi.json",
	    "/console/..%2fapi/v1/openapi.json",
	    "/console/%2e%2e/api/v1/openapi.json",
	    "/console/%2E%2E/%2E%2E/etc/passwd",
	    "/console/..",
	    "/console/.",
	    "/console/",
	    "/console",
	    "/console/app.js/",
	    "/console/app.js/x",
	    "/console/./app.js",
	    "/console//app.js",
	    "/console/app.js%00",
	    "/console/APP.JS",
	    "/console/app.js.bak",
	    "/console/app",
	    "/console/openapi.json",
	    "/console/.htaccess",
	    "/console/console.c",
	    "/console/index.html/../app.js",
	    "/index.html",
	    "/app.js",
	    "//",
	    NULL,
	};
	static struct hf_env e;

	hf_start(&e, "console-names", 0, NULL);
	/* The table is served: the 404s below are refusals, not absence. */
	expect_file(&e.sf.p, "/console/app.js", CONSOLE_DIR "/app.js",
	    "text/javascript; charset=utf-8");
	for (size_t i = 0; targets[i] != NULL; i++)
		expect_404(&e.sf.p, targets[i]);
	/* Another method on a console path is no file either. */
	cr_assert_eq(
	    tk_http(&e.sf.p, "POST", "/console/app.js", NULL, "{}", NULL, NULL),
	    405);
	hf_stop(&e);
}

Test(console_http, a_token_in_the_query_is_not_logged, .fini = tk_cleanup)
{
	static const char *const flags[] = {"--log-level=debug", NULL};
	static struct hf_env e;
	char path[512], *log;
	size_t len;

	hf_start(&e, "console-log", 0, flags);
	/* A token put where it must never go: the console still loads, and
	 * the token reaches no log line. */
	snprintf(path, sizeof(path), "/?token=%s", e.manager);
	cr_assert_eq(
	    tk_http(&e.sf.p, "GET", path, NULL, NULL, NULL, NULL), 200);
	snprintf(
	    path, sizeof(path), "/console/app.js?access_token=%s", e.manager);
	cr_assert_eq(
	    tk_http(&e.sf.p, "GET", path, NULL, NULL, NULL, NULL), 200);
	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces?token=%s", hf_ws(&e),
	    e.manager);
	cr_assert_eq(
	    tk_http(&e.sf.p, "GET", path, NULL, NULL, NULL, NULL), 401);
	/* And one that is sent as it should be. */
	cr_assert_eq(
	    tk_http(&e.sf.p, "GET", "/api/v1/me", e.manager, NULL, NULL, NULL),
	    200);
	cr_assert_not_null(log = tk_read_file(e.sf.out, &len));
	cr_assert_gt(len, 0, "the service logged nothing at all");
	cr_assert_not(hf_contains(log, len, e.manager), "a token was logged");
	free(log);
	hf_stop(&e);
}

Test(console_http, me_names_the_caller_and_its_workspaces, .fini = tk_cleanup)
{
	static struct hf_env e;
	char id[CM_ID_MAX + 1], token[CM_TOKEN_MAX + 1];
	json_t *res = NULL, *m;

	hf_start(&e, "console-me", 0, NULL);
	cr_assert_eq(
	    hf_call(&e, "GET", "/api/v1/me", e.manager, NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "principal_id"), e.sf.w.operator_id);
	cr_assert_str_eq(af_data_str(res, "kind"), "operator");
	cr_assert(json_is_false(json_object_get(af_data(res), "is_admin")));
	m = json_object_get(af_data(res), "memberships");
	cr_assert_eq(json_array_size(m), 1);
	cr_assert_str_eq(
	    sf_str(json_array_get(m, 0), "workspace_id"), hf_ws(&e));
	cr_assert_str_eq(sf_str(json_array_get(m, 0), "role"), "manager");
	json_decref(res);

	/* A principal of no workspace: itself, and no workspace. */
	hf_principal(&e, "runtime_agent", "loner", NULL, id, token);
	cr_assert_eq(hf_call(&e, "GET", "/api/v1/me", token, NULL, &res), 200);
	cr_assert_str_eq(af_data_str(res, "principal_id"), id);
	cr_assert_str_eq(af_data_str(res, "kind"), "runtime_agent");
	cr_assert_eq(
	    json_array_size(json_object_get(af_data(res), "memberships")), 0);
	json_decref(res);

	hf_expect(&e, "GET", "/api/v1/me", NULL, NULL, 401, "unauthenticated");
	hf_expect(&e, "GET", "/api/v1/me", "not-a-token", NULL, 401,
	    "unauthenticated");
	hf_stop(&e);
}

Test(console_http, bundles_of_the_bound_instances_only, .fini = tk_cleanup)
{
	static struct hf_env e;
	char id[CM_ID_MAX + 1], token[CM_TOKEN_MAX + 1], path[256];
	json_t *res = NULL, *list, *caps;

	hf_start(&e, "console-bundles", 1, NULL);
	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/runtime-bundles",
	    hf_ws(&e));
	cr_assert_eq(hf_call(&e, "GET", path, e.manager, NULL, &res), 200);
	list = af_data(res);
	/* The world's instance is on the fake bundle; the browser bundle is
	 * registered too, but no instance of this workspace uses it. */
	cr_assert_eq(
	    json_array_size(list), 1, "%zu bundles", json_array_size(list));
	cr_assert_str_eq(
	    sf_str(json_array_get(list, 0), "bundle_id"), e.sf.w.bundle_id);
	caps = json_object_get(
	    json_object_get(json_array_get(list, 0), "manifest"),
	    "capabilities");
	cr_assert_gt(json_array_size(caps), 0);
	cr_assert_not_null(json_object_get(json_array_get(caps, 0), "args"));
	json_decref(res);

	/* A member sees them; a principal of no workspace does not. */
	hf_principal(&e, "operator", "member", "member", id, token);
	hf_expect(&e, "GET", path, token, NULL, 200, NULL);
	hf_principal(&e, "operator", "outsider", NULL, id, token);
	hf_expect(&e, "GET", path, token, NULL, 403, "forbidden");
	hf_expect(&e, "GET", path, NULL, NULL, 401, "unauthenticated");
	hf_stop(&e);
}
