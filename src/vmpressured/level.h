/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The level engine: pure. Samples (with their timestamp) in, level changes
 * out. No I/O, no clock reads, no allocation: it runs on the OOM path.
 */

#include "macro.h"

typedef enum Level {
        LEVEL_NONE,             /* "Normal": no pressure */
        LEVEL_LOW,
        LEVEL_MEDIUM,
        LEVEL_OOM,
        _LEVEL_MAX,
        _LEVEL_INVALID = -EINVAL,
} Level;

typedef enum SampleKind {
        SAMPLE_LEVEL,           /* the kernel named a level: memcg eventfd, PSI trigger, syscall */
        SAMPLE_RECLAIM,         /* pages scanned/reclaimed since the previous sample (/proc/vmstat) */
        SAMPLE_HEADROOM,        /* memory still available: MemAvailable+SwapFree, or limit-usage */
        SAMPLE_OOM,             /* the kernel's own OOM happened (memory.oom_control, oom_kill) */
        _SAMPLE_KIND_MAX,
        _SAMPLE_KIND_INVALID = -EINVAL,
} SampleKind;

typedef struct Sample {
        SampleKind kind;
        usec_t timestamp_usec;          /* CLOCK_MONOTONIC when the kernel's notification was read */

        /* SAMPLE_LEVEL */
        Level level;
        unsigned index;                 /* 0..100; for level-only sources level_nominal_index() */

        /* SAMPLE_RECLAIM: deltas since the previous sample */
        uint64_t scanned;
        uint64_t reclaimed;

        /* SAMPLE_HEADROOM */
        uint64_t available_bytes;
        uint64_t total_bytes;
        /* SAMPLE_HEADROOM: how long tasks stalled on memory (PSI "some")
         * since the previous headroom read; 0 when not known (see
         * headroom_stall_usec, level_headroom_stall()). SAMPLE_RECLAIM: the
         * threshold of the kernel's PSI trigger when that trigger is what
         * woke the source (at least this much stall within its window), 0
         * for any other wake-up or sample. */
        uint64_t stalled_usec;
} Sample;

typedef struct LevelConfig {
        /* The seed's sysctls: vmpressure_window (pages), _level_medium, _level_oom. */
        unsigned window_pages;          /* default 256 (1 MiB of 4 KiB pages) */
        unsigned level_medium;          /* default 60 */
        unsigned level_oom;             /* default 99 */

        usec_t hold_usec;               /* hysteresis: a level stays this long after its last sample (2 s) */
        usec_t quiet_usec;              /* back to NONE after this long without any pressure (10 s) */
        usec_t repeat_usec;             /* same level re-announced at most this often (1 s) */

        /* OOM from headroom: available under max(floor_bytes, total*floor_permyriad/10000).
         * 0 and 0 disables it. */
        uint64_t headroom_floor_bytes;          /* default 0 */
        unsigned headroom_floor_permyriad;      /* default 200 (2 %) */

        /* An OOM of reclaim inefficiency or a stall with the headroom above the
         * floor may still kill when, at the rate the headroom fell over the last
         * LEVEL_TREND_WINDOW_USEC, it would reach the floor within this long
         * (the memory is running out, not thrashing). 0: the floor alone. */
        usec_t kill_horizon_usec;               /* default 2 s */

        /* A warning from the headroom's trend, before any reclaim: with at
         * most a third of the memory available, at the rate it fell over the
         * last LEVEL_TREND_WINDOW_USEC, the floor is reached within this
         * long: LOW; within half of it: MEDIUM. 0: off. Only the
         * system scope's MemAvailable is a trend to trust (a cgroup's own
         * headroom swings with its page cache): the manager sets it to 0 for
         * every cgroup scope. */
        usec_t warn_horizon_usec;               /* default 12 s */

        /* The stall band: a headroom read under twice the floor is the OOM
         * too when tasks stalled on memory for at least this long since the
         * read before (Sample.stalled_usec): memory is nearly gone and the
         * kernel already makes tasks wait to find more, the seed's "about
         * to OOM". A load that holds there without stalls (a tight fit) is
         * left alone. 0: off, the engine's default; the manager turns it
         * on for the system scope alone (a cgroup's own headroom swings with
         * its page cache). */
        usec_t headroom_stall_usec;
} LevelConfig;

/* The headroom trend: the fall rate is taken between the newest point and
 * the oldest one at most this old (and at least LEVEL_TREND_MIN_SPAN_USEC
 * apart, so that two reads a few µs apart do not make a rate of noise). */
#define LEVEL_TREND_WINDOW_USEC (2 * USEC_PER_SEC)
#define LEVEL_TREND_MIN_SPAN_USEC (150 * USEC_PER_MSEC)
/* Points kept: 2 s of the 100 ms busy poll, and the reads between them. */
#define LEVEL_TREND_POINTS 32
/* How long level_engine_grade() holds an OOM back as MEDIUM at most. */
#define LEVEL_GRADE_USEC (100 * USEC_PER_MSEC)
/* The stall band's stall (headroom_stall_usec) where it is on: 1 ms of
 * PSI "some" between two headroom reads. */
