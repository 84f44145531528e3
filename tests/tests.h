/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Minimal assertions for the unit tests: each failure prints file:line and
 * the values, the test goes on, and test_exit() returns 1 if any failed. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned tests_failed;
static unsigned tests_checked;

#define CHECK(expr)                                                              \
        do {                                                                     \
                tests_checked++;                                                 \
                if (!(expr)) {                                                   \
                        tests_failed++;                                          \
                        fprintf(stderr, "%s:%d: CHECK(%s) failed\n",             \
                                __FILE__, __LINE__, #expr);                      \
                }                                                                \
        } while (0)

#define CHECK_EQ_INT(a, b)                                                       \
        do {                                                                     \
                long long _a = (long long) (a), _b = (long long) (b);            \
                tests_checked++;                                                 \
                if (_a != _b) {                                                  \
                        tests_failed++;                                          \
                        fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
                                __FILE__, __LINE__, #a, #b, _a, _b);             \
                }                                                                \
        } while (0)

#define CHECK_EQ_U64(a, b)                                                       \
        do {                                                                     \
                uint64_t _a = (uint64_t) (a), _b = (uint64_t) (b);               \
                tests_checked++;                                                 \
                if (_a != _b) {                                                  \
                        tests_failed++;                                          \
                        fprintf(stderr, "%s:%d: %s == %s failed: %" PRIu64       \
                                " != %" PRIu64 "\n", __FILE__, __LINE__, #a, #b, \
                                _a, _b);                                         \
                }                                                                \
        } while (0)

#define CHECK_STREQ(a, b)                                                        \
        do {                                                                     \
                const char *_a = (a), *_b = (b);                                 \
                tests_checked++;                                                 \
                if (!_a || !_b || strcmp(_a, _b) != 0) {                         \
                        tests_failed++;                                          \
                        fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
                                __FILE__, __LINE__, #a, #b, _a ?: "(null)",      \
                                _b ?: "(null)");                                 \
                }                                                                \
        } while (0)

/* s written to the file at path (a cgroup or /proc file) in one write(2):
 * 0 or negative errno. */
static inline int tests_write_str(const char *path, const char *s) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, s, strlen(s));
        n = n < 0 ? -errno : 0;
        (void) close(fd);
        return (int) n;
}

static inline int test_exit(const char *name) {
        fprintf(stderr, "%s: %u checks, %u failed\n", name, tests_checked, tests_failed);
        return tests_failed ? 1 : 0;
}
