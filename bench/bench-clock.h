/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The clock and the sort of the bench/ programs' timings. */
#pragma once

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* For qsort() of uint64_t. */
static inline int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}
