/*
 * test_capability_args.c: the bundle's schema is the one word on what a
 * capability takes.  For every capability of etc/bundles/browser.json,
 * arguments drawn at random from its args schema (and checked valid by
 * the same validator the api uses) are run on the managed driver, on a
 * real Chromium, against pages of the test's own: the runtime never
 * answers invalid_args for them, whatever else it answers, but for a
 * value the page's element itself refuses (a date field given "hello",
 * two options for a select of one), which its message says.  Arguments
 * that name elements of the page (by ref and by selector) act.
 *
 * The draw is seeded (SPACED_ARGS_SEED, default the time; printed), so a
 * failure can be run again.  URLs are drawn on the test's own server
 * only, and waits short, so the draw stays within the schema and on this
 * machine.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capability.h"
#include "driver.h"
#include "driver_fixture.h"
#include "page_fixture.h"
#include "pages.h"
#include "testkit.h"

#define WAIT_MS 30000      /* the most one call may take here */
#define DRAWS 6            /* argument sets per capability */
#define WAIT_DRAWN_MAX 300 /* a drawn timeout_ms, at most */

static struct pf_page f;
static unsigned seed;
static char last[1500]; /* the call before, for a failure's message */

static void
setup(void)
{
	const char *s = getenv("SPACED_ARGS_SEED");

	seed =
	    s != NULL ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
	fprintf(stderr, "test_capability_args: SPACED_ARGS_SEED=%u\n", seed);
	srandom(seed);

	pf_open(&f, "args", "0190a0b0-0000-7000-8000-000000000003", WAIT_MS);
}

static void
teardown(void)
{
	pf_close(&f);
}

TestSuite(capability_args, .init = setup, .fini = teardown, .timeout = 600);

static long
draw(long lo, long hi)
{
	return lo + random() % (hi - lo + 1);
}

/* A string of n printable characters, now and then one of the page's
 * own selectors or words. */
static json_t *
draw_text(long min, long max, const char *const *pool)
{
	char buf[64];
	long n;

	if (pool != NULL && random() % 2 == 0) {
		size_t k = 0;

		while (pool[k] != NULL)
			k++;
		if ((long)strlen(pool[random() % k]) >= min)
			return json_string(pool[random() % k]);
	}
	if (max > (long)sizeof(buf) - 1)
		max = (long)sizeof(buf) - 1;
	n = draw(min, max < min ? min : max);
	for (long i = 0; i < n; i++)
		buf[i] = (char)draw(0x21, 0x7e);
	buf[n] = '\0';
	return json_string(buf);
}

static const char *const selectors[] = {
    "#t", "#a", "#e", "#s", "#c", "body", "h1", "select", NULL};
static const char *const refs[] = {"e1", "e2", "e3", "e4", "e9", NULL};
static const char *const options[] = {"S", "M", "", NULL};
static const char *const keys[] = {
    "a", "Z", "7", "\xc3\xa9", "Enter", "F5", "Tab", " "};

static json_t *draw_args(const json_t *schema);

