/*
 * log.h: one line per message on stderr.
 *
 * JSON lines ({"ts","level","proc","pid","msg"}) or plain text, as
 * log_format says (cm_log_json_for; startup.h decides it once per start). Every
 * message passes through the redactor before it is written, so a secret that
 * slips into a format argument still never reaches a log.  cm_warn appends
 * strerror(errno); cm_warnx does not.
 */
#ifndef CM_LOG_H
#define CM_LOG_H

#include <stdbool.h>

enum cm_log_level { CM_LOG_DEBUG, CM_LOG_INFO, CM_LOG_WARN, CM_LOG_ERROR };

/* proc is copied.  Safe to call again (after exec, or to change level). */
void cm_log_init(const char *proc, enum cm_log_level level, bool json);
/*
 * Whether a log_format ("json", "text" or "auto") means JSON lines on fd:
 * "auto" is text on a terminal (isatty) and JSON lines otherwise.
 */
bool cm_log_json_for(const char *format, int fd);
/* Parses "debug", "info", "warn", "error"; returns -1 on anything else. */
int cm_log_level_parse(const char *s, enum cm_log_level *out);

void cm_log(enum cm_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cm_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cm_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Logs at error level and aborts: for a broken internal invariant. */
void cm_fatalx(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

#define cm_debug(...) cm_log(CM_LOG_DEBUG, __VA_ARGS__)
#define cm_info(...) cm_log(CM_LOG_INFO, __VA_ARGS__)

#endif
