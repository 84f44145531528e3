/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>

#include "log.h"

#define JOURNAL_SOCKET_DEFAULT "/run/systemd/journal/socket"
/* The program's name on stderr lines and in the journal; vmpressured's
 * unless log_set_identifier() says otherwise. */
static char program_name[32] = "vmpressured";
static char journal_identifier[64] = "SYSLOG_IDENTIFIER=vmpressured";
#define JOURNAL_IDENTIFIER journal_identifier
/* Fields of one journal entry: MESSAGE, PRIORITY, MESSAGE_ID or the code
 * location, SYSLOG_IDENTIFIER and the caller's structured fields. */
#define JOURNAL_FIELDS_MAX 24

static int max_level = LOG_INFO;
static bool use_journal = false;
static uint64_t n_dropped;
/* log_set_rehearsal(): everything formatted, nothing written. */
static bool rehearsal = false;

/* How a line reaches fd 1 or 2 without ever waiting for its reader. */
typedef enum OutputKind {
        OUTPUT_WRITE,           /* write(2): a tty, a file, /dev/null, or a pipe opened non-blocking */
        OUTPUT_SEND,            /* send(2) with MSG_DONTWAIT: a socket (journald's stdout stream) */
} OutputKind;

static struct {
        OutputKind kind;
        bool partial;           /* the last line was cut: the next one starts on a new line */
} outputs[3];

static int journal_fd = -EBADF;
static struct sockaddr_un journal_addr = { .sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET_DEFAULT };

static const char *const prefix[8] = {
        "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug",
};

bool log_to_journal(void) {
        return use_journal;
}

uint64_t log_dropped_count(void) {
        return n_dropped;
}

/* A pipe or FIFO on fd gets a file description of its own that is
 * non-blocking: O_NONBLOCK is a flag of the open file description, which
 * whoever started us may share (a shell's pipeline, a test harness's pipe
 * handed to several children): setting it there would make their writes
 * fail with EAGAIN too. Opening /proc/self/fd/N of a pipe opens the same
 * pipe anew, so only our descriptor changes. Only where that fails (no
 * /proc; a FIFO whose reader is gone, ENXIO) is the flag set on the shared
 * description: a blocked loop is worse than a surprised neighbour. A socket
 * needs nothing: send() takes MSG_DONTWAIT per call. A tty or a regular file
 * does not hold us up for long and is left alone. */
