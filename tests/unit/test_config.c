#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

/*
 * Each test runs in its own process (Criterion forks), in its own mkdtemp
 * directory, which is also its working directory so the default
 * etc/spaced.conf is the test's own.  Environments are passed explicitly.
 */
static char tmpdir[64];

static void
setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/spaced-cfg-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	cr_assert_eq(chdir(tmpdir), 0);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
teardown(void)
{
	if (chdir("/") == 0 && tmpdir[0] != '\0')
		nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

TestSuite(config, .init = setup, .fini = teardown);

static void
write_file(const char *path, const char *text)
{
	FILE *f;

	if (strchr(path, '/') != NULL && path[0] != '/') {
		char dir[256];

		snprintf(dir, sizeof dir, "%.*s",
		    (int)(strrchr(path, '/') - path), path);
		mkdir(dir, 0700);
	}
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	cr_assert_eq(fputs(text, f) >= 0, 1);
	fclose(f);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})

/* args and env are NULL-terminated; "prog" is prepended as argv[0]. */
static int
load_x(struct cm_config *cfg, const char *const *args, const char *const *env,
    const char *const *extra, char *err, size_t errlen)
{
	char *argv[64];
	int argc = 0;

	argv[argc++] = (char *)"prog";
	for (size_t i = 0; args[i] != NULL; i++)
		argv[argc++] = (char *)args[i];
	argv[argc] = NULL;
	memset(err, 0, errlen);
	return cm_config_load(
	    cfg, argc, argv, (char *const *)env, extra, err, errlen);
}

static void
load_ok(struct cm_config *cfg, const char *const *args, const char *const *env)
{
	char err[512];

	cr_assert_eq(load_x(cfg, args, env, NULL, err, sizeof err), 0,
	    "unexpected error: %s", err);
}

/* Loading must fail with an error that contains every needle. */
static void
load_fails(const char *const *args, const char *const *env, const char *needle1,
    const char *needle2)
{
	struct cm_config cfg;
	char err[512];

	cr_assert_eq(load_x(&cfg, args, env, NULL, err, sizeof err), -1,
	    "accepted; expected error naming %s", needle1);
	cr_assert_not_null(
	    strstr(err, needle1), "error '%s' lacks '%s'", err, needle1);
	if (needle2 != NULL)
		cr_assert_not_null(strstr(err, needle2),
		    "error '%s' lacks '%s'", err, needle2);
}

Test(config, defaults_without_any_source)
{
	struct cm_config cfg;
	char host[256] = {0};

	load_ok(&cfg, NONE, NONE);
	cr_assert_str_eq(cfg.data_dir, "./var");
	cr_assert_str_eq(cfg.run_dir, "./var/run");
	cr_assert_str_eq(cfg.http_listen, "127.0.0.1:8080");
	cr_assert_str_eq(cfg.events_url, "ipc://./var/run/events.ipc");
	cr_assert_eq(cfg.allow_fake_driver, false);
	cr_assert_eq(cfg.managed_browsers, 2);
	cr_assert_str_eq(cfg.chromium_path, "/usr/bin/chromium");
	cr_assert_eq(cfg.warm_standby, true);
	cr_assert_eq(cfg.max_spaces_per_workspace, 64);
	cr_assert_eq(cfg.task_timeout_default, 60);
	cr_assert_eq(cfg.task_timeout_max, 600);
	cr_assert_eq(cfg.takeover_ttl, 600);
	cr_assert_str_eq(cfg.log_level, "info");
	cr_assert_str_eq(cfg.log_format, "auto");
	cr_assert_eq(cfg.store_backend, CM_STORE_SQLITE);
	cr_assert_str_eq(cfg.postgres_dsn, "");
	cr_assert_eq(gethostname(host, sizeof host - 1), 0);
	cr_assert_str_eq(cfg.host_id, host);
	cr_assert_str_eq(cfg.config_path, "", "no default file exists here");
	cr_assert_eq(cfg.n_extra, 0);
}

Test(config, precedence_flag_env_file_default)
{
	struct cm_config cfg;

	write_file("etc/spaced.conf", "data_dir = /from/file\n"
	                              "managed_browsers = 3\n"
	                              "log_level = debug\n"
	                              "allow_fake_driver = true\n"
	                              "host_id = file-host\n"
	                              "task_timeout_default = 10\n");
	load_ok(&cfg,
	    ARGS("--data-dir=/from/flag", "--allow-fake-driver=no",
	        "--task-timeout-default", "30"),
	    ARGS("SPACED_DATA_DIR=/from/env", "SPACED_MANAGED_BROWSERS=4",
	        "SPACED_ALLOW_FAKE_DRIVER=yes",
	        "SPACED_TASK_TIMEOUT_DEFAULT=20", "PATH=/usr/bin"));
	/* flag > env > file */
	cr_assert_str_eq(cfg.data_dir, "/from/flag");
	cr_assert_eq(cfg.allow_fake_driver, false);
	cr_assert_eq(cfg.task_timeout_default, 30);
	/* env > file */
	cr_assert_eq(cfg.managed_browsers, 4);
	/* file > default */
	cr_assert_str_eq(cfg.log_level, "debug");
	cr_assert_str_eq(cfg.host_id, "file-host");
	/* default where nothing is set */
	cr_assert_str_eq(cfg.chromium_path, "/usr/bin/chromium");
	cr_assert_str_eq(cfg.config_path, "etc/spaced.conf");
	/* Derived from the winning data_dir. */
	cr_assert_str_eq(cfg.run_dir, "/from/flag/run");
}

