/*
 * bench_world.c: the world and the direct client's page of the benches
 * on a real Chromium.
 */
#include "bench_world.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

const char *
bw_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The bundle id of the browser bundle into out. */
static int
browser_bundle(struct bw_world *w, char *out, size_t len)
{
	char *text = NULL;
	json_t *res, *v;
	size_t i;
	int rc = -1;

	if (tk_http(&w->p, "GET", "/api/v1/admin/runtime-bundles", w->admin,
	        NULL, NULL, &text) != 200)
		return tk_fail(w->who, "GET runtime-bundles failed");
	res = json_loads(text, 0, NULL);
	json_array_foreach(json_object_get(res, "data"), i, v)
	{
		const char *name = bw_str(v, "name");
		const char *id = bw_str(v, "bundle_id");

		if (name != NULL && id != NULL &&
		    strcmp(name, "browser") == 0 && strlen(id) < len) {
			snprintf(out, len, "%s", id);
			rc = 0;
		}
	}
	json_decref(res);
	free(text);
	return rc == 0 ? 0 : tk_fail(w->who, "no browser bundle");
}

int
bw_begin(struct bw_world *w, const char *who, const char *tag, bool own_tmpdir,
    struct tk_pages **pages, char dir[BW_DIR_MAX], char out[BW_OUT_MAX])
{
	int port;

