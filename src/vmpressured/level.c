/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The level engine. Pure: no I/O, no clock, no allocation, no logging. It
 * runs on the OOM path, and the tests drive it with hand-advanced time.
 *
 * Time rules, all in the timestamps the caller passes in:
 *  - a rise is announced at once;
 *  - MEDIUM and OOM are held for hold_usec after their last sample, LOW for
 *    quiet_usec (then "Normal"), so a level does not flap at every sample
 *    that lands just under a threshold;
 *  - the same level is announced again at most every repeat_usec, but an
 *    OOM from the headroom or the kernel's OOM right after an OOM that
 *    killed nothing (level_engine_oom_held()) is announced at once;
 *  - an OOM held back as MEDIUM (level_engine_grade()) is announced with
 *    the next OOM sample, or LEVEL_GRADE_USEC later by level_engine_tick().
 * A level "expires" at exactly last_seen + hold: "held for 2 s" means the
 * sample at 2 s after the last one already sees the lower level, and
 * level_engine_next_deadline() returns that same instant.
 */

#include <vmpressure.h>

#include "level.h"

static const char *const level_table[_LEVEL_MAX] = {
        [LEVEL_NONE]   = "none",
        [LEVEL_LOW]    = "low",
        [LEVEL_MEDIUM] = "medium",
        [LEVEL_OOM]    = "oom",
};

static const char *const sample_kind_table[_SAMPLE_KIND_MAX] = {
        [SAMPLE_LEVEL]    = "level",
        [SAMPLE_RECLAIM]  = "reclaim",
        [SAMPLE_HEADROOM] = "headroom",
        [SAMPLE_OOM]      = "oom",
};

const char *level_to_string(Level l) {
        if (l < 0 || l >= _LEVEL_MAX)
                return NULL;
        return level_table[l];
}

Level level_from_string(const char *s) {
        return (Level) string_table_lookup(level_table, ELEMENTSOF(level_table), s);
}

const char *sample_kind_to_string(SampleKind k) {
        if (k < 0 || k >= _SAMPLE_KIND_MAX)
                return NULL;
        return sample_kind_table[k];
}

SampleKind sample_kind_from_string(const char *s) {
        return (SampleKind) string_table_lookup(sample_kind_table, ELEMENTSOF(sample_kind_table), s);
}

void level_config_init(LevelConfig *c) {
        *c = (LevelConfig) {
                /* The seed's defaults: SWAP_CLUSTER_MAX * 16 pages, 60, 99. */
                .window_pages = 256,
                .level_medium = 60,
                .level_oom = 99,
                .hold_usec = 2 * USEC_PER_SEC,
                .quiet_usec = 10 * USEC_PER_SEC,
                .repeat_usec = 1 * USEC_PER_SEC,
                .headroom_floor_bytes = 0,
                .headroom_floor_permyriad = 200,
                /* With 2 s the thrashing working sets of the test suites (the
                 * machine's MemAvailable barely moves) are never killed, while a
                 * hog falling through the last memory is killed on its first
                 * reclaim OOM (vmpressured.conf(5), KillHorizonSec=). */
                .kill_horizon_usec = 2 * USEC_PER_SEC,
                /* The seed's slow leak is announced about 10 s ahead of the
                 * floor, a fast fill as soon as two samples see it
                 * (vmpressured.conf(5), WarnHorizonSec=). */
                .warn_horizon_usec = 12 * USEC_PER_SEC,
        };
}

int level_config_validate(const LevelConfig *c) {
        if (!c)
                return -EINVAL;
        /* The index is computed over a window of scanned pages; 0 would divide by 0. */
        if (c->window_pages == 0)
                return -EINVAL;
        /* level_medium 0 would make every reclaim MEDIUM: LOW (index 0, "reclaiming
         * and every page came back") must stay reachable, as in the seed. */
        if (c->level_medium < 1 || c->level_medium > c->level_oom || c->level_oom > 100)
                return -EINVAL;
        if (c->headroom_floor_permyriad > 10000)
                return -EINVAL;
        /* LOW is kept for quiet_usec, the higher levels for hold_usec; a quiet period
         * shorter than the hold would let LOW expire under a still-held MEDIUM. */
        if (c->quiet_usec < c->hold_usec)
                return -EINVAL;
        return 0;
}

/* floor(a * b / c) for a <= c, c > 0, so the result is <= b; exact even when
 * a * b does not fit in 64 bits (window 0 makes the window the scanned count). */
