/*
 * config_int.h: what the configuration loader's files share: config.c
 * (the key table, setting and reading a key, cm_config_load's order of
 * sources), config_args.c (flags and the environment), config_file.c (the
 * file), config_fd.c (the sealed memfd for children) and config_out.c
 * (printing and a child's environment).  Nothing outside the loader
 * includes it; everyone else sees config.h.
 */
#ifndef CM_CONFIG_INT_H
#define CM_CONFIG_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

#define CFG_NAME_MAX 64 /* longest spelling of a key we build */

enum cfg_kind { CFG_STR, CFG_INT, CFG_BOOL, CFG_BACKEND };

struct cfg_key {
	const char *name;
	enum cfg_kind kind;
	size_t off, size;
	int min, max;
	bool empty_ok;
	/* Extra check of a string value: NULL when fine, else why not. */
	const char *(*check)(const char *v);
};

/* The keys, in the order they are printed and written to a config fd;
 * config.c checks that CFG_NKEYS counts them. */
#define CFG_NKEYS 21
extern const struct cfg_key cm_cfg_keys[];

/*
 * Past the keys, two names that are not keys: "config" names the file and
 * "config_fd" the memfd that replaces file and environment.
 */
#define CFG_CONFIG CFG_NKEYS
#define CFG_CONFIG_FD (CFG_NKEYS + 1)
#define CFG_NNAMES (CFG_NKEYS + 2)

/* How the environment and the command line spell a key. */
enum cfg_src { CFG_SRC_ENV, CFG_SRC_FLAG, CFG_NSRC };
struct cfg_spelling {
	const char *prefix, *what;
	char sep;
	bool upper;
};
extern const struct cfg_spelling cm_cfg_spelling[CFG_NSRC];

/* Values by source and name (a key, CFG_CONFIG or CFG_CONFIG_FD),
 * borrowed from argv and envp. */
typedef const char *cfg_values[CFG_NSRC][CFG_NNAMES];

/* Writes a reason to err (may be NULL or errlen 0: nothing written) and
 * returns -1, for "return cm_cfg_fail(...)". */
int cm_cfg_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Name i: a key's name, "config" or "config_fd". */
const char *cm_cfg_name(size_t i);

/* Name i as source s spells it ("--data-dir", "SPACED_DATA_DIR") into buf
 * of len bytes, cut short if it does not fit. */
void cm_cfg_spell(size_t i, enum cfg_src s, char *buf, size_t len);

/* The index of the key named exactly key (as the file spells it), or -1. */
int cm_cfg_lookup_file(const char *key);

/* A decimal integer, the whole of v; 0, or -1 if v is not one. */
int cm_cfg_parse_int(const char *v, long *out);

/*
 * Sets key k of cfg from value v, checked as k requires; where names the
 * source in the error.  Returns 0, or -1 with a reason in err and cfg's
 * field unchanged.
 */
int cm_cfg_set(struct cm_config *cfg, const struct cfg_key *k, const char *v,
    const char *where, char *err, size_t errlen);

/* Key i's value (or config_path for CFG_CONFIG) as text: borrowed from
 * cfg, or written to num (len bytes) when it is a number. */
const char *cm_cfg_value_text(
    const struct cm_config *cfg, size_t i, char *num, size_t len);

/* Records the binary's extra flag names (NULL-terminated) in cfg; -1 and
 * err if there are too many or one is a key's flag. */
int cm_cfg_setup_extra(
    struct cm_config *cfg, const char *const *extra, char *err, size_t errlen);

/* Collects the flags of argv[1..argc-1] into vals[CFG_SRC_FLAG] (extra
 * flags straight into cfg); -1 and err on an unknown or repeated flag. */
int cm_cfg_scan_argv(struct cm_config *cfg, cfg_values vals, int argc,
    char *const *argv, char *err, size_t errlen);

/* Collects the SPACED_* variables of envp into vals[CFG_SRC_ENV]; -1 and
 * err on one that names no key or a key twice. */
int cm_cfg_scan_env(
    cfg_values vals, char *const *envp, char *err, size_t errlen);

/* Reads the file at path into cfg; a missing file is fine unless named.
 * Records path in cfg->config_path.  0, or -1 and err. */
int cm_cfg_read_file(struct cm_config *cfg, const char *path, bool named,
    char *err, size_t errlen);

/* Reads the sealed memfd numbered by arg into cfg, every key required, and
 * closes it whatever happens.  0, or -1 and err. */
int cm_cfg_read_fd(
    struct cm_config *cfg, const char *arg, char *err, size_t errlen);

#endif
