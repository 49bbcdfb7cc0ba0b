/*
 * test_hosts.c: a supervisor runs only its own host's Spaces.
 *
 * One spaced with host_id host-a on SQLite, and an instance registered
 * on host-b (as a fleet's other host would have it in a shared
 * database): a Space on that instance gets no actor here, by the Space's
 * opening event, by the rescan of a restarted supervisor, or by an actor
 * started by hand; the admin route registers an instance on the host it
 * names, or on the api's own.  tests/integration/pg_two_hosts.c runs two
 * hosts on one PostgreSQL.
 */
#include "space_fixture.h"

#define HOST_A "host-a"

/* spaced on e's directory as host-a, with e's api address. */
static void
start_host_a(struct sf_env *e)
{
	const char *flags[] = {e->listen, "--host-id=" HOST_A, NULL};

	cr_assert_eq(tk_spaced_start_logged(&e->p, e->dir, flags, e->out), 0,
	    "spaced did not start (see %s)", e->out);
	cr_assert_eq(cm_rpc_open(&e->s, e->p.store_url), 0);
}

/* spaced as host-a with n instances of its own, and a Space on an
 * instance of host-b (space_out) with a noop task queued (task_out). */
static void
host_a_with_space_on_b(struct sf_env *e, const char *tag, size_t n,
    char *space_out, char *task_out)
{
	char inst_b[CM_ID_MAX + 1], cfg[300];

	sf_env_init(e, tag);
	start_host_a(e);
	sf_provision(e, n);
	snprintf(cfg, sizeof(cfg), "{\"log_path\": \"%s\"}", e->fake_log);
	cr_assert_eq(
	    tk_instance_on(e->s, &e->w, "fake-of-b", "host-b", cfg, inst_b), 0);
	cr_assert_eq(sf_create(e, inst_b, space_out), CM_OK);
	cr_assert_eq(
	    sf_submit(e, space_out, "b1", "noop", NULL, 0, task_out), CM_OK);
}

/* Host-b's task, still queued: nothing of this host ran it. */
static void
assert_never_ran(struct sf_env *e, const char *space, const char *task)
{
	struct sf_task t;

	sf_task_get(e, space, task, &t);
	cr_assert_str_eq(t.status, "queued", "host-b's task ran on host-a");
	sf_task_free(&t);
	cr_assert_eq(sf_fake_count(e, "start", "space_id", space), 0);
}

Test(hosts, a_space_on_another_hosts_instance_gets_no_actor_here,
    .fini = tk_cleanup)
{
	static struct sf_env e;
	char on_b[CM_ID_MAX + 1], on_a[CM_ID_MAX + 1];
	char task_b[CM_ID_MAX + 1], task_a[CM_ID_MAX + 1];

	/* Opened here, through this host's store: host-b's to run. */
	host_a_with_space_on_b(&e, "hosts", 1, on_b, task_b);
	/* The supervisor takes the store's events in order: once the Space
	 * opened after it has its actor, the first one's event was seen. */
	sf_create_ok(&e, 0, on_a);
	cr_assert_neq(sf_wait_actor(&e, on_a, 0, SF_WAIT_MS), 0);
	cr_assert_eq(sf_submit(&e, on_a, "a1", "noop", NULL, 0, task_a), CM_OK);
	cr_assert(sf_wait_task(&e, on_a, task_a, "completed", SF_WAIT_MS));
	cr_assert_eq(sf_actor_pid(&e, on_b), 0, "an actor for host-b's Space");

	/* A restarted supervisor is ready once its first rescan is done:
	 * that rescan starts host-a's Space, and not host-b's. */
	nng_close(e.s);
	tk_proc_stop(&e.p, SIGTERM);
	start_host_a(&e);
	cr_assert_neq(sf_wait_actor(&e, on_a, 0, SF_WAIT_MS), 0);
	cr_assert_eq(sf_actor_pid(&e, on_b), 0, "an actor for host-b's Space");
	assert_never_ran(&e, on_b, task_b);
	sf_stop(&e);
}

Test(hosts, an_actor_started_for_another_hosts_space_leaves_it_alone,
    .fini = tk_cleanup)
{
	static struct sf_env e;
	static struct tk_proc actor;
	char on_b[CM_ID_MAX + 1], task[CM_ID_MAX + 1];
	char space[CM_ID_MAX + 16];
	const char *flags[] = {
	    space, "--host-id=" HOST_A, "--allow-fake-driver=true", NULL};
	int status;

	host_a_with_space_on_b(&e, "hostact", 0, on_b, task);

	snprintf(space, sizeof(space), "--space=%s", on_b);
	cr_assert_eq(
	    tk_bin_start(&actor, "spaced-actor", e.dir, flags, e.out), 0);
	cr_assert_eq(tk_proc_wait(&actor, SF_WAIT_MS, &status), 0,
	    "the actor stayed for another host's Space");
	cr_assert(
	    WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
	assert_never_ran(&e, on_b, task);
	sf_stop(&e);
}

/* The admin route: an instance goes on the host its body names, and on
 * the api's own host_id when it names none. */
Test(hosts, the_admin_route_registers_an_instance_on_a_named_host,
    .fini = tk_cleanup)
{
	static struct sf_env e;
	char admin[CM_TOKEN_MAX + 1], body[512], *text = NULL;
	const char *hosts[] = {"\"host\": \"host-b\", ", "", NULL};
	const char *want[] = {"host-b", HOST_A};
	json_t *res;

	sf_env_init(&e, "hostadm");
	start_host_a(&e);
	sf_provision(&e, 0);
	cr_assert(tk_admin_token(&e.p, admin, sizeof(admin), 20000));
	for (size_t i = 0; hosts[i] != NULL; i++) {
		snprintf(body, sizeof(body),
		    "{%s\"name\": \"adm-%zu\", \"driver\": \"fake\", "
		    "\"bundle_id\": \"%s\"}",
		    hosts[i], i, e.w.bundle_id);
		cr_assert_eq(
		    tk_http(&e.p, "POST", "/api/v1/admin/browser-instances",
		        admin, body, NULL, &text),
		    201, "%s", text ? text : "");
		cr_assert_not_null(res = json_loads(text, 0, NULL));
		cr_assert_str_eq(
		    sf_str(json_object_get(res, "data"), "host"), want[i]);
		json_decref(res);
		free(text);
		text = NULL;
	}
	sf_stop(&e);
}
