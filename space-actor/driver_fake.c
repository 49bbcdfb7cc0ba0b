/*
 * driver_fake.c: the deterministic runtime for tests and benchmarks.
 *
 * Behaviour by capability name (etc/bundles/fake.json declares them):
 *   sleep {ms}           waits ms, cancellable
 *   fail {code, message} fails with that code (runtime_error if unknown)
 *   crash {}             aborts the actor process
 *   leak {}              returns canary secrets, for the redactor
 *   big {}               returns more than CM_RESULT_MAX bytes
 *   screenshot {...}     returns a constant 3x2 PNG as its artifact, with
 *                        the result the managed driver gives
 *   anything else        waits config.latency_ms, returns
 *                        {"ok": true, "capability": NAME}; upload among
 *                        them, once the actor has fetched its files
 *                        (the fake takes none: upload_dir is "")
 * A reset after a cancel takes config.reset_ms (default 0: at once), as a
 * browser's does: until then the runtime is not at rest.
 * With config.log_path set, every start and end is appended there as one
 * JSON line with a monotonic timestamp, for tests to read.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "driver.h"
#include "log.h"

struct act_driver {
	const struct act_env *env;
	int64_t latency_ms;
	char log_path[CM_PATH_MAX];
	bool busy;
	int64_t due_ms; /* when the call in progress finishes */
	int64_t reset_ms;
	bool cancelled; /* a call was abandoned: a reset has work */
	bool resetting; /* until reset_due_ms */
	int64_t reset_due_ms;
	char space_id[CM_ID_MAX + 1];
	char task_id[CM_ID_MAX + 1];
	char request_id[CM_ID_MAX + 1];
	char capability[CM_CAPABILITY_MAX + 1];
	struct act_outcome ready; /* the outcome, once due */
};

/* One line, one write(2) with O_APPEND: lines from many actors interleave
 * whole. */
static void
fake_log(
    struct act_driver *d, const char *ev, const char *outcome, bool cleanup)
{
	json_t *o;
	char *line;
	int fd;

	if (d->log_path[0] == '\0')
		return;
	o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:s, s:s, s:b}", "ev", ev,
	    "t_ns", (json_int_t)cm_mono_ns(), "space_id", d->space_id,
	    "task_id", d->task_id, "request_id", d->request_id, "capability",
	    d->capability, "outcome", outcome ? outcome : "", "cleanup",
	    cleanup);
	line = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (line == NULL)
		return;
	fd = open(d->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		size_t n = strlen(line);
		line[n] = '\n';
		if (write(fd, line, n + 1) < 0)
			cm_warn("fake: log");
		close(fd);
	}
	free(line);
}

static int
fake_open(const struct act_env *env, struct act_driver **out, char *err,
    size_t errlen)
{
	struct act_driver *d;
	const json_t *v;

	if (!env->cfg->allow_fake_driver) {
		snprintf(err, errlen,
		    "the fake driver is not allowed here "
		    "(allow_fake_driver = false)");
		return -1;
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->env = env;
	snprintf(d->space_id, sizeof(d->space_id), "%s", env->space_id);
	if ((v = json_object_get(env->config, "latency_ms")) != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > CM_TIMEOUT_MAX_S * 1000) {
			snprintf(err, errlen, "config latency_ms must be 0..%d",
			    CM_TIMEOUT_MAX_S * 1000);
			free(d);
			return -1;
		}
		d->latency_ms = json_integer_value(v);
	}
	if ((v = json_object_get(env->config, "reset_ms")) != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > CM_PAGE_RESET_MS) {
			snprintf(err, errlen, "config reset_ms must be 0..%d",
			    CM_PAGE_RESET_MS);
			free(d);
			return -1;
		}
		d->reset_ms = json_integer_value(v);
	}
	if ((v = json_object_get(env->config, "log_path")) != NULL) {
		if (!json_is_string(v) ||
		    (size_t)snprintf(d->log_path, sizeof(d->log_path), "%s",
		        json_string_value(v)) >= sizeof(d->log_path)) {
			snprintf(err, errlen, "config log_path must be a path");
			free(d);
			return -1;
		}
	}
	*out = d;
	return 0;
}