	w->who = who;
	if (access(TK_CHROMIUM, X_OK) != 0) {
		tk_fail(who, "no chromium at %s", TK_CHROMIUM);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((*pages = tk_pages_start(&port)) == NULL) {
		tk_fail(who, "the page server did not start");
		return 1;
	}
	snprintf(w->url, sizeof(w->url), "http://127.0.0.1:%d/", port);
	tk_tmpdir(dir, BW_DIR_MAX, tag);
	snprintf(out, BW_OUT_MAX, "%s/spaced.out", dir);
	if (own_tmpdir && setenv("TMPDIR", dir, 1) != 0) {
		tk_fail(who, "cannot set TMPDIR");
		tk_pages_stop(*pages);
		tk_rmrf(dir);
		return 1;
	}
	return 0;
}

int
bw_instances(struct bw_world *w, int n, char ids[][CM_ID_MAX + 1])
{
	char body[512], name[48], bundle[CM_ID_MAX + 1], bind[CM_ID_MAX + 1];

	if (browser_bundle(w, bundle, sizeof(bundle)) != 0)
		return -1;
	for (int i = 0; i < n; i++, w->n_inst++) {
		/* Instance names are unique. */
		if (w->n_inst == 0)
			snprintf(name, sizeof(name), "chromium-bench");
		else
			snprintf(
			    name, sizeof(name), "chromium-bench-%d", w->n_inst);
		snprintf(body, sizeof(body),
		    "{\"name\": \"%s\", \"driver\": \"managed\", "
		    "\"bundle_id\": \"%s\", \"network_policy\": "
		    "{\"allow_hosts\": [\"127.0.0.1\"], "
		    "\"deny_private_networks\": false}}",
		    name, bundle);
		if (tk_http_created(&w->p, "/api/v1/admin/browser-instances",
		        w->admin, body, "browser_instance_id", ids[i],
		        CM_ID_MAX + 1) != 0)
			return -1;
		snprintf(body, sizeof(body),
		    "{\"workspace_id\": \"%s\", \"browser_instance_id\": "
		    "\"%s\"}",
		    w->ws, ids[i]);
		if (tk_http_created(&w->p, "/api/v1/admin/bindings", w->admin,
		        body, "binding_id", bind, sizeof(bind)) != 0)
			return -1;
	}
	return 0;
}

int
bw_setup(struct bw_world *w)
{
	char path[256];
	struct tk_world tw;
	nng_socket s;
	int rc;

	if (!tk_http_ready(&w->p, BW_READY_MS))
		return tk_fail(w->who, "the api never answered");
	if (cm_rpc_open(&s, w->p.store_url) != 0)
		return tk_fail(w->who, "cannot open %s", w->p.store_url);
	rc = tk_provision(s, &tw, 1);
	nng_close(s);
	if (rc != 0)
		return tk_fail(w->who, "provisioning failed");
	snprintf(w->ws, sizeof(w->ws), "%s", tw.workspace_id);
	snprintf(w->owner, sizeof(w->owner), "%s", tw.operator_id);
	if (!tk_admin_token(&w->p, w->admin, sizeof(w->admin), BW_READY_MS))
		return tk_fail(
		    w->who, "no working admin token in %s", w->p.dir);
	snprintf(path, sizeof(path), "/api/v1/admin/principals/%s/tokens",
	    tw.operator_id);
	if (tk_http_created(&w->p, path, w->admin, NULL, "token", w->user,
	        sizeof(w->user)) != 0)
		return -1;
	return bw_instances(w, 1, &w->inst);
}

int
bw_space_on(struct bw_world *w, const char *inst, const char *caps,
    char space[CM_ID_MAX + 1])
{
	char path[256], body[512];

	snprintf(
	    path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces", w->ws);
	snprintf(body, sizeof(body),
	    "{\"browser_instance_id\": \"%s\", \"owner_type\": \"operator\", "
	    "\"owner_id\": \"%s\", \"granted_capabilities\": %s}",
	    inst, w->owner, caps);
	return tk_http_created(
	    &w->p, path, w->user, body, "space_id", space, CM_ID_MAX + 1);
}

int
bw_space(struct bw_world *w, const char *caps, char space[CM_ID_MAX + 1])
{
	return bw_space_on(w, w->inst, caps, space);
}

int
bw_task(struct bw_world *w, const char *space, const char *rid, const char *cap,
    const char *args, json_t **data)
{
	char path[512], body[512], *text = NULL;
	json_t *res;
	const char *status;
	int code, rc;

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/tasks?wait=30", w->ws,
	    space);
	snprintf(body, sizeof(body),
	    "{\"request_id\": \"%s\", \"capability\": \"%s\", \"args\": %s}",
	    rid, cap, args);
	code = tk_http(&w->p, "POST", path, w->user, body, NULL, &text);
	res = text ? json_loads(text, 0, NULL) : NULL;
	status = bw_str(json_object_get(res, "data"), "status");
	rc = code == 200 && status != NULL && strcmp(status, "completed") == 0
	         ? 0
	         : tk_fail(w->who, "%s: %d %s", cap, code, text ? text : "");
	if (rc == 0 && data != NULL)
		*data = json_incref(json_object_get(res, "data"));
	json_decref(res);
	free(text);
	return rc;
}

struct bw_closed {
	struct bw_world *w;
	const char *space;
};

static bool
space_reads_closed(void *arg)
{
	struct bw_closed *c = arg;
	char path[256], *text = NULL;
	json_t *res;
	const char *status;
	bool closed;

	snprintf(path, sizeof(path), "/api/v1/workspaces/%s/browser-spaces/%s",
	    c->w->ws, c->space);
	if (tk_http(&c->w->p, "GET", path, c->w->user, NULL, NULL, &text) !=
	    200) {
		free(text);
		return false;
	}
	res = json_loads(text, 0, NULL);
	status = bw_str(json_object_get(res, "data"), "status");
	closed = status != NULL && strcmp(status, "closed") == 0;
	json_decref(res);
	free(text);
	return closed;
}

int
bw_close(struct bw_world *w, const char *space)
{
	char path[256];
	int code;

	snprintf(path, sizeof(path),
	    "/api/v1/workspaces/%s/browser-spaces/%s/close?wait=30", w->ws,
	    space);
	code = tk_http(&w->p, "POST", path, w->user, NULL, NULL, NULL);
	return code / 100 == 2 ? code : tk_fail(w->who, "close: %d", code);
}

int
bw_wait_closed(struct bw_world *w, const char *space)
{
	struct bw_closed c = {w, space};

	if (!tk_wait_until(space_reads_closed, &c, BW_STEP_MS))
		return tk_fail(w->who, "the Space %s never closed", space);
	return 0;
}

int
bw_standby_on(struct bw_world *w, const char *inst, int settle_ms)
{
	struct timespec ts = {settle_ms / 1000, (settle_ms % 1000) * 1000000L};
	int64_t end = cm_mono_ms() + BW_STEP_MS;
	char want[CM_ID_MAX + 16];
	pid_t actor = 0;

	snprintf(want, sizeof(want), " --standby=%s", inst);
	while (cm_mono_ms() < end) {
		struct timespec tick = {0, 5000000L};

		if ((actor = tk_child_with(w->p.pid, want, NULL, 0)) > 0 &&
		    tk_child_with(actor, " --user-data-dir=", NULL, 0) > 0) {
			nanosleep(&ts, NULL);
			return 0;
		}
		nanosleep(&tick, NULL);
	}
	return tk_fail(w->who, "no standby browser came for %s", inst);
}

int
bw_standby_settled(struct bw_world *w, int settle_ms)
{
	return bw_standby_on(w, w->inst, settle_ms);
}

int
bw_page_open(const char *who, struct tk_rig *r, struct bw_page *pg)
{
	json_t *v;

	if ((v = tk_rig_call(r, NULL, "Target.createBrowserContext",
	         json_pack("{s:b}", "disposeOnDetach", 1), BW_STEP_MS)) ==
	        NULL ||
	    bw_str(v, "browserContextId") == NULL)
		return tk_fail(who, "createBrowserContext failed");
	snprintf(pg->ctx, sizeof(pg->ctx), "%s", bw_str(v, "browserContextId"));
	if ((v = tk_rig_call(r, NULL, "Target.createTarget",
	         json_pack("{s:s, s:s}", "url", "about:blank",
	             "browserContextId", pg->ctx),
	         BW_STEP_MS)) == NULL ||
	    bw_str(v, "targetId") == NULL)
		return tk_fail(who, "createTarget failed");
	snprintf(pg->target, sizeof(pg->target), "%s", bw_str(v, "targetId"));
	if ((v = tk_rig_call(r, NULL, "Target.attachToTarget",
	         json_pack("{s:s, s:b}", "targetId", pg->target, "flatten", 1),
	         BW_STEP_MS)) == NULL ||
	    bw_str(v, "sessionId") == NULL)
		return tk_fail(who, "attachToTarget failed");
	snprintf(pg->sid, sizeof(pg->sid), "%s", bw_str(v, "sessionId"));
	if (tk_rig_call(r, pg->sid, "Page.enable", NULL, BW_STEP_MS) == NULL)
		return tk_fail(who, "Page.enable failed");
	return 0;
}

struct act_outcome
bw_driver_call(struct act_driver *d, const char *cap, const char *args_json,
    int wait_ms, char **result)
{
	struct act_call call = {.task_id = "t", .request_id = "r"};
	struct act_outcome out;
	json_t *args = json_loads(args_json, 0, NULL);
	int64_t end = cm_mono_ms() + wait_ms;

	memset(&out, 0, sizeof(out));
	if (result != NULL)
		*result = NULL;
	if (args == NULL) {
		out.err = CM_E_INVALID_ARGS;
		snprintf(out.message, sizeof(out.message), "not JSON: %s",
		    args_json);
		return out;
	}
	call.capability = cap;
	call.args = args;
	call.deadline_ms = end;
	if (act_driver_managed.start(d, &call) != 0) {
		out.err = CM_E_RUNTIME_ERROR;
		snprintf(out.message, sizeof(out.message), "start failed");
		json_decref(args);
		return out;
	}
	for (;;) {
		struct pollfd fds[8];
		int64_t wake, now = cm_mono_ms();
		int n = act_driver_managed.pollfds(d, fds, 8, &wake);

		/* The driver holds its deadline; this bounds a bench whose
		 * driver would not. */
		if (now > end + BW_GRACE_MS) {
			(void)act_driver_managed.cancel(d);
			memset(&out, 0, sizeof(out));
			out.err = CM_E_TASK_TIMEOUT;
			snprintf(out.message, sizeof(out.message),
			    "%s did not end %d ms after its deadline", cap,
			    BW_GRACE_MS);
			break;
		}
		poll(fds, (nfds_t)n,
		    wake < 0      ? 100
		    : wake <= now ? 0
		                  : (int)(wake - now));
		if (act_driver_managed.step(d, fds, n, &out) == ACT_DONE)
			break;
	}
	json_decref(args);
	if (result != NULL)
		*result = out.result;
	else
		free(out.result);
	out.result = NULL;
	free(out.artifact);
	out.artifact = NULL;
	return out;
}

int
bw_driver_navigate(
    const char *who, struct act_driver *d, int port, const char *path)
{
	char args[160];
	struct act_outcome o;

	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d%s\"}",
	    port, path);
	o = bw_driver_call(d, "navigate", args, BW_STEP_MS, NULL);
	if (o.err != CM_OK)
		return tk_fail(who, "navigate %s: %s %s", path,
		    cm_err_code(o.err), o.message);
	return 0;
}

