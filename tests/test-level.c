/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The level engine: literal inputs, time advanced by hand (tests start at 0,
 * which is a valid timestamp). */

#include <vmpressure.h>

#include "level.h"
#include "tests.h"

#define SEC(x)  ((usec_t) (x) * USEC_PER_SEC)
#define MSEC(x) ((usec_t) (x) * USEC_PER_MSEC)

/* Checks a feed/tick result that announced an event. */
#define CHECK_EVENT(r, ev, lvl, prev, idx, rep, why, ts)        \
        do {                                                    \
                CHECK_EQ_INT((r), 1);                           \
                CHECK_EQ_INT((ev).level, (lvl));                \
                CHECK_EQ_INT((ev).previous, (prev));            \
                CHECK_EQ_INT((ev).index, (idx));                \
                CHECK_EQ_INT((ev).repeat, (rep));               \
                CHECK_EQ_INT((ev).cause, (why));                \
                CHECK_EQ_U64((ev).timestamp_usec, (ts));        \
        } while (0)

static LevelConfig config_default(void) {
        LevelConfig c;

        level_config_init(&c);
        return c;
}

static int feed_level(LevelEngine *e, usec_t t, Level l, unsigned index, LevelEvent *ev) {
        return level_engine_feed(e, &(Sample) {
                .kind = SAMPLE_LEVEL, .timestamp_usec = t, .level = l, .index = index,
        }, ev);
}

static int feed_reclaim(LevelEngine *e, usec_t t, uint64_t scanned, uint64_t reclaimed, LevelEvent *ev) {
        return level_engine_feed(e, &(Sample) {
                .kind = SAMPLE_RECLAIM, .timestamp_usec = t, .scanned = scanned, .reclaimed = reclaimed,
        }, ev);
}

static int feed_headroom(LevelEngine *e, usec_t t, uint64_t available, uint64_t total, LevelEvent *ev) {
        return level_engine_feed(e, &(Sample) {
                .kind = SAMPLE_HEADROOM, .timestamp_usec = t,
                .available_bytes = available, .total_bytes = total,
        }, ev);
}

static void test_calc_index(void) {
        /* p = win - r*win/s; p = p*100/win. For s == win == 256, p = 256 - r, so
         * the boundaries at 60 and 99 sit at r = 102/103 and r = 2/3. */
        static const struct {
                const char *name;
                unsigned window;
                uint64_t scanned, reclaimed;
                unsigned index;
                Level level;
        } cases[] = {
                { "all reclaimed",                      256,  512, 512,   0, LEVEL_LOW },
                { "nothing reclaimed",                  256,  512,   0, 100, LEVEL_OOM },
                { "half reclaimed",                     256,  512, 256,  50, LEVEL_LOW },
                { "last LOW: p=153 → 59.7",             256,  256, 103,  59, LEVEL_LOW },
                { "LOW: p=152 → 59.3",                  256,  256, 104,  59, LEVEL_LOW },
                { "first MEDIUM: p=154 → 60.1",         256,  256, 102,  60, LEVEL_MEDIUM },
                { "MEDIUM: p=156 → 60.9",               256,  256, 100,  60, LEVEL_MEDIUM },
                { "highest MEDIUM: p=253 → 98.8",       256,  256,   3,  98, LEVEL_MEDIUM },
                { "MEDIUM: p=251 → 98.0",               256,  256,   5,  98, LEVEL_MEDIUM },
                { "first OOM: p=254 → 99.2",            256,  256,   2,  99, LEVEL_OOM },
                { "OOM: p=255 → 99.6",                  256,  256,   1,  99, LEVEL_OOM },
                /* The window quantises r/s: the seed says 60 where 100-40.1 says 59. */
                { "seed rounding: 401/1000 → MEDIUM",   256, 1000, 401,  60, LEVEL_MEDIUM },
                { "seed rounding: 205/512 → MEDIUM",    256,  512, 205,  60, LEVEL_MEDIUM },
                { "3/1000 reclaimed rounds to 0 → 100", 256, 1000,   3, 100, LEVEL_OOM },
                { "11/1000 → 99",                       256, 1000,  11,  99, LEVEL_OOM },
                { "reclaimed > scanned is clamped",     256,  256, 999,   0, LEVEL_LOW },
                { "scanned 0",                          256,    0,   0,   0, LEVEL_LOW },
                { "scanned 0, reclaimed > 0",           256,    0,  10,   0, LEVEL_LOW },
                { "window 0: window = scanned",           0, 1000, 400,  60, LEVEL_MEDIUM },
                { "window 0, scanned 0",                  0,    0,   0,   0, LEVEL_LOW },
                { "window 0, huge, nothing reclaimed",    0, UINT64_MAX, 0, 100, LEVEL_OOM },
                { "window 0, huge, all but one",          0, UINT64_MAX, UINT64_MAX - 1, 0, LEVEL_LOW },
                { "r*win overflows 64 bits",            256, UINT64_MAX, UINT64_MAX / 2, 50, LEVEL_LOW },
                { "window larger than scanned",        1024,  256,   0, 100, LEVEL_OOM },
        };
        LevelConfig c = config_default();

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                unsigned index = vmpressure_calc_index(cases[i].window, cases[i].scanned, cases[i].reclaimed);

                if (index != cases[i].index)
                        fprintf(stderr, "case \"%s\"\n", cases[i].name);
                CHECK_EQ_INT(index, cases[i].index);
                CHECK_EQ_INT(level_from_index(&c, index), cases[i].level);
        }
}

static void test_level_from_index(void) {
        LevelConfig c = config_default();

        CHECK_EQ_INT(level_from_index(&c, 0), LEVEL_LOW);
        CHECK_EQ_INT(level_from_index(&c, 59), LEVEL_LOW);
        CHECK_EQ_INT(level_from_index(&c, 60), LEVEL_MEDIUM);
        CHECK_EQ_INT(level_from_index(&c, 98), LEVEL_MEDIUM);
        CHECK_EQ_INT(level_from_index(&c, 99), LEVEL_OOM);
        CHECK_EQ_INT(level_from_index(&c, 100), LEVEL_OOM);
        CHECK_EQ_INT(level_from_index(&c, 1000), LEVEL_OOM);

        c.level_medium = 30;
        c.level_oom = 30;
        CHECK_EQ_INT(level_from_index(&c, 29), LEVEL_LOW);
        CHECK_EQ_INT(level_from_index(&c, 30), LEVEL_OOM);

        c = config_default();
        CHECK_EQ_INT(level_nominal_index(&c, LEVEL_NONE), 0);
        CHECK_EQ_INT(level_nominal_index(&c, LEVEL_LOW), 0);
        CHECK_EQ_INT(level_nominal_index(&c, LEVEL_MEDIUM), 60);
        CHECK_EQ_INT(level_nominal_index(&c, LEVEL_OOM), 100);
}