Test(config, precedence_layer_by_layer)
{
	struct cm_config cfg;
	const char *const file = "max_spaces_per_workspace = 7\n";
	const char *const *env = ARGS("SPACED_MAX_SPACES_PER_WORKSPACE=8");
	const char *const *flag = ARGS("--max-spaces-per-workspace=9");

	load_ok(&cfg, NONE, NONE);
	cr_assert_eq(cfg.max_spaces_per_workspace, 64);
	write_file("etc/spaced.conf", file);
	load_ok(&cfg, NONE, NONE);
	cr_assert_eq(cfg.max_spaces_per_workspace, 7);
	load_ok(&cfg, NONE, env);
	cr_assert_eq(cfg.max_spaces_per_workspace, 8);
	load_ok(&cfg, flag, env);
	cr_assert_eq(cfg.max_spaces_per_workspace, 9);
	load_ok(&cfg, flag, NONE);
	cr_assert_eq(cfg.max_spaces_per_workspace, 9);
}

Test(config, flag_forms_and_booleans)
{
	struct cm_config cfg;
	static const char *const t[] = {"true", "1", "yes", "TRUE", "Yes"};
	static const char *const f[] = {"false", "0", "no", "False"};
	char arg[64];

	load_ok(&cfg, ARGS("--allow-fake-driver"), NONE);
	cr_assert_eq(cfg.allow_fake_driver, true, "bare flag means true");
	load_ok(&cfg, ARGS("--chromium-path", "/opt/c", "--log-format", "text"),
	    NONE);
	cr_assert_str_eq(cfg.chromium_path, "/opt/c");
	cr_assert_str_eq(cfg.log_format, "text");
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		snprintf(arg, sizeof arg, "--allow-fake-driver=%s", t[i]);
		load_ok(&cfg, ARGS(arg), NONE);
		cr_assert_eq(cfg.allow_fake_driver, true, "%s", arg);
	}
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		snprintf(arg, sizeof arg, "SPACED_ALLOW_FAKE_DRIVER=%s", f[i]);
		load_ok(&cfg, NONE, ARGS(arg));
		cr_assert_eq(cfg.allow_fake_driver, false, "%s", arg);
	}
	/* A bare boolean never swallows the next argument. */
	load_fails(ARGS("--allow-fake-driver", "false"), NONE, "false", NULL);
	load_fails(
	    ARGS("--allow-fake-driver=maybe"), NONE, "allow_fake_driver", NULL);
}

Test(config, flag_value_missing)
{
	load_fails(ARGS("--data-dir"), NONE, "data_dir", NULL);
	load_fails(
	    ARGS("--data-dir", "--log-level=info"), NONE, "data_dir", NULL);
	load_fails(ARGS("--config"), NONE, "config", NULL);
}

Test(config, parse_errors_name_the_key_in_every_source)
{
	static const struct {
		const char *key, *value;
	} bad[] = {
	    {"managed_browsers", "257"},
	    {"managed_browsers", "-1"},
	    {"managed_browsers", "two"},
	    {"managed_browsers", "2x"},
	    {"managed_browsers", " 2"},
	    {"managed_browsers", "+2"},
	    {"managed_browsers", "99999999999999999999"},
	    {"max_spaces_per_workspace", "0"},
	    {"max_spaces_per_workspace", "100001"},
	    {"task_timeout_default", "0"},
	    {"task_timeout_max", "0"},
	    {"task_timeout_max", "601"},
	    {"log_level", "verbose"},
	    {"log_level", "INFO"},
	    {"log_format", "xml"},
	    {"store_backend", "mysql"},
	    {"http_listen", "8080"},
	    {"http_listen", ":8080"},
	    {"http_listen", "127.0.0.1:"},
	    {"http_listen", "127.0.0.1:0"},
	    {"http_listen", "127.0.0.1:65536"},
	    {"http_listen", "127.0.0.1:99999999999999999999"},
	    {"http_listen", "127.0.0.1:80a"},
	    {"http_listen", "::1:8080"},
	    {"http_listen", "[::1:8080"},
	    {"allow_fake_driver", "maybe"},
	    {"allow_fake_driver", ""},
	    {"data_dir", ""},
	    {"chromium_path", ""},
	    {"public_hosts", "agents.example.com:443"},
	    {"public_hosts", "https://agents.example.com"},
	    {"public_hosts", "a.example,"},
	    {"public_hosts", "a.example,,b.example"},
	    {"public_hosts", "::1"},
	    {"public_hosts", "a,b,c,d,e,f,g,h,i"},
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char flag[256], env[256], file[256], up[64];
		size_t j;

		snprintf(
		    flag, sizeof flag, "--%s=%s", bad[i].key, bad[i].value);
		for (j = 2; flag[j] != '='; j++)
			if (flag[j] == '_')
				flag[j] = '-';
		for (j = 0; bad[i].key[j] != '\0'; j++)
			up[j] = (char)(bad[i].key[j] == '_'
			                   ? '_'
			                   : bad[i].key[j] - 'a' + 'A');
		up[j] = '\0';
		snprintf(env, sizeof env, "SPACED_%s=%s", up, bad[i].value);
		snprintf(file, sizeof file, "# comment\n%s = \"%s\"\n",
		    bad[i].key, bad[i].value);
		load_fails(ARGS(flag), NONE, bad[i].key, NULL);
		load_fails(NONE, ARGS(env), bad[i].key, NULL);
		write_file("etc/spaced.conf", file);
		/* The file error also gives the line number. */
		load_fails(NONE, NONE, bad[i].key, "spaced.conf:2");
		unlink("etc/spaced.conf");
	}
}

