/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmp-probe: checks the ABI of vmpressure_fd(2) on a kernel carrying the
 * series of kernel/patches. Built against that tree's installed uapi
 * headers, so __NR_vmpressure_fd is the tree's number, not a guess.
 * Prints one PASS/FAIL line per check; exits 1 if any failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <asm/unistd.h>
#include <linux/vmpressure_fd.h>

static int failed;

static void check(int ok, const char *what, long got) {
        printf("vmp-probe: %s: %s (got %ld%s%s)\n", ok ? "PASS" : "FAIL", what, got,
               got < 0 ? ", " : "", got < 0 ? strerror(errno) : "");
        if (!ok)
                failed = 1;
}

static long vmp(void *config) {
        return syscall(__NR_vmpressure_fd, config);
}

int main(void) {
        struct vmpressure_config cfg = { .size = sizeof(cfg), .threshold = VMPRESSURE_LOW };
        struct { struct vmpressure_config c; unsigned int extra; } big = { { 12, VMPRESSURE_LOW }, 0 };
        struct vmpressure_event ev;
        char link[64], buf[64];
        struct pollfd pfd;
        long fd, r;
        ssize_t n;

        printf("vmp-probe: __NR_vmpressure_fd = %d\n", __NR_vmpressure_fd);
        fd = vmp(&cfg);
        check(fd >= 0, "vmpressure_fd({8, LOW}) returns an fd", fd);
        if (fd < 0)
                return 1;

        snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
        n = readlink(link, buf, sizeof(buf) - 1);
        buf[n > 0 ? n : 0] = 0;
        printf("vmp-probe: fd %ld is %s\n", fd, buf);
        check(strcmp(buf, "anon_inode:[vmpressure]") == 0, "fd is anon_inode:[vmpressure]", n);
        r = fcntl(fd, F_GETFD);
        check(r == 0, "fd is not close-on-exec (the seed's ABI takes no flags)", r);

        pfd = (struct pollfd) { .fd = fd, .events = POLLIN };
        r = poll(&pfd, 1, 0);
        check(r == 0, "poll() on an idle system: nothing pending", r);

        r = fcntl(fd, F_SETFL, O_NONBLOCK);
        n = read(fd, &ev, sizeof(ev));
        check(n < 0 && errno == EAGAIN, "O_NONBLOCK read() with nothing pending: EAGAIN", n);
        n = read(fd, &ev, 2);
        check(n < 0 && errno == EINVAL, "read() of fewer bytes than struct vmpressure_event: EINVAL", n);
        close(fd);

        cfg.size = 0;
        r = vmp(&cfg);
        check(r < 0 && errno == EINVAL, "size 0: EINVAL", r);
        cfg.size = 4;
        r = vmp(&cfg);
        check(r < 0 && errno == EINVAL, "size 4: EINVAL", r);
        r = vmp((void *) 16);
        check(r < 0 && errno == EFAULT, "bad pointer: EFAULT", r);
        r = vmp(&big);
        check(r >= 0, "size 12 with zero extra bytes: an fd", r);
        if (r >= 0)
                close(r);
        big.extra = 1;
        r = vmp(&big);
        check(r < 0 && errno == E2BIG, "size 12 with non-zero extra bytes: E2BIG", r);

        printf("vmp-probe: %s\n", failed ? "FAILED" : "all checks passed");
        return failed;
}