int
bw_with_driver(const char *who, const char *tag,
    int (*fn)(struct act_driver *d, void *arg), void *arg)
{
	struct cm_config cfg;
	struct act_env env;
	struct act_driver *d;
	char dir[128], err[256], tmp[256];
	int rc;

	memset(&cfg, 0, sizeof(cfg));
	memset(&env, 0, sizeof(env));
	tk_tmpdir(dir, sizeof(dir), tag);
	snprintf(
	    tmp, sizeof(tmp), "%s", getenv("TMPDIR") ? getenv("TMPDIR") : "");
	if (setenv("TMPDIR", dir, 1) != 0) {
		tk_rmrf(dir);
		return tk_fail(who, "setenv TMPDIR failed");
	}
	snprintf(cfg.data_dir, sizeof(cfg.data_dir), "%s", dir);
	snprintf(
	    cfg.chromium_path, sizeof(cfg.chromium_path), "%s", TK_CHROMIUM);
	env.space_id = "0190a0b0-0000-7000-8000-000000000004";
	env.instance_id = "0190a0b0-0000-7000-8000-0000000000ad";
	env.driver = CM_DRIVER_MANAGED;
	env.cfg = &cfg;
	if (act_driver_managed.open(&env, &d, err, sizeof(err)) != 0) {
		tk_rmrf(dir);
		rc = tk_fail(who, "open: %s", err);
	} else {
		rc = fn(d, arg);
		act_driver_managed.close(d);
		tk_rmrf(dir);
	}
	if (tmp[0] != '\0')
		setenv("TMPDIR", tmp, 1);
	else
		unsetenv("TMPDIR");
	return rc;
}

const char *
bw_outline(const json_t *data)
{
	return bw_str(json_object_get(data, "result"), "snapshot");
}

int
bw_ref_of(const char *who, const char *outline, const char *what, char *ref,
    size_t len)
{
	const char *line = outline ? strstr(outline, what) : NULL, *r;

	if (line == NULL || (r = strstr(line, "[ref=")) == NULL ||
	    (size_t)(r - line) > strcspn(line, "\n"))
		return tk_fail(who, "no ref on \"%s\" in the snapshot:\n%s",
		    what, outline ? outline : "(none)");
	snprintf(ref, len, "%.*s", (int)strcspn(r + 5, "]"), r + 5);
	return 0;
}

void
bw_load_average(const char *who, const char *when)
{
	char line[128] = "";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f != NULL) {
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		fclose(f);
	}
	printf("%s: load average %s: %.*s\n", who, when,
	    (int)strcspn(line, "\n"), line);
	fflush(stdout);
}

const char *
bw_ratio(int64_t a, int64_t b, char *buf, size_t len)
{
	if (b <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%lld.%03lld", (long long)(a / b),
		    (long long)(a * 1000 / b % 1000));
	return buf;
}
