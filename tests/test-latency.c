/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The latency histograms: bucket edges (le is inclusive), cumulative counts
 * that end at count, sums, the stage names and the simulated split. */

#include "latency.h"
#include "tests.h"

static void test_bounds(void) {
        usec_t prev = 0;

        for (size_t i = 0; i < LATENCY_BUCKETS - 1; i++) {
                CHECK(latency_bucket_bound(i) > prev);
                prev = latency_bucket_bound(i);
        }
        CHECK_EQ_U64(latency_bucket_bound(0), 50);
        CHECK_EQ_U64(latency_bucket_bound(LATENCY_BUCKETS - 2), 2500000);
        CHECK_EQ_U64(latency_bucket_bound(LATENCY_BUCKETS - 1), USEC_INFINITY);
        CHECK_EQ_U64(latency_bucket_bound(LATENCY_BUCKETS + 5), USEC_INFINITY);
}

static void test_record(void) {
        /* value → the bucket it must land in */
        static const struct { usec_t usec; size_t bucket; } table[] = {
                { 0, 0 },               /* zero: the first bucket */
                { 50, 0 },              /* on the edge: le is inclusive */
                { 51, 1 },
                { 100, 1 },
                { 999, 4 },
                { 1000, 4 },
                { 1001, 5 },
                { 2500000, 14 },        /* the last finite bound */
                { 2500001, 15 },        /* +Inf */
                { UINT64_MAX / 4, 15 },
        };
        LatencyHistogram h = {};
        uint64_t sum = 0;

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                LatencyHistogram one = {};

                latency_histogram_record(&one, table[i].usec);
                for (size_t b = 0; b < LATENCY_BUCKETS; b++)
                        CHECK_EQ_U64(one.buckets[b], b == table[i].bucket);
                latency_histogram_record(&h, table[i].usec);
                sum += table[i].usec;
        }
        CHECK_EQ_U64(h.count, ELEMENTSOF(table));
        CHECK_EQ_U64(h.sum_usec, sum);

        /* Cumulative: never decreasing, the last (+Inf) is the count. */
        for (size_t b = 1; b < LATENCY_BUCKETS; b++)
                CHECK(latency_histogram_cumulative(&h, b) >= latency_histogram_cumulative(&h, b - 1));
        CHECK_EQ_U64(latency_histogram_cumulative(&h, LATENCY_BUCKETS - 1), h.count);
        CHECK_EQ_U64(latency_histogram_cumulative(&h, 0), 2);
        CHECK_EQ_U64(latency_histogram_cumulative(&h, 1), 4);
        CHECK_EQ_U64(latency_histogram_cumulative(&h, 14), 8);
        CHECK_EQ_U64(latency_histogram_cumulative(&h, 99), h.count);
}

static void test_stats(void) {
        LatencyStats st = {};

        latency_record(&st, LATENCY_ANNOUNCE, false, 30);
        latency_record(&st, LATENCY_ANNOUNCE, true, 40);
        latency_record(&st, LATENCY_ANNOUNCE, true, 4000);
        latency_record(&st, LATENCY_KILL, false, 700);
        latency_record(&st, _LATENCY_STAGE_MAX, false, 1);        /* ignored */
        latency_record(&st, _LATENCY_STAGE_INVALID, false, 1);    /* ignored */
        CHECK_EQ_U64(st.h[LATENCY_ANNOUNCE][0].count, 1);
        CHECK_EQ_U64(st.h[LATENCY_ANNOUNCE][1].count, 2);
        CHECK_EQ_U64(st.h[LATENCY_ANNOUNCE][1].sum_usec, 4040);
        CHECK_EQ_U64(st.h[LATENCY_SIGNAL][0].count, 0);
        CHECK_EQ_U64(st.h[LATENCY_SIGNAL][1].count, 0);
        CHECK_EQ_U64(st.h[LATENCY_KILL][0].buckets[4], 1);

        for (LatencyStage s = 0; s < _LATENCY_STAGE_MAX; s++)
                CHECK_EQ_INT(latency_stage_from_string(latency_stage_to_string(s)), s);
        CHECK_STREQ(latency_stage_to_string(LATENCY_ANNOUNCE), "announce");
        CHECK_STREQ(latency_stage_to_string(LATENCY_DELIVER), "deliver");
        CHECK_EQ_INT(latency_stage_from_string("deliver"), LATENCY_DELIVER);
        CHECK(latency_stage_to_string(_LATENCY_STAGE_MAX) == NULL);
        CHECK_EQ_INT(latency_stage_from_string("Kill"), _LATENCY_STAGE_INVALID);
        CHECK_EQ_INT(latency_stage_from_string(NULL), _LATENCY_STAGE_INVALID);
}

int main(void) {
        test_bounds();
        test_record();
        test_stats();
        return test_exit("test-latency");
}
