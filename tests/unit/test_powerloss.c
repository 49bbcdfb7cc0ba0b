/*
 * Power loss under the store's own VFS (powerfs.h, below "spaced").
 *
 * A store runs its real request path, st_loop_run: the REP socket, group
 * commit, the WAL sync deferred to the acker thread, then the replies, in
 * a process of its own (a store that aborts must not take the test with
 * it).  Clients in another process send workspace creates over nng and
 * note, for every acknowledged one, how long powerfs's log was when the
 * reply arrived.  Both are this binary again, forked and executed with
 * PL_ROLE set (pl_role, before Criterion's main): Criterion's own worker
 * has used nng, and nng refuses to run in a child that did not exec.
 * The reply left after every record before that point, so a power cut at
 * any later point must keep that write.
 *
 * Afterwards the test replays the log and cuts the power at thousands of
 * points, in three modes (enum pf_cut): the disk then holds only what a
 * completed sync covered, or that and a prefix of what was pending, torn
 * at a sector, or that and any sectors of what was pending, in no order
 * (SQLite's own crash model), or that and the pending sectors past a
 * random offset (a disk that wrote back to front).  The database rebuilt from
 * those bytes must pass PRAGMA integrity_check and hold every write
 * acknowledged before the cut.  The checkpointer runs every few pages, so the
 * cuts fall across group commits, checkpoints and restarts of the log.
 *
 * SPACED_POWERLOSS_CUTS (cut points per mode, default PL_CUTS_DEFAULT),
 * SPACED_POWERLOSS_WRITES (default PL_WRITES_DEFAULT) and
 * SPACED_POWERLOSS_SEED make a longer or a repeated sweep.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <nng/nng.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "clock.h"
#include "db.h"
#include "limits.h"
#include "log.h"
#include "loop.h"
#include "powerfs.h"
#include "rpc.h"
#include "store.h"
#include "vfs.h"
#include "wal.h"

#define PL_WRITES_DEFAULT 1500
#define PL_WRITES_MAX 20000
#define PL_CUTS_DEFAULT 600
#define PL_CLIENTS 8
/* The checkpointer every few frames, the writer past a few more: many
 * checkpoints and restarts of the log from a short run. */
#define PL_CKPT_PAGES 6
#define PL_MAX_PAGES 24
#define PL_WAIT_MS 30000
#define PL_CALL_MS 5000

enum pl_state { PL_SENT, PL_ACKED, PL_FAILED };

struct pl_ack {
	int state;  /* enum pl_state */
	int64_t at; /* the log's length when the reply arrived */
};

/* Shared with the stores and clients, through a file they all map. */
struct pl_shared {
	struct pf_shared pf;
	struct pl_ack acks[PL_WRITES_MAX];
};

static struct pl_shared *sh;
static char dir[64], db_path[128], log_path[128], check_path[128];
static char rep_url[160], pub_url[160], notice_url[160];

static long
env_long(const char *name, long dflt, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < 1)
		return dflt;
	return n > max ? max : n;
}

/* The paths under dir, and the shared memory; 0 or -1. */
static int
pl_paths(void)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/shared", dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    ftruncate(fd, sizeof(*sh)) != 0)
		return -1;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (sh == MAP_FAILED) {
		sh = NULL;
		return -1;
	}
	snprintf(db_path, sizeof(db_path), "%s/spaced.db", dir);
	snprintf(log_path, sizeof(log_path), "%s/power.log", dir);
	snprintf(check_path, sizeof(check_path), "%s/cut.db", dir);
	snprintf(rep_url, sizeof(rep_url), "ipc://%s/s.ipc", dir);
	snprintf(pub_url, sizeof(pub_url), "ipc://%s/e.ipc", dir);
	snprintf(notice_url, sizeof(notice_url), "ipc://%s/n.ipc", dir);
	return 0;
}