Test(config, good_values_at_the_bounds)
{
	struct cm_config cfg;

	load_ok(&cfg,
	    ARGS("--managed-browsers=0", "--max-spaces-per-workspace=100000",
	        "--task-timeout-default=600", "--task-timeout-max=600",
	        "--http-listen=[::1]:65535"),
	    NONE);
	cr_assert_eq(cfg.managed_browsers, 0);
	cr_assert_eq(cfg.max_spaces_per_workspace, 100000);
	cr_assert_eq(cfg.task_timeout_default, 600);
	cr_assert_str_eq(cfg.http_listen, "[::1]:65535");
	load_ok(&cfg,
	    ARGS("--managed-browsers=256", "--max-spaces-per-workspace=1",
	        "--task-timeout-default=1", "--task-timeout-max=1",
	        "--http-listen=localhost:1", "--log-level=error"),
	    NONE);
	cr_assert_eq(cfg.managed_browsers, 256);
	cr_assert_eq(cfg.task_timeout_max, 1);
	cr_assert_str_eq(cfg.http_listen, "localhost:1");
	load_ok(&cfg,
	    ARGS("--public-hosts=agents.example.com,[::2],a,b,c,d,e,f"), NONE);
	cr_assert_str_eq(
	    cfg.public_hosts, "agents.example.com,[::2],a,b,c,d,e,f");
}

Test(config, cross_key_checks)
{
	struct cm_config cfg;

	/* The default is checked against the effective max, from any source. */
	write_file("etc/spaced.conf", "task_timeout_max = 50\n");
	load_fails(ARGS("--task-timeout-default=51"), NONE,
	    "task_timeout_default", NULL);
	load_ok(&cfg, ARGS("--task-timeout-default=50"), NONE);
	cr_assert_eq(cfg.task_timeout_max, 50);
	/* The default 60 is above a max of 50 unless lowered too. */
	unlink("etc/spaced.conf");
	load_fails(
	    ARGS("--task-timeout-max=50"), NONE, "task_timeout_default", NULL);

	load_fails(
	    ARGS("--store-backend=postgres"), NONE, "postgres_dsn", NULL);
	load_ok(&cfg, ARGS("--store-backend=postgres"),
	    ARGS("SPACED_POSTGRES_DSN=host=db dbname=spaced"));
	cr_assert_eq(cfg.store_backend, CM_STORE_POSTGRES);
	cr_assert_str_eq(cfg.postgres_dsn, "host=db dbname=spaced");
}

Test(config, value_longer_than_field)
{
	struct cm_config cfg;
	char *flag = malloc(CM_PATH_MAX + 32);
	char *file = malloc(CM_PATH_MAX + 32);
	int n;

	cr_assert(flag != NULL && file != NULL);
	/* CM_PATH_MAX - 1 bytes fit (run_dir and events_url set short). */
	n = snprintf(
	    flag, CM_PATH_MAX + 32, "--data-dir=/%0*d", CM_PATH_MAX - 2, 0);
	cr_assert_gt(n, 0);
	load_ok(&cfg, ARGS(flag, "--run-dir=/r"), NONE);
	cr_assert_eq(strlen(cfg.data_dir), CM_PATH_MAX - 1);
	/* One more does not. */
	snprintf(
	    flag, CM_PATH_MAX + 32, "--data-dir=/%0*d", CM_PATH_MAX - 1, 0);
	load_fails(ARGS(flag, "--run-dir=/r"), NONE, "data_dir", "longer");
	snprintf(file, CM_PATH_MAX + 32, "\n\nlog_level = %s\n",
	    "debugdebugdebug!"); /* 16 bytes, field is 16 */
	write_file("etc/spaced.conf", file);
	load_fails(NONE, NONE, "log_level", "spaced.conf:3");
	free(flag);
	free(file);
}