static uint64_t muldiv_u64(uint64_t a, uint64_t b, uint64_t c) {
        uint64_t m;

        if (!__builtin_mul_overflow(a, b, &m))
                return m / c;
#ifdef __SIZEOF_INT128__
        return (uint64_t) ((unsigned __int128) a * b / c);
#else
        /* No 128-bit type: scale a and c down together until it fits. Loses
         * precision only for counts above 2^56 pages, which no machine scans. */
        while (__builtin_mul_overflow(a, b, &m)) {
                a >>= 1;
                c >>= 1;
        }
        return c > 0 ? m / c : b;
#endif
}

unsigned vmpressure_calc_index(unsigned window, uint64_t scanned, uint64_t reclaimed) {
        uint64_t win, p;

        if (scanned == 0)
                return 0;
        /* Pages freed by other paths (e.g. a process exiting) can be counted as
         * reclaimed on the same tick; more than scanned would wrap p. */
        reclaimed = MIN(reclaimed, scanned);
        win = window > 0 ? window : scanned;

        /* The seed, in 64 bits: p = win - (r * win / s); p = p * 100 / win. */
        p = win - muldiv_u64(reclaimed, win, scanned);
        return (unsigned) muldiv_u64(p, 100, win);
}

Level level_from_index(const LevelConfig *c, unsigned index) {
        if (index >= c->level_oom)
                return LEVEL_OOM;
        if (index >= c->level_medium)
                return LEVEL_MEDIUM;
        return LEVEL_LOW;
}

unsigned level_nominal_index(const LevelConfig *c, Level l) {
        switch (l) {
        case LEVEL_MEDIUM:
                return c->level_medium;
        case LEVEL_OOM:
                return 100;
        default:
                return 0;
        }
}

uint32_t level_to_vmpressure(Level l) {
        switch (l) {
        case LEVEL_LOW:
                return VMPRESSURE_LOW;
        case LEVEL_MEDIUM:
                return VMPRESSURE_MEDIUM;
        case LEVEL_OOM:
                return VMPRESSURE_OOM;
        default:
                return 0;
        }
}

int level_from_vmpressure(uint32_t value, Level *ret) {
        Level l;

        /* The values are bits, but a threshold is one level, never a mask. */
        switch (value) {
        case VMPRESSURE_LOW:
                l = LEVEL_LOW;
                break;
        case VMPRESSURE_MEDIUM:
                l = LEVEL_MEDIUM;
                break;
        case VMPRESSURE_OOM:
                l = LEVEL_OOM;
                break;
        default:
                return -EINVAL;
        }
        if (ret)
                *ret = l;
        return 0;
}

bool level_passes_threshold(Level level, Level threshold) {
        return level != LEVEL_NONE && level >= threshold;
}

/* Timestamps from different sources may arrive slightly out of order: never
 * let a difference wrap around to "a very long time ago". */
static usec_t usec_sub(usec_t a, usec_t b) {
        return a > b ? a - b : 0;
}

static usec_t usec_add(usec_t a, usec_t b) {
        return a > USEC_INFINITY - b ? USEC_INFINITY : a + b;
}

void level_engine_init(LevelEngine *e, const LevelConfig *c) {
        *e = (LevelEngine) {
                .current = LEVEL_NONE,
                .last_cause = SAMPLE_LEVEL,
        };
        if (c)
                e->config = *c;
        else
                level_config_init(&e->config);
}

/* total * permyriad / 10000 without overflowing for any total. */
static uint64_t headroom_floor(const LevelConfig *c, uint64_t total_bytes) {
        uint64_t by_share = total_bytes / 10000 * c->headroom_floor_permyriad +
                            total_bytes % 10000 * c->headroom_floor_permyriad / 10000;

        return MAX(c->headroom_floor_bytes, by_share);
}

uint64_t level_headroom_floor_bytes(const LevelConfig *c, uint64_t total_bytes) {
        return headroom_floor(c, total_bytes);
}

bool level_headroom_floor_enabled(const LevelConfig *c) {
        return c->headroom_floor_bytes > 0 || c->headroom_floor_permyriad > 0;
}

bool level_headroom_below_floor(const LevelConfig *c, uint64_t available_bytes, uint64_t total_bytes) {
        return level_headroom_floor_enabled(c) && available_bytes < headroom_floor(c, total_bytes);
}

