/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An application of libvmpressure, compiled by test-libvmpressure.py with
 * nothing but `pkg-config --cflags --libs libvmpressure` of an installed
 * tree. Its only include is the installed <vmpressure.h>.
 *
 *   lib-client errors          the argument checks: prints "ok" or FAIL lines
 *   lib-client absent          vmpressure_fd() without a daemon: "errno NAME"
 *   lib-client THRESHOLD...    low|medium|oom each: prints "ready", then the
 *                              seed's line per record read, until killed
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <vmpressure.h>

static int failures;

static void expect(int ok, const char *what) {
        if (!ok) {
                printf("FAIL %s (errno %s)\n", what, strerror(errno));
                failures++;
        }
}

static int errors(void) {
        const unsigned bad[] = { 0, 5, VMPRESSURE_LOW | VMPRESSURE_MEDIUM, 0xffffffffu, VMPRESSURE_LOW + 1 };
        struct vmpressure_config c;
        int fd;

        for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                c.size = 0;
                c.threshold = bad[i];
                errno = 0;
                fd = vmpressure_fd(&c);
                expect(fd == -1 && errno == EINVAL, "a bad threshold gives EINVAL");
                expect(c.size == sizeof(c), "size is filled in");
        }
        errno = 0;
        fd = vmpressure_fd(NULL);
        expect(fd == -1 && errno == EFAULT, "NULL gives EFAULT");

        c.size = 12345;                 /* the library fills it in, as the seed's SYNOPSIS */
        c.threshold = VMPRESSURE_OOM;
        fd = vmpressure_fd(&c);
        expect(fd >= 0, "a good threshold gives an fd");
        expect(c.size == sizeof(c), "size is filled in on success");
        if (fd >= 0) {
                expect(fcntl(fd, F_GETFD) & FD_CLOEXEC, "the fd is close-on-exec");
                close(fd);
        }
        if (!failures)
                printf("ok\n");
        return failures ? 1 : 0;
}

static int absent(void) {
        struct vmpressure_config c = { .threshold = VMPRESSURE_LOW };
        int fd = vmpressure_fd(&c);

        if (fd >= 0) {
                printf("fd %d\n", fd);
                return 1;
        }
        printf("errno %s\n", strerrorname_np(errno) ?: "?");
        return 0;
}

static unsigned threshold_of(const char *s) {
        return strcmp(s, "low") == 0 ? VMPRESSURE_LOW : strcmp(s, "medium") == 0 ? VMPRESSURE_MEDIUM
                                                                                : VMPRESSURE_OOM;
}

int main(int argc, char **argv) {
        struct vmpressure_config config[8];
        struct pollfd pfds[8];
        int n = argc - 1;

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc == 2 && strcmp(argv[1], "errors") == 0)
                return errors();
        if (argc == 2 && strcmp(argv[1], "absent") == 0)
                return absent();
        if (n < 1 || n > 8)
                return 2;
        for (int i = 0; i < n; i++) {
                config[i].threshold = threshold_of(argv[i + 1]);
                pfds[i].fd = vmpressure_fd(&config[i]);
                if (pfds[i].fd < 0) {
                        printf("FAIL vmpressure_fd %s: %s\n", argv[i + 1], strerror(errno));
                        return 1;
                }
                pfds[i].events = POLLIN;
        }
        printf("ready\n");
        while (poll(pfds, (nfds_t) n, -1) > 0)
                for (int i = 0; i < n; i++) {
                        struct vmpressure_event event;
                        ssize_t k;

                        if (!pfds[i].revents)
                                continue;
                        k = read(pfds[i].fd, &event, sizeof(event));
                        if (k != (ssize_t) sizeof(event)) {
                                printf("eof %s\n", argv[i + 1]);
                                return 1;
                        }
                        printf("VM pressure: 0x%.8x (threshold 0x%.8x)\n", event.pressure, config[i].threshold);
                }
        return 1;
}