static void test_strings(void) {
        static const struct {
                Level level;
                const char *name;
        } levels[] = {
                { LEVEL_NONE, "none" }, { LEVEL_LOW, "low" }, { LEVEL_MEDIUM, "medium" }, { LEVEL_OOM, "oom" },
        };
        static const struct {
                SampleKind kind;
                const char *name;
        } kinds[] = {
                { SAMPLE_LEVEL, "level" }, { SAMPLE_RECLAIM, "reclaim" },
                { SAMPLE_HEADROOM, "headroom" }, { SAMPLE_OOM, "oom" },
        };

        for (size_t i = 0; i < ELEMENTSOF(levels); i++) {
                CHECK_STREQ(level_to_string(levels[i].level), levels[i].name);
                CHECK_EQ_INT(level_from_string(levels[i].name), levels[i].level);
        }
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                CHECK_STREQ(sample_kind_to_string(kinds[i].kind), kinds[i].name);
                CHECK_EQ_INT(sample_kind_from_string(kinds[i].name), kinds[i].kind);
        }

        CHECK(!level_to_string(_LEVEL_MAX));
        CHECK(!level_to_string(_LEVEL_INVALID));
        CHECK(!sample_kind_to_string(_SAMPLE_KIND_MAX));
        CHECK(!sample_kind_to_string(_SAMPLE_KIND_INVALID));
        CHECK_EQ_INT(level_from_string("critical"), -EINVAL);   /* memcg's name, not ours */
        CHECK_EQ_INT(level_from_string("OOM"), -EINVAL);
        CHECK_EQ_INT(level_from_string(""), -EINVAL);
        CHECK_EQ_INT(level_from_string(NULL), -EINVAL);
        CHECK_EQ_INT(sample_kind_from_string("vmstat"), -EINVAL);
        CHECK_EQ_INT(sample_kind_from_string(NULL), -EINVAL);
}

static void test_vmpressure_abi(void) {
        static const uint32_t invalid[] = {
                0, 3, 1, VMPRESSURE_LOW | VMPRESSURE_MEDIUM, VMPRESSURE_MEDIUM | VMPRESSURE_OOM,
                VMPRESSURE_LOW + 1, 1u << 11, 1u << 31, UINT32_MAX,
        };
        Level l;

        CHECK_EQ_U64(level_to_vmpressure(LEVEL_NONE), 0);
        CHECK_EQ_U64(level_to_vmpressure(LEVEL_LOW), VMPRESSURE_LOW);
        CHECK_EQ_U64(level_to_vmpressure(LEVEL_MEDIUM), VMPRESSURE_MEDIUM);
        CHECK_EQ_U64(level_to_vmpressure(LEVEL_OOM), VMPRESSURE_OOM);
        CHECK_EQ_U64(level_to_vmpressure(_LEVEL_MAX), 0);

        /* Round trip: the seed's values map back to the same level. */
        for (Level i = LEVEL_LOW; i < _LEVEL_MAX; i++) {
                l = LEVEL_NONE;
                CHECK_EQ_INT(level_from_vmpressure(level_to_vmpressure(i), &l), 0);
                CHECK_EQ_INT(l, i);
        }

        for (size_t i = 0; i < ELEMENTSOF(invalid); i++) {
                l = LEVEL_MEDIUM;
                CHECK_EQ_INT(level_from_vmpressure(invalid[i], &l), -EINVAL);
                CHECK_EQ_INT(l, LEVEL_MEDIUM);  /* untouched on failure */
        }
}