static void
pl_setup(void)
{
	snprintf(dir, sizeof(dir), "%s", "/tmp/spaced-ut-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(pl_paths(), 0);
}

static void
pl_teardown(void)
{
	static const char *const names[] = {"spaced.db", "spaced.db-wal",
	    "spaced.db-shm", "spaced.db-journal", "power.log", "cut.db",
	    "cut.db-wal", "cut.db-shm", "cut.db-journal", "s.ipc", "e.ipc",
	    "n.ipc", "shared"};
	char path[192];

	if (dir[0] == '\0')
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
	if (sh != NULL)
		munmap(sh, sizeof(*sh));
	sh = NULL;
}

/*
 * Runs this binary again as role (PL_ROLE) with two integer arguments,
 * keeping fd keep open.  Returns its pid.
 */
static pid_t
pl_spawn(const char *role, long a, long b, int keep)
{
	char e_role[32], e_dir[96], e_a[32], e_b[32];
	char *const argv[] = {"test_powerloss", NULL};
	char *const envp[] = {e_role, e_dir, e_a, e_b, NULL};
	pid_t pid;

	snprintf(e_role, sizeof(e_role), "PL_ROLE=%s", role);
	snprintf(e_dir, sizeof(e_dir), "PL_DIR=%s", dir);
	snprintf(e_a, sizeof(e_a), "PL_A=%ld", a);
	snprintf(e_b, sizeof(e_b), "PL_B=%ld", b);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		if (keep >= 0)
			fcntl(keep, F_SETFD, 0);
		execve("/proc/self/exe", argv, envp);
		_exit(127);
	}
	return pid;
}

/* ---- the store, in a process of its own ------------------------------ */

static pid_t store_pid = -1;

/* The store's process: its real loop over the recording VFS. */
static void
store_main(int notify_fd, bool small_wal)
{
	struct st_store_opts opts;
	struct st_store *st;
	sigset_t mask;
	int rc;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	if (st_db_configure() != 0 || pf_register(log_path, &sh->pf) != 0 ||
	    st_vfs_register_on(PF_VFS_NAME) != 0)
		_exit(2);
	if (small_wal)
		st_wal_set_pages(PL_CKPT_PAGES, PL_MAX_PAGES);
	memset(&opts, 0, sizeof(opts));
	opts.sqlite_path = db_path;
	opts.defer_sync = true;
	if (st_store_open(&st, &opts) != 0)
		_exit(3);
	rc = st_loop_run(st, rep_url, pub_url, notice_url, notify_fd);
	st_store_close(st);
	_exit(rc == 0 ? 0 : 1);
}

/* Waits (bounded) for pid to exit; true with its status. */
static bool
pl_wait(pid_t pid, int timeout_ms, int *status)
{
	int64_t deadline = cm_mono_ms() + timeout_ms;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid)
			return true;
		if (r < 0 || cm_mono_ms() >= deadline)
			return false;
		poll(NULL, 0, 5);
	}
}

static void
store_start(bool small_wal)
{
	int fds[2];
	char line[16];
	struct pollfd pfd;
	ssize_t n;

	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	store_pid = pl_spawn("store", fds[1], small_wal, fds[1]);
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, PL_WAIT_MS), 1, "the store never got ready");
	n = read(fds[0], line, sizeof(line));
	close(fds[0]);
	cr_assert_gt(n, 0, "the store exited before it was ready");
}

/* Stops the store with sig; returns its wait status. */
static int
store_stop(int sig)
{
	int status = 0;

	kill(store_pid, sig);
	cr_assert(
	    pl_wait(store_pid, PL_WAIT_MS, &status), "the store did not stop");
	store_pid = -1;
	return status;
}

static void
pl_cleanup(void)
{
	if (store_pid > 0) {
		kill(store_pid, SIGKILL);
		waitpid(store_pid, NULL, 0);
		store_pid = -1;
	}
	pl_teardown();
}