static void output_setup(int fd) {
        char path[64];
        struct stat st;
        int nfd, flags;

        outputs[fd] = (typeof(outputs[fd])) { .kind = OUTPUT_WRITE };
        if (fstat(fd, &st) < 0)
                return;
        if (S_ISSOCK(st.st_mode)) {
                outputs[fd].kind = OUTPUT_SEND;
                return;
        }
        if (!S_ISFIFO(st.st_mode))
                return;
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || (flags & O_NONBLOCK))
                return;
        (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        nfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (nfd >= 0) {
                if (dup2(nfd, fd) >= 0) {
                        (void) close(nfd);
                        return;
                }
                (void) close(nfd);
        }
        (void) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* One line, whole or not at all: lines are at most 2 KiB, and a pipe takes
 * up to PIPE_BUF (4 KiB) at once or nothing. A stream socket may take part
 * of one; the rest is dropped and the next line starts on a new line. A
 * line that cannot go now (the reader is slow, or gone: EAGAIN, EPIPE) is
 * dropped and counted: the loop that answers memory pressure never waits
 * for a log reader. Returns whether the line went out. */
static bool output_write(int fd, const char *line, size_t n) {
        ssize_t k;

        if (outputs[fd].partial) {
                if (outputs[fd].kind == OUTPUT_SEND ? send(fd, "\n", 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1
                                                    : write(fd, "\n", 1) != 1) {
                        n_dropped++;
                        return false;
                }
                outputs[fd].partial = false;
        }
        do
                k = outputs[fd].kind == OUTPUT_SEND ? send(fd, line, n, MSG_DONTWAIT | MSG_NOSIGNAL)
                                                    : write(fd, line, n);
        while (k < 0 && errno == EINTR);
        if (k == (ssize_t) n)
                return true;
        if (k > 0)
                outputs[fd].partial = true;
        n_dropped++;
        return false;
}

bool log_write_stdout(const char *line, size_t n) {
        return output_write(STDOUT_FILENO, line, n);
}

/* journald's native protocol, as sd_journal_sendv() speaks it, but on a
 * socket of our own that never blocks. sd_journal_sendv() (systemd 252,
 * journal-send.c) sends on a blocking SOCK_DGRAM socket with MSG_NOSIGNAL
 * only: once journald stops reading (it stalls under memory pressure like
 * everything else) its queue is full after net.unix.max_dgram_qlen
 * datagrams (10 on the test machine, 512 by default) and sendmsg() waits
 * for journald, measured here: blocked after 11 datagrams. sd_journal_send()
 * also formats with vasprintf(). Here nothing is allocated, and a full
 * queue (EAGAIN) drops the entry and counts it. */
static int journal_open(void) {
        if (journal_fd >= 0)
                return 0;
        journal_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        return journal_fd < 0 ? -errno : 0;
}

int log_use_journal_socket(const char *path) {
        int r;

        if (!path || strlen(path) >= sizeof(journal_addr.sun_path))
                return -EINVAL;
        (void) snprintf(journal_addr.sun_path, sizeof(journal_addr.sun_path), "%s", path);
        r = journal_open();
        if (r < 0)
                return r;
        use_journal = true;
        return 0;
}

/* fields: "KEY=value" strings. A value with a newline goes in the binary
 * form (KEY, '\n', little-endian 64-bit length, value). */
static int journal_send(const char *const *fields, size_t n_fields) {
        struct iovec w[JOURNAL_FIELDS_MAX * 4 + 2];
        uint64_t len_le[JOURNAL_FIELDS_MAX];
        struct msghdr mh = {
                .msg_name = &journal_addr,
                .msg_namelen = offsetof(struct sockaddr_un, sun_path) + strlen(journal_addr.sun_path) + 1,
                .msg_iov = w,
        };
        size_t j = 0;
        ssize_t k;

        if (journal_fd < 0 && journal_open() < 0) {
                n_dropped++;
                return -EBADF;
        }
        for (size_t i = 0; i < n_fields && i < JOURNAL_FIELDS_MAX; i++) {
                const char *f = fields[i], *eq = strchr(f, '=');
                size_t l = strlen(f);

                if (!eq || eq == f)
                        continue;
                if (memchr(f, '\n', l)) {
                        len_le[i] = htole64((uint64_t) (l - (size_t) (eq - f) - 1));
                        w[j++] = (struct iovec) { (void *) f, (size_t) (eq - f) };
                        w[j++] = (struct iovec) { (void *) "\n", 1 };
                        w[j++] = (struct iovec) { &len_le[i], sizeof(len_le[i]) };
                        w[j++] = (struct iovec) { (void *) (eq + 1), l - (size_t) (eq - f) - 1 };
                } else
                        w[j++] = (struct iovec) { (void *) f, l };
                w[j++] = (struct iovec) { (void *) "\n", 1 };
        }
        mh.msg_iovlen = j;
        if (rehearsal)
                return 0;
        do
                k = sendmsg(journal_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        while (k < 0 && errno == EINTR);
        if (k >= 0)
                return 0;
        n_dropped++;
        return -errno;
}

/* The journal is used only when stderr really is the stream systemd set up:
 * $JOURNAL_STREAM names its device and inode. */
void log_setup(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        /* A reader of stdout or stderr that exits (a pipe to a program that
         * ended) used to kill the daemon with SIGPIPE (exit status 141):
         * every write now gets EPIPE instead, and the line is dropped. */
        (void) signal(SIGPIPE, SIG_IGN);
        output_setup(STDOUT_FILENO);
        output_setup(STDERR_FILENO);

        use_journal = false;
        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return;
        if (fstat(STDERR_FILENO, &st) < 0)
                return;
        use_journal = st.st_dev == (dev_t) dev && st.st_ino == (ino_t) ino;
        if (use_journal && journal_open() < 0)
                use_journal = false;    /* no socket: stderr, which is journald's stream too */
}

void log_set_identifier(const char *name) {
        (void) snprintf(program_name, sizeof(program_name), "%s", name);
        (void) snprintf(journal_identifier, sizeof(journal_identifier), "SYSLOG_IDENTIFIER=%s", name);
}

void log_set_rehearsal(bool on) {
        rehearsal = on;
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

        n = (size_t) snprintf(line, sizeof(line), "%s: %s: %s",
                              program_name, prefix[level & 7], text);
        for (const char *const *f = fields; f && *f && n < sizeof(line); f++)
                n += (size_t) snprintf(line + n, sizeof(line) - n, " %s", *f);
        if (n >= sizeof(line) - 1)
                n = sizeof(line) - 2;
        line[n++] = '\n';
        if (!rehearsal)
                (void) output_write(STDERR_FILENO, line, n);
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
                        char msg[1100], prio[16], err[24], cfile[300], cline[24], cfunc[128];
                        const char *fields[] = { msg, prio, cfile, cline, cfunc, JOURNAL_IDENTIFIER,
                                                 error != 0 ? err : NULL };

                        (void) snprintf(msg, sizeof(msg), "MESSAGE=%s", text);
                        (void) snprintf(prio, sizeof(prio), "PRIORITY=%i", level & 7);
                        (void) snprintf(err, sizeof(err), "ERRNO=%i", error);
                        (void) snprintf(cfile, sizeof(cfile), "CODE_FILE=%s", file);
                        (void) snprintf(cline, sizeof(cline), "CODE_LINE=%i", line);
                        (void) snprintf(cfunc, sizeof(cfunc), "CODE_FUNC=%s", func);
                        (void) journal_send(fields, ELEMENTSOF(fields) - (error == 0));
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
                const char *all[JOURNAL_FIELDS_MAX];
                char msg[1100], prio[16], mid[64];
                size_t n = 0;

                (void) snprintf(msg, sizeof(msg), "MESSAGE=%s", text);
                (void) snprintf(prio, sizeof(prio), "PRIORITY=%i", level & 7);
                all[n++] = msg;
                all[n++] = prio;
                all[n++] = JOURNAL_IDENTIFIER;
                if (message_id) {
                        (void) snprintf(mid, sizeof(mid), "MESSAGE_ID=%s", message_id);
                        all[n++] = mid;
                }
                for (const char *const *f = fields; f && *f && n < ELEMENTSOF(all); f++)
                        all[n++] = *f;
                (void) journal_send(all, n);
        } else
                write_stderr(level, text, fields);

        errno = saved;
        return 0;
}