Test(config, line_length_limit)
{
	struct cm_config cfg;
	char *text = malloc(2 * CM_CONF_LINE_MAX);
	const char *head = "chromium_path = /c";
	size_t hl = strlen(head);

	cr_assert_not_null(text);
	/* Exactly CM_CONF_LINE_MAX bytes: padding then a trailing comment. */
	memcpy(text, head, hl);
	memset(text + hl, ' ', CM_CONF_LINE_MAX - hl);
	text[CM_CONF_LINE_MAX - 2] = '#';
	text[CM_CONF_LINE_MAX] = '\n';
	text[CM_CONF_LINE_MAX + 1] = '\0';
	write_file("etc/spaced.conf", text);
	load_ok(&cfg, NONE, NONE);
	cr_assert_str_eq(cfg.chromium_path, "/c");

	/* One byte more is an error naming the key and the line. */
	text[0] = '\n';
	memcpy(text + 1, head, hl);
	memset(text + 1 + hl, ' ', CM_CONF_LINE_MAX + 1 - hl);
	text[CM_CONF_LINE_MAX + 2] = '\n';
	text[CM_CONF_LINE_MAX + 3] = '\0';
	write_file("etc/spaced.conf", text);
	load_fails(NONE, NONE, "chromium_path", "spaced.conf:2");
	free(text);
}

Test(config, file_syntax)
{
	struct cm_config cfg;

	write_file("etc/spaced.conf",
	    "# whole-line comment\n"
	    "\n"
	    "   \t  \n"
	    "  data_dir\t=\t/srv/spaced   \n"
	    "postgres_dsn = host=db password=a#b   # trailing comment\n"
	    "chromium_path = \"/opt/my chrome #1/chromium\"  # quoted\n"
	    "host_id=h1#not-a-comment\n"
	    "log_format = text\r\n"
	    "http_listen = \"\"0.0.0.0:9\n"
	    "    # indented comment\n");
	/* The last real line above is invalid; fix it and reload. */
	load_fails(NONE, NONE, "http_listen", "spaced.conf:9");
	write_file("etc/spaced.conf",
	    "# whole-line comment\n"
	    "\n"
	    "   \t  \n"
	    "  data_dir\t=\t/srv/spaced   \n"
	    "postgres_dsn = host=db password=a#b   # trailing comment\n"
	    "chromium_path = \"/opt/my chrome #1/chromium\"  # quoted\n"
	    "host_id=h1#not-a-comment\n"
	    "log_format = text\r\n"
	    "http_listen = \"0.0.0.0:9\"\n"
	    "    # indented comment\n"
	    "run_dir = # only a comment: empty, so derived\n"
	    "managed_browsers = 5"); /* no final newline */
	load_ok(&cfg, NONE, NONE);
	cr_assert_str_eq(cfg.data_dir, "/srv/spaced");
	cr_assert_str_eq(cfg.postgres_dsn, "host=db password=a#b");
	cr_assert_str_eq(cfg.chromium_path, "/opt/my chrome #1/chromium");
	cr_assert_str_eq(cfg.host_id, "h1#not-a-comment");
	cr_assert_str_eq(cfg.log_format, "text");
	cr_assert_str_eq(cfg.http_listen, "0.0.0.0:9");
	cr_assert_str_eq(cfg.run_dir, "/srv/spaced/run");
	cr_assert_eq(cfg.managed_browsers, 5);
}

/* cm_config_print of cfg into a malloc'd string. */
static char *
printed(const struct cm_config *cfg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	cr_assert_not_null(f);
	cr_assert_eq(cm_config_print(cfg, f), 0);
	fclose(f);
	return text;
}

/* Found by fuzz_config: a value with blanks at an end or a '#' after a
 * blank was printed bare, so the printed configuration (--print-config)
 * loaded as another one, its value trimmed or cut at the '#'. */
Test(config, the_printed_configuration_loads_as_itself)
{
	struct cm_config a, b;
	char *first, *second;

	write_file("etc/spaced.conf", "data_dir = \" /srv/my data #1 \"\n"
	                              "chromium_path = \"#/opt/chromium\"\n"
	                              "host_id = h1#not-a-comment\n");
	load_ok(&a, NONE, NONE);
	cr_assert_str_eq(a.data_dir, " /srv/my data #1 ");
	first = printed(&a);
	cr_assert_not_null(
	    strstr(first, "data_dir = \" /srv/my data #1 \"\n"), "%s", first);
	cr_assert_not_null(
	    strstr(first, "host_id = h1#not-a-comment\n"), "%s", first);
	write_file("etc/spaced.conf", first);
	load_ok(&b, NONE, NONE);
	second = printed(&b);
	cr_assert_str_eq(first, second);
	cr_assert_str_eq(b.data_dir, a.data_dir);
	cr_assert_str_eq(b.chromium_path, "#/opt/chromium");
	free(first);
	free(second);
}

Test(config, file_syntax_errors)
{
	write_file("etc/spaced.conf", "\ndata_dir /x\n");
	load_fails(NONE, NONE, "spaced.conf:2", "key = value");
	write_file("etc/spaced.conf", " = /x\n");
	load_fails(NONE, NONE, "spaced.conf:1", "key");
	write_file("etc/spaced.conf", "data_dir = \"/x\n");
	load_fails(NONE, NONE, "data_dir", "quote");
	write_file("etc/spaced.conf", "data_dir = \"/x\" y\n");
	load_fails(NONE, NONE, "data_dir", "quote");
	write_file("etc/spaced.conf", "data_dir = /a\n# x\ndata_dir = /b\n");
	load_fails(NONE, NONE, "data_dir", "spaced.conf:3");
	write_file("etc/spaced.conf", "config = /other.conf\n");
	load_fails(NONE, NONE, "config", "unknown");
	write_file("etc/spaced.conf", "data-dir = /x\n");
	load_fails(NONE, NONE, "data-dir", "unknown");
}

