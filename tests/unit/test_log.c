#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "limits.h"
#include "log.h"

/* How far below CM_LOG_LINE_MAX a cut line may end. */
#define LOG_SLACK 200

/* stderr captured into a temporary file opened O_APPEND. */
struct capture {
	char path[64];
	int saved;
};

static void
capture_start(struct capture *c)
{
	int fd;

	snprintf(c->path, sizeof c->path, "/tmp/test_log_XXXXXX");
	fd = mkstemp(c->path);
	cr_assert_geq(fd, 0);
	close(fd);
	fd = open(c->path, O_WRONLY | O_APPEND | O_CLOEXEC);
	cr_assert_geq(fd, 0);
	c->saved = dup(STDERR_FILENO);
	cr_assert_geq(c->saved, 0);
	cr_assert_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

static char *
read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len != NULL)
		*len = (size_t)n;
	return buf;
}

/* Restores stderr; returns everything written meanwhile (caller frees). */
static char *
capture_end(struct capture *c, size_t *len)
{
	char *out;

	cr_assert_eq(dup2(c->saved, STDERR_FILENO), STDERR_FILENO);
	close(c->saved);
	out = read_all(c->path, len);
	unlink(c->path);
	return out;
}

static size_t
count_lines(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

/* Parses exactly one JSON line and checks the fixed fields. */
static json_t *
parse_line(const char *out, const char *level, const char *proc)
{
	json_error_t jerr;
	json_t *v;
	const char *ts;
	size_t len = strlen(out);

	cr_assert_gt(len, 0, "nothing logged");
	cr_assert_eq(out[len - 1], '\n', "line must end in newline");
	cr_assert_eq(count_lines(out), 1, "expected one line: %s", out);
	v = json_loadb(out, len, JSON_REJECT_DUPLICATES, &jerr);
	cr_assert_not_null(v, "not JSON (%s): %s", jerr.text, out);
	cr_assert_eq(json_object_size(v), 5, "fields: %s", out);
	cr_assert_str_eq(json_string_value(json_object_get(v, "level")), level);
	cr_assert_str_eq(json_string_value(json_object_get(v, "proc")), proc);
	cr_assert(json_is_integer(json_object_get(v, "pid")));
	cr_assert_eq(json_integer_value(json_object_get(v, "pid")), getpid());
	cr_assert(json_is_string(json_object_get(v, "msg")));
	ts = json_string_value(json_object_get(v, "ts"));
	cr_assert_not_null(ts);
	cr_assert_eq(strlen(ts), 24, "ts %s", ts);
	cr_assert(ts[4] == '-' && ts[7] == '-' && ts[10] == 'T' &&
	              ts[13] == ':' && ts[16] == ':' && ts[19] == '.' &&
	              ts[23] == 'Z',
	    "ts %s", ts);
	return v;
}

static const char *
msg_of(json_t *v)
{
	return json_string_value(json_object_get(v, "msg"));
}

Test(log, json_line_has_fields_and_escapes)
{
	struct capture c;
	char *out;
	json_t *v;
	char now[CM_RFC3339_LEN];

	cm_log_init("test-proc", CM_LOG_DEBUG, true);
	cr_assert_eq(cm_rfc3339(cm_now_ms(), now, sizeof now), 0);
	capture_start(&c);
	cm_info("n=%d quote=\" bs=\\ nl=\n tab=\t ctl=\x01 del=\x7f end", 42);
	out = capture_end(&c, NULL);
	v = parse_line(out, "info", "test-proc");
	cr_assert_str_eq(msg_of(v),
	    "n=42 quote=\" bs=\\ nl=\n tab=\t ctl=\x01 del=\x7f end");
	/* Same minute as just before the call (to the 16th character). */
	cr_assert_eq(
	    strncmp(json_string_value(json_object_get(v, "ts")), now, 14), 0);
	json_decref(v);
	free(out);
}

Test(log, proc_name_is_escaped_and_copied)
{
	struct capture c;
	char proc[32] = "p\"q\\r";
	char *out;
	json_t *v;

	cm_log_init(proc, CM_LOG_INFO, true);
	/* "proc is copied": changing the caller's buffer changes nothing. */
	proc[0] = 'X';
	capture_start(&c);
	cm_info("x");
	out = capture_end(&c, NULL);
	v = parse_line(out, "info", "p\"q\\r");
	json_decref(v);
	free(out);
}

Test(log, bearer_token_is_redacted)
{
	struct capture c;
	char *out;

	cm_log_init("redact", CM_LOG_DEBUG, true);
	capture_start(&c);
	cm_info("request with Authorization: Bearer abc123secret failed");
	cm_warnx("header %s", "Authorization: Bearer abc123secret");
	cm_log_init("redact", CM_LOG_DEBUG, false);
	cm_info("text Authorization: Bearer abc123secret");
	out = capture_end(&c, NULL);
	cr_assert_eq(count_lines(out), 3, "%s", out);
	cr_assert_null(strstr(out, "abc123secret"), "leaked: %s", out);
	cr_assert_null(strstr(out, "abc123"), "partly leaked: %s", out);
	free(out);
}

Test(log, secret_at_the_cut_is_never_written)
{
	/*
	 * Put a DevTools URL (an instance endpoint) across every position
	 * where the line could be cut: redacting after the cut would leave
	 * "ws://10.9.8.7:92" unrecognised and written.
	 */
	const char *url = " ws://10.9.8.7:9222/devtools/browser/abcd";
	char *pad = malloc(CM_LOG_LINE_MAX);
	struct capture c;
	char *out;

	cr_assert_not_null(pad);
	cm_log_init("cut", CM_LOG_INFO, true);
	capture_start(&c);
	for (int k = CM_LOG_LINE_MAX - 200; k < CM_LOG_LINE_MAX; k += 3) {
		memset(pad, 'x', (size_t)k);
		pad[k] = '\0';
		cm_info("%s%s", pad, url);
		cm_log_init("cut", CM_LOG_INFO, false);
		cm_info("%s%s", pad, url);
		cm_log_init("cut", CM_LOG_INFO, true);
	}
	out = capture_end(&c, NULL);
	cr_assert_null(strstr(out, "10.9.8"), "endpoint leaked");
	cr_assert_null(strstr(out, "ws:/"), "endpoint leaked");
	free(out);
	free(pad);
}

Test(log, text_mode_format)
{
	struct capture c;
	char *out;
	char want[128];
	char *sp1, *sp2;

	cm_log_init("txt", CM_LOG_INFO, false);
	capture_start(&c);
	cm_warnx("two\nlines %s", "here");
	out = capture_end(&c, NULL);
	cr_assert_eq(count_lines(out), 1, "newline must be escaped: %s", out);
	/* "ts level proc[pid]: msg\n" */
	sp1 = strchr(out, ' ');
	cr_assert_not_null(sp1);
	cr_assert_eq(sp1 - out, 24, "%s", out);
	cr_assert_eq(out[23], 'Z');
	sp2 = strchr(sp1 + 1, ' ');
	cr_assert_not_null(sp2);
	snprintf(want, sizeof want, "warn txt[%ld]: two\\nlines here\n",
	    (long)getpid());
	cr_assert_str_eq(sp1 + 1, want);
	free(out);
}

Test(log, level_filtering)
{
	struct capture c;
	char *out;

	cm_log_init("lvl", CM_LOG_WARN, false);
	capture_start(&c);
	cm_debug("debug-dropped");
	cm_info("info-dropped");
	cm_warnx("warn-kept");
	cm_log(CM_LOG_ERROR, "error-kept");
	out = capture_end(&c, NULL);
	cr_assert_eq(count_lines(out), 2, "%s", out);
	cr_assert_null(strstr(out, "dropped"), "%s", out);
	cr_assert_not_null(strstr(out, " warn lvl["), "%s", out);
	cr_assert_not_null(strstr(out, " error lvl["), "%s", out);
	free(out);

	/* Re-init lowers the level. */
	cm_log_init("lvl", CM_LOG_DEBUG, false);
	capture_start(&c);
	cm_debug("debug-now-kept");
	out = capture_end(&c, NULL);
	cr_assert_not_null(strstr(out, " debug lvl["), "%s", out);
	free(out);

	cm_log_init("lvl", CM_LOG_ERROR, false);
	capture_start(&c);
	cm_warnx("w");
	cm_warn("w");
	out = capture_end(&c, NULL);
	cr_assert_str_eq(out, "");
	free(out);
}

Test(log, warn_appends_strerror_and_keeps_errno)
{
	struct capture c;
	char *out, *second;
	json_t *v;

	cm_log_init("w", CM_LOG_INFO, true);
	capture_start(&c);
	errno = ENOENT;
	cm_warn("open %s", "/nope");
	cr_assert_eq(errno, ENOENT, "errno must survive logging");
	errno = EACCES;
	cm_warnx("plain");
	cr_assert_eq(errno, EACCES);
	out = capture_end(&c, NULL);
	cr_assert_eq(count_lines(out), 2);
	second = strdup(strchr(out, '\n') + 1);
	strchr(out, '\n')[1] = '\0';
	v = parse_line(out, "warn", "w");
	cr_assert_str_eq(msg_of(v), "open /nope: No such file or directory");
	json_decref(v);
	v = parse_line(second, "warn", "w");
	cr_assert_str_eq(msg_of(v), "plain");
	json_decref(v);
	free(second);
	free(out);
}

Test(log, failed_write_keeps_errno)
{
	int saved = dup(STDERR_FILENO);

	/* With stderr closed the write fails with EBADF, which must not leak
	 * into the caller's errno. */
	cr_assert_geq(saved, 0);
	cm_log_init("closed", CM_LOG_INFO, true);
	close(STDERR_FILENO);
	errno = ENOENT;
	cm_info("lost");
	cr_assert_eq(errno, ENOENT);
	cm_warn("lost");
	cr_assert_eq(errno, ENOENT);
	dup2(saved, STDERR_FILENO);
	close(saved);
}

Test(log, warn_keeps_strerror_when_message_is_cut)
{
	struct capture c;
	char *big = malloc(3 * CM_LOG_LINE_MAX);
	char *out;
	size_t len;

	cr_assert_not_null(big);
	memset(big, 'a', 3 * CM_LOG_LINE_MAX - 1);
	big[3 * CM_LOG_LINE_MAX - 1] = '\0';
	cm_log_init("w", CM_LOG_INFO, false);
	capture_start(&c);
	errno = EPIPE;
	cm_warn("%s", big);
	out = capture_end(&c, &len);
	cr_assert_leq(len, CM_LOG_LINE_MAX);
	cr_assert_geq(len, CM_LOG_LINE_MAX - LOG_SLACK);
	cr_assert_eq(out[len - 1], '\n');
	cr_assert_not_null(strstr(out, "aaa: Broken pipe\n"), "%s", out);
	free(big);
	free(out);
}

static void
check_truncated(const char *msg, const char *label)
{
	struct capture c;
	char *out;
	json_t *v;
	size_t len;

	capture_start(&c);
	cm_info("%s", msg);
	out = capture_end(&c, &len);
	cr_assert_leq(len, CM_LOG_LINE_MAX, "%s: %zu bytes", label, len);
	cr_assert_geq(
	    len, CM_LOG_LINE_MAX - LOG_SLACK, "%s: cut too early", label);
	v = parse_line(out, "info", "trunc");
	cr_assert_gt(strlen(msg_of(v)), 100, "%s", label);
	json_decref(v);
	free(out);
}

Test(log, long_lines_are_cut_to_valid_json)
{
	size_t n = 3 * CM_LOG_LINE_MAX;
	char *m = malloc(n + 1);

	cr_assert_not_null(m);
	cm_log_init("trunc", CM_LOG_INFO, true);
	memset(m, 'x', n);
	m[n] = '\0';
	check_truncated(m, "plain");
	/* Each '"' needs two bytes; a cut must not split \" in half. */
	memset(m, '"', n);
	check_truncated(m, "quotes");
	/* Each control byte needs six (\u0001). */
	memset(m, '\x01', n);
	check_truncated(m, "controls");
	/* Three-byte characters must not be split either. */
	for (size_t i = 0; i + 3 <= n; i += 3)
		memcpy(m + i, "\xe2\x82\xac", 3);
	m[n - n % 3] = '\0';
	check_truncated(m, "utf8");
	free(m);
}

Test(log, invalid_utf8_becomes_replacement_char)
{
	struct capture c;
	char *out;
	json_t *v;

	cm_log_init("u", CM_LOG_INFO, true);
	capture_start(&c);
	cm_info("a\xff"
	        "b\xc3"
	        "c\xed\xa0\x80"
	        "d\xc3\xa9");
	out = capture_end(&c, NULL);
	v = parse_line(out, "info", "u");
	cr_assert_str_eq(msg_of(v), "a\xef\xbf\xbd"
	                            "b\xef\xbf\xbd"
	                            "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	                            "d\xc3\xa9");
	json_decref(v);
	free(out);
}

#define LOG_THREADS 8
#define LOG_PER_THREAD 200

static void *
log_thread(void *arg)
{
	char fill[1500];
	int id = (int)(intptr_t)arg;

	memset(fill, 'a' + id, sizeof fill - 1);
	fill[sizeof fill - 1] = '\0';
	for (int i = 0; i < LOG_PER_THREAD; i++)
		cm_info("t%d i%d %s", id, i, fill);
	return NULL;
}

Test(log, concurrent_threads_never_interleave)
{
	pthread_t t[LOG_THREADS];
	struct capture c;
	char *out, *line, *next;
	size_t lines = 0;

	cm_log_init("mt", CM_LOG_INFO, true);
	capture_start(&c);
	for (int i = 0; i < LOG_THREADS; i++)
		cr_assert_eq(pthread_create(
		                 &t[i], NULL, log_thread, (void *)(intptr_t)i),
		    0);
	for (int i = 0; i < LOG_THREADS; i++)
		pthread_join(t[i], NULL);
	out = capture_end(&c, NULL);
	for (line = out; *line != '\0'; line = next) {
		char *nl = strchr(line, '\n');
		json_error_t jerr;
		const char *m;
		json_t *v;
		int id, i;

		cr_assert_not_null(nl, "unterminated last line");
		next = nl + 1;
		v = json_loadb(line, (size_t)(nl - line), 0, &jerr);
		cr_assert_not_null(v, "torn line: %.80s", line);
		m = msg_of(v);
		cr_assert_eq(sscanf(m, "t%d i%d", &id, &i), 2);
		/* The whole fill belongs to the same thread. */
		cr_assert_eq(strspn(strchr(strchr(m, ' ') + 1, ' ') + 1,
		                 (char[]){(char)('a' + id), '\0'}),
		    1499);
		json_decref(v);
		lines++;
	}
	cr_assert_eq(lines, LOG_THREADS * LOG_PER_THREAD);
	free(out);
}

Test(log, fatalx_logs_then_aborts)
{
	struct capture c;
	pid_t pid;
	int status;
	char *out;
	json_t *v;

	cm_log_init("fatal", CM_LOG_ERROR, true);
	capture_start(&c);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		signal(SIGABRT, SIG_DFL);
		cm_fatalx("invariant %s broken", "x");
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	out = capture_end(&c, NULL);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
	    "status %d", status);
	v = json_loads(out, 0, NULL);
	cr_assert_not_null(v, "%s", out);
	cr_assert_str_eq(msg_of(v), "invariant x broken");
	cr_assert_str_eq(
	    json_string_value(json_object_get(v, "level")), "error");
	/* The pid is the child's, read when the line was written. */
	cr_assert_eq(json_integer_value(json_object_get(v, "pid")), pid);
	json_decref(v);
	free(out);
}

Test(log, level_parse)
{
	enum cm_log_level l = CM_LOG_ERROR;

	cr_assert_eq(cm_log_level_parse("debug", &l), 0);
	cr_assert_eq(l, CM_LOG_DEBUG);
	cr_assert_eq(cm_log_level_parse("info", &l), 0);
	cr_assert_eq(l, CM_LOG_INFO);
	cr_assert_eq(cm_log_level_parse("warn", &l), 0);
	cr_assert_eq(l, CM_LOG_WARN);
	cr_assert_eq(cm_log_level_parse("error", &l), 0);
	cr_assert_eq(l, CM_LOG_ERROR);
	l = CM_LOG_INFO;
	cr_assert_eq(cm_log_level_parse("warning", &l), -1);
	cr_assert_eq(cm_log_level_parse("DEBUG", &l), -1);
	cr_assert_eq(cm_log_level_parse("", &l), -1);
	cr_assert_eq(cm_log_level_parse("info ", &l), -1);
	cr_assert_eq(cm_log_level_parse(NULL, &l), -1);
	cr_assert_eq(l, CM_LOG_INFO, "failure leaves *out alone");
}