static void test_threshold(void) {
        static const struct {
                Level level, threshold;
                bool passes;
        } cases[] = {
                { LEVEL_NONE,   LEVEL_LOW,    false },
                { LEVEL_NONE,   LEVEL_NONE,   false },  /* "Normal" is never a pressure event */
                { LEVEL_LOW,    LEVEL_LOW,    true },
                { LEVEL_MEDIUM, LEVEL_LOW,    true },
                { LEVEL_OOM,    LEVEL_LOW,    true },
                { LEVEL_LOW,    LEVEL_MEDIUM, false },
                { LEVEL_MEDIUM, LEVEL_MEDIUM, true },
                { LEVEL_OOM,    LEVEL_MEDIUM, true },
                { LEVEL_LOW,    LEVEL_OOM,    false },
                { LEVEL_MEDIUM, LEVEL_OOM,    false },
                { LEVEL_OOM,    LEVEL_OOM,    true },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                CHECK_EQ_INT(level_passes_threshold(cases[i].level, cases[i].threshold), cases[i].passes);
}

static void test_config(void) {
        LevelConfig c = config_default();

        CHECK_EQ_INT(c.window_pages, 256);
        CHECK_EQ_INT(c.level_medium, 60);
        CHECK_EQ_INT(c.level_oom, 99);
        CHECK_EQ_U64(c.hold_usec, SEC(2));
        CHECK_EQ_U64(c.quiet_usec, SEC(10));
        CHECK_EQ_U64(c.repeat_usec, SEC(1));
        CHECK_EQ_U64(c.headroom_floor_bytes, 0);
        CHECK_EQ_INT(c.headroom_floor_permyriad, 200);
        CHECK_EQ_U64(c.kill_horizon_usec, SEC(2));
        CHECK_EQ_INT(level_config_validate(&c), 0);
        CHECK_EQ_INT(level_config_validate(NULL), -EINVAL);

#define VALIDATE(field, value, expected)                                \
        do {                                                            \
                LevelConfig _c = config_default();                      \
                _c.field = (value);                                     \
                CHECK_EQ_INT(level_config_validate(&_c), (expected));   \
        } while (0)

        VALIDATE(window_pages, 0, -EINVAL);
        VALIDATE(window_pages, 1, 0);
        VALIDATE(level_medium, 0, -EINVAL);
        VALIDATE(level_medium, 1, 0);
        VALIDATE(level_medium, 99, 0);          /* medium == oom: MEDIUM is never reached, allowed */
        VALIDATE(level_medium, 100, -EINVAL);   /* medium > oom */
        VALIDATE(level_oom, 100, 0);
        VALIDATE(level_oom, 101, -EINVAL);
        VALIDATE(level_oom, 59, -EINVAL);
        VALIDATE(headroom_floor_permyriad, 10000, 0);
        VALIDATE(headroom_floor_permyriad, 10001, -EINVAL);
        VALIDATE(headroom_floor_permyriad, 0, 0);
        VALIDATE(quiet_usec, SEC(2), 0);        /* == hold */
        VALIDATE(quiet_usec, SEC(2) - 1, -EINVAL);
        VALIDATE(hold_usec, 0, 0);
        VALIDATE(repeat_usec, 0, 0);
#undef VALIDATE
}

static void test_window(void) {
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev;

        level_engine_init(&e, &c);

        /* Two half windows make one index: 256 scanned, 128 reclaimed → 50. */
        CHECK_EQ_INT(feed_reclaim(&e, SEC(0), 128, 64, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_NONE);
        CHECK_EQ_U64(e.window_scanned, 128);
        CHECK_EQ_INT(feed_reclaim(&e, MSEC(500), 128, 64, &ev), 1);
        CHECK_EVENT(1, ev, LEVEL_LOW, LEVEL_NONE, 50, false, SAMPLE_RECLAIM, MSEC(500));
        CHECK_EQ_U64(e.window_scanned, 0);
        CHECK_EQ_U64(e.window_reclaimed, 0);

        /* Idle polls (nothing scanned) say nothing. */
        CHECK_EQ_INT(feed_reclaim(&e, SEC(1), 0, 0, &ev), 0);
        CHECK_EQ_INT(feed_reclaim(&e, SEC(1), 0, 5, &ev), 0);

        /* 255 + 1 fills the window exactly; the reclaimed-only poll counted too:
         * 256 scanned, 5 + 0 + 0 reclaimed → p = 251 → 98 → MEDIUM. */
        CHECK_EQ_INT(feed_reclaim(&e, SEC(2), 255, 0, &ev), 0);
        CHECK_EQ_INT(feed_reclaim(&e, SEC(2), 1, 0, &ev), 1);
        CHECK_EVENT(1, ev, LEVEL_MEDIUM, LEVEL_LOW, 98, false, SAMPLE_RECLAIM, SEC(2));

        /* One poll of many windows is one index over all of it, as the seed's
         * work function sees whatever accumulated: 4096 scanned, 0 reclaimed. */
        CHECK_EQ_INT(feed_reclaim(&e, SEC(3), 4096, 0, &ev), 1);
        CHECK_EVENT(1, ev, LEVEL_OOM, LEVEL_MEDIUM, 100, false, SAMPLE_RECLAIM, SEC(3));

        /* Saturating accumulators: no wrap to a tiny window. */
        level_engine_init(&e, &c);
        e.window_scanned = UINT64_MAX - 1;
        CHECK_EQ_INT(feed_reclaim(&e, SEC(0), 10, UINT64_MAX, &ev), 1);
        CHECK_EVENT(1, ev, LEVEL_LOW, LEVEL_NONE, 0, false, SAMPLE_RECLAIM, SEC(0));
}

static void test_hysteresis(void) {
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev;

        /* OOM, then MEDIUM samples: OOM held 2 s after its last sample. */
        level_engine_init(&e, &c);
        CHECK_EQ_U64(level_engine_next_deadline(&e), USEC_INFINITY);
        CHECK_EVENT(feed_level(&e, SEC(0), LEVEL_OOM, 100, &ev), ev,
                    LEVEL_OOM, LEVEL_NONE, 100, false, SAMPLE_LEVEL, SEC(0));
        CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(2));
        CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_MEDIUM, 70, &ev), 0);
        CHECK_EQ_INT(feed_level(&e, SEC(2) - 1, LEVEL_MEDIUM, 70, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_OOM);
        CHECK_EVENT(feed_level(&e, SEC(2), LEVEL_MEDIUM, 71, &ev), ev,
                    LEVEL_MEDIUM, LEVEL_OOM, 71, false, SAMPLE_LEVEL, SEC(2));
        CHECK_EQ_INT(e.current, LEVEL_MEDIUM);
        CHECK_EQ_INT(e.index, 71);
        CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(4));

        /* The same drop by the clock alone: tick at the deadline. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(0), LEVEL_OOM, 100, &ev), 1);
        CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_MEDIUM, 70, &ev), 0);
        CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(2));
        CHECK_EQ_INT(level_engine_tick(&e, SEC(2) - 1, &ev), 0);
        CHECK_EVENT(level_engine_tick(&e, SEC(2), &ev), ev,
                    LEVEL_MEDIUM, LEVEL_OOM, 60, false, SAMPLE_LEVEL, SEC(2));
        CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(3));
        CHECK_EVENT(level_engine_tick(&e, SEC(3), &ev), ev,
                    LEVEL_LOW, LEVEL_MEDIUM, 0, false, SAMPLE_LEVEL, SEC(3));
        /* LOW lasts the quiet period after the last sample at any level (MEDIUM at 1 s). */
        CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(11));
        CHECK_EQ_INT(level_engine_tick(&e, SEC(11) - 1, &ev), 0);
        CHECK_EVENT(level_engine_tick(&e, SEC(11), &ev), ev,
                    LEVEL_NONE, LEVEL_LOW, 0, false, SAMPLE_LEVEL, SEC(11));
        CHECK_EQ_U64(level_engine_next_deadline(&e), USEC_INFINITY);

        /* OOM expired but MEDIUM still held: a LOW sample lands on MEDIUM. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(0), LEVEL_OOM, 100, &ev), 1);
        CHECK_EQ_INT(feed_level(&e, MSEC(1500), LEVEL_MEDIUM, 65, &ev), 0);
        CHECK_EVENT(feed_level(&e, MSEC(2500), LEVEL_LOW, 10, &ev), ev,
                    LEVEL_MEDIUM, LEVEL_OOM, 60, false, SAMPLE_LEVEL, MSEC(2500));
        CHECK_EQ_INT(feed_level(&e, MSEC(3000), LEVEL_LOW, 10, &ev), 0);
        CHECK_EVENT(feed_level(&e, MSEC(3500), LEVEL_LOW, 12, &ev), ev,
                    LEVEL_LOW, LEVEL_MEDIUM, 12, false, SAMPLE_LEVEL, MSEC(3500));

        /* Everything expired at once: one event straight to NONE. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(5), LEVEL_OOM, 100, &ev), 1);
        CHECK_EVENT(level_engine_tick(&e, SEC(60), &ev), ev,
                    LEVEL_NONE, LEVEL_OOM, 0, false, SAMPLE_LEVEL, SEC(60));

        /* hold 0: no hysteresis, a lower sample drops at once to its own level. */
        c.hold_usec = 0;
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(0), LEVEL_OOM, 100, &ev), 1);
        CHECK_EVENT(feed_level(&e, SEC(0), LEVEL_MEDIUM, 61, &ev), ev,
                    LEVEL_MEDIUM, LEVEL_OOM, 61, false, SAMPLE_LEVEL, SEC(0));
        CHECK_EVENT(level_engine_tick(&e, SEC(0), &ev), ev,
                    LEVEL_LOW, LEVEL_MEDIUM, 0, false, SAMPLE_LEVEL, SEC(0));
}