/*
 * Canaries for the redactor.  The patterned ones (a cookie, a bearer
 * token, token=, URL userinfo) sit under harmless keys; the instance's own
 * secrets (endpoint, profile, every string of its config) are echoed in a
 * plain list, where only the literal-secret rule can find them.
 */
static char *
leak_result(const struct act_env *env)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "headers",
	    "Cookie: session=fake-cookie-canary-7f3a; theme=dark", "auth",
	    "Authorization: Bearer fake-bearer-canary-91c2", "url",
	    "https://example.test/cb?token=fake-token-canary-55e1&x=1", "link",
	    "https://fakeuser:fake-pass-canary-0b9d@example.test/");
	json_t *echo = json_array();
	const char *key;
	json_t *v;
	char *s;

	if (o == NULL || echo == NULL) {
		json_decref(o);
		json_decref(echo);
		return NULL;
	}
	if (env->endpoint != NULL)
		json_array_append_new(echo, json_string(env->endpoint));
	if (env->profile != NULL)
		json_array_append_new(echo, json_string(env->profile));
	json_object_foreach(
	    (json_t *)env->config, key, v) if (json_is_string(v))
	    json_array_append_new(echo, json_string(json_string_value(v)));
	json_object_set_new(o, "echo", echo);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static char *
big_result(void)
{
	size_t n = CM_RESULT_MAX + 4096;
	char *fill = malloc(n + 1);
	json_t *o;
	char *s;

	if (fill == NULL)
		return NULL;
	memset(fill, 'x', n);
	fill[n] = '\0';
	o = json_pack("{s:s}", "blob", fill);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	free(fill);
	return s;
}

/* A real PNG, 3x2 pixels, so the artifact path can be checked end to end
 * without a browser. */
