/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Logging: to the journal with structured fields when stderr is connected
 * to it ($JOURNAL_STREAM), else one line per message on stderr.
 * Never allocates: the OOM path logs. Never waits for a reader either: a
 * line that the journal, a pipe or a socket cannot take at once is dropped
 * and counted (log_dropped_count()). */

#include <syslog.h>

#include "macro.h"

/* Ignores SIGPIPE, makes stdout and stderr non-blocking where they are pipes
 * (a file description of our own) or sockets, and opens the journal socket
 * when stderr is journald's stream. First thing in main(). */
void log_setup(void);
/* Lines (and journal entries) dropped since start: the reader was slow or gone. */
uint64_t log_dropped_count(void);
/* One line (with its '\n') on stdout the same way: whole, at once, or dropped
 * and counted. Whether it went out. */
bool log_write_stdout(const char *line, size_t n);
/* Logs to the journal's native socket at path from now on (tests; log_setup()
 * does it for journald's own socket). 0 or negative errno. */
int log_use_journal_socket(const char *path);
/* The name logged with every line and journal entry (default "vmpressured";
 * other programs of the project set their own, at most 31 characters). */
void log_set_identifier(const char *name);
void log_set_max_level(int level);
/* While on, messages are formatted as usual (journal fields and iovecs, or
 * the stderr line) and then not written: a start-up rehearsal of the OOM
 * path faults in the code and stack that logging a kill needs. */
void log_set_rehearsal(bool on);
int log_get_max_level(void);
bool log_to_journal(void);

/* Returns -abs(error) (or 0 for error == 0), so "return log_error_errno(r, …);" works.
 * %m in fmt prints strerror(error). */
int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *fmt, ...) _printf_(6, 7);

/* Structured: extra journal fields given as "KEY=value" strings, NULL-terminated,
 * after the message. On stderr the fields are appended as " KEY=value". */
int log_struct_internal(int level, const char *message_id, const char *const *fields,
                        const char *fmt, ...) _printf_(4, 5);

#define log_full_errno(level, error, ...) \
        log_internal((level), (error), __FILE__, __LINE__, __func__, __VA_ARGS__)
#define log_full(level, ...) log_full_errno((level), 0, __VA_ARGS__)

#define log_debug(...)   log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)    log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...)  log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...)   log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(e, ...)   log_full_errno(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...)    log_full_errno(LOG_INFO, (e), __VA_ARGS__)
#define log_notice_errno(e, ...)  log_full_errno(LOG_NOTICE, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, (e), __VA_ARGS__)

#define log_oom() log_error_errno(ENOMEM, "Out of memory.")

/* Stable MESSAGE_IDs (journalctl MESSAGE_ID=…), also listed in vmpressured(8). */
#define MESSAGE_ID_LEVEL_CHANGE "5b1a1f3c8f0e4d7e9d0a6c2b7e41a001"
#define MESSAGE_ID_SOURCE       "5b1a1f3c8f0e4d7e9d0a6c2b7e41a002"
#define MESSAGE_ID_SCOPE_GONE   "5b1a1f3c8f0e4d7e9d0a6c2b7e41a003"
#define MESSAGE_ID_ACTION       "5b1a1f3c8f0e4d7e9d0a6c2b7e41a004"
#define MESSAGE_ID_KILL         "5b1a1f3c8f0e4d7e9d0a6c2b7e41a005"
/* The bus and privileges take 01x, out of the way of the core's. */
#define MESSAGE_ID_BUS_CONNECTED    "5b1a1f3c8f0e4d7e9d0a6c2b7e41a010"
#define MESSAGE_ID_BUS_DISCONNECTED "5b1a1f3c8f0e4d7e9d0a6c2b7e41a011"
#define MESSAGE_ID_PRIVILEGES       "5b1a1f3c8f0e4d7e9d0a6c2b7e41a012"