#define LEVEL_HEADROOM_STALL_USEC (1 * USEC_PER_MSEC)
/* WarnHorizonSec= warns only with at most a third of the memory available. */
#define LEVEL_WARN_SHARE_DIVISOR 3

typedef struct HeadroomPoint {
        usec_t timestamp_usec;
        uint64_t available_bytes;
} HeadroomPoint;

typedef struct HeadroomTrend {
        HeadroomPoint points[LEVEL_TREND_POINTS];
        unsigned n;                     /* points held, <= LEVEL_TREND_POINTS */
        unsigned next;                  /* where the next point goes */
} HeadroomTrend;

typedef struct LevelEvent {
        Level level;                    /* the new level; LEVEL_NONE is "Normal" */
        Level previous;
        unsigned index;
        bool repeat;                    /* same level announced again (rate limited) */
        SampleKind cause;               /* what kind of sample caused it (for a drop: the last one) */
        usec_t timestamp_usec;          /* the causing sample's time, or the tick's time for a drop */
        /* Set by the manager, never by the engine: an OOM that came from reclaim
         * inefficiency or a stall while the headroom, read at once, was still
         * above the floor. Announced as OOM (the seed's level), but no process
         * is killed for it: memory is still there. */
        bool memory_left;
        /* Set by level_engine_grade(): the kernel's OOM, with memory left,
         * announced as MEDIUM because it jumped over MEDIUM. */
        bool graded;
        /* Set by the manager with memory_left: the scope's memory stall
         * (PSI "full": all its tasks waiting on memory) as the kernel
         * averages it over 10 s, 60 s and 300 s, in hundredths of a percent,
         * for StallLimit=. stall_known false: not read (no PSI). */
        bool stall_known;
        unsigned stall_full_permyriad[3];
        /* Set by the manager: CLOCK_MONOTONIC when the level was decided
         * (after an OOM's headroom and stall reads), right before the
         * listeners run; the own line of --print-events splits the
         * daemon's part there. */
        usec_t decided_usec;
} LevelEvent;

typedef struct LevelEngine {
        LevelConfig config;
        Level current;
        unsigned index;                         /* of the last emitted event */
        /* Last sample at or above each level. Time 0 is a valid timestamp (tests and
         * CLOCK_MONOTONIC right after boot), so "never" is seen[l] == false, not 0. */
        usec_t last_seen_usec[_LEVEL_MAX];
        bool seen[_LEVEL_MAX];
        usec_t last_emit_usec;                  /* valid whenever current > LEVEL_NONE */
        SampleKind last_cause;                  /* kind of the last sample that had a level */
        uint64_t window_scanned;                /* reclaim accumulated towards one window */
        uint64_t window_reclaimed;
        HeadroomTrend trend;                    /* every headroom read, for the fall rate */
        /* level_engine_grade() held an OOM back as MEDIUM: it is announced
         * at this time (level_engine_tick()) unless an OOM sample came
         * first; 0: none held. */
        usec_t graded_oom_usec;
        SampleKind graded_cause;                /* the kind of the sample held back */
        /* The OOM in force killed nothing (memory was left; the manager
         * says so with level_engine_oom_held()): the next sample from the
         * headroom or the kernel's OOM is announced at once, not after
         * repeat_usec. Cleared by every announcement. */
        bool oom_held;
} LevelEngine;

const char *level_to_string(Level l);
Level level_from_string(const char *s);
const char *sample_kind_to_string(SampleKind k);
SampleKind sample_kind_from_string(const char *s);

void level_config_init(LevelConfig *c);
/* 0, or -EINVAL when the values cannot work together (medium > oom, window 0, …). */
int level_config_validate(const LevelConfig *c);

/* The seed's reclaimer inefficiency index, bit-exact with mm/vmpressure.c:
 *   p = win - (reclaimed * win / scanned); p = p * 100 / win
 * reclaimed is clamped to scanned; scanned == 0 gives 0. */
unsigned vmpressure_calc_index(unsigned window, uint64_t scanned, uint64_t reclaimed);
/* index >= level_oom → OOM, >= level_medium → MEDIUM, else LOW (the seed's vmpressure_level()). */
Level level_from_index(const LevelConfig *c, unsigned index);
/* What index a level-only sample reports: LOW 0, MEDIUM level_medium, OOM 100. */
unsigned level_nominal_index(const LevelConfig *c, Level l);

/* Whether available_bytes of total_bytes is under the headroom floor; false
 * when the floor is disabled (HeadroomFloor=0). */
