/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SignalIntervalSec=: one signal per unit and level per interval (pure, hand-advanced time). */
#include "signal-limit.h"
#include "tests.h"

#define S USEC_PER_SEC

static SignalLimit limit;       /* 150 KiB: not on the stack */

/* HoldSec=0 and LOW → NONE → LOW every 300 ms for 10 s: one signal. */
static void test_flapping(void) {
        SignalLimit *l = &limit;
        usec_t t0 = 1000 * S, next = 0;
        unsigned sent = 0, held = 0;

        signal_limit_init(l);
        for (usec_t t = t0; t < t0 + 10 * S; t += 300 * USEC_PER_MSEC) {
                if (signal_limit_check(l, "cache.service", LEVEL_LOW, t, 30 * S, &next))
                        sent++;
                else {
                        held++;
                        CHECK_EQ_U64(next, t0 + 30 * S);
                }
        }
        CHECK_EQ_INT(sent, 1);
        CHECK_EQ_INT(held, 33);
        CHECK_EQ_U64(signal_limit_suppressed(l, "cache.service"), 33);
        CHECK_EQ_U64(l->suppressed, 33);

        /* Exactly one interval after the last one that went: it goes. */
        CHECK(!signal_limit_check(l, "cache.service", LEVEL_LOW, t0 + 30 * S - 1, 30 * S, NULL));
        CHECK(signal_limit_check(l, "cache.service", LEVEL_LOW, t0 + 30 * S, 30 * S, &next));
        CHECK_EQ_U64(next, t0 + 30 * S);
        /* And the interval counts from then, not from the first. */
        CHECK(!signal_limit_check(l, "cache.service", LEVEL_LOW, t0 + 59 * S, 30 * S, &next));
        CHECK_EQ_U64(next, t0 + 60 * S);
        CHECK_EQ_U64(signal_limit_suppressed(l, "cache.service"), 35);
}

/* Per level and per unit: a rise to MEDIUM still gets MEDIUM's signal,
 * another unit its own. */
static void test_independent(void) {
        SignalLimit *l = &limit;

        signal_limit_init(l);
        CHECK(signal_limit_check(l, "a.service", LEVEL_LOW, 10 * S, 30 * S, NULL));
        CHECK(signal_limit_check(l, "a.service", LEVEL_MEDIUM, 10 * S, 30 * S, NULL));
        CHECK(signal_limit_check(l, "a.service", LEVEL_OOM, 11 * S, 30 * S, NULL));
        CHECK(signal_limit_check(l, "b.service", LEVEL_LOW, 11 * S, 30 * S, NULL));
        CHECK(!signal_limit_check(l, "a.service", LEVEL_MEDIUM, 12 * S, 30 * S, NULL));
        CHECK(!signal_limit_check(l, "b.service", LEVEL_LOW, 12 * S, 30 * S, NULL));
        CHECK(signal_limit_check(l, "b.service", LEVEL_MEDIUM, 12 * S, 30 * S, NULL));
        CHECK_EQ_U64(signal_limit_suppressed(l, "a.service"), 1);
        CHECK_EQ_U64(signal_limit_suppressed(l, "b.service"), 1);
        CHECK_EQ_U64(signal_limit_suppressed(l, "c.service"), 0);
        CHECK_EQ_U64(l->suppressed, 2);

        /* Each policy its own interval: the same unit with a shorter one. */
        CHECK(signal_limit_check(l, "a.service", LEVEL_LOW, 12 * S, 1 * S, NULL));
}