/* Adds reclaim to the window; a level only once a whole window was scanned, as
 * the seed schedules its work only when scanned >= vmpressure_win. */
static Level engine_reclaim(LevelEngine *e, const Sample *s, unsigned *ret_index) {
        unsigned index;

        /* Saturate: a wrapped accumulator would report a window of nothing. */
        e->window_scanned = __builtin_add_overflow(e->window_scanned, s->scanned, &e->window_scanned) ?
                UINT64_MAX : e->window_scanned;
        e->window_reclaimed = __builtin_add_overflow(e->window_reclaimed, s->reclaimed, &e->window_reclaimed) ?
                UINT64_MAX : e->window_reclaimed;

        /* scanned == 0 is an idle poll, never a level (also with window 0). */
        if (e->window_scanned == 0 || e->window_scanned < e->config.window_pages)
                return LEVEL_NONE;

        index = vmpressure_calc_index(e->config.window_pages, e->window_scanned, e->window_reclaimed);
        e->window_scanned = e->window_reclaimed = 0;
        *ret_index = index;
        return level_from_index(&e->config, index);
}

/* A headroom above the floor but falling towards it: LOW when the trend
 * reaches the floor within warn_horizon_usec, MEDIUM within half of it,
 * with the level's nominal index (no reclaim was measured). */
static Level engine_headroom_warning(const LevelEngine *e, const Sample *s, unsigned *ret_index) {
        uint64_t rate = 0;
        usec_t eta;
        Level l;

        if (e->config.warn_horizon_usec == 0)
                return LEVEL_NONE;
        /* Only in the last third of the memory: a burst that stops by itself
         * (a unit filling its own MemoryMax= of 128 MiB in a 1 GiB guest)
         * falls as fast as a hog for a moment, and a straight line through
         * it reaches the floor too (the guest suite's system-quiet check). */
        if (s->available_bytes > s->total_bytes / LEVEL_WARN_SHARE_DIVISOR)
                return LEVEL_NONE;
        /* A rate, or no trend at all (one point, or none falling). */
        eta = level_engine_headroom_eta(e, s->total_bytes, &rate);
        if (rate == 0 || eta > e->config.warn_horizon_usec)
                return LEVEL_NONE;
        l = eta <= e->config.warn_horizon_usec / 2 ? LEVEL_MEDIUM : LEVEL_LOW;
        *ret_index = level_nominal_index(&e->config, l);
        return l;
}

/* What level a sample stands for, LEVEL_NONE for "nothing to say", or -EINVAL. */
static Level engine_classify(LevelEngine *e, const Sample *s, unsigned *ret_index) {
        switch (s->kind) {
        case SAMPLE_LEVEL:
                if (s->level < 0 || s->level >= _LEVEL_MAX)
                        return _LEVEL_INVALID;
                *ret_index = MIN(s->index, 100u);
                return s->level;
        case SAMPLE_OOM:
                *ret_index = 100;
                return LEVEL_OOM;
        case SAMPLE_RECLAIM:
                return engine_reclaim(e, s, ret_index);
        case SAMPLE_HEADROOM:
                level_engine_headroom_note(e, s->timestamp_usec, s->available_bytes);
                if (!level_headroom_below_floor(&e->config, s->available_bytes, s->total_bytes) &&
                    !level_headroom_stall_band(&e->config, s))
                        return engine_headroom_warning(e, s, ret_index);
                *ret_index = 100;
                return LEVEL_OOM;
        default:
                return _LEVEL_INVALID;
        }
}

/* The highest level still in force at now. */
static Level engine_effective(const LevelEngine *e, usec_t now) {
        for (Level l = LEVEL_OOM; l >= LEVEL_MEDIUM; l--)
                if (e->seen[l] && usec_sub(now, e->last_seen_usec[l]) < e->config.hold_usec)
                        return l;
        if (e->seen[LEVEL_LOW] && usec_sub(now, e->last_seen_usec[LEVEL_LOW]) < e->config.quiet_usec)
                return LEVEL_LOW;
        return LEVEL_NONE;
}

static int engine_emit(LevelEngine *e, Level level, unsigned index, bool repeat,
                       SampleKind cause, usec_t ts, LevelEvent *ret) {
        if (ret)
                *ret = (LevelEvent) {
                        .level = level,
                        .previous = e->current,
                        .index = index,
                        .repeat = repeat,
                        .cause = cause,
                        .timestamp_usec = ts,
                };
        e->current = level;
        e->index = index;
        e->last_emit_usec = MAX(e->last_emit_usec, ts);
        e->oom_held = false;
        if (level == LEVEL_OOM)
                e->graded_oom_usec = 0;
        return 1;
}

