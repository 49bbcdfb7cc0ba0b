/*
 * tokenfile.c: the admin token's file.  Every write is fsync'd with its
 * directory before the caller goes on: the file is the only copy of the
 * raw token (supervisor/bootstrap.c says in which order things happen,
 * and why).
 */
#include "tokenfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "token.h"

int
cm_tokenfile_init(struct cm_tokenfile *f, const char *data_dir)
{
	char *abs;
	int n, m;

	memset(f, 0, sizeof(*f));
	/* Absolute, for the person who reads where the token is. */
	abs = realpath(data_dir, NULL);
	snprintf(f->dir, sizeof(f->dir), "%s",
	    abs != NULL && strlen(abs) < sizeof(f->dir) ? abs : data_dir);
	free(abs);
	n = snprintf(
	    f->path, sizeof(f->path), "%s/" CM_ADMIN_TOKEN_FILE, f->dir);
	m = snprintf(
	    f->temp, sizeof(f->temp), "%s/" CM_ADMIN_TOKEN_TEMP, f->dir);
	if (n < 0 || (size_t)n >= sizeof(f->path) || m < 0 ||
	    (size_t)m >= sizeof(f->temp)) {
		cm_warnx("bootstrap: the data_dir path is too long");
		return -1;
	}
	return 0;
}

static int
sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0) {
		cm_warn("bootstrap: %s", dir);
		return -1;
	}
	if ((rc = fsync(fd)) != 0)
		cm_warn("bootstrap: fsync %s", dir);
	close(fd);
	return rc;
}

ssize_t
cm_read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;

	while (n < cap) {
		ssize_t got = read(fd, buf + n, cap - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		n += (size_t)got;
	}
	return (ssize_t)n;
}

/* Reads the token file at path into f->token and makes it durable (a
 * previous start may have died before its fsync). */
static enum cm_tokenfile_state
read_at(struct cm_tokenfile *f, const char *path)
{
	char buf[CM_TOKEN_MAX + 2];
	enum cm_tokenfile_state rc = CM_TOKENFILE_ERROR;
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		if (errno == ENOENT)
			return CM_TOKENFILE_ABSENT;
		cm_warn("bootstrap: %s", path);
		return CM_TOKENFILE_ERROR;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		cm_warnx("bootstrap: %s is not a regular file", path);
	} else if ((n = cm_read_all(fd, buf, sizeof(buf))) < 0 ||
	           fsync(fd) != 0) {
		cm_warn("bootstrap: %s", path);
	} else {
		if (n > 0 && buf[n - 1] == '\n')
			n--;
		if (!cm_token_valid(buf, (size_t)n)) {
			rc = CM_TOKENFILE_MALFORMED;
		} else {
			memcpy(f->token, buf, (size_t)n);
			f->token[n] = '\0';
			rc = sync_dir(f->dir) == 0 ? CM_TOKENFILE_OK
			                           : CM_TOKENFILE_ERROR;
		}
	}
	if (rc == CM_TOKENFILE_OK && (st.st_mode & 077))
		cm_warnx(
		    "bootstrap: %s is readable by others; chmod 600 it", path);
	close(fd);
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

enum cm_tokenfile_state
cm_tokenfile_read(struct cm_tokenfile *f)
{
	enum cm_tokenfile_state rc = read_at(f, f->path);

	f->in_temp = false;
	if (rc == CM_TOKENFILE_ABSENT) {
		rc = read_at(f, f->temp);
		f->in_temp = rc != CM_TOKENFILE_ABSENT;
	}
	return rc;
}

const char *
cm_tokenfile_name(const struct cm_tokenfile *f)
{
	return f->in_temp ? f->temp : f->path;
}

/* Writes a new token to admin.token.tmp, durably.  Only while the store
 * has no principal: no row can name a token an earlier start left. */
static int
create(struct cm_tokenfile *f)
{
	char line[CM_TOKEN_LEN + 1];
	size_t len, off = 0;
	int fd;

	if (unlink(f->temp) != 0 && errno != ENOENT) {
		cm_warn("bootstrap: %s", f->temp);
		return -1;
	}
	fd = open(f->temp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		cm_warn("bootstrap: %s", f->temp);
		return -1;
	}
	f->in_temp = true;
	cm_token_new(f->token);
	len = (size_t)snprintf(line, sizeof(line), "%s\n", f->token);
	/* 0600 whatever the umask says. */
	if (fchmod(fd, 0600) != 0)
		goto failed;
	while (off < len) {
		ssize_t n = write(fd, line + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto failed;
		off += (size_t)n;
	}
	if (fsync(fd) != 0)
		goto failed;
	close(fd);
	explicit_bzero(line, sizeof(line));
	return sync_dir(f->dir);

failed:
	cm_warn("bootstrap: %s", f->temp);
	close(fd);
	explicit_bzero(line, sizeof(line));
	/* Nothing names this token yet: the next start writes another. */
	unlink(f->temp);
	return -1;
}

int
cm_tokenfile_ensure(struct cm_tokenfile *f)
{
	switch (cm_tokenfile_read(f)) {
	case CM_TOKENFILE_OK:
		cm_info("bootstrap: resuming with the token already in %s",
		    cm_tokenfile_name(f));
		return 0;
	case CM_TOKENFILE_ABSENT:
		return create(f);
	case CM_TOKENFILE_MALFORMED:
		/* Torn by a crash before its fsync, or not ours: with no
		 * principal in the store, no row can name it. */
		cm_warnx("bootstrap: %s does not hold a token; replacing it",
		    cm_tokenfile_name(f));
		if (unlink(cm_tokenfile_name(f)) != 0) {
			cm_warn("bootstrap: %s", cm_tokenfile_name(f));
			return -1;
		}
		return create(f);
	case CM_TOKENFILE_ERROR:
		break;
	}
	return -1;
}

int
cm_tokenfile_publish(struct cm_tokenfile *f)
{
	if (!f->in_temp)
		return 0;
	if (rename(f->temp, f->path) != 0) {
		cm_warn("bootstrap: rename %s", f->temp);
		return -1;
	}
	f->in_temp = false;
	return sync_dir(f->dir);
}
