/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the libFuzzer targets (meson -Dfuzz=true, fuzz/run). Every
 * target feeds the fuzzer's bytes as they are: libFuzzer hands over a heap
 * buffer of exactly size bytes with no NUL after it, so ASan sees any read
 * past the text, which is what the parsers' "need not be NUL-terminated"
 * promises. A broken invariant aborts, which libFuzzer reports as a crash. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(expr)                                                                \
        do {                                                                            \
                if (!(expr)) {                                                          \
                        fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__,      \
                                __LINE__, #expr);                                       \
                        abort();                                                        \
                }                                                                       \
        } while (0)

/* The parsers log at most at debug; keep the fuzzer's output to its stats. */
static inline void fuzz_setup(void) {
        static bool done;

        if (!done) {
                log_set_max_level(LOG_CRIT);
                done = true;
        }
}

/* Every stored message is one NUL-terminated line that fits DIAG_LEN. */
static inline void fuzz_check_diag(const Diagnostics *d) {
        FUZZ_CHECK(d->n <= DIAG_MAX);
        for (size_t i = 0; i < d->n; i++)
                FUZZ_CHECK(memchr(d->msg[i], '\0', DIAG_LEN));
}

/* A bounded, NUL-terminated copy of the first line of data, for parsers that
 * take a C string (names, keys). */
static inline void fuzz_first_line(const uint8_t *data, size_t size, char *buf, size_t bufsize) {
        size_t n = 0;

        while (n < size && n + 1 < bufsize && data[n] != '\n' && data[n] != '\0')
                n++;
        memcpy(buf, data, n);
        buf[n] = '\0';
}
