#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "limits.h"
#include "redact.h"

/*
 * Shared by every thread of the process.  Each call copies it under the
 * lock and then formats without the lock, so a slow redaction or a write
 * blocked on a full pipe never stalls a thread that is only changing the
 * level.
 */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool init;
	char proc[CM_NAME_MAX + 1];
	enum cm_log_level level;
	bool json;
} log_state = {.level = CM_LOG_INFO, .json = true};

static const char *const log_level_names[] = {
    [CM_LOG_DEBUG] = "debug",
    [CM_LOG_INFO] = "info",
    [CM_LOG_WARN] = "warn",
    [CM_LOG_ERROR] = "error",
};

#define LOG_NLEVELS (sizeof log_level_names / sizeof log_level_names[0])
/* What follows proc on a line when msg is empty: pid, keys and "}\n. */
#define LOG_TAIL_MAX 64
#define LOG_DROPPED "[message dropped: out of memory]"

void
cm_log_init(const char *proc, enum cm_log_level level, bool json)
{
	pthread_mutex_lock(&log_lock);
	if (proc != NULL)
		snprintf(log_state.proc, sizeof log_state.proc, "%s", proc);
	log_state.init = proc != NULL || log_state.init;
	log_state.level = (unsigned)level < LOG_NLEVELS ? level : CM_LOG_ERROR;
	log_state.json = json;
	pthread_mutex_unlock(&log_lock);
}

bool
cm_log_json_for(const char *format, int fd)
{
	if (format != NULL && strcmp(format, "text") == 0)
		return false;
	if (format != NULL && strcmp(format, "auto") == 0)
		return isatty(fd) == 0;
	return true;
}

int
cm_log_level_parse(const char *s, enum cm_log_level *out)
{
	if (s == NULL)
		return -1;
	for (size_t i = 0; i < LOG_NLEVELS; i++) {
		if (strcmp(s, log_level_names[i]) == 0) {
			if (out != NULL)
				*out = (enum cm_log_level)i;
			return 0;
		}
	}
	return -1;
}

/* A bounded output line; appends that do not fit are refused whole. */
struct log_buf {
	char b[CM_LOG_LINE_MAX];
	size_t n;
};

static bool
log_put(struct log_buf *lb, size_t reserve, const char *s, size_t len)
{
	if (len > sizeof lb->b - lb->n || sizeof lb->b - lb->n - len < reserve)
		return false;
	memcpy(lb->b + lb->n, s, len);
	lb->n += len;
	return true;
}

static void
log_puts(struct log_buf *lb, const char *s)
{
	(void)log_put(lb, 0, s, strlen(s));
}

/* Length of a well-formed UTF-8 sequence at s (RFC 3629), or 0. */
static size_t
log_utf8_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > avail)
		return 0;
	/* Overlong forms, surrogates and code points above U+10FFFF. */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * Appends s as the inside of a JSON string, keeping reserve bytes free for
 * what follows.  It stops at a whole escape or character, so a truncated
 * line is still valid JSON and valid UTF-8; bytes that are not UTF-8
 * become U+FFFD because a JSON reader would reject them.
 */
static void
log_put_json(struct log_buf *lb, size_t reserve, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	while (i < len) {
		char esc[8];
		const char *piece = esc;
		size_t plen = 2, step = 1;
		unsigned char c = u[i];

		esc[0] = '\\';
		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
		} else if (c == '\n') {
			esc[1] = 'n';
		} else if (c == '\r') {
			esc[1] = 'r';
		} else if (c == '\t') {
			esc[1] = 't';
		} else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof esc, "\\u%04x", c);
			plen = 6;
		} else if (c < 0x80) {
			piece = s + i;
			plen = 1;
		} else if ((step = log_utf8_len(u + i, len - i)) > 0) {
			piece = s + i;
			plen = step;
		} else {
			piece = "\\ufffd";
			plen = 6;
			step = 1;
		}
		if (!log_put(lb, reserve, piece, plen))
			return;
		i += step;
	}
}

/* Text mode keeps one message on one line by escaping control bytes. */
static void
log_put_text(struct log_buf *lb, size_t reserve, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[8];
		bool ok;

		if (c == '\n')
			ok = log_put(lb, reserve, "\\n", 2);
		else if (c == '\r')
			ok = log_put(lb, reserve, "\\r", 2);
		else if (c == '\t')
			ok = log_put(lb, reserve, "\\t", 2);
		else if (c < 0x20 || c == 0x7f) {
			snprintf(esc, sizeof esc, "\\x%02x", c);
			ok = log_put(lb, reserve, esc, 4);
		} else
			ok = log_put(lb, reserve, s + i, 1);
		if (!ok)
			return;
	}
}