static void test_quiet(void) {
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev;

        /* Time 0 is a real timestamp. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(level_engine_tick(&e, SEC(0), &ev), 0);
        CHECK_EVENT(feed_level(&e, SEC(0), LEVEL_LOW, 0, &ev), ev,
                    LEVEL_LOW, LEVEL_NONE, 0, false, SAMPLE_LEVEL, SEC(0));
        CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(10));
        CHECK_EQ_INT(level_engine_tick(&e, SEC(5), &ev), 0);
        CHECK_EQ_INT(level_engine_tick(&e, SEC(10) - 1, &ev), 0);
        CHECK_EVENT(level_engine_tick(&e, SEC(10), &ev), ev,
                    LEVEL_NONE, LEVEL_LOW, 0, false, SAMPLE_LEVEL, SEC(10));
        CHECK_EQ_U64(level_engine_next_deadline(&e), USEC_INFINITY);
        CHECK_EQ_INT(level_engine_tick(&e, SEC(20), &ev), 0);

        /* A later LOW pushes the deadline on. */
        CHECK_EQ_INT(feed_level(&e, SEC(30), LEVEL_LOW, 0, &ev), 1);
        CHECK_EQ_INT(feed_level(&e, SEC(35), LEVEL_LOW, 0, &ev), 1);   /* a repeat */
        CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(45));
        CHECK_EQ_INT(level_engine_tick(&e, SEC(40), &ev), 0);
        CHECK_EQ_INT(level_engine_tick(&e, SEC(45), &ev), 1);
        CHECK_EQ_INT(ev.level, LEVEL_NONE);

        /* The drop names what drove the level last. */
        CHECK_EQ_INT(feed_reclaim(&e, SEC(50), 256, 256, &ev), 1);
        CHECK_EVENT(level_engine_tick(&e, SEC(60), &ev), ev,
                    LEVEL_NONE, LEVEL_LOW, 0, false, SAMPLE_RECLAIM, SEC(60));

        /* An infinite quiet period never expires. */
        c.quiet_usec = USEC_INFINITY;
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_LOW, 0, &ev), 1);
        CHECK_EQ_U64(level_engine_next_deadline(&e), USEC_INFINITY);
        CHECK_EQ_INT(level_engine_tick(&e, USEC_INFINITY - 1, &ev), 0);
}

static void test_rate_limit(void) {
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev;

        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(0), LEVEL_LOW, 0, &ev), 1);
        CHECK_EQ_INT(feed_level(&e, MSEC(500), LEVEL_LOW, 0, &ev), 0);
        CHECK_EQ_INT(feed_level(&e, MSEC(999), LEVEL_LOW, 0, &ev), 0);
        CHECK_EVENT(feed_level(&e, SEC(1), LEVEL_LOW, 3, &ev), ev,
                    LEVEL_LOW, LEVEL_LOW, 3, true, SAMPLE_LEVEL, SEC(1));
        CHECK_EQ_INT(feed_level(&e, MSEC(1200), LEVEL_LOW, 0, &ev), 0);
        CHECK_EQ_INT(feed_level(&e, SEC(2), LEVEL_LOW, 0, &ev), 1);
        CHECK(ev.repeat);

        /* A rise is never rate limited. */
        CHECK_EVENT(feed_level(&e, MSEC(2001), LEVEL_MEDIUM, 60, &ev), ev,
                    LEVEL_MEDIUM, LEVEL_LOW, 60, false, SAMPLE_LEVEL, MSEC(2001));
        CHECK_EQ_INT(feed_level(&e, MSEC(2002), LEVEL_MEDIUM, 60, &ev), 0);

        /* Out-of-order timestamps: an older sample is not "a long time later". */
        CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_MEDIUM, 60, &ev), 0);
        CHECK_EQ_U64(e.last_seen_usec[LEVEL_MEDIUM], MSEC(2002));

        /* repeat 0: every sample is announced. */
        c.repeat_usec = 0;
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(0), LEVEL_OOM, 100, &ev), 1);
        CHECK_EQ_INT(feed_level(&e, SEC(0), LEVEL_OOM, 100, &ev), 1);
        CHECK(ev.repeat);
}

static void test_headroom(void) {
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev;

        /* By share: 2 % of 1 000 000 bytes is 20 000; "under" is strict. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 20000, 1000000, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_NONE);
        CHECK(!e.seen[LEVEL_LOW]);
        CHECK_EVENT(feed_headroom(&e, SEC(1), 19999, 1000000, &ev), ev,
                    LEVEL_OOM, LEVEL_NONE, 100, false, SAMPLE_HEADROOM, SEC(1));
        /* Plenty again: no level from headroom, the OOM runs out by the clock. */
        CHECK_EQ_INT(feed_headroom(&e, SEC(2), 900000, 1000000, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_OOM);
        CHECK_EQ_INT(level_engine_tick(&e, SEC(3), &ev), 1);
        CHECK_EQ_INT(ev.level, LEVEL_LOW);
        CHECK_EQ_INT(ev.cause, SAMPLE_HEADROOM);

        /* By bytes: 64 MiB floor, share off. */
        c.headroom_floor_bytes = 64 << 20;
        c.headroom_floor_permyriad = 0;
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 64 << 20, UINT64_C(24) << 30, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), (64 << 20) - 1, UINT64_C(24) << 30, &ev), 1);
        CHECK_EQ_INT(ev.level, LEVEL_OOM);

        /* The larger floor wins: max(1000, 2 % of 100 000 = 2000). */
        c.headroom_floor_bytes = 1000;
        c.headroom_floor_permyriad = 200;
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 2000, 100000, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 1500, 100000, &ev), 1);
        /* ... and with a small total the byte floor wins: max(1000, 20). */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 1000, 1000, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 999, 1000, &ev), 1);

        /* 0 and 0 disables it, even at 0 bytes available. */
        c.headroom_floor_bytes = 0;
        c.headroom_floor_permyriad = 0;
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 0, 1000000, &ev), 0);

        /* No overflow for the largest total: 100 % of UINT64_MAX. */
        c.headroom_floor_permyriad = 10000;
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), UINT64_MAX, UINT64_MAX, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), UINT64_MAX - 1, UINT64_MAX, &ev), 1);
}