static void test_zero_and_odd(void) {
        SignalLimit *l = &limit;
        usec_t next = 0;

        signal_limit_init(l);
        /* 0: no limit, nothing recorded. */
        for (int i = 0; i < 5; i++)
                CHECK(signal_limit_check(l, "a.service", LEVEL_LOW, 5 * S, 0, NULL));
        CHECK_EQ_INT(l->n, 0);
        CHECK_EQ_U64(l->suppressed, 0);

        /* An event read late (older than the last signal) is held back. */
        CHECK(signal_limit_check(l, "a.service", LEVEL_LOW, 100 * S, 30 * S, NULL));
        CHECK(!signal_limit_check(l, "a.service", LEVEL_LOW, 99 * S, 30 * S, NULL));
        /* An interval that would overflow: held back until the end of time. */
        CHECK(signal_limit_check(l, "b.service", LEVEL_LOW, USEC_INFINITY - 5, 30 * S, NULL));
        CHECK(!signal_limit_check(l, "b.service", LEVEL_LOW, USEC_INFINITY - 1, 30 * S, &next));
        CHECK_EQ_U64(next, USEC_INFINITY);
        /* LEVEL_NONE and nonsense are not limited. */
        CHECK(signal_limit_check(l, "a.service", LEVEL_NONE, 100 * S, 30 * S, NULL));
        CHECK(signal_limit_check(l, "a.service", _LEVEL_MAX, 100 * S, 30 * S, NULL));
        CHECK(signal_limit_check(l, NULL, LEVEL_LOW, 100 * S, 30 * S, NULL));
}

/* A unit started again: its new processes get the next signal at once;
 * the history of what was held back stays. */
static void test_reset(void) {
        SignalLimit *l = &limit;

        signal_limit_init(l);
        CHECK(signal_limit_check(l, "a.service", LEVEL_LOW, 10 * S, 30 * S, NULL));
        CHECK(!signal_limit_check(l, "a.service", LEVEL_LOW, 11 * S, 30 * S, NULL));
        signal_limit_reset(l, "a.service");
        signal_limit_reset(l, "unknown.service");
        signal_limit_reset(l, NULL);
        CHECK(signal_limit_check(l, "a.service", LEVEL_LOW, 12 * S, 30 * S, NULL));
        CHECK(!signal_limit_check(l, "a.service", LEVEL_LOW, 13 * S, 30 * S, NULL));
        CHECK_EQ_U64(signal_limit_suppressed(l, "a.service"), 2);
}

/* Full: the unit whose latest signal is the oldest is forgotten; the
 * others keep their limits. */
static void test_full(void) {
        SignalLimit *l = &limit;
        char unit[64];

        signal_limit_init(l);
        for (int i = 0; i < SIGNAL_LIMIT_UNITS_MAX; i++) {
                (void) snprintf(unit, sizeof(unit), "u%d.service", i);
                /* u0 is the oldest; the rest one second apart after it. */
                CHECK(signal_limit_check(l, unit, LEVEL_LOW, (usec_t) (100 + i) * S, 3600 * S, NULL));
        }
        CHECK_EQ_INT(l->n, SIGNAL_LIMIT_UNITS_MAX);
        CHECK(signal_limit_check(l, "new.service", LEVEL_LOW, 1000 * S, 3600 * S, NULL));
        CHECK_EQ_INT(l->n, SIGNAL_LIMIT_UNITS_MAX);
        CHECK(!signal_limit_check(l, "new.service", LEVEL_LOW, 1001 * S, 3600 * S, NULL));
        CHECK(!signal_limit_check(l, "u1.service", LEVEL_LOW, 1001 * S, 3600 * S, NULL));
        /* u0 was evicted: its next signal goes, and evicts u1, now the oldest
         * (a held-back signal does not count as u1's latest). */
        CHECK(signal_limit_check(l, "u0.service", LEVEL_LOW, 1002 * S, 3600 * S, NULL));
        CHECK(!signal_limit_check(l, "u2.service", LEVEL_LOW, 1003 * S, 3600 * S, NULL));
        CHECK(signal_limit_check(l, "u1.service", LEVEL_LOW, 1003 * S, 3600 * S, NULL));
}

int main(void) {
        test_flapping();
        test_independent();
        test_zero_and_odd();
        test_reset();
        test_full();
        return test_exit("test-signal-limit");
}
