/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "log.h"

static int max_level = LOG_INFO;
static bool use_journal = false;

static const char *const prefix[8] = {
        "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug",
};

bool log_to_journal(void) {
        return use_journal;
}

/* The journal is used only when stderr really is the stream systemd set up:
 * $JOURNAL_STREAM names its device and inode. */
void log_setup(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        use_journal = false;
        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return;
        if (fstat(STDERR_FILENO, &st) < 0)
                return;
        use_journal = st.st_dev == (dev_t) dev && st.st_ino == (ino_t) ino;
}

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

static void write_stderr(int level, const char *text, const char *const *fields) {
        char line[2048];
        size_t n;

        n = (size_t) snprintf(line, sizeof(line), "vmpressured: %s: %s",
                              prefix[level & 7], text);
        for (const char *const *f = fields; f && *f && n < sizeof(line); f++)
                n += (size_t) snprintf(line + n, sizeof(line) - n, " %s", *f);
        if (n >= sizeof(line) - 1)
                n = sizeof(line) - 2;
        line[n++] = '\n';
        (void) !write(STDERR_FILENO, line, n);
}

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *fmt, ...) {
        char text[1024];
        va_list ap;
        int saved = errno;

        if (error < 0)
                error = -error;
        if ((level & 7) <= max_level) {
                errno = error;
                va_start(ap, fmt);
                (void) vsnprintf(text, sizeof(text), fmt, ap);
                va_end(ap);

                if (use_journal) {
                        if (error != 0)
                                (void) sd_journal_send("MESSAGE=%s", text, "PRIORITY=%i", level & 7,
                                                       "ERRNO=%i", error, "CODE_FILE=%s", file,
                                                       "CODE_LINE=%i", line, "CODE_FUNC=%s", func, NULL);
                        else
                                (void) sd_journal_send("MESSAGE=%s", text, "PRIORITY=%i", level & 7,
                                                       "CODE_FILE=%s", file, "CODE_LINE=%i", line,
                                                       "CODE_FUNC=%s", func, NULL);
                } else
                        write_stderr(level, text, NULL);
        }
        errno = saved;
        return error == 0 ? 0 : -error;
}

int log_struct_internal(int level, const char *message_id, const char *const *fields,
                        const char *fmt, ...) {
        char text[1024];
        va_list ap;
        int saved = errno;

        if ((level & 7) > max_level)
                return 0;

        va_start(ap, fmt);
        (void) vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);

        if (use_journal) {
                /* sd_journal_sendv() takes an iovec: fixed size, no allocation here. */
                struct iovec iov[16];
                char msg[1100], prio[16], mid[64];
                size_t n = 0;

                (void) snprintf(msg, sizeof(msg), "MESSAGE=%s", text);
                (void) snprintf(prio, sizeof(prio), "PRIORITY=%i", level & 7);
                iov[n++] = (struct iovec) { msg, strlen(msg) };
                iov[n++] = (struct iovec) { prio, strlen(prio) };
                if (message_id) {
                        (void) snprintf(mid, sizeof(mid), "MESSAGE_ID=%s", message_id);
                        iov[n++] = (struct iovec) { mid, strlen(mid) };
                }
                for (const char *const *f = fields; f && *f && n < ELEMENTSOF(iov); f++)
                        iov[n++] = (struct iovec) { (void *) *f, strlen(*f) };
                (void) sd_journal_sendv(iov, (int) n);
        } else
                write_stderr(level, text, fields);

        errno = saved;
        return 0;
}
