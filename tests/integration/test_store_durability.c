/*
 * The real spaced-store binary: kill -9 the instant the last reply of a
 * burst arrives, and a full disk (a small tmpfs as its data dir).  Every
 * acknowledged write is present after the restart.  (Power loss and a
 * failed sync are in unit/test_powerloss, under the store's own VFS.)
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <nng/nng.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "testkit.h"

#define KB_SOCKETS 4
#define KB_BURST 120
#define KB_ROUNDS 5
#define KB_NAME_MAX 32

_Static_assert(KB_BURST / KB_SOCKETS <= CM_RPC_OUTSTANDING_MAX,
    "a burst socket with more requests outstanding than it may have");

/* Whether the workspace named name is in the database at path. */
static bool
has_workspace(sqlite3 *db, const char *name)
{
	sqlite3_stmt *s;
	bool found;

	cr_assert_eq(
	    sqlite3_prepare_v2(
	        db, "SELECT 1 FROM workspaces WHERE name = ?1", -1, &s, NULL),
	    SQLITE_OK, "%s", sqlite3_errmsg(db));
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return found;
}

static sqlite3 *
open_db(const char *dir)
{
	sqlite3 *db = tk_db_sqlite(dir);

	cr_assert_not_null(db, "cannot open %s/spaced.db", dir);
	return db;
}

static void
assert_whole(sqlite3 *db)
{
	sqlite3_stmt *s;

	cr_assert_eq(
	    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL),
	    SQLITE_OK);
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	cr_assert_str_eq((const char *)sqlite3_column_text(s, 0), "ok");
	sqlite3_finalize(s);
}

/*
 * A burst of workspace creates, all in flight at once over a few
 * sockets, the store is killed (SIGKILL) the instant the last reply has
 * arrived, and started again: every acknowledged create is there.  Five
 * rounds on the same data dir.
 */
Test(store_durability, kill_9_right_after_the_replies_loses_nothing,
    .fini = tk_cleanup)
{
	static nng_ctx ctx[KB_BURST];
	static nng_aio *aio[KB_BURST];
	static char names[KB_ROUNDS][KB_BURST][KB_NAME_MAX];
	nng_socket s[KB_SOCKETS];
	struct tk_proc p;
	char dir[128];
	sqlite3 *db;

	tk_tmpdir(dir, sizeof(dir), "kill9");
	cr_assert_eq(tk_store_start(&p, dir, NULL), 0);
	for (int round = 0; round < KB_ROUNDS; round++) {
		for (int k = 0; k < KB_SOCKETS; k++)
			cr_assert_eq(cm_rpc_open(&s[k], p.store_url), 0);
		for (int i = 0; i < KB_BURST; i++) {
			struct pr_req q;
			nng_msg *m;

			cr_assert_eq(
			    nng_ctx_open(&ctx[i], s[i % KB_SOCKETS]), 0);
			cr_assert_eq(nng_aio_alloc(&aio[i], NULL, NULL), 0);
			nng_aio_set_timeout(aio[i], 10000);
			snprintf(
			    names[round][i], KB_NAME_MAX, "k9-%d-%d", round, i);
			memset(&q, 0, sizeof(q));
			q.op = PR_OP_WORKSPACE_CREATE;
			q.name = names[round][i];
			cr_assert_eq(cm_rpc_request(&q, &m), 0);
			nng_aio_set_msg(aio[i], m);
			nng_ctx_send(ctx[i], aio[i]);
		}
		for (int i = 0; i < KB_BURST; i++) {
			nng_aio_wait(aio[i]);
			cr_assert_eq(nng_aio_result(aio[i]), 0);
			nng_ctx_recv(ctx[i], aio[i]);
		}
		for (int i = 0; i < KB_BURST; i++) {
			nng_aio_wait(aio[i]);
			cr_assert_eq(nng_aio_result(aio[i]), 0,
			    "round %d: create %d was not answered: %s", round,
			    i, nng_strerror(nng_aio_result(aio[i])));
		}
		/* The last reply is in: no time for anything more. */
		cr_assert_eq(kill(p.pid, SIGKILL), 0);
		for (int i = 0; i < KB_BURST; i++) {
			struct pr_rep r;
			nng_msg *m = nng_aio_get_msg(aio[i]);
			char err[128];

			cr_assert_eq(pr_rep_decode(nng_msg_body(m),
			                 nng_msg_len(m), &r, err, sizeof(err)),
			    0, "%s", err);
			nng_msg_free(m);
			cr_assert_eq(r.err, CM_OK, "round %d: create %d: %s",
			    round, i, cm_err_code(r.err));
			pr_rep_free(&r);
			nng_aio_free(aio[i]);
			nng_ctx_close(ctx[i]);
		}
		for (int k = 0; k < KB_SOCKETS; k++)
			nng_close(s[k]);
		tk_proc_stop(&p, SIGKILL); /* reaps it */
		cr_assert_eq(tk_store_start(&p, dir, NULL), 0);
		db = open_db(dir);
		for (int r = 0; r <= round; r++)
			for (int i = 0; i < KB_BURST; i++)
				cr_assert(has_workspace(db, names[r][i]),
				    "round %d: acknowledged create %s is lost",
				    round, names[r][i]);
		assert_whole(db);
		sqlite3_close(db);
	}
	tk_proc_stop(&p, SIGTERM);
	tk_rmrf(dir);
}