static void test_sample_oom(void) {
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev;

        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_MEDIUM, 60, &ev), 1);
        CHECK_EVENT(level_engine_feed(&e, &(Sample) { .kind = SAMPLE_OOM, .timestamp_usec = SEC(2) }, &ev), ev,
                    LEVEL_OOM, LEVEL_MEDIUM, 100, false, SAMPLE_OOM, SEC(2));
        CHECK(e.seen[LEVEL_LOW] && e.seen[LEVEL_MEDIUM] && e.seen[LEVEL_OOM]);
        CHECK_EQ_U64(e.last_seen_usec[LEVEL_LOW], SEC(2));
        CHECK_EVENT(level_engine_tick(&e, SEC(4), &ev), ev,
                    LEVEL_LOW, LEVEL_OOM, 0, false, SAMPLE_OOM, SEC(4));
}

static void test_invalid_samples(void) {
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev = {};

        level_engine_init(&e, &c);

        /* A sample at NONE does nothing at all. */
        CHECK_EQ_INT(feed_level(&e, SEC(0), LEVEL_NONE, 0, &ev), 0);
        CHECK(!e.seen[LEVEL_LOW]);
        CHECK_EQ_INT(feed_level(&e, SEC(0), LEVEL_OOM, 100, &ev), 1);
        CHECK_EQ_INT(feed_level(&e, SEC(5), LEVEL_NONE, 0, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_OOM);

        CHECK_EQ_INT(feed_level(&e, SEC(0), _LEVEL_MAX, 0, &ev), -EINVAL);
        CHECK_EQ_INT(feed_level(&e, SEC(0), _LEVEL_INVALID, 0, &ev), -EINVAL);
        CHECK_EQ_INT(level_engine_feed(&e, &(Sample) { .kind = _SAMPLE_KIND_MAX }, &ev), -EINVAL);
        CHECK_EQ_INT(level_engine_feed(&e, &(Sample) { .kind = _SAMPLE_KIND_INVALID }, &ev), -EINVAL);
        CHECK_EQ_INT(level_engine_feed(&e, NULL, &ev), -EINVAL);
        CHECK_EQ_INT(e.current, LEVEL_OOM);

        /* An index above 100 is clamped; ret may be NULL. */
        level_engine_init(&e, NULL);
        CHECK_EQ_INT(e.config.window_pages, 256);
        CHECK_EQ_INT(feed_level(&e, SEC(0), LEVEL_OOM, 150, NULL), 1);
        CHECK_EQ_INT(e.index, 100);
}

/* The headroom trend that decides whether an OOM of reclaim inefficiency
 * may kill: a hog's headroom falls towards the floor, a thrash's stays. */
/* The stall band: under twice the floor with tasks stalled since the read
 * before is the OOM; without a stall (a tight fit holding there), or above
 * the band, it is not. */
static void test_headroom_stall_band(void) {
        const uint64_t MiB = 1 << 20, total = 1000 * MiB;       /* floor 2 %: 20 MiB, band 40 MiB */
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev;
        Sample in_band = { .kind = SAMPLE_HEADROOM, .available_bytes = 39 * MiB, .total_bytes = total,
                           .stalled_usec = MSEC(1) };

        c.warn_horizon_usec = 0;        /* the trend's warnings are test_headroom_trend()'s */
        /* Off by default in the engine (the manager turns it on for the system). */
        CHECK_EQ_U64(c.headroom_stall_usec, 0);
        CHECK(!level_headroom_stall_band(&c, &in_band));
        level_engine_init(&e, &c);
        CHECK_EQ_INT(level_engine_feed(&e, &in_band, &ev), 0);

        c.headroom_stall_usec = LEVEL_HEADROOM_STALL_USEC;
        CHECK(level_headroom_stall_band(&c, &in_band));
        level_engine_init(&e, &c);
        in_band.timestamp_usec = SEC(1);
        CHECK_EVENT(level_engine_feed(&e, &in_band, &ev), ev, LEVEL_OOM, LEVEL_NONE, 100, false,
                    SAMPLE_HEADROOM, SEC(1));

        /* A stall under the minimum, or none: no OOM. */
        Sample x = in_band;
        x.stalled_usec = MSEC(1) - 1;
        CHECK(!level_headroom_stall_band(&c, &x));
        x.stalled_usec = 0;
        CHECK(!level_headroom_stall_band(&c, &x));
        level_engine_init(&e, &c);
        CHECK_EQ_INT(level_engine_feed(&e, &x, &ev), 0);
        /* At twice the floor is out of the band ("under" is strict), with any stall. */
        x = in_band;
        x.available_bytes = 40 * MiB;
        x.stalled_usec = SEC(1);
        CHECK(!level_headroom_stall_band(&c, &x));
        x.available_bytes = 40 * MiB - 1;
        CHECK(level_headroom_stall_band(&c, &x));
        /* A disabled floor has no band. */
        c.headroom_floor_bytes = 0;
        c.headroom_floor_permyriad = 0;
        CHECK(!level_headroom_stall_band(&c, &in_band));
        /* No overflow with a floor of more than half of UINT64_MAX: the band is everything. */
        c.headroom_floor_bytes = UINT64_MAX / 2 + 1;
        x = in_band;
        x.available_bytes = UINT64_MAX - 1;
        x.total_bytes = UINT64_MAX;
        CHECK(level_headroom_stall_band(&c, &x));
}

/* Which stall a headroom read stands for: the growth since a read at most a
 * second ago; else the PSI trigger's guaranteed stall when it woke the scope
 * at most the given age ago (the first read of a fall); else none. */
static void test_headroom_stall(void) {
        const usec_t busy = MSEC(100);

        /* A read 100 ms before: the growth, whatever the trigger says. */
        CHECK_EQ_U64(level_headroom_stall(MSEC(25), MSEC(20), SEC(10), 0, 0, busy, SEC(10) + MSEC(100)), MSEC(5));
        CHECK_EQ_U64(level_headroom_stall(MSEC(20), MSEC(20), SEC(10), SEC(10) + MSEC(50), MSEC(1), busy,
                                          SEC(10) + MSEC(100)), 0);
        /* Exactly a second ago still counts; a counter that went back is no stall. */
        CHECK_EQ_U64(level_headroom_stall(MSEC(21), MSEC(20), SEC(10), 0, 0, busy, SEC(11)), MSEC(1));
        CHECK_EQ_U64(level_headroom_stall(MSEC(19), MSEC(20), SEC(10), 0, 0, busy, SEC(11)), 0);
        /* Older than a second, or no read at all: the total since is not this fall's... */
        CHECK_EQ_U64(level_headroom_stall(MSEC(500), MSEC(20), SEC(10), 0, 0, busy, SEC(11) + 1), 0);
        CHECK_EQ_U64(level_headroom_stall(MSEC(500), 0, 0, 0, 0, busy, SEC(11)), 0);
        /* ...but the trigger that just woke the scope says there was one. */
        CHECK_EQ_U64(level_headroom_stall(MSEC(500), 0, 0, SEC(11), MSEC(1), busy, SEC(11)), MSEC(1));
        CHECK_EQ_U64(level_headroom_stall(MSEC(500), MSEC(20), SEC(1), SEC(11), MSEC(1), busy, SEC(11) + busy),
                     MSEC(1));
        /* A trigger event older than the given age, or in the future (a clock
         * mix-up), says nothing about this read. */
        CHECK_EQ_U64(level_headroom_stall(MSEC(500), 0, 0, SEC(11), MSEC(1), busy, SEC(11) + busy + 1), 0);
        CHECK_EQ_U64(level_headroom_stall(MSEC(500), 0, 0, SEC(12), MSEC(1), busy, SEC(11)), 0);
        /* A read "after" now (a clock mix-up) is not a read before. */
        CHECK_EQ_U64(level_headroom_stall(MSEC(500), 0, SEC(12), 0, 0, busy, SEC(11)), 0);
        /* What the band makes of it: the trigger's 1 ms is the band's stall. */
        LevelConfig c = config_default();
        c.headroom_stall_usec = LEVEL_HEADROOM_STALL_USEC;
        Sample first = { .kind = SAMPLE_HEADROOM, .available_bytes = 30 << 20, .total_bytes = 1000ull << 20,
                         .stalled_usec = level_headroom_stall(MSEC(500), 0, 0, SEC(11), MSEC(1), busy, SEC(11)) };
        CHECK(level_headroom_stall_band(&c, &first));
}

static void test_headroom_trend(void) {
        const uint64_t MiB = 1 << 20, total = 1000 * MiB;       /* floor 2 %: 20 MiB */
        LevelConfig c = config_default();
        LevelEngine e;
        uint64_t rate;

        /* Nothing known: no rate, never running out (unless under the floor). */
        level_engine_init(&e, &c);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, &rate), USEC_INFINITY);
        CHECK_EQ_U64(rate, 0);
        CHECK(!level_engine_headroom_running_out(&e, total));
        level_engine_headroom_note(&e, MSEC(0), 500 * MiB);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, NULL), USEC_INFINITY);
        /* Two points closer than the minimum span make no rate. */
        level_engine_headroom_note(&e, MSEC(100), 400 * MiB);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, NULL), USEC_INFINITY);
        /* 200 MiB in 200 ms: 1000 MiB/s, 280 MiB above the floor: 280 ms. */
        level_engine_headroom_note(&e, MSEC(200), 300 * MiB);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, &rate), MSEC(280));
        CHECK_EQ_U64(rate, 1000 * MiB);
        CHECK(level_engine_headroom_running_out(&e, total));
        /* A point older than the newest is ignored. */
        level_engine_headroom_note(&e, MSEC(150), 900 * MiB);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, NULL), MSEC(280));

        /* A slow leak: 10 MiB/s over the 2 s window; 41 MiB left (21 above the
         * floor) is 2.1 s, past the 2 s horizon. */
        level_engine_init(&e, &c);
        for (unsigned i = 0; i <= 20; i++)
                level_engine_headroom_note(&e, MSEC(100 * i), (61 - i) * MiB);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, &rate), SEC(2) + MSEC(100));
        CHECK_EQ_U64(rate, 10 * MiB);
        CHECK(!level_engine_headroom_running_out(&e, total));
        /* 100 ms later, 40 MiB: 2 s, the horizon itself, kills. */
        level_engine_headroom_note(&e, MSEC(2100), 40 * MiB);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, NULL), SEC(2));
        CHECK(level_engine_headroom_running_out(&e, total));

        /* Only the last 2 s count: a fall long ago is no trend now. */
        level_engine_init(&e, &c);
        level_engine_headroom_note(&e, SEC(0), 900 * MiB);
        level_engine_headroom_note(&e, SEC(10), 300 * MiB);
        level_engine_headroom_note(&e, SEC(11), 300 * MiB);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, NULL), USEC_INFINITY);
        CHECK(!level_engine_headroom_running_out(&e, total));

        /* A thrash: the headroom wobbles up and down around 400 MiB. */
        level_engine_init(&e, &c);
        for (unsigned i = 0; i < 100; i++)
                level_engine_headroom_note(&e, MSEC(100 * i), (400 + (i % 3)) * MiB);
        CHECK(!level_engine_headroom_running_out(&e, total));
        /* … and rising: not falling, no eta. */
        level_engine_headroom_note(&e, SEC(20), 600 * MiB);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, NULL), USEC_INFINITY);

        /* Under the floor is running out whatever the trend (even with no rate). */
        level_engine_init(&e, &c);
        level_engine_headroom_note(&e, SEC(0), 20 * MiB);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, NULL), 0);
        CHECK(level_engine_headroom_running_out(&e, total));

        /* KillHorizonSec=0: the floor alone. */
        c.kill_horizon_usec = 0;
        level_engine_init(&e, &c);
        level_engine_headroom_note(&e, MSEC(0), 300 * MiB);
        level_engine_headroom_note(&e, MSEC(200), 21 * MiB);
        CHECK(level_engine_headroom_eta(&e, total, NULL) < MSEC(1));
        CHECK(!level_engine_headroom_running_out(&e, total));
        level_engine_headroom_note(&e, MSEC(300), 19 * MiB);
        CHECK(level_engine_headroom_running_out(&e, total));

        /* No floor: no eta at all. */
        c = config_default();
        c.headroom_floor_permyriad = 0;
        level_engine_init(&e, &c);
        level_engine_headroom_note(&e, MSEC(0), 300 * MiB);
        level_engine_headroom_note(&e, MSEC(200), 1);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, NULL), USEC_INFINITY);
        CHECK(!level_engine_headroom_running_out(&e, total));

        /* The ring wraps: 100 points of a steady fall keep the rate of the last 2 s. */
        c = config_default();
        level_engine_init(&e, &c);
        for (unsigned i = 0; i < 100; i++)
                level_engine_headroom_note(&e, MSEC(50 * i), (900 - i) * MiB);
        /* 20 MiB/s (1 MiB per 50 ms) over 31 points = 1.55 s; 801 - 20 = 781 MiB left. */
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, &rate), MSEC(39050));
        CHECK_EQ_U64(rate, 20 * MiB);

        /* SAMPLE_HEADROOM samples are points of the trend too (the fall is a
         * warning: test_headroom_warning()). */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, MSEC(0), 300 * MiB, total, NULL), 0);
        CHECK_EQ_INT(feed_headroom(&e, MSEC(500), 100 * MiB, total, NULL), 1);
        CHECK_EQ_U64(level_engine_headroom_eta(&e, total, &rate), MSEC(200));
        CHECK_EQ_U64(rate, 400 * MiB);
}

