/*
 * test_browser_quiet.c: a managed browser asks for no host its pages do
 * not name.  Chromium's own services (sign-in's account list, autofill's
 * form queries, the network time, the component updater) would go out
 * through the Space's egress proxy: refused, they fill the Space's log
 * with network_blocked events; under a policy that allows every host,
 * they would leave the machine.
 *
 * The managed driver (space-actor/driver_managed.c) runs here as the
 * actor runs it, behind the actor's own egress proxy with the open policy
 * (an empty allow_hosts: every host), over a session on the page server
 * of pages.h, which names only 127.0.0.1: navigate, type and submit a
 * search form, type into the fields of a long form and press Enter, sign
 * in with a password, snapshot after each, rest, and close.  The proxy's
 * observer (act_egress_observe) records every request's host and refuses
 * each that is not 127.0.0.1 before anything resolves or connects for it:
 * whatever the browser asks for, nothing leaves this machine, and the DNS
 * server the proxy is given is a socket of the test's own on 127.0.0.1
 * that never answers.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "capability.h"
#include "clock.h"
#include "driver.h"
#include "driver_fixture.h"
#include "egress.h"
#include "egress_thread.h"
#include "pages.h"
#include "testkit.h"

#define QUIET_CALL_MS 30000 /* the most one call may take here */
#define QUIET_HOSTS_MAX 64  /* distinct hosts the record keeps */
/*
 * How long the browser is watched at rest once its last page has loaded:
 * the window in which a service that starts with the browser or with a
 * page would ask for its host.  Without their switches, each of
 * Chromium's asked within a second of the launch or of the page's load
 * (sign-in's account list, the network time, the models' manifest,
 * autofill's query) and again with a backoff (at 1, 2.5, 5 and 11 s) as
 * the proxy refused it.  A bound on observation, not on speed: the test
 * fails as soon as a foreign host shows, and passes when none showed in
 * the window; the whole session's record counts, not only the window's.
 */
#define QUIET_WINDOW_MS 8000

/* ---- what the proxy saw */

static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char host[CM_HOST_MAX + 3];
	int port, count;
	int64_t first_ms; /* after the launch */
} seen[QUIET_HOSTS_MAX];
static int n_seen, n_foreign, n_local;
static int64_t launched_ms;

/* The observer: every request's host is recorded; only 127.0.0.1 (the
 * page server, the one host the pages name) goes on. */
static bool
quiet_seen(void *arg, const char *host, uint16_t port)
{
	bool local = strcmp(host, "127.0.0.1") == 0;
	int i;

	(void)arg;
	pthread_mutex_lock(&seen_mu);
	if (local)
		n_local++;
	else
		n_foreign++;
	for (i = 0; i < n_seen; i++)
		if (strcmp(seen[i].host, host) == 0 && seen[i].port == port)
			break;
	if (i == n_seen && n_seen < QUIET_HOSTS_MAX) {
		snprintf(seen[i].host, sizeof(seen[i].host), "%s", host);
		seen[i].port = port;
		seen[i].first_ms = cm_mono_ms() - launched_ms;
		n_seen++;
	}
	if (i < n_seen)
		seen[i].count++;
	pthread_mutex_unlock(&seen_mu);
	return local;
}

/* The foreign hosts seen so far, "host:port xN (first at T ms), ...",
 * into out; returns how many requests asked for them. */
static int
quiet_foreign(char *out, size_t len)
{
	size_t at = 0;
	int n;

	out[0] = '\0';
	pthread_mutex_lock(&seen_mu);
	n = n_foreign;
	for (int i = 0; i < n_seen && at < len; i++) {
		int k;

		if (strcmp(seen[i].host, "127.0.0.1") == 0)
			continue;
		k = snprintf(out + at, len - at,
		    "%s%s:%d x%d (first at %lld ms)", at > 0 ? ", " : "",
		    seen[i].host, seen[i].port, seen[i].count,
		    (long long)seen[i].first_ms);
		at += k > 0 ? (size_t)k : 0;
	}
	pthread_mutex_unlock(&seen_mu);
	return n;
}

static void
expect_quiet(const char *when)
{
	char hosts[4096];

	cr_assert_eq(quiet_foreign(hosts, sizeof(hosts)), 0,
	    "%s, the browser asked for hosts no page named: %s", when, hosts);
}

/* ---- the fixture */

static struct act_egress *eg;
static struct tk_egress_thread eg_thread;
static struct df_world w;
static struct cm_policy policy;
static int dns_fd = -1;

/* A UDP socket on 127.0.0.1 that is never read: the proxy's only DNS
 * server.  "127.0.0.1:<port>" into out. */