/* ---- a full disk --------------------------------------------------------- */

#define FD_TMPFS_OPTS "size=6m,mode=0700"
#define FD_BEFORE 40
#define FD_MAX 4000
#define FD_AFTER 40

static char fd_dir[128];

static void
fd_cleanup(void)
{
	tk_cleanup();
	if (fd_dir[0] != '\0') {
		umount2(fd_dir, MNT_DETACH);
		tk_rmrf(fd_dir);
	}
}

/* Fills the file system of path to the last byte; returns the bytes. */
static long long
fill(const char *path)
{
	static char chunk[65536];
	long long total = 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	cr_assert_geq(fd, 0);
	memset(chunk, 0xa5, sizeof(chunk));
	for (size_t n = sizeof(chunk); n > 0;) {
		ssize_t w = write(fd, chunk, n);

		if (w > 0) {
			total += w;
			continue;
		}
		cr_assert(
		    w < 0 && errno == ENOSPC, "filler: %s", strerror(errno));
		n /= 2; /* the last blocks, smaller */
	}
	close(fd);
	return total;
}

/* One create; its verdict (CM_OK: acknowledged). */
static enum cm_err
create(nng_socket s, const char *name, char *msg, size_t len)
{
	struct pr_req q;
	struct pr_rep r;
	enum cm_err e;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_WORKSPACE_CREATE;
	q.name = name;
	e = cm_rpc_call(s, &q, &r, 10000);
	if (e == CM_OK)
		e = r.err;
	if (msg != NULL)
		snprintf(msg, len, "%s", r.msg ? r.msg : "");
	pr_rep_free(&r);
	return e;
}

static bool
still_running(struct tk_proc *p)
{
	int status;

	return tk_proc_wait(p, 0, &status) != 0;
}

/*
 * The store's data dir on a small tmpfs that a filler file fills: writes
 * fail with a typed reply (store_unavailable, retryable, saying the disk
 * is full), the store does not crash, reads still work, nothing
 * acknowledged is lost, and writes succeed again once the filler is gone.
 */