/* One value drawn from schema s, for the property named name. */
static json_t *
draw_value(const char *name, const json_t *s)
{
	const char *type = json_string_value(json_object_get(s, "type"));
	const json_t *en = json_object_get(s, "enum");
	const char *fmt = json_string_value(json_object_get(s, "format"));
	long lo, hi;

	if (json_is_array(en))
		return json_deep_copy(
		    json_array_get(en, (size_t)random() % json_array_size(en)));
	if (strcmp(type, "boolean") == 0)
		return json_boolean(random() % 2);
	if (strcmp(type, "object") == 0)
		return draw_args(s);
	if (strcmp(type, "array") == 0) {
		json_t *a = json_array();
		long n;

		lo = (long)json_integer_value(json_object_get(s, "minItems"));
		hi = (long)json_integer_value(json_object_get(s, "maxItems"));
		n = draw(lo, hi < lo + 3 ? hi : lo + 3);
		for (long i = 0; i < n; i++)
			json_array_append_new(
			    a, draw_value(name, json_object_get(s, "items")));
		return a;
	}
	if (strcmp(type, "integer") == 0) {
		lo = (long)json_integer_value(json_object_get(s, "minimum"));
		hi = (long)json_integer_value(json_object_get(s, "maximum"));
		if (strcmp(name, "timeout_ms") == 0 && hi > WAIT_DRAWN_MAX)
			hi = WAIT_DRAWN_MAX;
		return json_integer(draw(lo, hi));
	}
	if (strcmp(type, "array") == 0) {
		json_t *a = json_array();

		lo = (long)json_integer_value(json_object_get(s, "minItems"));
		hi = (long)json_integer_value(json_object_get(s, "maxItems"));
		for (long n = draw(lo, hi); n > 0; n--)
			json_array_append_new(
			    a, draw_value(name, json_object_get(s, "items")));
		return a;
	}
	cr_assert_str_eq(type, "string", "%s: a type the draw lacks", name);
	if (fmt != NULL && strcmp(fmt, "file-name") == 0) {
		char file[32];

		snprintf(file, sizeof(file), "f%ld.txt", draw(0, 99));
		return json_string(file);
	}
	if (fmt != NULL) {
		char url[128];

		if (strcmp(fmt, "key") == 0)
			return json_string(keys[random() % 8]);
		cr_assert_str_eq(fmt, "http-url");
		snprintf(url, sizeof(url), "http://127.0.0.1:%d/%s", f.w.port,
		    random() % 2 ? "controls" : "nowhere");
		return json_string(url);
	}
	lo = (long)json_integer_value(json_object_get(s, "minLength"));
	hi = json_object_get(s, "maxLength") != NULL
	         ? (long)json_integer_value(json_object_get(s, "maxLength"))
	         : 40;
	return draw_text(lo, hi,
	    strcmp(name, "selector") == 0 ? selectors
	    : strcmp(name, "ref") == 0    ? refs
	    : strcmp(name, "values") == 0 || strcmp(name, "labels") == 0
	        ? options
	        : NULL);
}

/* Whether name is required by a oneOf branch other than the one taken. */
static bool
of_another_branch(const json_t *one, size_t taken, const char *name)
{
	const json_t *b, *r;
	size_t i, k;

	json_array_foreach(one, i, b)
	{
		if (i == taken)
			continue;
		json_array_foreach(json_object_get(b, "required"), k,
		    r) if (strcmp(json_string_value(r), name) == 0) return true;
	}
	return false;
}

/* Arguments drawn from an object schema. */
static json_t *
draw_args(const json_t *schema)
{
	const json_t *props = json_object_get(schema, "properties");
	const json_t *req = json_object_get(schema, "required");
	const json_t *one = json_object_get(schema, "oneOf");
	size_t taken =
	    json_is_array(one) ? (size_t)random() % json_array_size(one) : 0;
	const json_t *branch =
	    json_is_array(one)
	        ? json_object_get(json_array_get(one, taken), "required")
	        : NULL;
	json_t *args = json_object();
	const char *name;
	const json_t *p;

	json_object_foreach((json_t *)props, name, p)
	{
		bool must = false, other;
		const json_t *r;
		size_t i;

		json_array_foreach(req, i, r) must =
		    must || strcmp(json_string_value(r), name) == 0;
		json_array_foreach(branch, i, r) must =
		    must || strcmp(json_string_value(r), name) == 0;
		other =
		    json_is_array(one) && of_another_branch(one, taken, name);
		if (must || (!other && random() % 2 == 0))
			json_object_set_new(args, name, draw_value(name, p));
	}
	return args;
}

static void
go_to(const char *path)
{
	char args[160];
	struct act_outcome o;

	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d%s\"}",
	    f.w.port, path);
	o = pf_run(&f, "navigate", args, NULL);
	cr_assert_eq(o.err, CM_OK, "seed %u: navigate: %s (after %s)", seed,
	    o.message, last);
}

static char *
read_bundle(size_t *len)
{
	FILE *in = fopen(SPACED_SOURCE_DIR "/etc/bundles/browser.json", "r");
	char *text = malloc(CM_MANIFEST_MAX + 1);

	cr_assert_not_null(in);
	cr_assert_not_null(text);
	*len = fread(text, 1, CM_MANIFEST_MAX, in);
	text[*len] = '\0';
	fclose(in);
	return text;
}

