#include "testkit.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

void
tk_tmpdir(char *out, size_t len, const char *tag)
{
	if ((size_t)snprintf(out, len, "/tmp/spaced-%s-XXXXXX", tag) >= len ||
	    mkdtemp(out) == NULL) {
		perror("mkdtemp");
		abort();
	}
}

static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void
tk_rmrf(const char *dir)
{
	if (strncmp(dir, "/tmp/spaced-", 12) != 0)
		return;
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

bool
tk_wait_until(bool (*cond)(void *), void *arg, int timeout_ms)
{
	int64_t deadline = cm_mono_ms() + timeout_ms;
	struct timespec ts = {0, 2 * 1000 * 1000};

	for (;;) {
		if (cond(arg))
			return true;
		if (cm_mono_ms() >= deadline)
			return false;
		nanosleep(&ts, NULL);
	}
}

int
tk_store_start(struct tk_proc *p, const char *dir, const char *const *flags)
{
	char bin[512], data[300], fdarg[32];
	const char *argv[32];
	char line[16];
	struct pollfd pfd;
	size_t argc = 0;
	int fds[2];
	ssize_t n;

	memset(p, 0, sizeof(*p));
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	snprintf(p->run_dir, sizeof(p->run_dir), "%s/run", dir);
	cm_ipc_url(p->store_url, sizeof(p->store_url), p->run_dir, "store.ipc");
	cm_ipc_url(p->events_url, sizeof(p->events_url), p->run_dir,
	    "store-events.ipc");
	snprintf(bin, sizeof(bin), "%s/spaced-store", SPACED_BIN_DIR);
	snprintf(data, sizeof(data), "--data-dir=%s", dir);
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	snprintf(fdarg, sizeof(fdarg), "--notify-fd=%d", fds[1]);
	argv[argc++] = bin;
	argv[argc++] = data;
	argv[argc++] = fdarg;
	argv[argc++] = "--log-format=text";
	argv[argc++] = "--config=/dev/null";
	for (size_t i = 0; flags && flags[i] && argc < 30; i++)
		argv[argc++] = flags[i];
	argv[argc] = NULL;

	if ((p->pid = fork()) < 0)
		return -1;
	if (p->pid == 0) {
		/* The write end survives exec: clear close-on-exec on it. */
		fcntl(fds[1], F_SETFD, 0);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	n = 0;
	if (poll(&pfd, 1, 20000) == 1)
		n = read(fds[0], line, sizeof(line));
	close(fds[0]);
	if (n <= 0 || strncmp(line, "ready", 5) != 0) {
		tk_proc_stop(p, SIGKILL);
		return -1;
	}
	return 0;
}

void
tk_proc_stop(struct tk_proc *p, int sig)
{
	if (p->pid <= 0)
		return;
	kill(p->pid, sig);
	while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
		;
	p->pid = 0;
}

char *
tk_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) != NULL) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
			if (len)
				*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

enum cm_err
tk_call(nng_socket s, const struct pr_req *req, struct pr_rep *rep)
{
	if (cm_rpc_call(s, req, rep, 15000) != CM_OK) {
		fprintf(stderr, "testkit: %s: no answer from the store\n",
		    pr_op_name(req->op));
		abort();
	}
	return rep->err;
}

static int
copy_id(char *dst, const char *src)
{
	if (src == NULL)
		return -1;
	snprintf(dst, CM_ID_MAX + 1, "%s", src);
	return 0;
}

int
tk_provision(nng_socket s, struct tk_world *w, size_t n_instances)
{
	char path[512], name[64];
	struct pr_req q;
	struct pr_rep r;
	char *manifest;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	if (n_instances > TK_MAX_INSTANCES)
		return -1;

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_WORKSPACE_CREATE;
	q.name = "default";
	if (tk_call(s, &q, &r) != CM_OK)
		rc = -1;
	else
		rc = copy_id(w->workspace_id, r.workspaces[0].workspace_id);
	pr_rep_free(&r);

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_PRINCIPAL_CREATE;
	q.kind = "operator";
	q.name = "op";
	if (rc != 0 || tk_call(s, &q, &r) != CM_OK)
		rc = -1;
	else
		rc = copy_id(w->operator_id, r.principals[0].principal_id);
	pr_rep_free(&r);

	memset(&q, 0, sizeof(q));
	q.op = PR_OP_MEMBER_PUT;
	q.workspace_id = w->workspace_id;
	q.principal_id = w->operator_id;
	q.role = "manager";
	if (rc != 0 || tk_call(s, &q, &r) != CM_OK)
		rc = -1;
	pr_rep_free(&r);

	snprintf(
	    path, sizeof(path), "%s/etc/bundles/fake.json", SPACED_SOURCE_DIR);
	if ((manifest = tk_read_file(path, NULL)) == NULL)
		return -1;
	memset(&q, 0, sizeof(q));
	q.op = PR_OP_BUNDLE_CREATE;
	q.manifest = manifest;
	if (rc != 0 || tk_call(s, &q, &r) != CM_OK)
		rc = -1;
	else
		rc = copy_id(w->bundle_id, r.bundles[0].bundle_id);
	pr_rep_free(&r);
	free(manifest);

	for (size_t i = 0; rc == 0 && i < n_instances; i++) {
		memset(&q, 0, sizeof(q));
		q.op = PR_OP_INSTANCE_REGISTER;
		snprintf(name, sizeof(name), "fake-%zu", i);
		q.name = name;
		q.driver = "fake";
		q.bundle_id = w->bundle_id;
		if (tk_call(s, &q, &r) != CM_OK)
			rc = -1;
		else
			rc = copy_id(w->instance_id[i],
			    r.instances[0].browser_instance_id);
		pr_rep_free(&r);

		memset(&q, 0, sizeof(q));
		q.op = PR_OP_BINDING_CREATE;
		q.workspace_id = w->workspace_id;
		q.browser_instance_id = w->instance_id[i];
		if (rc != 0 || tk_call(s, &q, &r) != CM_OK)
			rc = -1;
		pr_rep_free(&r);
		w->n_instances = i + 1;
	}
	return rc;
}