Test(config, unknown_keys_in_every_source)
{
	write_file("etc/spaced.conf", "data_dir = /x\nbogus_key = 1\n");
	load_fails(NONE, NONE, "bogus_key", "spaced.conf:2");
	unlink("etc/spaced.conf");
	load_fails(NONE, ARGS("SPACED_BOGUS_KEY=1"), "SPACED_BOGUS_KEY", NULL);
	/* The environment spelling is exact upper case. */
	load_fails(NONE, ARGS("SPACED_data_dir=/x"), "SPACED_data_dir", NULL);
	load_fails(NONE, ARGS("SPACED_=1"), "SPACED_", NULL);
	load_fails(ARGS("--bogus-key=1"), NONE, "bogus-key", NULL);
	/* Flags spell keys with dashes only. */
	load_fails(ARGS("--data_dir=/x"), NONE, "data_dir", "unknown");
	load_fails(ARGS("-d"), NONE, "-d", NULL);
	load_fails(ARGS("positional"), NONE, "positional", NULL);
	load_fails(ARGS("--"), NONE, "--", NULL);
	/* Never the value: it could be a secret given with a typo. */
	load_fails(ARGS("--=x"), NONE, "unexpected argument '--'", NULL);
}

Test(config, unrelated_environment_is_ignored)
{
	struct cm_config cfg;

	load_ok(&cfg, NONE,
	    ARGS("PATH=/bin", "SPACEDX=1", "spaced_data_dir=/x", "SPACED",
	        "SPACED_DATA_DIR", "HOME=/root"));
	cr_assert_str_eq(cfg.data_dir, "./var");
}

Test(config, duplicates_within_a_source)
{
	load_fails(
	    ARGS("--data-dir=/a", "--data-dir=/b"), NONE, "data_dir", "twice");
	load_fails(ARGS("--config=/a", "--config=/b"), NONE, "config", "twice");
	load_fails(NONE, ARGS("SPACED_DATA_DIR=/a", "SPACED_DATA_DIR=/b"),
	    "data_dir", "twice");
}

Test(config, config_file_selection)
{
	struct cm_config cfg;
	char a[128], b[128], flag[160], env[160];

	snprintf(a, sizeof a, "%s/a.conf", tmpdir);
	snprintf(b, sizeof b, "%s/b.conf", tmpdir);
	write_file(a, "managed_browsers = 11\n");
	write_file(b, "managed_browsers = 12\n");
	write_file("etc/spaced.conf", "managed_browsers = 13\n");
	snprintf(flag, sizeof flag, "--config=%s", a);
	snprintf(env, sizeof env, "SPACED_CONFIG=%s", b);

	load_ok(&cfg, NONE, NONE);
	cr_assert_eq(cfg.managed_browsers, 13);
	cr_assert_str_eq(cfg.config_path, "etc/spaced.conf");
	load_ok(&cfg, NONE, ARGS(env));
	cr_assert_eq(cfg.managed_browsers, 12);
	cr_assert_str_eq(cfg.config_path, b);
	load_ok(&cfg, ARGS(flag), ARGS(env));
	cr_assert_eq(cfg.managed_browsers, 11, "--config beats SPACED_CONFIG");
	cr_assert_str_eq(cfg.config_path, a);
	load_ok(&cfg, ARGS("--config", b), NONE);
	cr_assert_eq(cfg.managed_browsers, 12);
}

Test(config, missing_named_file_is_an_error_missing_default_is_not)
{
	struct cm_config cfg;

	load_ok(&cfg, NONE, NONE);
	cr_assert_str_eq(cfg.config_path, "");
	load_fails(ARGS("--config=/nonexistent/spaced.conf"), NONE,
	    "/nonexistent/spaced.conf", NULL);
	load_fails(
	    NONE, ARGS("SPACED_CONFIG=missing.conf"), "missing.conf", NULL);
	/* Naming the default path explicitly makes it required too. */
	load_fails(
	    ARGS("--config=etc/spaced.conf"), NONE, "etc/spaced.conf", NULL);
	load_fails(ARGS("--config="), NONE, "config", NULL);
	/* A default path that exists but is not a readable file is an error. */
	cr_assert_eq(mkdir("etc", 0700), 0);
	cr_assert_eq(mkdir("etc/spaced.conf", 0700), 0);
	load_fails(NONE, NONE, "etc/spaced.conf", NULL);
}