static void
dns_sink(char *out, size_t len)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sin);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(
	    (dns_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) >= 0);
	cr_assert_eq(bind(dns_fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(getsockname(dns_fd, (struct sockaddr *)&sin, &sl), 0);
	snprintf(out, len, "127.0.0.1:%d", ntohs(sin.sin_port));
}

static void
setup(void)
{
	static const char open_policy[] =
	    "{\"allow_hosts\": [], \"deny_private_networks\": false}";
	struct act_egress_opts o = {.conns_max = CM_EGRESS_CONNS_DEFAULT,
	    .bytes_per_s = CM_EGRESS_BPS_MAX};
	char err[256], dns[64];

	df_world_setup(&w, "quiet", "0190a0b0-0000-7000-8000-0000000000c1",
	    "0190a0b0-0000-7000-8000-0000000000c2");
	cr_assert_eq(cm_policy_parse(open_policy, strlen(open_policy), &policy,
	                 err, sizeof(err)),
	    0, "%s", err);
	dns_sink(dns, sizeof(dns));
	o.dns = dns;
	cr_assert_eq(act_egress_open(&o, &eg, err, sizeof(err)), 0, "%s", err);
	act_egress_policy(eg, &policy, NULL, NULL);
	act_egress_observe(eg, quiet_seen, NULL);
	/* Stepped in a thread of its own: the actor steps it in its loop,
	 * beside the driver. */
	cr_assert_eq(tk_egress_thread_start(&eg_thread, eg), 0);
	w.env.policy = &policy;
	w.env.egress = eg;
}

static void
teardown(void)
{
	tk_egress_thread_stop(&eg_thread);
	act_egress_close(eg);
	close(dns_fd);
	df_world_teardown(&w);
}

TestSuite(browser_quiet, .init = setup, .fini = teardown, .timeout = 240);

/* ---- the session */

static json_t *
call(struct act_driver *d, const char *cap, const char *args)
{
	json_t *res = NULL;
	struct act_outcome o =
	    df_run(&act_driver_managed, d, cap, args, &res, QUIET_CALL_MS);

	cr_assert_eq(
	    o.err, CM_OK, "%s: %s %s", cap, cm_err_code(o.err), o.message);
	expect_quiet(cap);
	return res;
}

static void
navigate(struct act_driver *d, const char *path)
{
	char args[128];

	snprintf(args, sizeof(args), "{\"url\":\"http://127.0.0.1:%d%s\"}",
	    w.port, path);
	json_decref(call(d, "navigate", args));
}

/* The ref of what in a snapshot taken now. */
static void
ref_of(struct act_driver *d, const char *what, char *ref, size_t len)
{
	json_t *res = call(d, "snapshot", "{}");

	df_ref_of(json_string_value(json_object_get(res, "snapshot")), what,
	    ref, len);
	json_decref(res);
}

/* Types text into the field the outline names what (by its ref), and
 * submits its form when submit. */
static void
type_into(struct act_driver *d, const char *what, const char *text, bool submit)
{
	char ref[32], args[256];

	ref_of(d, what, ref, sizeof(ref));
	snprintf(args, sizeof(args), "{\"ref\":\"%s\",\"text\":\"%s\"%s}", ref,
	    text, submit ? ",\"submit\":true" : "");
	json_decref(call(d, "type", args));
}

/* Steps the driver at rest, as the actor's loop does between calls,
 * until ms pass or the browser asks for a foreign host. */
static void
idle(struct act_driver *d, int ms)
{
	char hosts[4096];

	for (int64_t end = cm_mono_ms() + ms; cm_mono_ms() < end;) {
		struct pollfd fds[8];
		struct act_outcome out;
		int64_t wake, now = cm_mono_ms();
		int n = act_driver_managed.pollfds(d, fds, 8, &wake);

		poll(fds, (nfds_t)n,
		    wake < 0 || wake - now > 100 ? 100
		    : wake <= now                ? 0
		                                 : (int)(wake - now));
		memset(&out, 0, sizeof(out));
		cr_assert_eq(
		    act_driver_managed.step(d, fds, n, &out), ACT_PENDING);
		if (quiet_foreign(hosts, sizeof(hosts)) > 0)
			break;
	}
	expect_quiet("at rest");
}

Test(browser_quiet, a_session_asks_for_no_host_its_pages_do_not_name)
{
	struct act_driver *d;
	char err[256];

	launched_ms = cm_mono_ms();
	cr_assert_eq(act_driver_managed.open(&w.env, &d, err, sizeof(err)), 0,
	    "%s", err);

	/* A search form: type into its field and submit. */
	navigate(d, "/");
	type_into(d, "textbox \"Query\"", "spaces", true);
	json_decref(call(d, "wait_for",
	    "{\"text\":\"You searched the site.\",\"timeout_ms\":10000}"));
	cr_assert_eq(tk_pages_hits(w.pages, "/search"), 1);
	json_decref(call(d, "snapshot", "{}"));

	/* A page of many fields (autofill's kind of form): a field, Enter,
	 * and misspelt words in a text area and an editable element (the
	 * spelling checker's). */
	navigate(d, "/controls");
	type_into(d, "textbox \"Name\"", "Ada", false);
	json_decref(call(d, "press", "{\"key\":\"Enter\"}"));
	type_into(d, "textbox \"Note\"", "Teh quick brwn fox", false);
	type_into(d, "textbox \"Bio\"", "Mispeled wrods", false);
	json_decref(call(d, "snapshot", "{}"));

	/* A sign-in form (the password manager's), submitted. */
	navigate(d, "/login");
	type_into(d, "textbox \"User\"", "ada", false);
	type_into(d, "textbox \"Password\"", "correct horse", true);
	json_decref(call(d, "wait_for",
	    "{\"text\":\"You followed the link.\",\"timeout_ms\":10000}"));
	json_decref(call(d, "snapshot", "{}"));

	/* At rest on the loaded page, then the close. */
	idle(d, QUIET_WINDOW_MS);
	act_driver_managed.close(d);
	expect_quiet("by the close");

	/* The record is the proxy's: the pages' own requests went through
	 * it, so an empty record means nothing was asked for, not that
	 * nothing was watched. */
	pthread_mutex_lock(&seen_mu);
	cr_assert_gt(n_local, 0, "the proxy saw none of the pages' requests");
	pthread_mutex_unlock(&seen_mu);
}
