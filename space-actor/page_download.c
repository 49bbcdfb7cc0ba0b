/*
 * page_download.c: a file the page downloads during a call becomes the
 * task's artifact.  The browser saves it as <dl_dir>/<its guid>
 * (Browser.setDownloadBehavior allowAndName, session.c); once it has
 * completed, its bytes are read into the call's outcome, which the actor
 * hands to the store with the task's end, and the file is removed.  One
 * larger than CM_ARTIFACT_MAX is canceled as soon as the browser says so
 * (its total, or what it has received) and never stored: a half of a
 * file is never an artifact.  A download that is no call's is removed at
 * its end too: nobody takes it.
 */
#include "page.h"
#include "page_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "mime.h"
#include "token.h"

/* The path the browser saves the download of guid to; false when the
 * page has no directory, or the path does not fit. */
static bool
dl_path(const struct act_page *p, const char *guid, char *out, size_t len)
{
	int n;

	if (p->dl_dir == NULL || p->dl_dir[0] == '\0' ||
	    strpbrk(guid, "/\\") != NULL || guid[0] == '.')
		return false;
	n = snprintf(out, len, "%s/%s", p->dl_dir, guid);
	return n > 0 && (size_t)n < len;
}

/*
 * The artifact name of a download the site named name: its bytes of
 * [A-Za-z0-9._-], any other one '_', no leading '.', at most CM_ID_MAX
 * with its extension kept when it is cut; "download" when nothing is left.
 */
static void
dl_artifact_name(char *out, size_t len, const char *name)
{
	const char *ext = strrchr(name, '.');
	size_t n = 0, keep, elen = ext != NULL ? strlen(ext) : 0;
	size_t max = len - 1 < CM_ID_MAX ? len - 1 : CM_ID_MAX;

	while (*name == '.')
		name++;
	if (elen > 16 || ext < name)
		elen = 0; /* no extension worth keeping */
	keep = strlen(name) > max ? max - elen : strlen(name);
	for (size_t i = 0; i < keep; i++) {
		char c = name[i];

		out[n++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		                   (c >= '0' && c <= '9') || c == '.' ||
		                   c == '-' || c == '_'
		               ? c
		               : '_';
	}
	if (keep < strlen(name))
		for (size_t i = 0; i < elen; i++) {
			char c = ext[i];

			out[n++] = (c >= 'a' && c <= 'z') ||
			                   (c >= 'A' && c <= 'Z') ||
			                   (c >= '0' && c <= '9') || c == '.' ||
			                   c == '-' || c == '_'
			               ? c
			               : '_';
		}
	out[n] = '\0';
	if (n == 0)
		snprintf(out, len, "download");
}

/* Removes the download's file, if it is there (it is the browser's and
 * ours alone: nothing else writes that directory). */
static void
dl_remove(const struct act_page *p, const char *guid)
{
	char path[CM_PATH_MAX + CM_ID_MAX + 2];

	if (dl_path(p, guid, path, sizeof(path)) && unlink(path) != 0 &&
	    errno != ENOENT)
		cm_warn("page: removing a download");
}

/*
 * Reads the completed download into *buf (malloc'd) and *n, at most
 * CM_ARTIFACT_MAX bytes.  Returns 0, 1 when the file is over that bound,
 * or -1 when it cannot be read.  The file is opened without following a
 * link, and read to what fstat says: a file that grows meanwhile is not
 * the one that completed.
 */
static int
dl_read(
    const struct act_page *p, const char *guid, unsigned char **buf, size_t *n)
{
	char path[CM_PATH_MAX + CM_ID_MAX + 2];
	struct stat st;
	size_t got = 0;
	ssize_t r;
	int fd;

	*buf = NULL;
	*n = 0;
	if (!dl_path(p, guid, path, sizeof(path)) ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	if (st.st_size > CM_ARTIFACT_MAX) {
		close(fd);
		return 1;
	}
	if (st.st_size == 0 || (*buf = malloc((size_t)st.st_size)) == NULL) {
		close(fd);
		return -1;
	}
	while (got < (size_t)st.st_size &&
	       ((r = read(fd, *buf + got, (size_t)st.st_size - got)) > 0 ||
	           (r < 0 && errno == EINTR)))
		if (r > 0)
			got += (size_t)r;
	close(fd);
	if (got != (size_t)st.st_size) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	*n = got;
	return 0;
}

void
page_download_progress(
    struct act_page *p, const char *guid, json_int_t received, json_int_t total)
{
	bool mine =
	    p->busy && !p->done && p->dl_began && strcmp(guid, p->dl_guid) == 0;

	if (received <= CM_ARTIFACT_MAX && total <= CM_ARTIFACT_MAX)
		return;
	if (mine && p->dl_too_large)
		return; /* asked already */
	if (mine)
		p->dl_too_large = true;
	/* Fire and forget: the progress that follows says it is canceled,
	 * and the file is removed then. */
	act_cdp_call(p->cdp, NULL, "Browser.cancelDownload",
	    p->dl_context != NULL ? json_pack("{s:s, s:s}", "guid", guid,
	                                "browserContextId", p->dl_context)
	                          : json_pack("{s:s}", "guid", guid),
	    cm_mono_ms() + CM_BROWSER_START_MS, NULL, NULL);
}

void
page_download_end(struct act_page *p, const char *guid, bool completed)
{
	bool mine =
	    p->busy && !p->done && p->dl_began && strcmp(guid, p->dl_guid) == 0;
	unsigned char *buf = NULL;
	size_t n = 0;
	int rc;

	/* One artifact per task: a screenshot's, or this.  A canceled one
	 * may leave what it had received. */
	if (!completed || !mine || p->dl_too_large || p->out.artifact != NULL) {
		dl_remove(p, guid);
		return;
	}
	rc = dl_read(p, guid, &buf, &n);
	dl_remove(p, guid);
	if (rc == 1) {
		p->dl_too_large = true;
		return;
	}
	if (rc != 0) {
		cm_warnx("page: a completed download could not be read");
		return;
	}
	dl_artifact_name(p->dl_artifact, sizeof(p->dl_artifact), p->dl_name);
	if (cm_sha256_hex(buf, n, p->dl_sha256) != 0) {
		free(buf);
		p->dl_artifact[0] = '\0';
		return;
	}
	p->out.artifact = buf;
	p->out.artifact_len = n;
	snprintf(p->out.artifact_name, sizeof(p->out.artifact_name), "%s",
	    p->dl_artifact);
	p->out.artifact_mime = cm_mime_of_name(p->dl_artifact);
}

json_t *
page_download_result(const struct act_page *p)
{
	json_t *o = json_pack("{s:s, s:s, s:I}", "name", p->dl_name, "state",
	    p->dl_state, "bytes", p->dl_bytes);

	if (p->dl_artifact[0] != '\0') {
		json_object_set_new(o, "artifact", json_string(p->dl_artifact));
		json_object_set_new(
		    o, "mime", json_string(cm_mime_of_name(p->dl_artifact)));
		json_object_set_new(
		    o, "size", json_integer((json_int_t)p->out.artifact_len));
		json_object_set_new(o, "sha256", json_string(p->dl_sha256));
	}
	if (p->dl_too_large) {
		json_object_set_new(o, "too_large", json_true());
		json_object_set_new(o, "limit", json_integer(CM_ARTIFACT_MAX));
	}
	return o;
}
