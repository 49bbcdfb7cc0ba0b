/*
 * config_fd.c: the sealed memfd that hands a parent's resolved
 * configuration to its children: cm_config_to_fd writes every key as a
 * "name=value" line and seals it, and cm_cfg_read_fd (for --config-fd)
 * checks the seals, reads it back whole and closes it.
 */
#include "config.h"
#include "config_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The seals a config fd must carry: nobody can change it once sent. */
#define CFG_FD_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* Reads the whole of a config fd into a malloc'd string; NULL and err. */
static char *
cfg_slurp_fd(int fd, char *err, size_t errlen)
{
	struct stat st;
	size_t size, got = 0;
	int seals = fcntl(fd, F_GET_SEALS);
	char *buf;

	/* Unsealed, the sender could change what a later reader sees. */
	if (seals < 0 || (seals & CFG_FD_SEALS) != CFG_FD_SEALS) {
		cm_cfg_fail(
		    err, errlen, "config_fd: %d is not a sealed memfd", fd);
		return NULL;
	}
	if (fstat(fd, &st) != 0 || st.st_size < 0 ||
	    st.st_size > CM_CONFIG_FD_MAX) {
		cm_cfg_fail(err, errlen, "config_fd: larger than %d bytes",
		    CM_CONFIG_FD_MAX);
		return NULL;
	}
	size = (size_t)st.st_size;
	if ((buf = malloc(size + 1)) == NULL) {
		cm_cfg_fail(err, errlen, "config_fd: out of memory");
		return NULL;
	}
	/* pread: every child shares the one file offset of the memfd. */
	while (got < size) {
		ssize_t r = pread(fd, buf + got, size - got, (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(buf);
			cm_cfg_fail(err, errlen, "config_fd: read error");
			return NULL;
		}
		got += (size_t)r;
	}
	buf[size] = '\0';
	if (strlen(buf) != size) {
		free(buf);
		cm_cfg_fail(err, errlen, "config_fd: NUL byte");
		return NULL;
	}
	return buf;
}

/* Applies one "name=value" line of a config fd. */
static int
cfg_fd_line(struct cm_config *cfg, char *line, unsigned lineno,
    bool seen[CFG_NNAMES], char *err, size_t errlen)
{
	char *eq = strchr(line, '=');
	char where[32];
	int ki;

	snprintf(where, sizeof where, "config_fd:%u", lineno);
	if (eq == NULL)
		return cm_cfg_fail(
		    err, errlen, "%s: expected name=value", where);
	*eq = '\0';
	ki = strcmp(line, "config") == 0 ? (int)CFG_CONFIG
	                                 : cm_cfg_lookup_file(line);
	if (ki < 0)
		return cm_cfg_fail(err, errlen, "%s: unknown key '%.*s'", where,
		    CFG_NAME_MAX, line);
	if (seen[ki])
		return cm_cfg_fail(
		    err, errlen, "%s: %s: duplicate", where, line);
	seen[ki] = true;
	if (ki < (int)CFG_NKEYS)
		return cm_cfg_set(
		    cfg, &cm_cfg_keys[ki], eq + 1, where, err, errlen);
	if (strlen(eq + 1) >= sizeof cfg->config_path)
		return cm_cfg_fail(
		    err, errlen, "%s: config: path too long", where);
	snprintf(cfg->config_path, sizeof cfg->config_path, "%s", eq + 1);
	return 0;
}

/* The fd is the caller's to consume: it is closed whatever happens, so
 * that it never reaches a process this one starts. */
int
cm_cfg_read_fd(struct cm_config *cfg, const char *arg, char *err, size_t errlen)
{
	bool seen[CFG_NNAMES] = {false};
	unsigned lineno = 0;
	char *buf, *line, *next;
	long fd;
	int rc = 0;

	if (cm_cfg_parse_int(arg, &fd) != 0 || fd < 0 || fd > INT32_MAX)
		return cm_cfg_fail(
		    err, errlen, "config_fd: must be a file descriptor number");
	buf = cfg_slurp_fd((int)fd, err, errlen);
	close((int)fd);
	if (buf == NULL)
		return -1;
	for (line = buf; rc == 0 && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) == NULL) {
			rc = cm_cfg_fail(
			    err, errlen, "config_fd: last line has no newline");
			break;
		}
		*next++ = '\0';
		rc = cfg_fd_line(cfg, line, ++lineno, seen, err, errlen);
	}
	/* Every key, so that a short fd is never taken for the defaults. */
	for (size_t i = 0; rc == 0 && i < CFG_NKEYS; i++)
		if (!seen[i])
			rc = cm_cfg_fail(err, errlen, "config_fd: %s missing",
			    cm_cfg_keys[i].name);
	free(buf);
	return rc;
}

/* Every name and the longest value of any field fit in the fd. */
_Static_assert(CFG_NNAMES *(CFG_NAME_MAX + CM_PATH_MAX + 2) <= CM_CONFIG_FD_MAX,
    "CM_CONFIG_FD_MAX cannot hold every key");

/*
 * The fd holds "name=value" lines, the value taken literally up to the
 * newline: control characters are refused in every value, so a value
 * cannot hold one.  Extra flags are not written: they belong to one binary
 * and a child of another kind would reject them.
 */
int
cm_config_to_fd(const struct cm_config *cfg)
{
	char *buf, num[24];
	size_t n = 0, off = 0;
	int fd = -1;

	if (cfg == NULL || (buf = malloc(CM_CONFIG_FD_MAX)) == NULL)
		return -1;
	for (size_t i = 0; i <= CFG_CONFIG; i++) {
		int w = snprintf(buf + n, CM_CONFIG_FD_MAX - n, "%s=%s\n",
		    cm_cfg_name(i), cm_cfg_value_text(cfg, i, num, sizeof num));

		if (w < 0 || (size_t)w >= CM_CONFIG_FD_MAX - n)
			goto out;
		n += (size_t)w;
	}
	fd = memfd_create("spaced-config", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	while (fd >= 0 && off < n) {
		ssize_t w = write(fd, buf + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			fd = -1;
		} else {
			off += (size_t)w;
		}
	}
	if (fd >= 0 && fcntl(fd, F_ADD_SEALS, CFG_FD_SEALS) != 0) {
		close(fd);
		fd = -1;
	}
out:
	free(buf);
	return fd;
}