bool level_headroom_below_floor(const LevelConfig *c, uint64_t available_bytes, uint64_t total_bytes);
/* The floor in bytes for total_bytes (0 when disabled). */
uint64_t level_headroom_floor_bytes(const LevelConfig *c, uint64_t total_bytes);
/* Whether the floor is enabled at all. */
bool level_headroom_floor_enabled(const LevelConfig *c);

/* The seed's ABI values: LEVEL_LOW ↔ VMPRESSURE_LOW, …; LEVEL_NONE → 0. */
uint32_t level_to_vmpressure(Level l);
/* Exactly one of the three VMPRESSURE_* values, else -EINVAL (the seed's EINVAL for a bad threshold). */
int level_from_vmpressure(uint32_t value, Level *ret);
/* The seed's threshold semantics: delivered when level >= threshold (and level is not NONE). */
bool level_passes_threshold(Level level, Level threshold);

void level_engine_init(LevelEngine *e, const LevelConfig *c);
/* Feeds one sample. Returns 1 and fills *ret when a level change or a
 * (rate-limited) repeat is to be announced, 0 otherwise; -EINVAL for a
 * sample of unknown kind or level (state unchanged). */
int level_engine_feed(LevelEngine *e, const Sample *s, LevelEvent *ret);
/* An OOM the engine just announced (ev, from level_engine_feed()) that
 * jumped over MEDIUM, when the manager found memory left: the engine takes
 * MEDIUM instead, with MEDIUM's nominal index, and forgets the OOM sample
 * (a lower sample does not bring back an OOM nobody heard of). The OOM
 * comes with the next sample at OOM, or LEVEL_GRADE_USEC after this one
 * by level_engine_tick() (the kernel may say "critical" once and then
 * nothing: a memcg stuck at its limit), whichever is first. ev says
 * MEDIUM, graded. Returns 1 when it did that, 0 when ev was anything else
 * (a repeat, a change from MEDIUM or from OOM, a level below OOM). */
int level_engine_grade(LevelEngine *e, LevelEvent *ev);
/* The OOM just announced killed nothing, because memory was left: an OOM
 * sample that can only mean memory is gone (SAMPLE_HEADROOM at the floor or
 * in the stall band, SAMPLE_OOM) is then announced at once, as a repeat,
 * instead of up to repeat_usec later. No-op unless the engine is at OOM. */
void level_engine_oom_held(LevelEngine *e);
/* Time has passed with no sample. Returns 1 and fills *ret when the level
 * drops, or when an OOM level_engine_grade() held back is due (a rise to
 * OOM with the cause of the sample that was held: the manager decides
 * again whether memory is left). */
int level_engine_tick(LevelEngine *e, usec_t now_usec, LevelEvent *ret);
/* When level_engine_tick() next has something to do; USEC_INFINITY when at NONE. */
usec_t level_engine_next_deadline(const LevelEngine *e);

/* Records a headroom read (SAMPLE_HEADROOM samples are recorded by
 * level_engine_feed() itself; the manager adds the reads it makes to decide
 * whether an OOM may kill). A point older than the newest is ignored. */
void level_engine_headroom_note(LevelEngine *e, usec_t timestamp_usec, uint64_t available_bytes);
/* How long until the headroom reaches the floor at the rate it fell over the
 * last LEVEL_TREND_WINDOW_USEC, counted from the newest point: 0 at or under
 * the floor, USEC_INFINITY when it is not falling, when fewer than two points
 * LEVEL_TREND_MIN_SPAN_USEC apart lie in the window, or when the floor is
 * disabled. The rate is bytes per second, 0 when not falling. */
usec_t level_engine_headroom_eta(const LevelEngine *e, uint64_t total_bytes, uint64_t *ret_rate_bytes_per_sec);
/* Whether an OOM of reclaim inefficiency or a stall may kill: the newest
 * headroom is under the floor, or its eta is within kill_horizon_usec. */
bool level_engine_headroom_running_out(const LevelEngine *e, uint64_t total_bytes);
/* The stall a headroom read stands for, for Sample.stalled_usec: the growth
 * of PSI "some" (total_usec) since the read before (prev_total_usec at
 * prev_at_usec) when that read was at most a second ago; else, when the
 * kernel's PSI trigger woke the scope at most event_max_age_usec ago
 * (event_at_usec; 0: never), the stall that trigger guarantees
 * (event_stall_usec): the first read of a fall has no read before it, and
 * the trigger fires at the first stall. 0 otherwise. Pure. */
uint64_t level_headroom_stall(uint64_t total_usec, uint64_t prev_total_usec, usec_t prev_at_usec,
                              usec_t event_at_usec, uint64_t event_stall_usec, usec_t event_max_age_usec,
                              usec_t now_usec);
/* Whether a headroom sample is in the stall band (see headroom_stall_usec):
 * under twice the floor, with a stall of at least headroom_stall_usec. */
bool level_headroom_stall_band(const LevelConfig *c, const Sample *s);
