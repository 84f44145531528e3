/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* read_small_file() and pread_full() on real files in a temporary
 * directory: the exact-fit and one-too-many sizes, the NUL and truncating
 * modes, /dev/null, a FIFO (must not block), a missing file, and a kept
 * descriptor read twice; READ_FILE_ONE_READ on a regular file and on the
 * kernel's seq_file texts in /proc, which it is for. */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read-file.h"
#include "tests.h"

static char root[] = "/tmp/test-read-file-XXXXXX";

static void put(int dfd, const char *name, const char *text) {
        int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        CHECK(fd >= 0);
        if (fd < 0)
                return;
        CHECK(write(fd, text, strlen(text)) == (ssize_t) strlen(text));
        (void) close(fd);
}

static void test_sizes(int dfd) {
        char buf[8];

        put(dfd, "seven", "1234567");
        put(dfd, "eight", "12345678");
        put(dfd, "empty", "");

        /* size - 1 bytes fit; size bytes are too many, in either mode. */
        memset(buf, 'x', sizeof(buf));
        CHECK_EQ_INT(read_small_file(dfd, "seven", buf, sizeof(buf), 0), 7);
        CHECK(memcmp(buf, "1234567x", 8) == 0);         /* no NUL without READ_FILE_NUL */
        CHECK_EQ_INT(read_small_file(dfd, "seven", buf, sizeof(buf), READ_FILE_NUL), 7);
        CHECK_STREQ(buf, "1234567");
        CHECK_EQ_INT(read_small_file(dfd, "eight", buf, sizeof(buf), 0), -EFBIG);
        CHECK_EQ_INT(read_small_file(dfd, "eight", buf, sizeof(buf), READ_FILE_NUL), -EFBIG);
        /* Truncating: what fits, NUL-terminated. */
        CHECK_EQ_INT(read_small_file(dfd, "eight", buf, sizeof(buf), READ_FILE_NUL | READ_FILE_TRUNCATE), 7);
        CHECK_STREQ(buf, "1234567");
        CHECK_EQ_INT(read_small_file(dfd, "empty", buf, sizeof(buf), READ_FILE_NUL), 0);
        CHECK_STREQ(buf, "");
        CHECK_EQ_INT(read_small_file(dfd, "absent", buf, sizeof(buf), 0), -ENOENT);
        CHECK_EQ_INT(read_small_file(AT_FDCWD, "/dev/null", buf, sizeof(buf), READ_FILE_NUL), 0);
}

static void test_fifo(int dfd) {
        char buf[16];

        /* O_NONBLOCK: opening a FIFO without a writer returns at once. */
        CHECK(mkfifoat(dfd, "fifo", 0600) == 0);
        CHECK_EQ_INT(read_small_file(dfd, "fifo", buf, sizeof(buf), 0), -ESPIPE);
        CHECK(unlinkat(dfd, "fifo", 0) == 0);
}

static void test_kept_fd(int dfd) {
        char buf[16];
        int fd;

        put(dfd, "stat", "pgscan 42\n");
        fd = openat(dfd, "stat", O_RDONLY | O_CLOEXEC);
        CHECK(fd >= 0);
        if (fd < 0)
                return;
        /* pread from 0 each time: the second read sees the whole file again. */
        CHECK_EQ_INT(read_small_fd(fd, buf, sizeof(buf), READ_FILE_NUL), 10);
        CHECK_EQ_INT(read_small_fd(fd, buf, sizeof(buf), READ_FILE_NUL), 10);
        CHECK_STREQ(buf, "pgscan 42\n");
        /* pread_full() hands back a full buffer as it is: the caller judges. */
        CHECK_EQ_INT(pread_full(fd, buf, 4), 4);
        CHECK(memcmp(buf, "pgsc", 4) == 0);
        (void) close(fd);
}

/* One read(2) gives what a loop to the end of the file gives: on a file of
 * this directory, and on /proc texts made by a seq_file (one larger than
 * any the scans read with it, and a 2-byte one). */
static void test_one_read(int dfd) {
        char a[4096], b[4096];

        put(dfd, "seven", "1234567");
        CHECK_EQ_INT(read_small_file(dfd, "seven", a, 8, READ_FILE_NUL | READ_FILE_ONE_READ), 7);
        CHECK_STREQ(a, "1234567");
        put(dfd, "eight", "12345678");
        CHECK_EQ_INT(read_small_file(dfd, "eight", a, 8, READ_FILE_ONE_READ), -EFBIG);
        CHECK_EQ_INT(read_small_file(dfd, "eight", a, 8, READ_FILE_NUL | READ_FILE_TRUNCATE | READ_FILE_ONE_READ), 7);
        CHECK_STREQ(a, "1234567");

        for (const char *const *f = (const char *const[]) { "/proc/self/limits", "/proc/self/oom_score_adj", NULL };
             *f; f++) {
                ssize_t la = read_small_file(AT_FDCWD, *f, a, sizeof(a), READ_FILE_NUL | READ_FILE_ONE_READ);
                ssize_t lb = read_small_file(AT_FDCWD, *f, b, sizeof(b), READ_FILE_NUL);
                CHECK(la > 0);
                CHECK_EQ_INT(la, lb);
                CHECK_STREQ(a, b);
                if (strstr(*f, "limits"))
                        CHECK(la > 1000);       /* more than one read of a small buffer would give */
        }
}

int main(void) {
        int dfd;

        if (!mkdtemp(root)) {
                perror("mkdtemp");
                return 1;
        }
        dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dfd >= 0);
        if (dfd >= 0) {
                test_sizes(dfd);
                test_fifo(dfd);
                test_kept_fd(dfd);
                test_one_read(dfd);
                (void) unlinkat(dfd, "seven", 0);
                (void) unlinkat(dfd, "eight", 0);
                (void) unlinkat(dfd, "empty", 0);
                (void) unlinkat(dfd, "stat", 0);
                (void) close(dfd);
        }
        (void) rmdir(root);
        return test_exit("test-read-file");
}