/* WarnHorizonSec=: a headroom falling towards the floor is LOW when the
 * trend reaches it within the horizon, MEDIUM within half of it; never
 * from one point, a rise or a level headroom, and never the OOM. */
static void test_headroom_warning(void) {
        const uint64_t MiB = 1 << 20, total = 1000 * MiB;       /* floor 2 %: 20 MiB */
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev;

        CHECK_EQ_U64(c.warn_horizon_usec, SEC(12));
        level_engine_init(&e, &c);
        /* One point is no trend, however low above the floor. */
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 21 * MiB, total, &ev), 0);
        /* Level, then rising: nothing. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 500 * MiB, total, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(1), 500 * MiB, total, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(2), 600 * MiB, total, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_NONE);

        /* A slow leak, 10 MiB/s from 500 MiB: 48 s to the floor, nothing;
         * the first sample within 12 s of it is LOW, within 6 s MEDIUM. */
        level_engine_init(&e, &c);
        uint64_t avail = 500 * MiB;
        usec_t t = 0, low_at = 0, medium_at = 0;
        for (; avail > 20 * MiB; avail -= 10 * MiB, t += SEC(1)) {
                int r = feed_headroom(&e, t, avail, total, &ev);
                CHECK(r >= 0);
                if (r > 0 && ev.level == LEVEL_LOW && !low_at) {
                        low_at = t;
                        CHECK_EQ_INT(ev.cause, SAMPLE_HEADROOM);
                        CHECK_EQ_INT(ev.index, level_nominal_index(&c, LEVEL_LOW));
                }
                if (r > 0 && ev.level == LEVEL_MEDIUM && !medium_at)
                        medium_at = t;
                CHECK(r == 0 || ev.level != LEVEL_OOM);
        }
        /* LOW at 140 MiB (12 s left), MEDIUM at 80 MiB (6 s left). */
        CHECK_EQ_U64(low_at, SEC(36));
        CHECK_EQ_U64(medium_at, SEC(42));
        /* At the floor: the OOM, as without the warning. */
        CHECK_EVENT(feed_headroom(&e, t, 19 * MiB, total, &ev), ev,
                    LEVEL_OOM, LEVEL_MEDIUM, 100, false, SAMPLE_HEADROOM, t);

        /* A fast fill, 200 MiB/s: nothing while more than a third of the
         * memory is available (a burst that stops at a unit's own limit
         * looks the same), MEDIUM on the first sample under it. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 700 * MiB, total, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(1), 500 * MiB, total, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, MSEC(1500), 400 * MiB, total, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(2), 300 * MiB, total, &ev), 1);
        CHECK_EQ_INT(ev.level, LEVEL_MEDIUM);
        /* At most a third: a byte more says nothing, the third itself does. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 500 * MiB, total, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(1), total / 3 + 1, total, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, MSEC(1100), total / 3, total, &ev), 1);

        /* 0: off. The same fall says nothing until the floor. */
        c.warn_horizon_usec = 0;
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_headroom(&e, SEC(0), 300 * MiB, total, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, SEC(1), 100 * MiB, total, &ev), 0);
        CHECK_EQ_INT(feed_headroom(&e, MSEC(1500), 30 * MiB, total, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_NONE);
}

