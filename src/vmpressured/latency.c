/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "latency.h"

static const usec_t bounds_usec[LATENCY_BUCKETS - 1] = LATENCY_BOUNDS_USEC;

static const char *const stage_table[_LATENCY_STAGE_MAX] = {
        [LATENCY_ANNOUNCE] = "announce",
        [LATENCY_SIGNAL] = "signal",
        [LATENCY_KILL] = "kill",
        [LATENCY_DELIVER] = "deliver",
};

const char *latency_stage_to_string(LatencyStage s) {
        if (s < 0 || s >= _LATENCY_STAGE_MAX)
                return NULL;
        return stage_table[s];
}

LatencyStage latency_stage_from_string(const char *s) {
        return (LatencyStage) string_table_lookup(stage_table, ELEMENTSOF(stage_table), s);
}

usec_t latency_bucket_bound(size_t i) {
        return i < ELEMENTSOF(bounds_usec) ? bounds_usec[i] : USEC_INFINITY;
}

void latency_histogram_record(LatencyHistogram *h, usec_t latency_usec) {
        size_t i = 0;

        while (i < ELEMENTSOF(bounds_usec) && latency_usec > bounds_usec[i])
                i++;
        h->buckets[i]++;
        h->count++;
        /* 2^64 µs is 584,000 years: the sum does not wrap in practice. */
        h->sum_usec += latency_usec;
}

uint64_t latency_histogram_cumulative(const LatencyHistogram *h, size_t i) {
        uint64_t n = 0;

        for (size_t j = 0; j <= i && j < LATENCY_BUCKETS; j++)
                n += h->buckets[j];
        return n;
}

void latency_record(LatencyStats *st, LatencyStage stage, bool simulated, usec_t latency_usec) {
        if (stage < 0 || stage >= _LATENCY_STAGE_MAX)
                return;
        latency_histogram_record(&st->h[stage][!!simulated], latency_usec);
}