static const unsigned char fake_png[] = {0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a,
    0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
    0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0x12,
    0x16, 0xf1, 0x4d, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x78,
    0xda, 0x63, 0xf8, 0xcf, 0xc0, 0xc0, 0x00, 0xc1, 0x70, 0x16, 0x00, 0x3b,
    0xd8, 0x05, 0xfb, 0x36, 0x11, 0x98, 0xea, 0x00, 0x00, 0x00, 0x00, 0x49,
    0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

static void
fake_screenshot(struct act_outcome *o)
{
	json_t *r;

	if ((o->artifact = malloc(sizeof(fake_png))) == NULL)
		return;
	memcpy(o->artifact, fake_png, sizeof(fake_png));
	o->artifact_len = sizeof(fake_png);
	snprintf(
	    o->artifact_name, sizeof(o->artifact_name), "%s", "screenshot.png");
	o->artifact_mime = "image/png";
	r = json_pack("{s:s, s:s, s:i, s:i, s:I}", "artifact", "screenshot.png",
	    "mime", "image/png", "width", 3, "height", 2, "bytes",
	    (json_int_t)sizeof(fake_png));
	o->result = r ? json_dumps(r, JSON_COMPACT) : NULL;
	json_decref(r);
}

static int
fake_start(struct act_driver *d, const struct act_call *call)
{
	const char *cap = call->capability;
	struct act_outcome *o = &d->ready;
	int64_t now = cm_mono_ms();

	memset(o, 0, sizeof(*o));
	snprintf(d->task_id, sizeof(d->task_id), "%s", call->task_id);
	snprintf(d->request_id, sizeof(d->request_id), "%s", call->request_id);
	snprintf(d->capability, sizeof(d->capability), "%s", cap);
	d->busy = true;
	d->due_ms = now;
	fake_log(d, "start", NULL, false);
	/* A call that comes while a reset runs waits for it. */
	if (d->resetting)
		now = d->reset_due_ms;

	if (strcmp(cap, "sleep") == 0) {
		d->due_ms =
		    now + json_integer_value(json_object_get(call->args, "ms"));
		o->result = strdup("{\"slept\":true}");
	} else if (strcmp(cap, "fail") == 0) {
		const char *code =
		    json_string_value(json_object_get(call->args, "code"));
		const char *msg =
		    json_string_value(json_object_get(call->args, "message"));
		enum cm_err e = cm_err_from_code(code);

		o->err =
		    e == CM_ERR__COUNT || e == CM_OK ? CM_E_RUNTIME_ERROR : e;
		snprintf(o->message, sizeof(o->message), "%s",
		    msg ? msg : "the fake runtime failed as asked");
	} else if (strcmp(cap, "crash") == 0) {
		/* What a runtime crash looks like from outside: no outcome. */
		abort();
	} else if (strcmp(cap, "leak") == 0) {
		o->result = leak_result(d->env);
	} else if (strcmp(cap, "big") == 0) {
		o->result = big_result();
	} else if (strcmp(cap, "screenshot") == 0) {
		fake_screenshot(o);
	} else {
		json_t *r = json_pack("{s:b, s:s}", "ok", 1, "capability", cap);

		d->due_ms = now + d->latency_ms;
		o->result = r ? json_dumps(r, JSON_COMPACT) : NULL;
		json_decref(r);
	}
	if (o->err == CM_OK && o->result == NULL) {
		o->err = CM_E_RUNTIME_ERROR;
		snprintf(o->message, sizeof(o->message), "out of memory");
	}
	return 0;
}

static int
fake_pollfds(
    struct act_driver *d, struct pollfd *fds, int max, int64_t *wake_ms)
{
	(void)fds;
	(void)max;
	*wake_ms = d->resetting ? d->reset_due_ms : d->busy ? d->due_ms : -1;
	return 0;
}

static enum act_state
fake_step(struct act_driver *d, const struct pollfd *fds, int nfds,
    struct act_outcome *out)
{
	(void)fds;
	(void)nfds;
	if (d->resetting) {
		if (cm_mono_ms() < d->reset_due_ms)
			return ACT_PENDING;
		d->resetting = false;
		/* The cleanup is done by the time this line is written. */
		fake_log(d, "end", "cancelled", true);
		memset(out, 0, sizeof(*out));
		return ACT_CLEAN;
	}
	if (!d->busy || cm_mono_ms() < d->due_ms)
		return ACT_PENDING;
	d->busy = false;
	*out = d->ready;
	memset(&d->ready, 0, sizeof(d->ready));
	fake_log(d, "end", out->err == CM_OK ? "completed" : "failed", false);
	return ACT_DONE;
}

static int
fake_cancel(struct act_driver *d)
{
	if (!d->busy)
		return 0;
	d->busy = false;
	free(d->ready.result);
	free(d->ready.artifact);
	memset(&d->ready, 0, sizeof(d->ready));
	if (d->reset_ms == 0)
		fake_log(d, "end", "cancelled", true); /* cleaned up now */
	else
		d->cancelled = true;
	return 0;
}

static int
fake_reset(struct act_driver *d)
{
	if (!d->cancelled)
		return 0;
	d->cancelled = false;
	d->resetting = true;
	d->reset_due_ms = cm_mono_ms() + d->reset_ms;
	return 1;
}

static void
fake_close(struct act_driver *d)
{
	if (d == NULL)
		return;
	fake_cancel(d);
	if (d->cancelled || d->resetting) /* torn down: clean by now */
		fake_log(d, "end", "cancelled", true);
	free(d);
}

/* No page reads files: the actor only fetches an upload's. */
static int
fake_upload_dir(struct act_driver *d, char *dir, size_t len)
{
	(void)d;
	if (len == 0)
		return -1;
	dir[0] = '\0';
	return 0;
}

const struct act_driver_ops act_driver_fake = {
    .open = fake_open,
    .start = fake_start,
    .pollfds = fake_pollfds,
    .step = fake_step,
    .cancel = fake_cancel,
    .reset = fake_reset,
    .close = fake_close,
    .upload_dir = fake_upload_dir,
};