Test(store_durability, a_full_disk_fails_writes_cleanly_and_recovers,
    .fini = fd_cleanup)
{
	static char names[FD_BEFORE + FD_MAX + FD_AFTER][KB_NAME_MAX];
	static bool acked[FD_BEFORE + FD_MAX + FD_AFTER];
	char filler[192], msg[256];
	struct tk_proc p;
	nng_socket s;
	int n = 0, failed = 0, first_fail = -1;
	long long filled;
	int64_t deadline;
	sqlite3 *db;

	if (geteuid() != 0)
		cr_skip_test("a full disk needs root to mount a small tmpfs");
	tk_tmpdir(fd_dir, sizeof(fd_dir), "disk");
	cr_assert_eq(mount("tmpfs", fd_dir, "tmpfs", 0, FD_TMPFS_OPTS), 0,
	    "mount -t tmpfs on %s: %s", fd_dir, strerror(errno));
	cr_assert_eq(tk_store_start(&p, fd_dir, NULL), 0);
	cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);

	for (; n < FD_BEFORE; n++) {
		snprintf(names[n], KB_NAME_MAX, "fd-%d", n);
		cr_assert_eq(create(s, names[n], NULL, 0), CM_OK);
		acked[n] = true;
	}

	snprintf(filler, sizeof(filler), "%s/filler", fd_dir);
	filled = fill(filler);
	cr_log_info("full disk: filler of %lld bytes", filled);
	/* Writes go on until the store's files cannot grow. */
	for (; n < FD_BEFORE + FD_MAX && failed < 20; n++) {
		enum cm_err e;

		snprintf(names[n], KB_NAME_MAX, "fd-%d", n);
		e = create(s, names[n], msg, sizeof(msg));
		cr_assert(still_running(&p),
		    "the store died on a full disk (write %d)", n);
		if (e == CM_OK) {
			acked[n] = true;
			continue;
		}
		cr_assert_eq(e, CM_E_STORE_UNAVAILABLE,
		    "write %d on a full disk: %s", n, cm_err_code(e));
		cr_assert(strstr(msg, "full") != NULL,
		    "write %d on a full disk says \"%s\"", n, msg);
		if (first_fail < 0)
			first_fail = n;
		failed++;
	}
	cr_assert_gt(failed, 0, "no write failed on a full disk");
	cr_log_info("full disk: first failure at write %d, %d failures",
	    first_fail, failed);
	{
		struct pr_req q;
		struct pr_rep r;

		memset(&q, 0, sizeof(q));
		q.op = PR_OP_WORKSPACE_LIST;
		cr_assert_eq(tk_call(s, &q, &r), CM_OK, "a read failed");
		pr_rep_free(&r);
		/* A store killed on a full disk starts again, and reads. */
		nng_close(s);
		tk_proc_stop(&p, SIGKILL);
		cr_assert_eq(tk_store_start(&p, fd_dir, NULL), 0,
		    "the store does not start on a full disk");
		cr_assert_eq(cm_rpc_open(&s, p.store_url), 0);
		cr_assert_eq(tk_call(s, &q, &r), CM_OK, "a read failed");
		pr_rep_free(&r);
		snprintf(names[n], KB_NAME_MAX, "fd-%d", n);
		cr_assert_eq(create(s, names[n], msg, sizeof(msg)),
		    CM_E_STORE_UNAVAILABLE, "a write on a full disk");
		n++;
	}

	/* Space returns: writes succeed again, bounded. */
	cr_assert_eq(unlink(filler), 0);
	deadline = cm_mono_ms() + 10000;
	for (;; n++) {
		cr_assert_lt(n, FD_BEFORE + FD_MAX + FD_AFTER);
		snprintf(names[n], KB_NAME_MAX, "fd-%d", n);
		if (create(s, names[n], NULL, 0) == CM_OK) {
			acked[n++] = true;
			break;
		}
		cr_assert_lt(cm_mono_ms(), deadline,
		    "writes still fail after the space came back");
	}
	for (int i = 0; i < FD_AFTER - 1 && n < FD_BEFORE + FD_MAX + FD_AFTER;
	     i++, n++) {
		snprintf(names[n], KB_NAME_MAX, "fd-%d", n);
		cr_assert_eq(create(s, names[n], NULL, 0), CM_OK);
		acked[n] = true;
	}
	nng_close(s);

	/* Nothing acknowledged is lost, even to a kill -9. */
	tk_proc_stop(&p, SIGKILL);
	cr_assert_eq(tk_store_start(&p, fd_dir, NULL), 0);
	db = open_db(fd_dir);
	for (int i = 0; i < n; i++)
		cr_assert(!acked[i] || has_workspace(db, names[i]),
		    "acknowledged create %s is lost", names[i]);
	assert_whole(db);
	sqlite3_close(db);
	tk_proc_stop(&p, SIGTERM);
}