static void
log_write_all(const char *p, size_t len)
{
	/*
	 * One write(2) per line: a pipe or O_APPEND file takes it whole
	 * (CM_LOG_LINE_MAX is below PIPE_BUF).  The loop only finishes a
	 * rare short write rather than lose the tail of the line.
	 */
	while (len > 0) {
		ssize_t w = write(STDERR_FILENO, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		p += w;
		len -= (size_t)w;
	}
}

__attribute__((format(printf, 4, 0))) static void
log_emit(enum cm_log_level level, bool with_errno, int errnum, const char *fmt,
    va_list ap)
{
	char ts[CM_RFC3339_LEN];
	char pidbuf[24];
	char suffix[160] = "";
	struct log_buf lb;
	char proc[CM_NAME_MAX + 1];
	bool json;
	char *msg = NULL, *red = NULL;
	size_t slen;

	if ((unsigned)level >= LOG_NLEVELS)
		level = CM_LOG_ERROR;
	pthread_mutex_lock(&log_lock);
	if (level < log_state.level) {
		pthread_mutex_unlock(&log_lock);
		return;
	}
	json = log_state.json;
	if (log_state.init)
		memcpy(proc, log_state.proc, sizeof proc);
	else
		snprintf(
		    proc, sizeof proc, "%s", program_invocation_short_name);
	pthread_mutex_unlock(&log_lock);

	/*
	 * The whole message is formatted and redacted before the line is cut
	 * to CM_LOG_LINE_MAX.  Cutting first could leave half a pattern the
	 * redactor no longer recognises (a DevTools URL without "/devtools/")
	 * and write it.  Costs two allocations and O(message) redaction.
	 */
	if (vasprintf(&msg, fmt, ap) >= 0) {
		red = cm_redact_text(msg, strlen(msg), NULL);
		free(msg);
	}
	if (with_errno) {
		char ebuf[128];
		/* GNU strerror_r: returns a string, maybe not ebuf. */
		snprintf(suffix, sizeof suffix, ": %s",
		    strerror_r(errnum, ebuf, sizeof ebuf));
	}
	slen = strlen(suffix);

	if (cm_rfc3339(cm_now_ms(), ts, sizeof ts) != 0)
		snprintf(ts, sizeof ts, "-");
	snprintf(pidbuf, sizeof pidbuf, "%ld", (long)getpid());

	/*
	 * Reserves keep room for what follows a field, so only the message
	 * is ever cut, and the errno text after it survives the cut.
	 */
	lb.n = 0;
	if (json) {
		log_puts(&lb, "{\"ts\":\"");
		log_puts(&lb, ts);
		log_puts(&lb, "\",\"level\":\"");
		log_puts(&lb, log_level_names[level]);
		log_puts(&lb, "\",\"proc\":\"");
		log_put_json(&lb, LOG_TAIL_MAX + slen, proc, strlen(proc));
		log_puts(&lb, "\",\"pid\":");
		log_puts(&lb, pidbuf);
		log_puts(&lb, ",\"msg\":\"");
		/* Without redaction the text may not be written at all. */
		if (red != NULL)
			log_put_json(&lb, 3 + slen, red, strlen(red));
		else
			log_puts(&lb, LOG_DROPPED);
		log_put_json(&lb, 3, suffix, slen);
		log_puts(&lb, "\"}\n");
	} else {
		log_puts(&lb, ts);
		log_puts(&lb, " ");
		log_puts(&lb, log_level_names[level]);
		log_puts(&lb, " ");
		log_put_text(&lb, LOG_TAIL_MAX + slen, proc, strlen(proc));
		log_puts(&lb, "[");
		log_puts(&lb, pidbuf);
		log_puts(&lb, "]: ");
		if (red != NULL)
			log_put_text(&lb, 1 + slen, red, strlen(red));
		else
			log_puts(&lb, LOG_DROPPED);
		log_put_text(&lb, 1, suffix, slen);
		log_puts(&lb, "\n");
	}
	free(red);
	log_write_all(lb.b, lb.n);
}

void
cm_log(enum cm_log_level level, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_emit(level, false, 0, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
cm_warn(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_emit(CM_LOG_WARN, true, saved, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
cm_warnx(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	log_emit(CM_LOG_WARN, false, 0, fmt, ap);
	va_end(ap);
	errno = saved;
}

void
cm_fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(CM_LOG_ERROR, false, 0, fmt, ap);
	va_end(ap);
	abort();
}
