/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Latency histograms the daemon keeps of itself (pure: the caller measures,
 * this only counts). Fixed buckets in a fixed array, so recording on the OOM
 * path is a scan of LATENCY_BUCKETS bounds and three integer adds: no
 * allocation, no clock, no lock.
 *
 * Stages:
 *   announce: the kernel's notification (the sample's timestamp) → the
 *             announcement is out (fd subscribers written, D-Bus signals
 *             queued); the policies' actions run first and are included.
 *   signal:   the level announced → a policy's signal sent (or queued to
 *             systemd's KillUnit).
 *   kill:     the level announced → a process killed (pidfd signal sent).
 *   deliver:  the kernel's notification → the last descriptor subscriber
 *             (vmpressure_fd(), Subscribe()) written; only the system scope
 *             has them, and only announcements that wrote to one count.
 *             The D-Bus signals, sent after, are not in it.
 * Each stage is kept twice: real pressure and Simulate().
 */

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

typedef enum LatencyStage {
        LATENCY_ANNOUNCE,
        LATENCY_SIGNAL,
        LATENCY_KILL,
        LATENCY_DELIVER,
        _LATENCY_STAGE_MAX,
        _LATENCY_STAGE_INVALID = -EINVAL,
} LatencyStage;

/* Upper bounds (inclusive, "le") in µs; one more bucket, +Inf, follows. The
 * range: ~20 µs is a memcg eventfd to a bus signal on an idle machine (bench/),
 * seconds are a stalled machine. */
#define LATENCY_BOUNDS_USEC                                                     \
        { 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000,     \
          250000, 500000, 1000000, 2500000 }
#define LATENCY_BUCKETS 16      /* the bounds above and +Inf */

typedef struct LatencyHistogram {
        uint64_t buckets[LATENCY_BUCKETS];      /* per bucket, not cumulative */
        uint64_t count;
        uint64_t sum_usec;
} LatencyHistogram;

typedef struct LatencyStats {
        LatencyHistogram h[_LATENCY_STAGE_MAX][2];      /* [stage][simulated] */
} LatencyStats;

const char *latency_stage_to_string(LatencyStage s);
LatencyStage latency_stage_from_string(const char *s);

/* The upper bound of bucket i in µs; USEC_INFINITY for the last. */
usec_t latency_bucket_bound(size_t i);

void latency_histogram_record(LatencyHistogram *h, usec_t latency_usec);
/* Observations at or under bucket i's bound ("le"): what Prometheus wants. */
uint64_t latency_histogram_cumulative(const LatencyHistogram *h, size_t i);

void latency_record(LatencyStats *st, LatencyStage stage, bool simulated, usec_t latency_usec);
