/*
 * tokenfile.h: the admin token's file, the only copy of the raw token
 * there will ever be.  A new token waits in <data_dir>/admin.token.tmp
 * until the store has committed everything that makes it work; then it
 * is renamed to <data_dir>/admin.token, so that file exists only once
 * its token authenticates.  Files are mode 0600; errors are logged.
 * The supervisor writes the file (supervisor/bootstrap.c); spacectl
 * reads it for an admin token on the same host.
 */
#ifndef CM_TOKENFILE_H
#define CM_TOKENFILE_H

#include <stdbool.h>
#include <sys/types.h>

#include "limits.h"

#define CM_ADMIN_TOKEN_FILE "admin.token"
#define CM_ADMIN_TOKEN_TEMP "admin.token.tmp"

struct cm_tokenfile {
	char dir[CM_PATH_MAX];       /* data_dir, absolute when possible */
	char path[CM_PATH_MAX + 16]; /* <dir>/admin.token */
	char temp[CM_PATH_MAX + 16]; /* <dir>/admin.token.tmp */
	bool in_temp;                /* the token's file is temp */
	char token[CM_TOKEN_LEN];    /* secret: never logged; wipe it */
};

enum cm_tokenfile_state {
	CM_TOKENFILE_OK,        /* token holds a well-formed token */
	CM_TOKENFILE_ABSENT,    /* neither file exists */
	CM_TOKENFILE_MALFORMED, /* the file holds no token (torn, not ours) */
	CM_TOKENFILE_ERROR,     /* the file system failed */
};

/* The paths under data_dir.  -1 when they do not fit. */
int cm_tokenfile_init(struct cm_tokenfile *f, const char *data_dir);

/*
 * Reads admin.token, else admin.token.tmp (in_temp says which), into
 * f->token, and makes the file and its directory durable (a previous
 * start may have died before its fsync).
 */
enum cm_tokenfile_state cm_tokenfile_read(struct cm_tokenfile *f);

/* The file the token came from: for messages. */
const char *cm_tokenfile_name(const struct cm_tokenfile *f);

/*
 * A token for a store with no principal, where no row can name a token
 * an earlier start left: the file's when well-formed, else a new one
 * written to admin.token.tmp, durably.  0, or -1.
 */
int cm_tokenfile_ensure(struct cm_tokenfile *f);

/* admin.token.tmp becomes admin.token, with its directory fsync'd; a
 * no-op when the token came from admin.token.  0, or -1. */
int cm_tokenfile_publish(struct cm_tokenfile *f);

/* Reads fd to its end into buf, at most cap bytes (the bundles'
 * manifests too).  Returns the length (cap: the file may hold more), or
 * -1 on a read error. */
ssize_t cm_read_all(int fd, char *buf, size_t cap);

#endif
