/*
 * libFuzzer target for everything that judges outside input as text: the
 * strict JSON parser, manifest, args schema (a fixed manifest's and the
 * shipped ones') and network policy checks, URL host extraction and the
 * redactor.  A crash, leak or sanitizer report is a finding; so is a
 * redaction that leaves a secret planted anywhere in the input.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capability.h"
#include "json.h"
#include "redact.h"

static const char manifest[] =
    "{\"name\":\"fz\",\"version\":\"1\",\"capabilities\":["
    "{\"name\":\"nav\",\"network\":true,\"args\":{\"type\":\"object\","
    "\"additionalProperties\":false,\"required\":[\"url\"],\"properties\":{"
    "\"url\":{\"type\":\"string\",\"format\":\"http-url\",\"maxLength\":2048},"
    "\"n\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":10},"
    "\"k\":{\"type\":\"string\",\"enum\":[\"a\",\"b\"]},"
    "\"l\":{\"type\":\"array\",\"maxItems\":4,\"items\":{\"type\":\"boolean\"}}"
    "}}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The shipped manifests, whose schemas use every keyword of the subset
 * (oneOf, number, minLength...) that the one above does not. */
static const char *const shipped[] = {SPACED_SOURCE_DIR
    "/etc/bundles/browser.json",
    SPACED_SOURCE_DIR "/etc/bundles/fake.json"};
#define N_SHIPPED (sizeof(shipped) / sizeof(shipped[0]))

static struct cm_bundle *
load_bundle(const char *path)
{
	static char text[CM_MANIFEST_MAX + 1];
	struct cm_bundle *b = NULL;
	char err[256];
	size_t n;
	FILE *f = fopen(path, "r");

	if (f == NULL)
		abort();
	n = fread(text, 1, sizeof(text), f);
	fclose(f);
	if (cm_bundle_parse(text, n, &b, err, sizeof(err)) != 0)
		abort();
	return b;
}

/* args against every capability of the shipped bundles: a verdict, and a
 * refusal says where. */
static void
check_shipped(const json_t *args)
{
	static struct cm_bundle *b[N_SHIPPED];
	char err[256];

	for (size_t i = 0; i < N_SHIPPED; i++) {
		if (b[i] == NULL)
			b[i] = load_bundle(shipped[i]);
		for (size_t k = 0; k < b[i]->n_caps; k++) {
			enum cm_err e;

			err[0] = '\0';
			e = cm_capability_check_args(
			    &b[i]->caps[k], args, err, sizeof(err));
			if (e != CM_OK && (e != CM_E_INVALID_ARGS || !err[0]))
				abort();
		}
	}
}

#define SECRET "planted-secret-4242"

/* A planted literal secret never survives redaction, as text or as a
 * runtime's result. */
static void
redact_checked(const char *text, size_t size, const struct cm_secrets *sec)
{
	char *s = cm_redact_text(text, size, sec);

	if (s != NULL && strstr(s, SECRET) != NULL)
		abort();
	free(s);
	s = cm_redact_result(text, size, sec);
	if (s != NULL && strstr(s, SECRET) != NULL)
		abort();
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cm_bundle *bundle;
	const char *text = (const char *)data;
	struct cm_bundle *b = NULL;
	struct cm_policy pol;
	struct cm_secrets sec = {0};
	char err[256], host[CM_HOST_MAX + 1], *s, *z;
	json_t *v = NULL;

	if (bundle == NULL && cm_bundle_parse(manifest, strlen(manifest),
	                          &bundle, err, sizeof(err)) != 0)
		abort();
	if ((z = malloc(size + 1)) == NULL)
		return 0;
	memcpy(z, data, size);
	z[size] = '\0';

	if (cm_json_parse(text, size, CM_BODY_MAX, CM_JSON_DEPTH_MAX, &v, err,
	        sizeof(err)) == 0) {
		const char *g[] = {"nav"};

		cm_capability_check(bundle, g, 1, "nav", v, err, sizeof(err));
		if (json_is_object(v))
			check_shipped(v);
		cm_redact_json(v, NULL);
		s = cm_bound_json(v, CM_RESULT_MAX);
		free(s);
		json_decref(v);
	}
	if (cm_bundle_parse(text, size, &b, err, sizeof(err)) == 0)
		cm_bundle_free(b);
	cm_policy_parse(text, size, &pol, err, sizeof(err));
	cm_url_host(z, host, sizeof(host));
	cm_policy_check_url(&pol, z);

	cm_secrets_add(&sec, SECRET);
	redact_checked(text, size, &sec);
	free(z);
	/* Planted where the first byte says: inside a string, a key, a URL,
	 * a header value, wherever the input puts it. */
	if (size > 0 && (z = malloc(size + sizeof(SECRET))) != NULL) {
		size_t at = data[0] % (size + 1), n = sizeof(SECRET) - 1;

		memcpy(z, data, at);
		memcpy(z + at, SECRET, n);
		memcpy(z + at + n, data + at, size - at);
		redact_checked(z, size + n, &sec);
		free(z);
	}
	return 0;
}