/* An OOM that killed nothing because memory was left (the manager's
 * scope_memory_left()): when it jumped over MEDIUM it is MEDIUM first, and
 * the next OOM sample raises it; when it came from MEDIUM it stands, and an
 * OOM from the floor after it is announced at once, not after RepeatSec=. */
static void test_memory_left_grading(void) {
        LevelConfig c = config_default();
        LevelEngine e;
        LevelEvent ev;

        /* NONE -> OOM (memcg's "critical" first): graded to MEDIUM. */
        level_engine_init(&e, &c);
        CHECK_EVENT(feed_level(&e, SEC(1), LEVEL_OOM, 100, &ev), ev,
                    LEVEL_OOM, LEVEL_NONE, 100, false, SAMPLE_LEVEL, SEC(1));
        CHECK(!ev.graded);
        CHECK_EQ_INT(level_engine_grade(&e, &ev), 1);
        CHECK_EQ_INT(ev.level, LEVEL_MEDIUM);
        CHECK_EQ_INT(ev.previous, LEVEL_NONE);
        CHECK_EQ_INT(ev.index, 60);
        CHECK(ev.graded);
        CHECK_EQ_INT(e.current, LEVEL_MEDIUM);
        CHECK_EQ_INT(e.index, 60);
        CHECK(!e.seen[LEVEL_OOM]);
        CHECK(e.seen[LEVEL_MEDIUM] && e.seen[LEVEL_LOW]);
        /* No OOM sample follows (a memcg stuck at its limit says "critical"
         * once): the OOM LEVEL_GRADE_USEC later, with the held sample's
         * cause, then held HoldSec= from there. */
        CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(1) + LEVEL_GRADE_USEC);
        CHECK_EQ_INT(level_engine_tick(&e, SEC(1) + LEVEL_GRADE_USEC - 1, &ev), 0);
        CHECK_EVENT(level_engine_tick(&e, SEC(1) + LEVEL_GRADE_USEC, &ev), ev,
                    LEVEL_OOM, LEVEL_MEDIUM, 100, false, SAMPLE_LEVEL, SEC(1) + LEVEL_GRADE_USEC);
        CHECK(!ev.graded);
        CHECK_EQ_U64(e.graded_oom_usec, 0);
        CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(3) + LEVEL_GRADE_USEC);
        CHECK_EQ_INT(level_engine_tick(&e, SEC(3), &ev), 0);

        /* A lower sample meanwhile neither brings the OOM early nor cancels
         * it; the cause stays the held sample's (reclaim here). */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_reclaim(&e, SEC(1), 1000, 0, &ev), 1);
        CHECK_EQ_INT(ev.level, LEVEL_OOM);
        CHECK_EQ_INT(level_engine_grade(&e, &ev), 1);
        CHECK_EQ_INT(feed_level(&e, SEC(1) + MSEC(50), LEVEL_LOW, 10, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_MEDIUM);
        CHECK_EQ_INT(feed_headroom(&e, SEC(1) + MSEC(60), 900000, 1000000, &ev), 0);
        CHECK_EVENT(level_engine_tick(&e, SEC(1) + LEVEL_GRADE_USEC, &ev), ev,
                    LEVEL_OOM, LEVEL_MEDIUM, 100, false, SAMPLE_RECLAIM, SEC(1) + LEVEL_GRADE_USEC);

        /* HoldSec=0: the graded MEDIUM falls before the OOM is due, and
         * then nothing rises by itself. */
        {
                LevelConfig c0 = config_default();

                c0.hold_usec = 0;
                level_engine_init(&e, &c0);
                CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_OOM, 100, &ev), 1);
                CHECK_EQ_INT(level_engine_grade(&e, &ev), 1);
                CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(1));
                CHECK_EVENT(level_engine_tick(&e, SEC(1), &ev), ev,
                            LEVEL_LOW, LEVEL_MEDIUM, 0, false, SAMPLE_LEVEL, SEC(1));
                CHECK_EQ_U64(level_engine_next_deadline(&e), SEC(1) + LEVEL_GRADE_USEC);
                CHECK_EQ_INT(level_engine_tick(&e, SEC(1) + LEVEL_GRADE_USEC, &ev), 0);
                CHECK_EQ_INT(e.current, LEVEL_LOW);
                CHECK_EQ_U64(e.graded_oom_usec, 0);
        }

        /* The next OOM sample, however soon, raises it to OOM; that one is not graded again. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_OOM, 100, &ev), 1);
        CHECK_EQ_INT(level_engine_grade(&e, &ev), 1);
        CHECK_EVENT(feed_level(&e, SEC(1) + 1, LEVEL_OOM, 100, &ev), ev,
                    LEVEL_OOM, LEVEL_MEDIUM, 100, false, SAMPLE_LEVEL, SEC(1) + 1);
        CHECK_EQ_INT(level_engine_grade(&e, &ev), 0);
        CHECK_EQ_INT(ev.level, LEVEL_OOM);
        CHECK(!ev.graded);
        CHECK_EQ_INT(e.current, LEVEL_OOM);
        /* That OOM came first: nothing is due any more. */
        CHECK_EQ_U64(e.graded_oom_usec, 0);
        CHECK_EQ_INT(level_engine_tick(&e, SEC(1) + LEVEL_GRADE_USEC, &ev), 0);

        /* From LOW as from NONE. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_LOW, 0, &ev), 1);
        CHECK_EQ_INT(feed_level(&e, SEC(2), LEVEL_OOM, 100, &ev), 1);
        CHECK_EQ_INT(level_engine_grade(&e, &ev), 1);
        CHECK_EQ_INT(ev.previous, LEVEL_LOW);
        CHECK_EQ_INT(ev.level, LEVEL_MEDIUM);

        /* Not graded: a repeat, a level below OOM, an OOM from MEDIUM. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_MEDIUM, 70, &ev), 1);
        CHECK_EQ_INT(level_engine_grade(&e, &ev), 0);
        CHECK_EQ_INT(ev.level, LEVEL_MEDIUM);
        CHECK_EQ_INT(feed_level(&e, SEC(2), LEVEL_OOM, 100, &ev), 1);
        CHECK_EQ_INT(level_engine_grade(&e, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_OOM);
        CHECK_EQ_INT(feed_level(&e, SEC(4), LEVEL_OOM, 100, &ev), 1);
        CHECK(ev.repeat);
        CHECK_EQ_INT(level_engine_grade(&e, &ev), 0);
        CHECK_EQ_INT(e.current, LEVEL_OOM);

        /* Held (killed nothing): the floor's OOM 100 ms later is announced at
         * once, as a repeat; without the hold it waits for RepeatSec= (1 s). */
        for (int held = 0; held <= 1; held++) {
                level_engine_init(&e, &c);
                CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_MEDIUM, 70, &ev), 1);
                CHECK_EQ_INT(feed_level(&e, SEC(2), LEVEL_OOM, 100, &ev), 1);
                if (held)
                        level_engine_oom_held(&e);
                /* Another reclaim OOM is rate limited either way. */
                CHECK_EQ_INT(feed_level(&e, SEC(2) + MSEC(50), LEVEL_OOM, 100, &ev), 0);
                if (held) {
                        CHECK_EVENT(feed_headroom(&e, SEC(2) + MSEC(100), 1000, 1000000, &ev), ev,
                                    LEVEL_OOM, LEVEL_OOM, 100, true, SAMPLE_HEADROOM, SEC(2) + MSEC(100));
                        CHECK(!e.oom_held);
                        /* Announced: the hold is spent, the next waits again. */
                        CHECK_EQ_INT(feed_headroom(&e, SEC(2) + MSEC(200), 1000, 1000000, &ev), 0);
                } else
                        CHECK_EQ_INT(feed_headroom(&e, SEC(2) + MSEC(100), 1000, 1000000, &ev), 0);
        }
        /* The kernel's own OOM too; a headroom sample above the floor does not. */
        level_engine_init(&e, &c);
        CHECK_EQ_INT(feed_level(&e, SEC(1), LEVEL_MEDIUM, 70, &ev), 1);
        CHECK_EQ_INT(feed_level(&e, SEC(2), LEVEL_OOM, 100, &ev), 1);
        level_engine_oom_held(&e);
        CHECK_EQ_INT(feed_headroom(&e, SEC(2) + MSEC(50), 900000, 1000000, &ev), 0);
        CHECK(e.oom_held);
        CHECK_EVENT(level_engine_feed(&e, &(Sample) { .kind = SAMPLE_OOM, .timestamp_usec = SEC(2) + MSEC(60) }, &ev),
                    ev, LEVEL_OOM, LEVEL_OOM, 100, true, SAMPLE_OOM, SEC(2) + MSEC(60));
        /* Not at OOM: nothing to hold. */
        level_engine_init(&e, &c);
        level_engine_oom_held(&e);
        CHECK(!e.oom_held);
}

int main(void) {
        test_calc_index();
        test_level_from_index();
        test_strings();
        test_vmpressure_abi();
        test_threshold();
        test_config();
        test_window();
        test_hysteresis();
        test_quiet();
        test_rate_limit();
        test_headroom();
        test_headroom_warning();
        test_headroom_trend();
        test_headroom_stall_band();
        test_headroom_stall();
        test_sample_oom();
        test_invalid_samples();
        test_memory_left_grading();
        return test_exit("test-level");
}