Test(config, derived_run_dir_and_events_url)
{
	struct cm_config cfg;

	load_ok(&cfg, ARGS("--data-dir=/tmp/sp"), NONE);
	cr_assert_str_eq(cfg.run_dir, "/tmp/sp/run");
	cr_assert_str_eq(cfg.events_url, "ipc:///tmp/sp/run/events.ipc");
	load_ok(&cfg, ARGS("--data-dir=/tmp/sp/"), NONE);
	cr_assert_str_eq(cfg.run_dir, "/tmp/sp/run");
	load_ok(&cfg, ARGS("--data-dir=/"), NONE);
	cr_assert_str_eq(cfg.run_dir, "/run");
	/* An explicit run_dir, from any source, feeds events_url. */
	load_ok(&cfg, ARGS("--data-dir=/tmp/sp"), ARGS("SPACED_RUN_DIR=/r"));
	cr_assert_str_eq(cfg.run_dir, "/r");
	cr_assert_str_eq(cfg.events_url, "ipc:///r/events.ipc");
	/* An explicit events_url is kept. */
	load_ok(&cfg, ARGS("--events-url=tcp://127.0.0.1:5555"), NONE);
	cr_assert_str_eq(cfg.events_url, "tcp://127.0.0.1:5555");
	cr_assert_str_eq(cfg.run_dir, "./var/run");
}

Test(config, ipc_path_limit)
{
	struct cm_config cfg;
	char flag[256];
	/* run_dir + "/events.ipc" (11 bytes) at exactly CM_IPC_PATH_MAX. */
	int dl = CM_IPC_PATH_MAX - 11;

	snprintf(flag, sizeof flag, "--run-dir=/%0*d", dl - 1, 0);
	load_ok(&cfg, ARGS(flag), NONE);
	cr_assert_eq(strlen(cfg.events_url), 6 + CM_IPC_PATH_MAX);
	snprintf(flag, sizeof flag, "--run-dir=/%0*d", dl, 0);
	load_fails(ARGS(flag), NONE, "events_url", "run_dir");
	/* Through data_dir as well. */
	snprintf(flag, sizeof flag, "--data-dir=/%0*d", dl, 0);
	load_fails(ARGS(flag), NONE, "events_url", NULL);
	/* And an explicit ipc URL. */
	snprintf(
	    flag, sizeof flag, "--events-url=ipc:///%0*d", CM_IPC_PATH_MAX, 0);
	load_fails(ARGS(flag), NONE, "events_url", NULL);
}

Test(config, control_characters_refused)
{
	load_fails(NONE, ARGS("SPACED_HOST_ID=a\nb"), "host_id", "control");
	load_fails(ARGS("--data-dir=/a\tb"), NONE, "data_dir", "control");
}