/* ---- the clients, in a process of their own ---------------------------- */

struct pl_client {
	int from, to, step;
	int log_fd;
};

static void *
client_run(void *arg)
{
	struct pl_client *c = arg;
	nng_socket s;
	char name[32];

	if (cm_rpc_open(&s, rep_url) != 0)
		return NULL;
	for (int i = c->from; i < c->to; i += c->step) {
		struct pr_req q;
		struct pr_rep r;
		struct stat st;
		enum cm_err e;

		snprintf(name, sizeof(name), "pl-%06d", i);
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_WORKSPACE_CREATE;
		q.name = name;
		e = cm_rpc_call(s, &q, &r, PL_CALL_MS);
		if (e == CM_OK && r.err == CM_OK &&
		    fstat(c->log_fd, &st) == 0) {
			sh->acks[i].at = st.st_size;
			__atomic_store_n(
			    &sh->acks[i].state, PL_ACKED, __ATOMIC_RELEASE);
		} else {
			/* The store is gone: the rest are not sent. */
			for (int j = i; j < c->to; j += c->step)
				__atomic_store_n(&sh->acks[j].state, PL_FAILED,
				    __ATOMIC_RELEASE);
			pr_rep_free(&r);
			break;
		}
		pr_rep_free(&r);
	}
	nng_close(s);
	return NULL;
}

/* The clients' process: writes from..to-1, PL_CLIENTS at a time. */
static void
clients_main(int from, int to)
{
	struct pl_client cl[PL_CLIENTS];
	pthread_t th[PL_CLIENTS];
	int fd = open(log_path, O_RDONLY | O_CLOEXEC);

	for (int k = 0; k < PL_CLIENTS; k++) {
		cl[k] = (struct pl_client){from + k, to, PL_CLIENTS, fd};
		pthread_create(&th[k], NULL, client_run, &cl[k]);
	}
	for (int k = 0; k < PL_CLIENTS; k++)
		pthread_join(th[k], NULL);
	_exit(0);
}

/* Runs the clients; returns when every write is answered or has failed. */
static void
clients_run(int from, int to)
{
	int status;
	pid_t pid = pl_spawn("client", from, to, -1);

	cr_assert(pl_wait(pid, 10 * PL_WAIT_MS, &status),
	    "the clients did not finish");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int
count_acked(int from, int to)
{
	int n = 0;

	for (int i = from; i < to; i++)
		n += sh->acks[i].state == PL_ACKED;
	return n;
}

/* ---- the check after a cut -------------------------------------------- */

/*
 * Opens the database a cut left (with the unix VFS, as the next store
 * would find it) and checks it.  Returns NULL, or what is wrong.
 */
static const char *
check_cut(int64_t cut, int n_writes, char *why, size_t len)
{
	static bool seen[PL_WRITES_MAX];
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	const char *ok = NULL;
	bool have_table = false;

	memset(seen, 0, sizeof(seen));
	if (sqlite3_open_v2(check_path, &db, SQLITE_OPEN_READWRITE, "unix") !=
	    SQLITE_OK) {
		snprintf(why, len, "cannot open: %s", sqlite3_errmsg(db));
		sqlite3_close(db);
		return why;
	}
	/* The copy is thrown away: its checkpoint at close need not sync. */
	sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL) !=
	        SQLITE_OK ||
	    sqlite3_step(s) != SQLITE_ROW ||
	    (ok = (const char *)sqlite3_column_text(s, 0)) == NULL ||
	    strcmp(ok, "ok") != 0) {
		snprintf(why, len, "integrity_check: %s",
		    ok ? ok : sqlite3_errmsg(db));
		sqlite3_finalize(s);
		sqlite3_close(db);
		return why;
	}
	sqlite3_finalize(s);
	/* A cut before the migrations ran leaves no table, and no write has
	 * been acknowledged by then. */
	if (sqlite3_prepare_v2(
	        db, "SELECT name FROM workspaces", -1, &s, NULL) == SQLITE_OK) {
		have_table = true;
		while (sqlite3_step(s) == SQLITE_ROW) {
			const char *name =
			    (const char *)sqlite3_column_text(s, 0);
			int i;

			if (name != NULL && sscanf(name, "pl-%d", &i) == 1 &&
			    i >= 0 && i < PL_WRITES_MAX)
				seen[i] = true;
		}
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	for (int i = 0; i < n_writes; i++) {
		if (sh->acks[i].state != PL_ACKED || sh->acks[i].at > cut ||
		    seen[i])
			continue;
		snprintf(why, len,
		    "write pl-%06d, acknowledged at %lld, is lost%s", i,
		    (long long)sh->acks[i].at,
		    have_table ? "" : " (no workspaces table)");
		return why;
	}
	return NULL;
}

