/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Logging never waits for its reader: a journal socket nobody reads and a
 * stdout pipe nobody reads take what fits, the rest is dropped and counted,
 * and the journal's native format is what journald parses. */

#include <endian.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "log.h"
#include "source.h"
#include "tests.h"

static void test_journal_never_blocks(void) {
        char dir[] = "/tmp/test-log-XXXXXX", path[64], buf[4096];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        uint64_t before = log_dropped_count(), len_le;
        usec_t start, took;
        const char *p;
        ssize_t n;
        int fd;

        CHECK(mkdtemp(dir) != NULL);
        (void) snprintf(path, sizeof(path), "%s/socket", dir);
        (void) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        CHECK(fd >= 0);
        CHECK(bind(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0);
        CHECK_EQ_INT(log_use_journal_socket(path), 0);
        CHECK(log_to_journal());

        /* The first entry, read back: the native protocol, a field with a
         * newline in the binary form. */
        log_struct_internal(LOG_NOTICE, MESSAGE_ID_LEVEL_CHANGE,
                            (const char *const[]) { "VMP_SCOPE=a.service", "VMP_TWO=x\ny", NULL }, "hello %d", 42);
        n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
        CHECK(n > 0);
        buf[n > 0 ? n : 0] = '\0';
        CHECK(strstr(buf, "MESSAGE=hello 42\n") == buf);
        CHECK(strstr(buf, "\nPRIORITY=5\n") != NULL);
        CHECK(strstr(buf, "\nSYSLOG_IDENTIFIER=vmpressured\n") != NULL);
        CHECK(strstr(buf, "\nMESSAGE_ID=" MESSAGE_ID_LEVEL_CHANGE "\n") != NULL);
        CHECK(strstr(buf, "\nVMP_SCOPE=a.service\n") != NULL);
        p = n > 0 ? memmem(buf, (size_t) n, "\nVMP_TWO\n", 9) : NULL;
        CHECK(p != NULL);
        if (p && p + 9 + 8 + 4 <= buf + n) {
                memcpy(&len_le, p + 9, 8);
                CHECK_EQ_U64(le64toh(len_le), 3);
                CHECK(memcmp(p + 17, "x\ny\n", 4) == 0);
        }
        log_error_errno(ENOENT, "with errno: %m");
        n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
        CHECK(n > 0);
        buf[n > 0 ? n : 0] = '\0';
        CHECK(strstr(buf, "MESSAGE=with errno: No such file or directory\n") == buf);
        CHECK(strstr(buf, "\nERRNO=2\n") != NULL);
        CHECK(strstr(buf, "\nCODE_FUNC=test_journal_never_blocks\n") != NULL);
        CHECK_EQ_U64(log_dropped_count(), before);

        /* Nobody reads now: a blocking sendmsg() would wait after
         * net.unix.max_dgram_qlen entries; these 2,000 take no time. */
        start = source_now_usec();
        for (int i = 0; i < 2000; i++)
                log_info("entry %d", i);
        took = source_now_usec() - start;
        fprintf(stderr, "  2000 entries to a journal nobody reads: %" PRIu64 " us, %" PRIu64 " dropped\n",
                took, log_dropped_count() - before);
        CHECK(took < USEC_PER_SEC);
        CHECK(log_dropped_count() > before);
        CHECK(log_dropped_count() - before <= 2000);

        (void) close(fd);
        (void) unlink(path);
        (void) rmdir(dir);
}

static void test_stdout_never_blocks(void) {
        uint64_t before = log_dropped_count();
        int saved, saved_err, pipefd[2];
        size_t sent = 0, dropped = 0;
        char line[1000];
        usec_t start;

        memset(line, 'x', sizeof(line) - 1);
        line[sizeof(line) - 1] = '\n';
        saved = dup(STDOUT_FILENO);
        saved_err = dup(STDERR_FILENO);         /* log_setup() changes stderr too: given back below */
        CHECK(saved >= 0 && saved_err >= 0);
        CHECK(pipe2(pipefd, O_CLOEXEC) == 0);
        CHECK(dup2(pipefd[1], STDOUT_FILENO) == STDOUT_FILENO);
        log_setup();

        start = source_now_usec();
        for (int i = 0; i < 200; i++) {
                if (log_write_stdout(line, sizeof(line)))
                        sent++;
                else
                        dropped++;
        }
        fprintf(stderr, "  200 lines of 1000 bytes to a pipe nobody reads: %zu taken, %zu dropped, %" PRIu64
                " us\n", sent, dropped, source_now_usec() - start);
        CHECK(source_now_usec() - start < USEC_PER_SEC);
        CHECK(sent > 0 && sent <= 65536 / sizeof(line));        /* the pipe holds 64 KiB */
        CHECK_EQ_U64(log_dropped_count() - before, dropped);
        /* Our own file description became non-blocking, not the one we were given. */
        CHECK(fcntl(STDOUT_FILENO, F_GETFL) & O_NONBLOCK);
        CHECK(!(fcntl(pipefd[1], F_GETFL) & O_NONBLOCK));

        /* The reader goes away: EPIPE, dropped, and no SIGPIPE kills us. */
        (void) close(pipefd[0]);
        CHECK(!log_write_stdout("gone\n", 5));
        CHECK_EQ_U64(log_dropped_count() - before, dropped + 1);

        CHECK(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO);
        CHECK(dup2(saved_err, STDERR_FILENO) == STDERR_FILENO);
        (void) close(saved);
        (void) close(saved_err);
        (void) close(pipefd[1]);
}

int main(void) {
        test_stdout_never_blocks();
        test_journal_never_blocks();
        return test_exit("test-log");
}