Test(config, extra_flags)
{
	static const char *const extra[] = {"space", "follow", "json", NULL};
	struct cm_config cfg;
	char err[256];

	cr_assert_eq(load_x(&cfg,
	                 ARGS("--space", "abc", "--data-dir=/d", "--json=a=b",
	                     "--follow"),
	                 NONE, extra, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(cfg.n_extra, 3);
	cr_assert_str_eq(cm_config_extra(&cfg, "space"), "abc");
	cr_assert_str_eq(cm_config_extra(&cfg, "json"), "a=b");
	cr_assert_str_eq(cm_config_extra(&cfg, "follow"), "true");
	cr_assert_str_eq(cfg.data_dir, "/d");
	cr_assert_null(cm_config_extra(&cfg, "nope"));
	cr_assert_null(cm_config_extra(&cfg, "spac"));

	cr_assert_eq(load_x(&cfg, ARGS("--follow", "--space=x"), NONE, extra,
	                 err, sizeof err),
	    0, "%s", err);
	cr_assert_str_eq(cm_config_extra(&cfg, "follow"), "true");
	cr_assert_null(cm_config_extra(&cfg, "json"), "not given");

	/* Extras are command-line only. */
	cr_assert_eq(load_x(&cfg, NONE, ARGS("SPACED_SPACE=abc"), extra, err,
	                 sizeof err),
	    -1);
	cr_assert_not_null(strstr(err, "SPACED_SPACE"), "%s", err);
	write_file("etc/spaced.conf", "space = abc\n");
	cr_assert_eq(load_x(&cfg, NONE, NONE, extra, err, sizeof err), -1);
	cr_assert_not_null(strstr(err, "space"), "%s", err);
	unlink("etc/spaced.conf");
	/* Without the extra list they are unknown. */
	load_fails(ARGS("--space=abc"), NONE, "space", NULL);
	cr_assert_eq(load_x(&cfg, ARGS("--space=a", "--space=b"), NONE, extra,
	                 err, sizeof err),
	    -1);
	cr_assert_not_null(strstr(err, "twice"), "%s", err);
}

Test(config, bad_extra_lists)
{
	static const char *const clash[] = {"data-dir", NULL};
	static const char *const cfgname[] = {"config", NULL};
	static const char *const twice[] = {"a", "a", NULL};
	static const char *const many[] = {
	    "a", "b", "c", "d", "e", "f", "g", "h", "i", NULL};
	static const char *const longname[] = {
	    "a-flag-name-of-thirty-two-chars!", NULL};
	struct cm_config cfg;
	char err[256];

	cr_assert_eq(load_x(&cfg, NONE, NONE, clash, err, sizeof err), -1);
	cr_assert_eq(load_x(&cfg, NONE, NONE, cfgname, err, sizeof err), -1);
	cr_assert_eq(load_x(&cfg, NONE, NONE, twice, err, sizeof err), -1);
	cr_assert_eq(load_x(&cfg, NONE, NONE, many, err, sizeof err), -1);
	cr_assert_eq(load_x(&cfg, NONE, NONE, longname, err, sizeof err), -1);
	cr_assert_eq(load_x(&cfg, NONE, NONE, many + 1, err, sizeof err), 0,
	    "exactly CM_CONFIG_EXTRA_MAX is fine: %s", err);
}

static void
assert_same_config(const struct cm_config *a, const struct cm_config *b)
{
	cr_assert_str_eq(a->data_dir, b->data_dir);
	cr_assert_str_eq(a->run_dir, b->run_dir);
	cr_assert_str_eq(a->http_listen, b->http_listen);
	cr_assert_str_eq(a->events_url, b->events_url);
	cr_assert_eq(a->allow_fake_driver, b->allow_fake_driver);
	cr_assert_eq(a->managed_browsers, b->managed_browsers);
	cr_assert_str_eq(a->chromium_path, b->chromium_path);
	cr_assert_eq(a->warm_standby, b->warm_standby);
	cr_assert_eq(a->max_spaces_per_workspace, b->max_spaces_per_workspace);
	cr_assert_eq(a->task_timeout_default, b->task_timeout_default);
	cr_assert_eq(a->task_timeout_max, b->task_timeout_max);
	cr_assert_str_eq(a->log_level, b->log_level);
	cr_assert_str_eq(a->log_format, b->log_format);
	cr_assert_eq(a->store_backend, b->store_backend);
	cr_assert_str_eq(a->postgres_dsn, b->postgres_dsn);
	cr_assert_str_eq(a->host_id, b->host_id);
	cr_assert_str_eq(a->config_path, b->config_path);
}

/* "--config-fd=N" for fd, in buf. */
static const char *
fd_flag(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "--config-fd=%d", fd);
	return buf;
}

/*
 * Loads a child from the parent's config fd, with an environment and a
 * file that must both be ignored, and checks that the fd was closed.
 */
static void
round_trip(const struct cm_config *parent)
{
	struct cm_config child;
	char flag[32], err[512];
	int fd = cm_config_to_fd(parent);

	cr_assert_geq(fd, 0);
	write_file("etc/spaced.conf", "data_dir = /from/the/file\n");
	cr_assert_eq(load_x(&child, ARGS(fd_flag(flag, sizeof flag, fd)),
	                 ARGS("SPACED_LOG_LEVEL=error", "SPACED_DATADIR=typo"),
	                 NULL, err, sizeof err),
	    0, "child rejected its fd: %s", err);
	assert_same_config(parent, &child);
	cr_assert_eq(fcntl(fd, F_GETFD), -1, "the child closes the fd");
}

Test(config, fd_round_trip_non_defaults)
{
	static const char *const extra[] = {"space", NULL};
	struct cm_config cfg;
	char err[512];

	write_file("etc/spaced.conf", "log_format = text\n"
	                              "store_backend = postgres\n"
	                              "postgres_dsn = \"host=db user=u\"\n"
	                              "task_timeout_max = 300\n");
	cr_assert_eq(
	    load_x(&cfg,
	        ARGS("--data-dir=/srv/d", "--allow-fake-driver",
	            "--managed-browsers=0", "--space=s1",
	            "--chromium-path=/opt/chromium", "--host-id=h-7"),
	        ARGS("SPACED_HTTP_LISTEN=[::1]:9000", "SPACED_LOG_LEVEL=warn",
	            "SPACED_MAX_SPACES_PER_WORKSPACE=5",
	            "SPACED_TASK_TIMEOUT_DEFAULT=9"),
	        extra, err, sizeof err),
	    0, "%s", err);
	round_trip(&cfg);
}

Test(config, fd_round_trip_defaults_and_false)
{
	struct cm_config cfg;

	load_ok(&cfg, NONE, NONE);
	cr_assert_eq(cfg.allow_fake_driver, false);
	round_trip(&cfg);
}

/* A flag overrode the parent's environment: the child follows the flag. */
Test(config, fd_keeps_the_parents_precedence)
{
	struct cm_config parent, child;
	char flag[32];
	int fd;

	load_ok(&parent, ARGS("--data-dir=/from/flag"),
	    ARGS("SPACED_DATA_DIR=/from/env"));
	cr_assert_geq(fd = cm_config_to_fd(&parent), 0);
	load_ok(&child, ARGS(fd_flag(flag, sizeof flag, fd)),
	    ARGS("SPACED_DATA_DIR=/from/env"));
	cr_assert_str_eq(child.data_dir, "/from/flag");

	/* The child's own flags still win, as for one started by hand. */
	cr_assert_geq(fd = cm_config_to_fd(&parent), 0);
	load_ok(&child,
	    ARGS(fd_flag(flag, sizeof flag, fd), "--data-dir=/by/hand"), NONE);
	cr_assert_str_eq(child.data_dir, "/by/hand");
	cr_assert_str_eq(child.run_dir, "/from/flag/run");
}

Test(config, fd_is_sealed_and_holds_no_extra)
{
	static const char *const extra[] = {"space", NULL};
	struct cm_config cfg;
	char err[512], buf[CM_CONFIG_FD_MAX];
	ssize_t n;
	int fd;

	cr_assert_eq(load_x(&cfg, ARGS("--space=s1", "--postgres-dsn=canary"),
	                 NONE, extra, err, sizeof err),
	    0, "%s", err);
	cr_assert_geq(fd = cm_config_to_fd(&cfg), 0);
	cr_assert_eq(write(fd, "x", 1), -1, "a sealed fd refuses writes");
	cr_assert_eq(ftruncate(fd, 0), -1);
	cr_assert_neq(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	n = pread(fd, buf, sizeof buf - 1, 0);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	cr_assert_not_null(strstr(buf, "postgres_dsn=canary\n"));
	cr_assert_null(strstr(buf, "\nspace="), "extras stay: %s", buf);
	cr_assert_neq(strncmp(buf, "space=", 6), 0, "extras stay: %s", buf);
	close(fd);
}

Test(config, fd_refuses_an_unsealed_or_bad_fd)
{
	int p[2];
	char flag[32];

	cr_assert_eq(pipe(p), 0);
	load_fails(ARGS(fd_flag(flag, sizeof flag, p[0])), NONE, "config_fd",
	    "not a sealed memfd");
	cr_assert_eq(fcntl(p[0], F_GETFD), -1, "closed even when refused");
	close(p[1]);
	load_fails(ARGS("--config-fd=x"), NONE, "config_fd", "descriptor");
	load_fails(ARGS("--config-fd=-1"), NONE, "config_fd", "descriptor");
	load_fails(ARGS("--config=/dev/null", "--config-fd=3"), NONE,
	    "config_fd", "exclude");
	load_fails(NONE, ARGS("SPACED_CONFIG_FD=3"), "SPACED_CONFIG_FD",
	    "only the flag");
}

/* A hand-made memfd: sealed, with the given text. */
static int
sealed_memfd(const char *text)
{
	int fd = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	cr_assert_eq(
	    fcntl(fd, F_ADD_SEALS,
	        F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE),
	    0);
	return fd;
}

Test(config, fd_refuses_short_or_unknown_contents)
{
	struct cm_config cfg;
	char flag[32], text[CM_CONFIG_FD_MAX];
	int fd;

	load_ok(&cfg, NONE, NONE);
	fd = cm_config_to_fd(&cfg);
	cr_assert_eq(pread(fd, text, sizeof text, 0) > 0, 1);
	close(fd);

	load_fails(
	    ARGS(fd_flag(flag, sizeof flag, sealed_memfd("data_dir=/x\n"))),
	    NONE, "config_fd", "missing");
	load_fails(ARGS(fd_flag(flag, sizeof flag, sealed_memfd("bogus=1\n"))),
	    NONE, "config_fd:1", "unknown key");
	load_fails(
	    ARGS(fd_flag(flag, sizeof flag, sealed_memfd("data_dir=/x"))), NONE,
	    "config_fd", "newline");
	load_fails(ARGS(fd_flag(flag, sizeof flag,
	               sealed_memfd("data_dir=/x\ndata_dir=/y\n"))),
	    NONE, "config_fd:2", "duplicate");
	load_fails(ARGS(fd_flag(flag, sizeof flag,
	               sealed_memfd("task_timeout_max=601\n"))),
	    NONE, "config_fd:1", "task_timeout_max");
}

Test(config, child_env_drops_secret_keys_only)
{
	char *const env[] = {(char *)"PATH=/bin",
	    (char *)"SPACED_POSTGRES_DSN=host=db password=canary",
	    (char *)"SPACED_DATA_DIR=/d", (char *)"SPACED_POSTGRES_DSNX=keep",
	    (char *)"HOME=/root", NULL};
	char **out = cm_config_child_env(env);
	size_t n = 0;

	cr_assert_not_null(out);
	for (; out[n] != NULL; n++)
		cr_assert_null(strstr(out[n], "canary"), "%s", out[n]);
	cr_assert_eq(n, 4);
	cr_assert_str_eq(out[0], "PATH=/bin");
	cr_assert_str_eq(out[1], "SPACED_DATA_DIR=/d");
	cr_assert_str_eq(out[2], "SPACED_POSTGRES_DSNX=keep");
	cr_assert_str_eq(out[3], "HOME=/root");
	free(out);
}

Test(config, no_value_in_an_unexpected_argument_message)
{
	load_fails(ARGS("postgres-dsn=host=db password=canary"), NONE,
	    "unexpected argument 'postgres-dsn'", NULL);
}

Test(config, null_envp_means_process_environment)
{
	struct cm_config cfg;
	char *argv[] = {(char *)"prog", NULL};
	char err[256];

	/*
	 * The one test that touches the real environment, because it is what
	 * is under test; Criterion runs it in its own process.
	 */
	cr_assert_eq(setenv("SPACED_MANAGED_BROWSERS", "17", 1), 0);
	cr_assert_eq(cm_config_load(&cfg, 1, argv, NULL, NULL, err, sizeof err),
	    0, "%s", err);
	cr_assert_eq(cfg.managed_browsers, 17);
	cr_assert_eq(setenv("SPACED_NOT_A_KEY", "1", 1), 0);
	cr_assert_eq(
	    cm_config_load(&cfg, 1, argv, NULL, NULL, err, sizeof err), -1);
	cr_assert_not_null(strstr(err, "SPACED_NOT_A_KEY"), "%s", err);
}