/*
 * Cuts the power at n_cuts points of the log between byte offsets from
 * and its end (every record boundary when there are fewer), in every
 * mode of enum pf_cut when all, and checks each.  Returns the cut points tried.
 */
static int
sweep(int64_t from, int n_writes, long n_cuts, uint64_t seed, bool all)
{
	struct pf_replay rp;
	size_t *bounds = NULL, n_bounds = 0, cap = 0;
	char why[256];
	int tried = 0;

	cr_assert_eq(pf_replay_open(&rp, log_path), 0);
	for (size_t at = 0; at < rp.len; at = pf_next(&rp, at)) {
		size_t end = pf_next(&rp, at);

		if ((int64_t)end < from)
			continue;
		if (n_bounds == cap) {
			cap = cap ? 2 * cap : 4096;
			bounds = realloc(bounds, cap * sizeof(*bounds));
			cr_assert_not_null(bounds);
		}
		bounds[n_bounds++] = end;
	}
	cr_assert_gt(n_bounds, 0, "nothing was recorded");
	for (int mode = 0; mode < (all ? PF_CUTS : 1); mode++) {
		uint64_t rng = seed + (uint64_t)mode;
		size_t n =
		    (size_t)n_cuts < n_bounds ? (size_t)n_cuts : n_bounds;

		pf_replay_free(&rp);
		cr_assert_eq(pf_replay_open(&rp, log_path), 0);
		for (size_t c = 0; c < n; c++) {
			/* Evenly spread, each moved at random within its
			 * stretch, in increasing order. */
			size_t lo = c * n_bounds / n;
			size_t hi = (c + 1) * n_bounds / n;
			size_t i = lo + (size_t)(pf_rand(&rng) % (hi - lo));
			size_t cut = bounds[i];

			pf_replay_to(&rp, cut);
			cr_assert_eq(pf_replay_cut(&rp, check_path,
			                 (enum pf_cut)mode, &rng),
			    0);
			if (check_cut((int64_t)cut, n_writes, why, sizeof(why)))
				cr_assert_fail(
				    "power cut at byte %zu of %zu of the log"
				    " (%s, seed %llu): %s",
				    cut, rp.len, pf_cut_name[mode],
				    (unsigned long long)seed, why);
			tried++;
		}
	}
	pf_replay_free(&rp);
	free(bounds);
	return tried;
}

static uint64_t
pl_seed(void)
{
	const char *v = getenv("SPACED_POWERLOSS_SEED");

	if (v != NULL && *v != '\0')
		return strtoull(v, NULL, 10) | 1;
	return ((uint64_t)cm_now_ms() * 2654435761u) | 1;
}