int level_engine_feed(LevelEngine *e, const Sample *s, LevelEvent *ret) {
        usec_t ts;
        unsigned index = 0;
        Level level, next;

        if (!e || !s)
                return -EINVAL;

        level = engine_classify(e, s, &index);
        if (level < 0)
                return -EINVAL;
        if (level == LEVEL_NONE)
                return 0;

        /* A sample at L is also a sample at every level below it: LOW stays for
         * the quiet period after the last MEDIUM or OOM too. */
        ts = s->timestamp_usec;
        for (Level l = LEVEL_LOW; l <= level; l++) {
                e->last_seen_usec[l] = e->seen[l] ? MAX(e->last_seen_usec[l], ts) : ts;
                e->seen[l] = true;
        }
        e->last_cause = s->kind;

        if (level > e->current)
                return engine_emit(e, level, index, false, s->kind, ts, ret);

        if (level == e->current) {
                /* An OOM that killed nothing for the memory left, then one
                 * that says memory is gone: at once. */
                bool at_once = e->oom_held && level == LEVEL_OOM &&
                        (s->kind == SAMPLE_HEADROOM || s->kind == SAMPLE_OOM);

                if (!at_once && usec_sub(ts, e->last_emit_usec) < e->config.repeat_usec)
                        return 0;
                return engine_emit(e, level, index, true, s->kind, ts, ret);
        }

        /* Lower than the current level: hysteresis. */
        if (usec_sub(ts, e->last_seen_usec[e->current]) < e->config.hold_usec)
                return 0;
        /* An intermediate level may still be held (OOM expired, MEDIUM not yet). */
        next = MAX(level, engine_effective(e, ts));
        return engine_emit(e, next, next == level ? index : level_nominal_index(&e->config, next),
                           false, s->kind, ts, ret);
}

int level_engine_grade(LevelEngine *e, LevelEvent *ev) {
        if (!e || !ev || ev->level != LEVEL_OOM || ev->repeat || ev->previous >= LEVEL_MEDIUM ||
            e->current != LEVEL_OOM)
                return 0;
        e->current = LEVEL_MEDIUM;
        e->index = level_nominal_index(&e->config, LEVEL_MEDIUM);
        e->seen[LEVEL_OOM] = false;
        e->graded_oom_usec = MAX(usec_add(ev->timestamp_usec, LEVEL_GRADE_USEC), (usec_t) 1);
        e->graded_cause = ev->cause;
        ev->level = LEVEL_MEDIUM;
        ev->index = e->index;
        ev->graded = true;
        return 1;
}

void level_engine_oom_held(LevelEngine *e) {
        if (e && e->current == LEVEL_OOM)
                e->oom_held = true;
}

int level_engine_tick(LevelEngine *e, usec_t now_usec, LevelEvent *ret) {
        Level next;

        if (!e)
                return -EINVAL;
        if (e->graded_oom_usec != 0 && now_usec >= e->graded_oom_usec) {
                e->graded_oom_usec = 0;
                /* Held back as MEDIUM, and no sample raised it meanwhile:
                 * the OOM now, as if its sample came now. */
                if (e->current == LEVEL_MEDIUM) {
                        for (Level l = LEVEL_LOW; l <= LEVEL_OOM; l++) {
                                e->last_seen_usec[l] = e->seen[l] ? MAX(e->last_seen_usec[l], now_usec) : now_usec;
                                e->seen[l] = true;
                        }
                        return engine_emit(e, LEVEL_OOM, 100, false, e->graded_cause, now_usec, ret);
                }
        }
        if (e->current == LEVEL_NONE)
                return 0;

        next = engine_effective(e, now_usec);
        if (next >= e->current)
                return 0;

        return engine_emit(e, next, level_nominal_index(&e->config, next), false,
                           e->last_cause, now_usec, ret);
}

usec_t level_engine_next_deadline(const LevelEngine *e) {
        Level l = e->current;
        usec_t d;

        if (l <= LEVEL_NONE || l >= _LEVEL_MAX)
                return USEC_INFINITY;
        d = usec_add(e->last_seen_usec[l], l == LEVEL_LOW ? e->config.quiet_usec : e->config.hold_usec);
        return e->graded_oom_usec != 0 ? MIN(d, e->graded_oom_usec) : d;
}

