/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* psi-trigger.h: the exact line written (through a pipe, which keeps what
 * it gets), the 2 s fallback and its limits (a fake fd that refuses what is
 * not 2 s would be a mock: the fallback is shown on the real
 * /proc/pressure/memory where the kernel has it), and an error passed on. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "psi-trigger.h"
#include "tests.h"

static void test_line(void) {
        char buf[64];
        usec_t window = 1500 * USEC_PER_MSEC;
        int p[2];

        CHECK(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
        CHECK_EQ_INT(psi_trigger_write(p[1], "full", 70 * USEC_PER_MSEC, USEC_PER_SEC), 0);
        /* The NUL goes too: the kernel overwrites the last byte with one. */
        CHECK_EQ_INT(read(p[0], buf, sizeof(buf)), (int) sizeof("full 70000 1000000"));
        CHECK(memcmp(buf, "full 70000 1000000", sizeof("full 70000 1000000")) == 0);
        /* A pipe takes any window: no fallback, the window stays. */
        CHECK_EQ_INT(psi_trigger_write_or_2s(p[1], "some", USEC_PER_MSEC, &window), 0);
        CHECK(window == 1500 * USEC_PER_MSEC);
        CHECK_EQ_INT(read(p[0], buf, sizeof(buf)), (int) sizeof("some 1000 1500000"));
        CHECK_STREQ(buf, "some 1000 1500000");
        /* An error other than EINVAL is passed on, not retried. */
        (void) close(p[0]);
        CHECK_EQ_INT(psi_trigger_write_or_2s(p[1], "some", USEC_PER_MSEC, &window), -EPIPE);
        CHECK(window == 1500 * USEC_PER_MSEC);
        (void) close(p[1]);
        /* A line too long for the buffer is refused, not cut. */
        CHECK_EQ_INT(psi_trigger_write(-1, "some-kind-of-stall-name-far-too-long-for-a-psi-trigger-line",
                                       UINT64_MAX, UINT64_MAX), -EINVAL);
}

static void test_kernel(void) {
        usec_t window = USEC_PER_SEC;
        int fd, r;

        fd = open("/proc/pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                /* No PSI here: the pipe test above is all, except under CI,
                 * whose machines have it. */
                fprintf(stderr, "no /proc/pressure/memory (%s): kernel part not run\n", strerror(errno));
                CHECK(!streq_ptr(getenv("CI"), "true"));
                return;
        }
        /* 1 s: kept with CAP_SYS_RESOURCE, 2 s without (this sandbox). */
        r = psi_trigger_write_or_2s(fd, "some", USEC_PER_MSEC, &window);
        if (r == -EACCES || r == -EPERM) {
                fprintf(stderr, "no write access to /proc/pressure/memory: kernel part not run\n");
                CHECK(!streq_ptr(getenv("CI"), "true"));
                (void) close(fd);
                return;
        }
        CHECK_EQ_INT(r, 0);
        CHECK(window == USEC_PER_SEC || window == PSI_UNPRIVILEGED_WINDOW_USEC);
        fprintf(stderr, "/proc/pressure/memory: a 1 s window became %llu ms\n",
                (unsigned long long) (window / USEC_PER_MSEC));
        (void) close(fd);

        /* A stall longer than the window is refused at 2 s too: -EINVAL,
         * and the window is left as it was. */
        fd = open("/proc/pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);
        CHECK(fd >= 0);
        window = USEC_PER_SEC;
        CHECK_EQ_INT(psi_trigger_write_or_2s(fd, "some", 3 * USEC_PER_SEC, &window), -EINVAL);
        CHECK(window == USEC_PER_SEC);
        (void) close(fd);
}

int main(void) {
        (void) signal(SIGPIPE, SIG_IGN);        /* the write to a pipe without a reader: EPIPE */
        test_line();
        test_kernel();
        return test_exit("psi-trigger");
}
