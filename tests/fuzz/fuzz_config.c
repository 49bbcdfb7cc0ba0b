/*
 * fuzz_config.c: libFuzzer target for the configuration file parser
 * (common/config_file.c, through cm_config_load), from the text of a
 * file.
 *
 * The bytes are a config file (read through a memfd, as a path); nothing
 * comes from the environment or the command line but --config.  Checked
 * beyond "no crash", for every file that loads:
 *   - it round-trips through the fd a parent hands its children
 *     (cm_config_to_fd, then --config-fd): the same configuration;
 *   - it round-trips through its printed form (cm_config_print, in the
 *     file's syntax), when it holds no secret (a secret prints as a
 *     comment): loaded again, it prints the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

_Noreturn static void
die(const char *what, const char *a, const char *b)
{
	fprintf(stderr, "fuzz_config: %s\n--- first:\n%s\n--- second:\n%s\n",
	    what, a ? a : "", b ? b : "");
	abort();
}

/* A memfd holding n bytes at p, or -1. */
static int
memfd_of(const void *p, size_t n)
{
	int fd = memfd_create("fuzz-config", MFD_CLOEXEC);

	if (fd >= 0 && n > 0 && write(fd, p, n) != (ssize_t)n) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Loads from the file at fd; 0 or -1. */
static int
load_file(struct cm_config *cfg, int fd)
{
	char flag[64], err[512];
	char *argv[] = {"fuzz_config", flag, NULL};
	char *envp[] = {NULL};

	snprintf(flag, sizeof(flag), "--config=/proc/self/fd/%d", fd);
	return cm_config_load(cfg, 2, argv, envp, NULL, err, sizeof(err));
}

/* cm_config_print into a malloc'd string. */
static char *
printed(const struct cm_config *cfg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		abort();
	if (cm_config_print(cfg, f) != 0)
		abort();
	fclose(f);
	return buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cm_config a, b;
	char flag[64], err[512], *pa, *pb;
	char *argv[] = {"fuzz_config", flag, NULL};
	int fd;

	if ((fd = memfd_of(data, size)) < 0)
		return 0;
	if (load_file(&a, fd) != 0) {
		close(fd);
		return 0;
	}
	close(fd);
	pa = printed(&a);

	/* The parent's fd: exactly what was loaded, config_path too. */
	if ((fd = cm_config_to_fd(&a)) < 0)
		die("cm_config_to_fd failed", pa, NULL);
	snprintf(flag, sizeof(flag), "--config-fd=%d", fd);
	if (cm_config_load(&b, 2, argv, NULL, NULL, err, sizeof(err)) != 0)
		die("the config fd does not load", pa, err);
	pb = printed(&b);
	if (strcmp(pa, pb) != 0 || strcmp(a.config_path, b.config_path) != 0 ||
	    strcmp(a.postgres_dsn, b.postgres_dsn) != 0)
		die("the config fd gives another configuration", pa, pb);
	free(pb);

	/* The printed form, read as a file, prints the same. */
	if (a.postgres_dsn[0] == '\0') {
		if ((fd = memfd_of(pa, strlen(pa))) < 0)
			abort();
		if (load_file(&b, fd) != 0)
			die("the printed configuration does not load", pa,
			    NULL);
		close(fd);
		pb = printed(&b);
		if (strcmp(pa, pb) != 0)
			die("the printed configuration loads as another", pa,
			    pb);
		free(pb);
	}
	free(pa);
	return 0;
}