Test(capability_args, no_schema_valid_args_are_refused)
{
	char err[256], *text;
	size_t len;
	struct cm_bundle *b;
	json_t *manifest, *cap;
	size_t i, runs = 0;

	text = read_bundle(&len);
	cr_assert_eq(
	    cm_bundle_parse(text, len, &b, err, sizeof(err)), 0, "%s", err);
	manifest = json_loads(text, 0, NULL);
	cr_assert_not_null(manifest);
	json_array_foreach(json_object_get(manifest, "capabilities"), i, cap)
	{
		const char *name =
		    json_string_value(json_object_get(cap, "name"));
		const struct cm_capability *c = cm_bundle_find(b, name);

		for (int k = 0; k < DRAWS; k++) {
			json_t *args = draw_args(json_object_get(cap, "args"));
			char *as = json_dumps(args, JSON_COMPACT);
			struct act_outcome o;

			cr_assert_eq(
			    cm_capability_check_args(c, args, err, sizeof(err)),
			    CM_OK, "the draw is not schema-valid: %s %s: %s",
			    name, as, err);
			/* Each draw on the same page, with a snapshot's
			 * refs to name. */
			go_to("/controls");
			pf_run(&f, "snapshot", "{}", NULL);
			o = pf_run(&f, name, as, NULL);
			snprintf(last, sizeof(last), "%s %.400s: %s", name, as,
			    o.message);
			cr_assert(o.err != CM_E_INVALID_ARGS ||
			              (strstr(o.message, "element") != NULL &&
			                  strstr(o.message, "refuses") != NULL),
			    "seed %u: %s %s: invalid_args (%s)", seed, name, as,
			    o.message);
			free(o.artifact);
			free(as);
			json_decref(args);
			runs++;
		}
	}
	cr_assert_gt(runs, 0);
	json_decref(manifest);
	cm_bundle_free(b);
	free(text);
}

/* Arguments that name what the page has act on it. */
Test(capability_args, args_that_name_the_page_act)
{
	static const struct {
		const char *cap, *args;
	} acts[] = {
	    {"click", "{\"selector\":\"#c\"}"},
	    {"type", "{\"selector\":\"#t\",\"text\":\"x\"}"},
	    {"type", "{\"ref\":\"REF\",\"text\":\"x\"}"},
	    {"press", "{\"key\":\"Tab\"}"},
	    {"wait_for", "{\"selector\":\"#t\",\"timeout_ms\":1000}"},
	    {"wait_for", "{\"ref\":\"REF\",\"timeout_ms\":1000}"},
	    {"wait_for", "{\"text\":\"quarter\",\"timeout_ms\":1}"},
	    {"extract_text", "{\"selector\":\"#echo\"}"},
	    {"extract_text", "{\"ref\":\"REF\"}"},
	    {"scroll", "{\"dy\":10}"},
	    {"snapshot", "{\"max_chars\":100}"},
	    {"screenshot", "{\"format\":\"jpeg\",\"quality\":50}"},
	    {"back", "{}"},
	    {"fill", "{\"selector\":\"#t\",\"value\":\"x\"}"},
	    {"fill", "{\"ref\":\"REF\",\"value\":\"\"}"},
	    {"select_option", "{\"selector\":\"#s\",\"labels\":[\"M\"]}"},
	    {"check", "{\"selector\":\"#c\",\"checked\":true}"},
	};

	for (size_t i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		struct act_outcome o;
		bool want_ok = strstr(acts[i].args, "quarter") == NULL;

		char args[128], ref[32];
		const char *at = strstr(acts[i].args, "REF");
		json_t *res;

		go_to("/");
		go_to("/controls");
		o = pf_run(&f, "snapshot", "{}", &res);
		cr_assert_eq(o.err, CM_OK);
		/* REF: the ref of the page's Name field. */
		df_ref_of(json_string_value(json_object_get(res, "snapshot")),
		    "textbox \"Name\"", ref, sizeof(ref));
		json_decref(res);
		if (at != NULL)
			snprintf(args, sizeof(args), "%.*s%s%s",
			    (int)(at - acts[i].args), acts[i].args, ref,
			    at + 3);
		else
			snprintf(args, sizeof(args), "%s", acts[i].args);
		o = pf_run(&f, acts[i].cap, args, NULL);
		free(o.artifact);
		if (want_ok)
			cr_assert_eq(o.err, CM_OK, "%s %s: %s (%s)",
			    acts[i].cap, args, cm_err_code(o.err), o.message);
		else
			cr_assert_eq(o.err, CM_E_ELEMENT_NOT_FOUND, "%s %s: %s",
			    acts[i].cap, acts[i].args, cm_err_code(o.err));
	}
}