void level_engine_headroom_note(LevelEngine *e, usec_t timestamp_usec, uint64_t available_bytes) {
        HeadroomTrend *t = &e->trend;

        if (t->n > 0) {
                const HeadroomPoint *newest = &t->points[(t->next + LEVEL_TREND_POINTS - 1) % LEVEL_TREND_POINTS];
                if (timestamp_usec < newest->timestamp_usec)
                        return;
        }
        t->points[t->next] = (HeadroomPoint) { timestamp_usec, available_bytes };
        t->next = (t->next + 1) % LEVEL_TREND_POINTS;
        if (t->n < LEVEL_TREND_POINTS)
                t->n++;
}

usec_t level_engine_headroom_eta(const LevelEngine *e, uint64_t total_bytes, uint64_t *ret_rate_bytes_per_sec) {
        const HeadroomTrend *t = &e->trend;
        const HeadroomPoint *newest, *oldest = NULL;
        uint64_t floor, fell, rate;
        usec_t span;

        if (ret_rate_bytes_per_sec)
                *ret_rate_bytes_per_sec = 0;
        if (!level_headroom_floor_enabled(&e->config) || t->n == 0)
                return USEC_INFINITY;
        newest = &t->points[(t->next + LEVEL_TREND_POINTS - 1) % LEVEL_TREND_POINTS];
        floor = headroom_floor(&e->config, total_bytes);
        if (newest->available_bytes <= floor)
                return 0;
        /* From the oldest point to the newest: the first one inside the window. */
        for (unsigned i = t->n; i > 1; i--) {
                const HeadroomPoint *p = &t->points[(t->next + LEVEL_TREND_POINTS - i) % LEVEL_TREND_POINTS];
                if (usec_sub(newest->timestamp_usec, p->timestamp_usec) <= LEVEL_TREND_WINDOW_USEC) {
                        oldest = p;
                        break;
                }
        }
        if (!oldest || oldest->available_bytes <= newest->available_bytes)
                return USEC_INFINITY;
        span = newest->timestamp_usec - oldest->timestamp_usec;
        if (span < LEVEL_TREND_MIN_SPAN_USEC)
                return USEC_INFINITY;
        fell = oldest->available_bytes - newest->available_bytes;
        rate = muldiv_u64(MIN(fell, UINT64_MAX / USEC_PER_SEC), USEC_PER_SEC, span);
        if (rate == 0)
                return USEC_INFINITY;
        if (ret_rate_bytes_per_sec)
                *ret_rate_bytes_per_sec = rate;
        /* (available - floor) / rate seconds, in µs; saturates far out. */
        if (newest->available_bytes - floor > UINT64_MAX / USEC_PER_SEC)
                return USEC_INFINITY;
        return (newest->available_bytes - floor) * USEC_PER_SEC / rate;
}

uint64_t level_headroom_stall(uint64_t total_usec, uint64_t prev_total_usec, usec_t prev_at_usec,
                              usec_t event_at_usec, uint64_t event_stall_usec, usec_t event_max_age_usec,
                              usec_t now_usec) {
        if (prev_at_usec > 0 && prev_at_usec <= now_usec && now_usec - prev_at_usec <= USEC_PER_SEC)
                return total_usec > prev_total_usec ? total_usec - prev_total_usec : 0;
        if (event_at_usec > 0 && event_at_usec <= now_usec && now_usec - event_at_usec <= event_max_age_usec)
                return event_stall_usec;
        return 0;
}

bool level_headroom_stall_band(const LevelConfig *c, const Sample *s) {
        uint64_t floor;

        if (!c || !s || c->headroom_stall_usec == 0 || s->stalled_usec < c->headroom_stall_usec ||
            !level_headroom_floor_enabled(c))
                return false;
        floor = headroom_floor(c, s->total_bytes);
        return s->available_bytes < (floor > UINT64_MAX / 2 ? UINT64_MAX : 2 * floor);
}

bool level_engine_headroom_running_out(const LevelEngine *e, uint64_t total_bytes) {
        usec_t eta;

        if (!level_headroom_floor_enabled(&e->config))
                return false;
        eta = level_engine_headroom_eta(e, total_bytes, NULL);
        return eta == 0 || (e->config.kill_horizon_usec > 0 && eta <= e->config.kill_horizon_usec);
}