/* A store's or the clients' process: this binary run again by pl_spawn. */
__attribute__((constructor)) static void
pl_role(void)
{
	const char *role = getenv("PL_ROLE");
	const char *d = getenv("PL_DIR");
	long a, b;

	if (role == NULL || d == NULL)
		return;
	snprintf(dir, sizeof(dir), "%s", d);
	a = strtol(getenv("PL_A") ? getenv("PL_A") : "0", NULL, 10);
	b = strtol(getenv("PL_B") ? getenv("PL_B") : "0", NULL, 10);
	if (pl_paths() != 0)
		_exit(2);
	if (strcmp(role, "store") == 0)
		store_main((int)a, b != 0);
	if (strcmp(role, "client") == 0)
		clients_main((int)a, (int)b);
	_exit(2);
}

TestSuite(powerloss, .fini = pl_cleanup);

/*
 * Thousands of power cuts across group commits, checkpoints and restarts
 * of the log, in both modes: every acknowledged write survives each, and
 * the database is whole.
 */
Test(powerloss, every_acknowledged_write_survives_a_power_cut)
{
	int writes = (int)env_long(
	    "SPACED_POWERLOSS_WRITES", PL_WRITES_DEFAULT, PL_WRITES_MAX);
	long cuts = env_long("SPACED_POWERLOSS_CUTS", PL_CUTS_DEFAULT, 1000000);
	uint64_t seed = pl_seed();
	int acked, tried;

	int64_t t0 = cm_mono_ms();

	pl_setup();
	store_start(true);
	clients_run(0, writes);
	cr_log_info("power loss: writes done in %lld ms",
	    (long long)(cm_mono_ms() - t0));
	acked = count_acked(0, writes);
	cr_assert_eq(acked, writes, "only %d of %d writes were acknowledged",
	    acked, writes);
	/* SIGKILL: the process's end plays no part; the cuts decide. */
	store_stop(SIGKILL);
	tried = sweep(0, writes, cuts, seed, true);
	cr_log_info("power loss: %d cut points tried over %d acknowledged"
	            " writes (seed %llu)",
	    tried, acked, (unsigned long long)seed);
	printf("power loss: %d cut points tried over %d acknowledged writes"
	       " (seed %llu)\n",
	    tried, acked, (unsigned long long)seed);
}

static int64_t
log_size(void)
{
	struct stat st;

	cr_assert_eq(stat(log_path, &st), 0);
	return st.st_size;
}

/*
 * The deferred sync of a group fails: nothing of the group is
 * acknowledged and the store stops (crash-only) instead of carrying on.
 * The writes that sync covered are lost from the disk while the page
 * cache still shows them (Linux marks pages clean when writeback fails).
 * The store started next must not build on them: every write it
 * acknowledges survives a power cut, as do those acknowledged before.
 */
Test(powerloss, a_failed_sync_acknowledges_nothing_and_stops_the_store)
{
	enum { BEFORE = 200, FAILED = 250, AFTER = 350 };
	uint64_t seed = pl_seed();
	int64_t restarted;
	int status, tried;

	pl_setup();
	store_start(false);
	clients_run(0, BEFORE);
	cr_assert_eq(count_acked(0, BEFORE), BEFORE);

	sh->pf.fail_wal_syncs = 1;
	clients_run(BEFORE, FAILED);
	cr_assert(pl_wait(store_pid, PL_WAIT_MS, &status),
	    "the store carried on after its sync failed");
	store_pid = -1;
	cr_assert(!WIFEXITED(status) || WEXITSTATUS(status) != 0,
	    "the store exited 0 after its sync failed");
	cr_assert_eq(count_acked(BEFORE, FAILED), 0,
	    "%d writes were acknowledged though their sync failed",
	    count_acked(BEFORE, FAILED));

	sh->pf.fail_wal_syncs = 0;
	restarted = log_size();
	store_start(false);
	clients_run(FAILED, AFTER);
	cr_assert_eq(count_acked(FAILED, AFTER), AFTER - FAILED);
	store_stop(SIGKILL);
	tried = sweep(restarted, AFTER, PL_CUTS_DEFAULT / 3, seed, true);
	cr_log_info(
	    "failed sync: %d cut points tried after the restart", tried);
}
