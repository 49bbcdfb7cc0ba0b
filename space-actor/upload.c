/*
 * upload.c: the files an upload sets on the page, fetched before its call
 * starts.  Each name of args.files is read from the store (space.file_get,
 * one at a time through the loop's store handle, never blocking the loop)
 * and written as <the driver's upload_dir>/<task id>/<that name>, mode
 * 0600, so the page sees the client's name and never a path of ours.  A
 * name the Space does not have fails the task at once, before the page is
 * touched; so does a runtime that cannot read this host's files.
 *
 * The browser reads a file when the page sends it (a form's submit, which
 * may be a later task's), not when it is set: the files of an upload
 * whose call started stay, those of the last CM_UPLOAD_TASKS_KEPT
 * uploads, until the driver's close takes its upload_dir (or the next
 * open of it, after a crash).
 *
 * The write is plain blocking I/O on the loop, at most CM_UPLOAD_MAX
 * bytes per file and CM_UPLOAD_FILES_MAX files per task: the cost of a
 * download's read (page_download.c), bounded the same way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"

/* The task's files, args.files (validated: 1..CM_UPLOAD_FILES_MAX file
 * names). */
static const json_t *
up_files(const struct actor *a)
{
	return json_object_get(a->args, "files");
}

/* <dir>/<name> into out; false when it does not fit. */
static bool
up_path(const char *dir, const char *name, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s", dir, name);

	return n > 0 && (size_t)n < len;
}

/* Removes dir and the files in it: a task's directory holds only the
 * files written into it (no one else writes there, and none is a
 * directory). */
static void
up_rmdir(const char *dir)
{
	char path[CM_PATH_MAX + 256 + 2];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL) {
		if (errno != ENOENT)
			cm_warn("actor: reading an upload's directory");
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    !up_path(dir, de->d_name, path, sizeof(path)))
			continue;
		if (unlink(path) != 0 && errno != ENOENT)
			cm_warn("actor: removing an upload's file");
	}
	closedir(d);
	if (rmdir(dir) != 0 && errno != ENOENT)
		cm_warn("actor: removing an upload's directory");
}

/* Fails the upload with err and a formatted message; what it wrote goes. */
static void __attribute__((format(printf, 3, 4)))
up_fail(struct actor *a, enum cm_err err, const char *fmt, ...)
{
	char msg[CM_ERROR_MESSAGE_MAX + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	a->up.fetching = false;
	if (a->up.dir[0] != '\0')
		up_rmdir(a->up.dir);
	a->up.dir[0] = '\0';
	act_task_fail(a, err, msg);
}

/* The first name of files that an earlier one repeats, or NULL. */
static const char *
up_twice(const json_t *files)
{
	for (size_t i = 1; i < json_array_size(files); i++)
		for (size_t k = 0; k < i; k++)
			if (strcmp(json_string_value(json_array_get(files, i)),
			        json_string_value(json_array_get(files, k))) ==
			    0)
				return json_string_value(
				    json_array_get(files, i));
	return NULL;
}

void
act_upload_begin(struct actor *a)
{
	char base[CM_PATH_MAX];
	const char *twice = up_twice(up_files(a));
	int n;

	memset(&a->up, 0, sizeof(a->up));
	if (twice != NULL) {
		up_fail(a, CM_E_INVALID_ARGS,
		    "files names %s twice: each file is set once", twice);
		return;
	}
	if (a->ops->upload_dir == NULL) {
		up_fail(a, CM_E_CAPABILITY_UNKNOWN,
		    "the %s runtime cannot upload: its browser cannot read "
		    "this host's files",
		    cm_driver_name(a->inst.env.driver));
		return;
	}
	if (a->ops->upload_dir(a->drv, base, sizeof(base)) != 0) {
		up_fail(a, CM_E_RUNTIME_ERROR,
		    "the Space's upload directory cannot be made");
		return;
	}
	if (base[0] != '\0') {
		char dir[CM_PATH_MAX];

		n = snprintf(dir, sizeof(dir), "%s/%s", base, a->task_id);
		if (n <= 0 || (size_t)n >= sizeof(dir)) {
			up_fail(a, CM_E_RUNTIME_ERROR,
			    "the task's upload directory is too long a path");
			return;
		}
		/* A task run again after a crash finds what its first run
		 * wrote: it goes first. */
		up_rmdir(dir);
		if (mkdir(dir, 0700) != 0) {
			up_fail(a, CM_E_RUNTIME_ERROR,
			    "the task's upload directory cannot be made");
			return;
		}
		snprintf(a->up.dir, sizeof(a->up.dir), "%s", dir);
	}
	a->up.fetching = true;
}

const char *
act_upload_next(const struct actor *a)
{
	if (!a->up.fetching)
		return NULL;
	return json_string_value(json_array_get(up_files(a), a->up.next));
}

/* Writes n bytes at p as a new file path, mode 0600.  0, or -1. */
static int
up_write(const char *path, const unsigned char *p, size_t n)
{
	int fd = open(
	    path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t done = 0;
	ssize_t w;

	if (fd < 0)
		return -1;
	while (done < n) {
		w = write(fd, p + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		done += (size_t)w;
	}
	if (close(fd) != 0 || done != n)
		return -1;
	return 0;
}

void
act_upload_got(struct actor *a, const struct pr_rep *r)
{
	const char *name = act_upload_next(a);
	char path[CM_PATH_MAX + CM_FILE_NAME_MAX + 2];
	const struct pr_file *f;

	/* The task ended meanwhile (cancelled, timed out): nothing to do. */
	if (name == NULL || !a->have_task || a->outcome.pending)
		return;
	if (r->err == CM_E_NOT_FOUND) {
		up_fail(a, CM_E_INVALID_ARGS,
		    "the Space has no file named %s: put it first (PUT "
		    ".../files/%s)",
		    name, name);
		return;
	}
	f = r->n_files == 1 ? &r->files[0] : NULL;
	if (r->err != CM_OK || f == NULL || f->bytes.p == NULL ||
	    f->bytes.n == 0) {
		up_fail(a, CM_E_RUNTIME_ERROR, "the file %s could not be read",
		    name);
		return;
	}
	if (a->up.dir[0] != '\0' &&
	    (!up_path(a->up.dir, name, path, sizeof(path)) ||
	        up_write(path, f->bytes.p, f->bytes.n) != 0)) {
		cm_warn("actor: writing an upload's file");
		up_fail(a, CM_E_RUNTIME_ERROR,
		    "the file %s could not be written for the browser", name);
		return;
	}
	if (++a->up.next < json_array_size(up_files(a)))
		return;
	a->up.fetching = false;
	a->up.called = true;
	act_task_call(a);
}

void
act_upload_drop(struct actor *a)
{
	struct act_uploads_kept *k = &a->up_kept;
	char *slot;

	if (a->up.dir[0] != '\0' && !a->up.called) {
		up_rmdir(a->up.dir);
	} else if (a->up.dir[0] != '\0') {
		/* The browser reads the files when the page sends them (a
		 * submit in a later task): they stay, but for the oldest
		 * upload's past CM_UPLOAD_TASKS_KEPT, which go now. */
		slot = k->dir[k->n % CM_UPLOAD_TASKS_KEPT];
		if (slot[0] != '\0')
			up_rmdir(slot);
		snprintf(slot, CM_PATH_MAX, "%s", a->up.dir);
		k->n++;
	}
	memset(&a->up, 0, sizeof(a->up));
}
