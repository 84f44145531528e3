/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "memory.h"
#include "manager-internal.h"
#include "proc-parse.h"
#include "psi-trigger.h"
#include "read-file.h"

static void scope_rearm(Scope *s);
static void scope_set_level_config(Manager *m, Scope *s);
static void manager_arm_rewatch(Manager *m);

static const char *scope_source_name(const Scope *s) {
        return s->source_type >= 0 ? source_type_to_string(s->source_type) : "none";
}

/* One line per event on stdout for --print-events: formatted into a stack
 * buffer and written with write(2), so stdio never allocates on the OOM path;
 * through log.c, which never waits for the reader (a line it cannot take
 * at once is dropped and counted in LogLinesDropped) and ignores SIGPIPE. */
#define print_line manager_print
/* The --print-events lines of one announcement: held here while it runs
 * and written in one write(2) after it (manager_print_flush()). A line on
 * the pipe wakes its reader, which the scheduler may run in the daemon's
 * place (a pipe's wake-up is "sync": the reader is pulled to the writer's
 * CPU), before the kill or the subscribers: bench/bus-latency saw the
 * level line cost the daemon 150-200 µs so. Static: no page of it is
 * touched without --print-events. */
static char print_buf[8192];
static size_t print_len;
static bool print_hold;
/* The announcement whose level line is still to be made: it is formatted
 * after the listeners (a vsnprintf() of ten fields, 5-15 µs on the
 * development VM, is the benchmark's cost, not the daemon's: without
 * --print-events nothing is formatted) and put in print_buf where it was
 * held, ahead of the announcement's other lines. */
static struct {
        const Scope *s;
        const LevelEvent *ev;
        usec_t latency;
        size_t at;                      /* its place in print_buf */
} print_level_pending;

static void manager_print_flush(void) {
        if (print_len > 0)
                (void) log_write_stdout(print_buf, print_len);
        print_len = 0;
}

/* fmt into line, newline-terminated (cut to fit); its length, or -1. */
_printf_(3, 0)
static int format_line(char *line, size_t size, const char *fmt, va_list ap) {
        int n = vsnprintf(line, size - 1, fmt, ap);

        if (n < 0)
                return -1;
        if ((size_t) n > size - 2)
                n = (int) size - 2;
        line[n++] = '\n';
        return n;
}

_printf_(3, 4)
static int format_line_f(char *line, size_t size, const char *fmt, ...) {
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = format_line(line, size, fmt, ap);
        va_end(ap);
        return n;
}

/* The pending level line, in its place: ahead of what the listeners
 * printed. */
static void print_level_line(void) {
        const Scope *s = print_level_pending.s;
        const LevelEvent *ev = print_level_pending.ev;
        size_t at = MIN(print_level_pending.at, print_len);
        char line[512];
        int n;

        if (!s)
                return;
        print_level_pending.s = NULL;
        n = format_line_f(line, sizeof(line),
                          "level scope=%s level=%s previous=%s index=%u cause=%s source=%s repeat=%d "
                          "t_usec=%" PRIu64 " latency_usec=%" PRIu64 "%s%s%s",
                          s->name, level_to_string(ev->level), level_to_string(ev->previous), ev->index,
                          sample_kind_to_string(ev->cause), scope_source_name(s), ev->repeat,
                          ev->timestamp_usec, print_level_pending.latency, s->simulated ? " simulated=1" : "",
                          ev->memory_left ? " memory_left=1" : "", ev->graded ? " graded=1" : "");
        if (n < 0)
                return;
        if (print_len + (size_t) n > sizeof(print_buf)) {
                /* No room: what comes before it, the line, then the rest. */
                if (at > 0)
                        (void) log_write_stdout(print_buf, at);
                (void) log_write_stdout(line, (size_t) n);
                memmove(print_buf, print_buf + at, print_len - at);
                print_len -= at;
                return;
        }
        memmove(print_buf + at + n, print_buf + at, print_len - at);
        memcpy(print_buf + at, line, (size_t) n);
        print_len += (size_t) n;
}

void manager_print(Manager *m, const char *fmt, ...) {
        char line[512];
        va_list ap;
        int n;

        if (!m->print_events)
                return;
        va_start(ap, fmt);
        n = format_line(line, sizeof(line), fmt, ap);
        va_end(ap);
        if (n < 0)
                return;
        if (!print_hold) {
                (void) log_write_stdout(line, (size_t) n);
                return;
        }
        if (print_len + (size_t) n > sizeof(print_buf)) {
                /* Many kills in one announcement: in order, earlier. */
                print_level_line();
                manager_print_flush();
        }
        memcpy(print_buf + print_len, line, (size_t) n);
        print_len += (size_t) n;
}

static void notify_status(Manager *m) {
        const Scope *sys = m->n_scopes > 0 ? m->scopes[0] : NULL;

        if (!sys)
                return;
        (void) sd_notifyf(false, "STATUS=Level %s (index %u), source %s, %zu scope(s) watched",
                          level_to_string(sys->engine.current), sys->engine.index,
                          scope_source_name(sys), m->n_scopes);
}

static void scope_announce(Scope *s, const LevelEvent *ev, usec_t now_usec) {
        Manager *m = s->manager;
        usec_t latency = now_usec > ev->timestamp_usec ? now_usec - ev->timestamp_usec : 0;
        char f_level[32], f_scope[300], f_index[32], f_source[32];

        s->announced[ev->level]++;
        if (s->simulated)
                s->simulated_announced[ev->level]++;
        if (!ev->repeat)
                s->last_change_usec = now_usec;

        print_level_line();     /* an announcement from inside another's listeners: that one's first */
        print_hold = true;
        if (m->print_events)
                print_level_pending = (typeof(print_level_pending)) { s, ev, latency, print_len };

        m->announcing = s;
        m->announcing_usec = now_usec;
        for (ManagerListenerPhase p = 0; p < _MANAGER_LISTENER_PHASE_MAX; p++)
                for (size_t i = 0; i < m->n_listeners[p]; i++)
                        m->listeners[p][i].handler(m, s, ev, m->listeners[p][i].userdata);
        m->announcing = NULL;
        print_level_line();
        print_hold = false;
        manager_print_flush();

        /* The journal record and the service status after the listeners:
         * the kill and the subscribers do not wait behind a sendmsg() to
         * journald and one to systemd (the status is vasprintf()ed too).
         * The --print-events lines went out just above, in one write, the
         * level first, so that a reader sees it before what was done
         * about it. */
        if (!ev->repeat) {
                (void) snprintf(f_level, sizeof(f_level), "VMP_LEVEL=%s", level_to_string(ev->level));
                (void) snprintf(f_scope, sizeof(f_scope), "VMP_SCOPE=%s", s->name);
                (void) snprintf(f_index, sizeof(f_index), "VMP_INDEX=%u", ev->index);
                (void) snprintf(f_source, sizeof(f_source), "VMP_SOURCE=%s", scope_source_name(s));
                log_struct_internal(LOG_NOTICE, MESSAGE_ID_LEVEL_CHANGE,
                                    (const char *const[]) { f_level, f_scope, f_index, f_source,
                                                            s->simulated ? "VMP_SIMULATED=1" : NULL, NULL },
                                    "%s: memory pressure %s → %s (index %u, %s, %s%s%s).",
                                    s->name, level_to_string(ev->previous), level_to_string(ev->level),
                                    ev->index, sample_kind_to_string(ev->cause), scope_source_name(s),
                                    s->simulated ? ", simulated" : "",
                                    ev->graded ? "; the kernel said OOM with memory left: MEDIUM first" : "");
                if (s == m->scopes[0])
                        notify_status(m);
        }

        if (ev->level == LEVEL_NONE)
                s->simulated = false;   /* the simulation is over */
}

void manager_record_action(Manager *m, const char *unit, Level level, bool kill, int signo, pid_t pid,
                           int result) {
        const Scope *s = m->announcing;
        bool dry_run = m->config.dry_run;
        usec_t now = source_now_usec();
        struct timespec ts = {};
        RecentAction a = {
                .level = level,
                .kind = kill ? (dry_run ? RECENT_ACTION_WOULD_KILL : RECENT_ACTION_KILL)
                             : (dry_run ? RECENT_ACTION_WOULD_SIGNAL : RECENT_ACTION_SIGNAL),
                .signo = signo,
                .pid = pid,
                .result = result,
                .simulated = s && s->simulated,
                .latency_usec = s && now > m->announcing_usec ? now - m->announcing_usec : 0,
        };

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        a.realtime_usec = (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
        (void) snprintf(a.unit, sizeof(a.unit), "%s", unit ?: "");
        recent_actions_push(&m->recent_actions, &a);
        if (m->actions_defer)
                (void) sd_event_source_set_enabled(m->actions_defer, SD_EVENT_ONESHOT);
        /* Only what was done, and only inside an announcement: the latency
         * has a start then. A dry run's would-kill is not a kill. */
        if (s && !dry_run && result >= 0)
                latency_record(&m->latency, kill ? LATENCY_KILL : LATENCY_SIGNAL, a.simulated, a.latency_usec);
}

/* Headroom is sampled every Poll BusyMSec= from the first sample of the
 * scope's source (the kernel said it reclaims) until the scope is back at
 * NONE and QuietSec= passed without one; an idle scope never samples it. */
static void scope_arm_headroom(Scope *s, usec_t when) {
        int enabled = SD_EVENT_OFF;
        uint64_t pending = USEC_INFINITY;

        if (!s->poll_timer || !s->headroom || s->gone)
                return;
        (void) sd_event_source_get_enabled(s->poll_timer, &enabled);
        /* Already armed, and no later than asked (the idle poll of
         * HeadroomSec= may be pending much later: brought forward). */
        if (enabled != SD_EVENT_OFF && sd_event_source_get_time(s->poll_timer, &pending) >= 0 && pending <= when)
                return;
        (void) sd_event_source_set_time(s->poll_timer, when);
        (void) sd_event_source_set_enabled(s->poll_timer, SD_EVENT_ONESHOT);
}

/* Under pressure the source samples on, and so does the headroom. */
static void scope_set_busy(Scope *s, bool busy) {
        if (s->busy == busy)
                return;
        s->busy = busy;
        if (s->source)
                source_set_busy(s->source, busy);
        if (busy)
                scope_arm_headroom(s, source_now_usec());
}

/* An OOM from reclaim inefficiency or a stall (the kernel's level, the
 * seed's index >= OOM=, PSI "full") is the seed's "about to OOM", but a
 * thrashing working set says it too while memory is still there: read the
 * headroom now (into m->read_buf: nothing allocated), add it to the engine's
 * trend and say whether memory is left: above the floor and not falling
 * towards it within KillHorizonSec= (a thrash's headroom stays put, a hog's
 * falls; level_engine_headroom_running_out()). A unit without a limit has
 * the system's memory: its headroom is the system's. What cannot be read, a
 * disabled floor and a simulation leave the kill to the policies as before. */
static bool scope_memory_left(Manager *m, Scope *s, const LevelEvent *ev) {
        uint64_t available, total;
        int r;

        if (ev->level != LEVEL_OOM || s->simulated || ev->cause == SAMPLE_HEADROOM || ev->cause == SAMPLE_OOM)
                return false;
        if (!level_headroom_floor_enabled(&s->engine.config))
                return false;
        bool own = s->headroom && s->cgroup[0];

        r = headroom_read(&m->env, s->headroom ? s->cgroup : NULL, m->read_buf, sizeof(m->read_buf), &available, &total);
        if (r == -ENODATA && s->cgroup[0]) {
                own = false;
                r = headroom_read(&m->env, NULL, m->read_buf, sizeof(m->read_buf), &available, &total);
        }
        if (r < 0)
                return false;
        /* A cgroup's own headroom (its limit minus usage less the inactive
         * page cache) swings with the page cache's active and inactive lists
         * while it thrashes: test-thrash-no-kill (128 MiB, 96 MiB hot) saw it
         * "fall" to the floor within 2 s with nothing running out. There the
         * floor alone decides; the trend is the system's (MemAvailable). */
        if (own)
                return !level_headroom_below_floor(&s->engine.config, available, total);
        level_engine_headroom_note(&s->engine, source_now_usec(), available);
        return !level_engine_headroom_running_out(&s->engine, total);
}

/* With memory left, a thrash: how long the scope's tasks all stalled on
 * memory (PSI "full", the kernel's 10 s, 60 s and 300 s averages), for the
 * policies' StallLimit=; read into m->read_buf. Only while a loaded policy
 * may kill at OOM (manager_set_stall_wanted()): a read the daemon has just
 * woken for costs 16-18 µs at the median on the development VM against
 * under 1 µs back to back (build-rel/bench/bench-reads), before the
 * subscribers hear of the level. */
static void scope_read_stall(Manager *m, Scope *s, LevelEvent *ev) {
        PsiStats st;

        if (memory_stall_read(&m->env, s->cgroup, m->read_buf, sizeof(m->read_buf), &st) < 0)
                return;
        ev->stall_known = true;
        ev->stall_full_permyriad[0] = st.full.avg10_permyriad;
        ev->stall_full_permyriad[1] = st.full.avg60_permyriad;
        ev->stall_full_permyriad[2] = st.full.avg300_permyriad;
}

/* What the engine decided, with what only the manager can read: whether an
 * OOM finds memory left (then it kills nothing), and the stall then. */
static void scope_decide_announce(Manager *m, Scope *s, LevelEvent *ev, usec_t now) {
        ev->memory_left = scope_memory_left(m, s, ev);
        /* With memory left nothing is killed, so there is time for the
         * seed's levels in their order: an OOM that jumped over MEDIUM
         * (memcg v1 says "critical" before "medium" for some thrashes) is
         * MEDIUM first, for the MEDIUM subscribers and the units' [Medium]
         * Signal=, and the OOM follows with the next OOM sample or
         * LEVEL_GRADE_USEC later (level_engine_tick(), back here to decide
         * again). An OOM with memory gone is never held back. */
        if (ev->memory_left && level_engine_grade(&s->engine, ev) > 0)
                ev->memory_left = false;
        if (ev->memory_left && !m->stall_unwanted)
                scope_read_stall(m, s, ev);
        ev->decided_usec = source_now_usec();   /* a vDSO clock read */
        scope_announce(s, ev, now);
        /* The OOM killed nothing for the memory left (or a thrash past its
         * StallLimit=, and the pause between kills covers a second): an OOM
         * from the floor next must not wait for RepeatSec= to be announced
         * and to kill. */
        if (ev->memory_left)
                level_engine_oom_held(&s->engine);
}

void manager_feed(Manager *m, Scope *s, const Sample *sample) {
        LevelEvent ev;
        usec_t now = 0;

        if (s->gone)
                return;
        if (sample->kind != SAMPLE_HEADROOM) {
                s->active_usec = sample->timestamp_usec;
                if (sample->kind == SAMPLE_RECLAIM && sample->stalled_usec > 0) {
                        s->stall_event_usec = MAX(sample->timestamp_usec, (usec_t) 1);
                        s->stall_event_stall_usec = sample->stalled_usec;
                }
        }
        if (level_engine_feed(&s->engine, sample, &ev) > 0) {
                (void) sd_event_now(m->event, CLOCK_MONOTONIC, &now);
                /* sd_event_now() is the loop's wake-up time; the sample may be newer. */
                scope_decide_announce(m, s, &ev, MAX(now, source_now_usec()));
        }
        /* The kernel spoke: the headroom reads begin (at the next turn of
         * the loop). Armed after the announcement, not before it: the timer's
         * code is not on the way from the notification to the subscribers
         * and the kill, and nothing of the decision waits for it (an OOM's
         * own headroom read is scope_memory_left()'s). */
        if (sample->kind != SAMPLE_HEADROOM)
                scope_arm_headroom(s, source_now_usec());
        scope_set_busy(s, s->engine.current != LEVEL_NONE);
        scope_rearm(s);
}

int manager_simulate(Manager *m, Scope *s, Level level) {
        Sample sample = {
                .kind = SAMPLE_LEVEL,
                .level = level,
                .index = level_nominal_index(&s->engine.config, level),
                .timestamp_usec = source_now_usec(),
        };

        if (level <= LEVEL_NONE || level >= _LEVEL_MAX)
                return -EINVAL;
        if (s->gone)
                return -ESTALE;
        s->simulated = true;
        s->simulated_count++;
        log_notice("%s: simulating memory pressure %s (Simulate() on the bus).", s->name, level_to_string(level));
        manager_feed(m, s, &sample);
        return 0;
}

static int on_deadline(sd_event_source *es, uint64_t usec, void *userdata) {
        Scope *s = userdata;
        usec_t now = MAX(usec, source_now_usec());
        LevelEvent ev;

        /* The time it runs, not the time it was due (the timer may fire up
         * to its 10 ms accuracy late): an OOM held back as MEDIUM is
         * announced with the time the daemon decided it, so its latency
         * (t_usec to the subscribers) is the daemon's alone. */
        if (level_engine_tick(&s->engine, now, &ev) > 0)
                scope_decide_announce(s->manager, s, &ev, now);
        scope_set_busy(s, s->engine.current != LEVEL_NONE);
        scope_rearm(s);
        return 0;
}

/* Keeps one timer at the engine's next deadline, so dropping back to NONE
 * needs no polling at all. */
static void scope_rearm(Scope *s) {
        usec_t deadline = level_engine_next_deadline(&s->engine);
        int r;

        if (deadline == USEC_INFINITY) {
                if (s->deadline_timer)
                        (void) sd_event_source_set_enabled(s->deadline_timer, SD_EVENT_OFF);
                return;
        }
        if (!s->deadline_timer) {
                /* Allocated once per scope, the first time pressure is seen; it is
                 * kept afterwards, so later pressure reuses it. */
                r = sd_event_add_time(s->manager->event, &s->deadline_timer, CLOCK_MONOTONIC,
                                      deadline, 10 * USEC_PER_MSEC, on_deadline, s);
                if (r < 0)
                        log_warning_errno(r, "%s: cannot arm the level timer, ignoring: %m", s->name);
                return;
        }
        (void) sd_event_source_set_time(s->deadline_timer, deadline);
        (void) sd_event_source_set_enabled(s->deadline_timer, SD_EVENT_ONESHOT);
}

static int read_memory_high(Manager *m, const Scope *s, uint64_t *ret) {
        char buf[64];

        return memory_high_read(&m->env, s->cgroup, buf, sizeof(buf), ret);
}

/* A guard's MEDIUM, as if the kernel had named it, with MEDIUM's nominal index. */
static void scope_feed_medium(Manager *m, Scope *s, usec_t timestamp_usec) {
        manager_feed(m, s, &(Sample) {
                .kind = SAMPLE_LEVEL,
                .timestamp_usec = timestamp_usec,
                .level = LEVEL_MEDIUM,
                .index = level_nominal_index(&s->engine.config, LEVEL_MEDIUM),
        });
}

/* Guard= on cgroup v1: nothing throttles the unit, so a hog crosses the
 * guard band in a moment and the band's OOM (the kill) is the first level
 * it would raise. A headroom under twice the guard, but not yet in the
 * band, is announced MEDIUM first (the unit's [Medium] Signal= may free
 * memory; the MEDIUM subscribers hear of it), once each time the headroom
 * falls under twice the guard: a unit that stays there is not kept at
 * MEDIUM, nor its headroom polled, for ever. The source's warning mark
 * wakes the scope when the usage gets there. */
static void scope_guard_warn_v1(Manager *m, Scope *s, const Sample *h) {
        if (s->guard_warn_bytes == 0)
                return;
        if (h->available_bytes >= s->guard_warn_bytes) {
                s->guard_warned = false;
                return;
        }
        if (h->available_bytes < s->guard_bytes || s->guard_warned)
                return;
        s->guard_warned = true;
        scope_feed_medium(m, s, h->timestamp_usec);
}

/* Guard= with GuardSec= on cgroup v2: while the unit's memory.high is at
 * the mark or below, the kernel throttles the unit in its guard band and
 * does not kill it, so the band is announced MEDIUM first (the unit's
 * [Medium] Signal= may free memory) and is the OOM (the headroom sample,
 * under the floor: the kill) only after the grace. True when the sample was
 * held back and MEDIUM fed instead. On v1 nothing throttles: the band is
 * the OOM at once, and its warning comes before it (scope_guard_warn_v1()). */
static bool scope_guard_hold(Manager *m, Scope *s, const Sample *h) {
        uint64_t high;

        if (s->guard_bytes == 0 || s->simulated)
                return false;
        if (m->env.memcg_v1_root[0]) {
                scope_guard_warn_v1(m, s, h);
                return false;
        }
        if (s->guard_grace_usec == 0)
                return false;
        if (h->available_bytes >= s->guard_bytes) {
                s->guard_entered_usec = 0;
                return false;
        }
        if (s->guard_entered_usec == 0) {
                if (read_memory_high(m, s, &high) < 0 || high > s->guard_mark_bytes)
                        return false;   /* nothing throttles the unit: the OOM at once */
                s->guard_entered_usec = MAX(h->timestamp_usec, (usec_t) 1);
        } else if (h->timestamp_usec - s->guard_entered_usec >= s->guard_grace_usec)
                return false;           /* the grace is over: the OOM */
        scope_feed_medium(m, s, h->timestamp_usec);
        return true;
}

/* [Poll] HeadroomSec=: the system scope samples MemAvailable while idle
 * too, every HeadroomSec=, and every BusyMSec= while the trend reaches the
 * floor within twice the longer of WarnHorizonSec= and KillHorizonSec=:
 * an anonymous fill that meets no page
 * cache raises no kernel event before the low watermark, which is the
 * floor's neighbourhood (docs/kernel.md#psi-silent-anon). Off by default:
 * it is the one timer that runs while nothing is under pressure. */
static void scope_arm_idle_headroom(Manager *m, Scope *s, usec_t now, uint64_t total_bytes) {
        usec_t interval = m->config.params.poll.headroom_usec;

        if (interval == 0 || s->cgroup[0] || !s->poll_timer || !s->headroom || s->gone)
                return;
        /* Falling towards the floor within twice the warning's horizon: the
         * rate is worth following closely (a drift of a few KiB is not). */
        if (total_bytes > 0 &&
            level_engine_headroom_eta(&s->engine, total_bytes, NULL) <= 2 * MAX(s->engine.config.warn_horizon_usec,
                                                                                s->engine.config.kill_horizon_usec))
                interval = MIN(interval, m->config.params.poll.busy_usec);
        (void) sd_event_source_set_time(s->poll_timer, now + interval);
        (void) sd_event_source_set_enabled(s->poll_timer, SD_EVENT_ONESHOT);
}

/* The system scope's stall since its previous headroom read (PSI "some",
 * /proc/pressure/memory, into m->read_buf: nothing allocated), for the
 * stall band; level_headroom_stall() says which stall counts: the growth
 * since a read at most a second ago, else the one the kernel's trigger
 * reported if it woke the scope at most Poll BusyMSec= ago (the first read
 * of a fall comes right after that wake-up). */
static uint64_t scope_stalled_since_read(Manager *m, Scope *s, usec_t now) {
        uint64_t stalled;
        PsiStats st;

        if (s->cgroup[0] || s->engine.config.headroom_stall_usec == 0)
                return 0;
        if (memory_stall_read(&m->env, NULL, m->read_buf, sizeof(m->read_buf), &st) < 0) {
                s->stall_read_usec = 0;
                return 0;
        }
        stalled = level_headroom_stall(st.some.total_usec, s->stall_some_usec, s->stall_read_usec,
                                       s->stall_event_usec, s->stall_event_stall_usec,
                                       m->config.params.poll.busy_usec, now);
        s->stall_some_usec = st.some.total_usec;
        s->stall_read_usec = MAX(now, (usec_t) 1);
        return stalled;
}

/* FaultWake= (fault-wake.h): the next wake-up of the page-fault counters,
 * from the headroom just read. */
static void scope_fault_wake_follow(Scope *s, uint64_t available, uint64_t total) {
        if (s->fault_wake.n == 0)
                return;
        fault_wake_set_period(&s->fault_wake,
                              fault_wake_period(available, total,
                                                level_headroom_floor_bytes(&s->engine.config, total),
                                                total / LEVEL_WARN_SHARE_DIVISOR, s->fault_wake.n,
                                                s->fault_wake.page_size));
}

static int on_poll(sd_event_source *es, uint64_t usec, void *userdata) {
        Scope *s = userdata;
        Manager *m = s->manager;
        Sample sample = { .kind = SAMPLE_HEADROOM };
        usec_t now;
        int r;

        r = headroom_read(&m->env, s->cgroup, m->read_buf, sizeof(m->read_buf),
                          &sample.available_bytes, &sample.total_bytes);
        if (r == -ENODATA || r == -ENOENT) {
                log_debug("%s: no memory limit to measure headroom against, not polling.", s->name);
                s->headroom = false;
                return sd_event_source_set_enabled(es, SD_EVENT_OFF);
        }
        now = source_now_usec();
        if (r < 0)
                log_debug_errno(r, "%s: reading headroom failed, ignoring: %m", s->name);
        else {
                sample.timestamp_usec = now;
                sample.stalled_usec = scope_stalled_since_read(m, s, now);
                scope_fault_wake_follow(s, sample.available_bytes, sample.total_bytes);
                if (!scope_guard_hold(m, s, &sample))
                        manager_feed(m, s, &sample);
                /* After the feed and a kill it set off: bench/compare --log-level debug
                 * shows each read of the band. */
                if (!s->cgroup[0])
                        log_debug("%s: headroom %llu KiB available, stall %llu us counted for the band, level %s.",
                                  s->name, (unsigned long long) (sample.available_bytes / 1024),
                                  (unsigned long long) sample.stalled_usec, level_to_string(s->engine.current));
        }
        if (s->gone || !s->headroom)
                return 0;
        if (s->busy || s->active_usec + m->config.level.quiet_usec > now) {
                (void) sd_event_source_set_time(es, now + m->config.params.poll.busy_usec);
                (void) sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
        } else
                scope_arm_idle_headroom(m, s, now, r >= 0 ? sample.total_bytes : 0);
        return 0;
}

static void on_sample(Source *src, const Sample *sample, void *userdata) {
        Scope *s = userdata;
        manager_feed(s->manager, s, sample);
}

static Scope *scope_free(Scope *s);
static void scope_close_stall_wake(Scope *s);
static int unwatched_add(Manager *m, const char *cgroup, UnwatchedReason reason);

/* A scope whose cgroup is gone gives its slot back: it is freed and its
 * cgroup remembered as unwatched, to be watched again when it is back. Only
 * if that cannot be remembered does the scope stay, gone, in the table. */
static int on_gc(sd_event_source *es, void *userdata) {
        Manager *m = userdata;
        size_t j = 1;

        for (size_t i = 0; i < m->n_scopes; i++) {
                Scope *s = m->scopes[i];

                if (i > 0 && s->gone && unwatched_add(m, s->cgroup, UNWATCHED_ABSENT) >= 0) {
                        scope_free(s);
                        continue;
                }
                if (s->gone && s->source)
                        s->source = source_free(s->source);
                if (i > 0)
                        m->scopes[j++] = s;
        }
        if (m->n_scopes > 0)
                m->n_scopes = j;
        manager_arm_rewatch(m);
        return sd_event_source_set_enabled(es, SD_EVENT_OFF);
}

/* The watched cgroup went away. Its source is freed later, from a defer
 * handler, since we are inside one of its callbacks now. */
static void on_gone(Source *src, int error, void *userdata) {
        Scope *s = userdata;
        Manager *m = s->manager;
        char f_scope[300];

        if (s->gone)
                return;
        s->gone = true;
        s->engine.current = LEVEL_NONE;
        if (s->poll_timer)
                (void) sd_event_source_set_enabled(s->poll_timer, SD_EVENT_OFF);
        if (s->deadline_timer)
                (void) sd_event_source_set_enabled(s->deadline_timer, SD_EVENT_OFF);

        print_line(m, "gone scope=%s error=%s", s->name, strerrorname_np(-error) ?: "unknown");
        (void) snprintf(f_scope, sizeof(f_scope), "VMP_SCOPE=%s", s->name);
        errno = -error;
        log_struct_internal(LOG_NOTICE, MESSAGE_ID_SCOPE_GONE, (const char *const[]) { f_scope, NULL },
                            "%s: the watched cgroup is gone (%m), no longer watching it.", s->name);

        if (m->gc_defer)
                (void) sd_event_source_set_enabled(m->gc_defer, SD_EVENT_ONESHOT);
        manager_arm_rewatch(m);
}

static Scope *scope_free(Scope *s) {
        if (!s)
                return NULL;
        scope_close_stall_wake(s);
        fault_wake_close(&s->fault_wake);
        source_free(s->source);
        sd_event_source_disable_unref(s->poll_timer);
        sd_event_source_disable_unref(s->deadline_timer);
        free(s);
        return NULL;
}

static int scope_new(Manager *m, const char *name, const char *cgroup, Scope **ret) {
        Scope *s;

        s = calloc(1, sizeof(Scope));
        if (!s)
                return -ENOMEM;
        /* Its fields are first written at the scope's first event, maybe an
         * OOM: every page of it resident now (memory.h). */
        memory_prefault(s, sizeof(*s));
        s->manager = m;
        s->source_type = _SOURCE_TYPE_INVALID;
        s->headroom = true;
        s->stall_wake_fd = -EBADF;
        (void) snprintf(s->name, sizeof(s->name), "%s", name);
        (void) snprintf(s->cgroup, sizeof(s->cgroup), "%s", cgroup ?: "");
        level_engine_init(&s->engine, &m->config.level);
        scope_set_level_config(m, s);
        *ret = s;
        return 0;
}

/* The source's own description; for the system scope with HeadroomSec=,
 * also the idle headroom poll, which the kernel's events do not arm. */
static void scope_describe(Manager *m, Scope *s) {
        usec_t u = m->config.params.poll.headroom_usec;
        size_t n;

        source_describe(s->source, s->source_detail, sizeof(s->source_detail));
        if (s->stall_wake_fd >= 0) {
                n = strlen(s->source_detail);
                (void) snprintf(s->source_detail + n, sizeof(s->source_detail) - n,
                                "%sthe stall band's own PSI trigger: some %llums per %llums on %s/pressure/memory%s",
                                n ? "; " : "", (unsigned long long) (LEVEL_HEADROOM_STALL_USEC / USEC_PER_MSEC),
                                (unsigned long long) (s->stall_wake_window_usec / USEC_PER_MSEC), m->env.proc_root,
                                s->stall_wake_window_usec != PSI_WAKE_WINDOW_USEC ?
                                PSI_UNPRIVILEGED_NOTE : "");
        }
        if (s->fault_wake.n > 0) {
                n = strlen(s->source_detail);
                (void) snprintf(s->source_detail + n, sizeof(s->source_detail) - n,
                                "%sMemAvailable read as memory is faulted in: a page-fault counter on each of %u "
                                "CPUs (FaultWake=)", n ? "; " : "", s->fault_wake.n);
        }
        if (s->cgroup[0] || u == 0)
                return;
        n = strlen(s->source_detail);
        if (u % USEC_PER_SEC == 0)
                (void) snprintf(s->source_detail + n, sizeof(s->source_detail) - n,
                                "%sMemAvailable read every %llus while idle (HeadroomSec=)", n ? "; " : "",
                                (unsigned long long) (u / USEC_PER_SEC));
        else
                (void) snprintf(s->source_detail + n, sizeof(s->source_detail) - n,
                                "%sMemAvailable read every %llums while idle (HeadroomSec=)", n ? "; " : "",
                                (unsigned long long) (u / USEC_PER_MSEC));
}

/* The stall band (level_headroom_stall()) needs the kernel's word that
 * tasks stalled on memory, early: the reclaim source's PSI trigger gives it
 * on the unified layout. The other sources speak later -- on a hybrid layout
 * memcg v1 raises the root's LOW only after whole vmpressure windows of
 * reclaim, and the fast hog's headroom reads began then: 54 ms of stall
 * (44-61) in 5 guest boots at 7f12d7c, against 13 on the unified layout.
 * So the system scope on memcg gets a trigger of its own on
 * /proc/pressure/memory, the reclaim source's ("some" 1 ms per 500 ms,
 * PSI_WAKE_WINDOW_USEC, 2 s where the kernel refuses it): when it fires, the
 * headroom is read at once and every BusyMSec= for QuietSec=, and its 1 ms
 * counts for the band as the reclaim source's does. It adds no level of its
 * own and no timer while nothing stalls. Nothing is allocated when it fires.
 * Not on the syscall source: there the daemon passes on the seed's own
 * levels, and libvmpressure's two ways must agree (the guest's syscall
 * layout, libvmpressure-same-records, saw the overflow's MEDIUM skipped when
 * the band's OOM came first); psi has triggers of its own, vmstat polls.
 * The write and its 2 s fallback are the sources' own (psi-trigger.h). */
#define STALL_WAKE_STALL_USEC LEVEL_HEADROOM_STALL_USEC

static void scope_close_stall_wake(Scope *s) {
        s->stall_wake_event = sd_event_source_disable_unref(s->stall_wake_event);
        if (s->stall_wake_fd >= 0)
                (void) close(s->stall_wake_fd);
        s->stall_wake_fd = -EBADF;
        s->stall_wake_window_usec = 0;
}

static int on_stall_wake(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        Scope *s = userdata;
        usec_t now = source_now_usec();

        if (revents & (EPOLLERR | EPOLLHUP)) {
                log_warning("%s: the PSI trigger on /proc/pressure/memory failed; the stall band waits for "
                            "the %s source.", s->name, source_type_to_string(s->source_type));
                return sd_event_source_set_enabled(es, SD_EVENT_OFF);
        }
        s->stall_wakeups++;
        s->stall_event_usec = MAX(now, (usec_t) 1);
        s->stall_event_stall_usec = STALL_WAKE_STALL_USEC;
        s->active_usec = now;           /* headroom every BusyMSec= for QuietSec= (on_poll()) */
        scope_arm_headroom(s, now);
        log_debug("%s: the stall band's PSI trigger fired.", s->name);
        return 0;
}

/* 0 also when there is nothing to open or the kernel has no PSI (said in
 * the start-up log); -ENOMEM alone is an error. */
static int scope_open_stall_wake(Manager *m, Scope *s) {
        usec_t window = PSI_WAKE_WINDOW_USEC;
        char path[PATH_MAX + 32];
        int r;

        if (s->cgroup[0] || s->source_type != SOURCE_MEMCG || s->engine.config.headroom_stall_usec == 0 ||
            !level_headroom_floor_enabled(&s->engine.config) || !s->poll_timer)
                return 0;
        (void) snprintf(path, sizeof(path), "%s/pressure/memory", m->env.proc_root);
        s->stall_wake_fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (s->stall_wake_fd < 0) {
                log_info_errno(errno, "%s: no PSI trigger for the stall band (%s: %m); its reads begin when the "
                               "%s source speaks.", s->name, path, source_type_to_string(s->source_type));
                s->stall_wake_fd = -EBADF;
                return 0;
        }
        r = psi_trigger_write_or_2s(s->stall_wake_fd, "some", STALL_WAKE_STALL_USEC, &window);
        if (r >= 0)
                r = sd_event_add_io(m->event, &s->stall_wake_event, s->stall_wake_fd, EPOLLPRI, on_stall_wake, s);
        if (r < 0) {
                log_info_errno(r, "%s: no PSI trigger for the stall band (%s: %m); its reads begin when the %s "
                               "source speaks.", s->name, path, source_type_to_string(s->source_type));
                scope_close_stall_wake(s);
                return r == -ENOMEM ? r : 0;
        }
        s->stall_wake_window_usec = window;
        scope_describe(m, s);           /* SourceDetails and status say it */
        log_info("%s: the stall band's headroom reads begin at a PSI trigger of their own: some %llums per %llums "
                 "on %s.", s->name, (unsigned long long) (STALL_WAKE_STALL_USEC / USEC_PER_MSEC),
                 (unsigned long long) (window / USEC_PER_MSEC), path);
        return 0;
}

/* FaultWake= (fault-wake.h): an anonymous fill that meets no page cache
 * raises no kernel event before the low watermark, next to the floor; the
 * page faults it takes its memory with are counted by the kernel, which
 * wakes the system scope after as many as could have used a share of what
 * is left. Under the warning share (level.h LEVEL_WARN_SHARE_DIVISOR) a
 * wake-up starts the headroom reads, every BusyMSec= for QuietSec= as for
 * the stall band's trigger, so the trend's warning (WarnHorizonSec=) and the
 * floor follow the fill; above it, a wake-up only sets the next one nearer.
 * Nothing runs while nothing faults; nothing is allocated on a wake-up. */
static int on_fault_wake(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        Scope *s = userdata;
        Manager *m = s->manager;
        uint64_t available, total;
        usec_t now;

        if (revents & (EPOLLERR | EPOLLHUP)) {
                log_warning("%s: a page-fault counter failed (FaultWake=); that CPU's faults no longer wake the "
                            "headroom reads.", s->name);
                return sd_event_source_set_enabled(es, SD_EVENT_OFF);
        }
        s->fault_wake.wakeups++;
        if (s->gone || headroom_read(&m->env, NULL, m->read_buf, sizeof(m->read_buf), &available, &total) < 0)
                return 0;
        now = source_now_usec();
        /* A point of the trend: the fill's rate is known at the first read
         * in the last third. */
        level_engine_headroom_note(&s->engine, now, available);
        if (available <= total / LEVEL_WARN_SHARE_DIVISOR) {
                s->active_usec = now;   /* headroom every BusyMSec= for QuietSec= (on_poll()) */
                scope_arm_headroom(s, now);
        }
        scope_fault_wake_follow(s, available, total);
        return 0;
}

/* 0 also when the counters cannot be opened (said in the start-up log);
 * -ENOMEM alone is an error. Not on the syscall source, where the daemon
 * passes on the seed's own levels and libvmpressure's two ways must agree
 * (as for the stall band's trigger). */
static int scope_open_fault_wake(Manager *m, Scope *s) {
        uint64_t available, total, period;
        char reason[256] = "";
        int r;

        if (s->cgroup[0] || !m->config.params.poll.fault_wake || s->source_type == SOURCE_SYSCALL ||
            !level_headroom_floor_enabled(&s->engine.config) || !s->poll_timer || !s->headroom)
                return 0;
        r = headroom_read(&m->env, NULL, m->read_buf, sizeof(m->read_buf), &available, &total);
        if (r < 0) {
                log_info_errno(r, "%s: no page-fault counters (FaultWake=): cannot read the headroom: %m", s->name);
                return 0;
        }
        period = fault_wake_period(available, total, level_headroom_floor_bytes(&s->engine.config, total),
                                   total / LEVEL_WARN_SHARE_DIVISOR, (unsigned) MAX(sysconf(_SC_NPROCESSORS_ONLN), 1L),
                                   (uint64_t) sysconf(_SC_PAGESIZE));
        r = fault_wake_open(&s->fault_wake, m->event, period, on_fault_wake, s, reason, sizeof(reason));
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_info("%s: no page-fault counters (FaultWake=): %s; a fill that meets no page cache is seen "
                         "from the first kernel event.", s->name, reason);
                return 0;
        }
        scope_fault_wake_follow(s, available, total);   /* for the CPUs actually counted */
        scope_describe(m, s);           /* SourceDetails and status say it */
        log_info("%s: the headroom is also read as memory is faulted in: a page-fault counter on each of %u CPUs, "
                 "waking after %llu faults on one now (FaultWake=).", s->name, s->fault_wake.n,
                 (unsigned long long) s->fault_wake.period);
        return 0;
}

/* Tries the sources best first (or only the forced one) and says why each
 * better one could not be used. */
static int scope_open_source(Manager *m, Scope *s) {
        SourceTarget target = { .scope = s->name, .cgroup = s->cgroup };
        SourceType first = m->config.source >= 0 ? m->config.source : 0;
        SourceType last = m->config.source >= 0 ? m->config.source : _SOURCE_TYPE_MAX - 1;
        char reason[512], f_scope[300], f_source[64];
        int r = -ENODEV;

        for (SourceType t = first; t <= last; t++) {
                reason[0] = '\0';
                r = source_new(t, m->event, &m->env, &m->config.params, &m->config.level, &target,
                               on_sample, on_gone, s, &s->source, reason, sizeof(reason));
                if (r >= 0) {
                        s->source_type = t;
                        break;
                }
                if (r == -ENOMEM)
                        return log_oom();
                log_info_errno(r, "%s: source %s unavailable: %s", s->name, source_type_to_string(t),
                               reason[0] ? reason : strerror(-r));
        }
        if (r < 0)
                return log_error_errno(r, "%s: no usable memory-pressure source%s.", s->name,
                                       m->config.source >= 0 ? " (the source was forced with Source=/--source)" : "");

        scope_describe(m, s);
        (void) snprintf(f_scope, sizeof(f_scope), "VMP_SCOPE=%s", s->name);
        (void) snprintf(f_source, sizeof(f_source), "VMP_SOURCE=%s", source_type_to_string(s->source_type));
        log_struct_internal(LOG_NOTICE, MESSAGE_ID_SOURCE, (const char *const[]) { f_scope, f_source, NULL },
                            "%s: watching memory pressure with the %s source%s%s%s%s.", s->name,
                            source_type_to_string(s->source_type),
                            s->cgroup[0] ? " on cgroup " : "", s->cgroup,
                            s->source_detail[0] ? ": " : "", s->source_detail);
        print_line(m, "source scope=%s source=%s cgroup=%s", s->name,
                   source_type_to_string(s->source_type), s->cgroup[0] ? s->cgroup : "-");
        return 0;
}

static int scope_start(Manager *m, Scope *s) {
        int r;

        r = scope_open_source(m, s);
        if (r < 0)
                return r;

        /* Headroom is sampled on a timer once the source has spoken: the
         * kernel's notifications say that reclaim runs, not how much is left,
         * and an anonymous-only hog without swap can eat the last free memory
         * while PSI stays under 3 % "some" (docs/kernel.md#psi-silent-anon).
         * Off until then (scope_arm_headroom()). */
        r = sd_event_add_time(m->event, &s->poll_timer, CLOCK_MONOTONIC, USEC_INFINITY,
                              10 * USEC_PER_MSEC, on_poll, s);
        if (r < 0)
                return log_error_errno(r, "%s: cannot add the headroom timer: %m", s->name);
        r = sd_event_source_set_enabled(s->poll_timer, SD_EVENT_OFF);
        if (r < 0)
                return r;
        r = scope_open_stall_wake(m, s);
        if (r == -ENOMEM)
                return log_oom();
        r = scope_open_fault_wake(m, s);
        if (r == -ENOMEM)
                return log_oom();
        scope_arm_idle_headroom(m, s, source_now_usec(), 0);
        return 0;
}

/* A unit's cgroup disappears when the unit stops and comes back when it
 * starts again (and does not exist yet when we start before the services).
 * Absent cgroups are waited for with inotify on their nearest existing
 * ancestor (a mkdir raises IN_CREATE in the parent, cgroupfs included), so
 * nothing runs while they are away. What a mkdir does not announce (a full
 * table, a cgroup that found no source) is looked at again every 2 s: 30
 * cheap access(2) calls a minute while it lasts. */
#define REWATCH_USEC (2 * USEC_PER_SEC)

static const char *cgroup_scope_name(const char *cgroup) {
        const char *slash = strrchr(cgroup, '/');
        return slash && slash[1] ? slash + 1 : cgroup;
}

/* root/cgroup is a directory there; false for a hierarchy not mounted (""). */
static bool cgroup_in(const char *root, const char *cgroup) {
        char path[PATH_MAX * 2];

        if (!root[0])
                return false;
        (void) snprintf(path, sizeof(path), "%s/%s", root, cgroup);
        return access(path, F_OK) == 0;
}

static bool cgroup_exists(Manager *m, const char *cgroup) {
        return cgroup_in(m->env.memcg_v1_root, cgroup) || cgroup_in(m->env.cgroup2_root, cgroup);
}

/* The scope's engine: the configuration's levels, with a floor of at least
 * the scope's Guard=. */
static void scope_set_level_config(Manager *m, Scope *s) {
        s->engine.config = m->config.level;
        s->engine.config.headroom_floor_bytes = MAX(s->engine.config.headroom_floor_bytes, s->guard_bytes);
        /* The trend's warning is the system's alone: a cgroup's own headroom
         * swings with its page cache (scope_memory_left()). */
        if (s->cgroup[0])
                s->engine.config.warn_horizon_usec = 0;
        /* The stall band too: the system's MemAvailable and PSI alone. */
        s->engine.config.headroom_stall_usec = s->cgroup[0] ? 0 : LEVEL_HEADROOM_STALL_USEC;
}

static void scope_started(Manager *m, Scope *s) {
        if (m->scope_hook && s->cgroup[0])
                m->scope_hook(m, s, m->scope_hook_userdata);
}

/* On a hybrid layout systemd makes a unit's directories one hierarchy after
 * the other, and an inotify pass may see the cgroup2 one alone: watching it
 * then finds no v1 memcg and settles for a lesser source (an e2e run in CI
 * saw a restarted unit watched by PSI instead of memcg, and its LOW never
 * came). Such a cgroup waits this long for its v1 directory (the v1 mkdir
 * wakes the pass at once); one that never gets a v1 memcg is watched after. */
#define REWATCH_PARTIAL_USEC (500 * USEC_PER_MSEC)

static bool cgroup_partial(Manager *m, const char *cgroup) {
        return m->env.memcg_v1_root[0] && m->config.source < 0 && !cgroup_in(m->env.memcg_v1_root, cgroup) &&
               cgroup_in(m->env.cgroup2_root, cgroup);
}

static int scope_restart(Manager *m, Scope *s) {
        int r;

        s->source = source_free(s->source);
        scope_close_stall_wake(s);
        s->poll_timer = sd_event_source_disable_unref(s->poll_timer);
        if (s->deadline_timer)
                (void) sd_event_source_set_enabled(s->deadline_timer, SD_EVENT_OFF);
        level_engine_init(&s->engine, &m->config.level);
        s->guard_bytes = s->guard_limit_bytes = s->guard_mark_bytes = 0;
        s->guard_grace_usec = s->guard_entered_usec = 0;
        scope_set_level_config(m, s);
        s->busy = false;
        s->headroom = true;
        s->gone = false;
        r = scope_start(m, s);
        if (r >= 0)
                scope_started(m, s);
        return r;
}

static void rewatch_inotify_clear(Manager *m) {
        for (size_t i = 0; i < m->n_rewatch_wds; i++)
                (void) inotify_rm_watch(m->rewatch_inotify_fd, m->rewatch_wds[i]);
        m->n_rewatch_wds = 0;
}

/* Watches the nearest existing ancestor of root/cgroup for IN_CREATE: when
 * the missing directory (or one on the way to it) is made, the pass runs and
 * watches one level further down. 0, or -ENOSPC when no watch could be had
 * (the caller falls back to the timer). */
static int rewatch_inotify_add(Manager *m, const char *root, const char *cgroup) {
        char path[PATH_MAX * 2];
        int wd;

        if (!root[0])
                return 0;
        (void) snprintf(path, sizeof(path), "%s/%s", root, cgroup);
        for (char *slash = strrchr(path, '/'); slash && slash > path; slash = strrchr(path, '/')) {
                *slash = '\0';
                if (access(path, F_OK) < 0)
                        continue;
                wd = inotify_add_watch(m->rewatch_inotify_fd, path, IN_CREATE | IN_ONLYDIR);
                if (wd < 0)
                        return -ENOSPC;
                for (size_t i = 0; i < m->n_rewatch_wds; i++)
                        if (m->rewatch_wds[i] == wd)
                                return 0;       /* the same directory as another's */
                if (m->n_rewatch_wds >= MANAGER_REWATCH_WATCHES_MAX)
                        return -ENOSPC;
                m->rewatch_wds[m->n_rewatch_wds++] = wd;
                return 0;
        }
        return 0;
}

/* Absent cgroups are waited for with inotify; the timer (REWATCH_USEC) runs
 * only for what inotify cannot tell: a full table, a cgroup that exists but
 * found no source, a gone scope that could not be remembered, more ancestors
 * than MANAGER_REWATCH_WATCHES_MAX, or no inotify. A cgroup made between the
 * look and the watch is caught by looking once more after arming. */
static void manager_arm_rewatch(Manager *m) {
        bool need_timer = false, soon = false;
        usec_t wake_at = USEC_INFINITY;

        for (size_t i = 1; i < m->n_scopes; i++)
                need_timer = need_timer || m->scopes[i]->gone;
        if (m->rewatch_inotify_fd >= 0)
                rewatch_inotify_clear(m);
        for (size_t i = 0; i < m->n_unwatched; i++) {
                const char *cg = m->unwatched[i].cgroup;
                usec_t since = m->unwatched[i].partial_since_usec;

                if (m->unwatched[i].reason != UNWATCHED_ABSENT || m->rewatch_inotify_fd < 0) {
                        need_timer = true;
                        continue;
                }
                if (rewatch_inotify_add(m, m->env.memcg_v1_root, cg) < 0 ||
                    rewatch_inotify_add(m, m->env.cgroup2_root, cg) < 0)
                        need_timer = true;
                if (since > 0 && cgroup_partial(m, cg))
                        wake_at = MIN(wake_at, since + REWATCH_PARTIAL_USEC);
                else
                        soon = soon || cgroup_exists(m, cg);
        }
        if (!m->rewatch_timer)
                return;
        if (soon) {
                (void) sd_event_source_set_time_relative(m->rewatch_timer, 0);
                (void) sd_event_source_set_enabled(m->rewatch_timer, SD_EVENT_ONESHOT);
        } else if (wake_at != USEC_INFINITY) {
                (void) sd_event_source_set_time(m->rewatch_timer, wake_at);
                (void) sd_event_source_set_enabled(m->rewatch_timer, SD_EVENT_ONESHOT);
        } else if (!need_timer)
                (void) sd_event_source_set_enabled(m->rewatch_timer, SD_EVENT_OFF);
        else if (sd_event_source_get_enabled(m->rewatch_timer, NULL) == 0) {
                (void) sd_event_source_set_time_relative(m->rewatch_timer, REWATCH_USEC);
                (void) sd_event_source_set_enabled(m->rewatch_timer, SD_EVENT_ONESHOT);
        }
}

static const char *const unwatched_reason_table[_UNWATCHED_REASON_MAX] = {
        [UNWATCHED_ABSENT] = "absent",
        [UNWATCHED_TABLE_FULL] = "table-full",
        [UNWATCHED_NO_SOURCE] = "no-source",
};

const char *unwatched_reason_to_string(UnwatchedReason r) {
        return r >= 0 && r < _UNWATCHED_REASON_MAX ? unwatched_reason_table[r] : NULL;
}

static ssize_t unwatched_find(const Manager *m, const char *cgroup) {
        for (size_t i = 0; i < m->n_unwatched; i++)
                if (streq(m->unwatched[i].cgroup, cgroup))
                        return (ssize_t) i;
        return -1;
}

size_t manager_count_unwatched(const Manager *m, UnwatchedReason reason) {
        size_t n = 0;

        for (size_t i = 0; i < m->n_unwatched; i++)
                n += m->unwatched[i].reason == reason;
        return n;
}

/* Remembers cgroup (or updates its reason). 0, -E2BIG when
 * MANAGER_UNWATCHED_MAX are remembered, -ENOMEM. */
static int unwatched_add(Manager *m, const char *cgroup, UnwatchedReason reason) {
        ssize_t i = unwatched_find(m, cgroup);
        char *copy;

        if (i >= 0) {
                m->unwatched[i].reason = reason;
                return 0;
        }
        if (m->n_unwatched >= MANAGER_UNWATCHED_MAX) {
                log_warning("Cannot remember %s to watch later: %d cgroups are waiting already; its "
                            "Scope=unit policy does not act.", cgroup, MANAGER_UNWATCHED_MAX);
                return -E2BIG;
        }
        if (m->n_unwatched >= m->n_unwatched_allocated) {
                size_t n = m->n_unwatched_allocated ? m->n_unwatched_allocated * 2 : 16;
                Unwatched *u = reallocarray(m->unwatched, n, sizeof(Unwatched));

                if (!u)
                        return log_oom();
                m->unwatched = u;
                m->n_unwatched_allocated = n;
        }
        copy = strdup(cgroup);
        if (!copy)
                return log_oom();
        m->unwatched[m->n_unwatched++] = (Unwatched) { .cgroup = copy, .reason = reason };
        return 0;
}

static void unwatched_remove(Manager *m, size_t i) {
        free(m->unwatched[i].cgroup);
        memmove(m->unwatched + i, m->unwatched + i + 1, (m->n_unwatched - i - 1) * sizeof(Unwatched));
        m->n_unwatched--;
}

static void table_full_warning(Manager *m, const char *cgroup) {
        log_warning("Cannot watch %s: the scope table is full (%zu scopes watched, the most there can be); "
                    "its Scope=unit policy does not act until a watched cgroup goes away.",
                    cgroup, m->scopes_max);
}

static int manager_add_scope(Manager *m, const char *name, const char *cgroup, Scope **ret);

/* A scope for cgroup, started. 0; -E2BIG (table full), -ENOMEM, or the
 * source's error (the scope is freed again). */
static int manager_start_scope(Manager *m, const char *cgroup, Scope **ret) {
        Scope *s;
        int r;

        r = manager_add_scope(m, cgroup_scope_name(cgroup), cgroup, &s);
        if (r < 0)
                return r;
        r = scope_start(m, s);
        if (r < 0) {
                m->n_scopes--;          /* it is the last one */
                scope_free(s);
                return r;
        }
        if (ret)
                *ret = s;
        scope_started(m, s);
        return 0;
}

/* Unwatched entry i: watched now if its cgroup exists and a slot is free.
 * 1 watched (the entry is gone), 0 still unwatched, -ENOMEM. */
static int unwatched_try(Manager *m, size_t i) {
        Unwatched *u = &m->unwatched[i];
        char *cg = u->cgroup;
        int r;

        if (!cgroup_exists(m, cg)) {
                u->reason = UNWATCHED_ABSENT;
                u->partial_since_usec = 0;
                return 0;
        }
        if (cgroup_partial(m, cg)) {
                usec_t now = source_now_usec();

                if (u->partial_since_usec == 0)
                        u->partial_since_usec = now;
                if (now < u->partial_since_usec + REWATCH_PARTIAL_USEC) {
                        u->reason = UNWATCHED_ABSENT;
                        return 0;
                }
        }
        if (m->n_scopes >= m->scopes_max) {
                if (u->reason != UNWATCHED_TABLE_FULL)
                        table_full_warning(m, cg);
                u->reason = UNWATCHED_TABLE_FULL;
                return 0;
        }
        log_info("%s: the cgroup %s is there, watching it.", cgroup_scope_name(cg), cg);
        r = manager_start_scope(m, cg, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                /* A cgroup being removed is still visible for a moment after
                 * its files are gone (seen under systemd at a unit's stop):
                 * absent, waited for by inotify, not "no source" on a timer. */
                u->reason = cgroup_exists(m, cg) ? UNWATCHED_NO_SOURCE : UNWATCHED_ABSENT;
                return 0;
        }
        unwatched_remove(m, i);
        return 1;
}

static int on_rewatch(sd_event_source *es, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        m->n_rewatch_passes++;

        for (size_t i = 1; i < m->n_scopes; i++) {
                Scope *s = m->scopes[i];

                /* Only the gone scopes that could not be remembered are left here. */
                if (!s->gone || s->source || !cgroup_exists(m, s->cgroup))
                        continue;
                log_info("%s: the cgroup %s is back, watching it again.", s->name, s->cgroup);
                if (scope_restart(m, s) < 0) {
                        s->gone = true;
                        s->source = source_free(s->source);
                }
        }
        for (size_t i = 0; i < m->n_unwatched;)
                if (unwatched_try(m, i) <= 0)
                        i++;
        manager_arm_rewatch(m);
        return 0;
}

/* A directory was made below a watched ancestor: read the events away and
 * look at every absent cgroup again (the pass re-arms the watches). Only
 * IN_CREATE (or a lost queue) counts: re-arming removes watches, and every
 * inotify_rm_watch() queues an IN_IGNORED, which must not start the pass
 * again (that would spin). */
static int on_rewatch_inotify(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool created = false;
        ssize_t n;

        while ((n = read(fd, buf, sizeof(buf))) > 0)
                for (size_t off = 0; off + sizeof(struct inotify_event) <= (size_t) n;) {
                        const struct inotify_event *e = (const struct inotify_event *) (buf + off);

                        created = created || (e->mask & (IN_CREATE | IN_Q_OVERFLOW));
                        off += sizeof(struct inotify_event) + e->len;
                }
        return created ? on_rewatch(NULL, 0, userdata) : 0;
}

int manager_new(const Config *config, bool print_events, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(Manager));
        if (!m)
                return -ENOMEM;
        m->rewatch_inotify_fd = -EBADF;
        m->config = *config;
        m->print_events = print_events;
        m->scopes_max = MANAGER_SCOPES_MAX;
        memory_prefault(m, sizeof(*m));        /* read_buf among it */

        r = sd_event_default(&m->event);
        if (r < 0)
                return r;
        r = sd_event_add_defer(m->event, &m->gc_defer, on_gc, m);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(m->gc_defer, SD_EVENT_OFF);
        r = sd_event_add_time_relative(m->event, &m->rewatch_timer, CLOCK_MONOTONIC, REWATCH_USEC,
                                       100 * USEC_PER_MSEC, on_rewatch, m);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(m->rewatch_timer, SD_EVENT_OFF);
        m->rewatch_inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (m->rewatch_inotify_fd < 0)
                log_debug_errno(errno, "No inotify, absent cgroups will be looked for every 2 s: %m");
        else {
                r = sd_event_add_io(m->event, &m->rewatch_inotify, m->rewatch_inotify_fd, EPOLLIN,
                                    on_rewatch_inotify, m);
                if (r < 0)
                        return r;
        }

        r = source_env_detect(&m->env);
        if (r < 0)
                return log_error_errno(r, "Cannot find the cgroup and proc mounts: %m");

        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        for (size_t i = 0; i < m->n_scopes; i++)
                scope_free(m->scopes[i]);
        free(m->scopes);
        for (size_t i = 0; i < m->n_unwatched; i++)
                free(m->unwatched[i].cgroup);
        free(m->unwatched);
        sd_event_source_disable_unref(m->gc_defer);
        sd_event_source_disable_unref(m->rewatch_timer);
        sd_event_source_disable_unref(m->rewatch_inotify);
        if (m->rewatch_inotify_fd >= 0)
                (void) close(m->rewatch_inotify_fd);
        sd_event_source_disable_unref(m->actions_defer);
        sd_event_unref(m->event);
        free(m);
        return NULL;
}

static int manager_add_scope(Manager *m, const char *name, const char *cgroup, Scope **ret) {
        Scope *s;
        int r;

        if (m->n_scopes >= m->scopes_max)
                return -E2BIG;
        if (m->n_scopes >= m->n_scopes_allocated) {
                size_t n = MIN(MAX(m->n_scopes_allocated * 2, (size_t) 16), m->scopes_max);
                Scope **p = reallocarray(m->scopes, n, sizeof(Scope *));

                if (!p)
                        return -ENOMEM;
                m->scopes = p;
                m->n_scopes_allocated = n;
        }
        r = scope_new(m, name, cgroup, &s);
        if (r < 0)
                return r;
        m->scopes[m->n_scopes++] = s;
        *ret = s;
        return 0;
}

int manager_start(Manager *m) {
        Scope *s;
        int r;

        r = manager_add_scope(m, SCOPE_SYSTEM, NULL, &s);
        if (r < 0)
                return r;
        r = scope_start(m, s);
        if (r < 0)
                return r == -ENOMEM ? r : -ENODEV;

        for (size_t i = 0; i < m->config.n_watch; i++) {
                /* A unit's cgroup may not exist yet or any more: said so, and watched when it appears. */
                r = manager_watch(m, m->config.watch[i], NULL);
                if (r == -ENOMEM)
                        return r;
        }

        print_line(m, "ready");
        (void) sd_notify(false, "READY=1");
        notify_status(m);
        return 0;
}

static int on_exit_signal(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;
        log_info("Received %s, exiting.", strsignal((int) si->ssi_signo));
        (void) sd_notify(false, "STOPPING=1");
        return sd_event_exit(m->event, 0);
}

static int on_sighup(sd_event_source *es, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("SIGHUP received, reloading the configuration and the policies.");
        (void) manager_reload(m);
        (void) manager_reload_hooks(m, NULL);
        return 0;
}

int manager_run(Manager *m) {
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m);
        if (r < 0)
                return log_error_errno(r, "Cannot watch signals: %m");

        return sd_event_loop(m->event);
}

int manager_add_phase_listener(Manager *m, ManagerListenerPhase phase, manager_level_handler_t handler,
                               void *userdata) {
        assert(phase >= 0 && phase < _MANAGER_LISTENER_PHASE_MAX);
        if (m->n_listeners[phase] >= MANAGER_LISTENERS_MAX)
                return -E2BIG;
        m->listeners[phase][m->n_listeners[phase]].handler = handler;
        m->listeners[phase][m->n_listeners[phase]].userdata = userdata;
        m->n_listeners[phase]++;
        return 0;
}

int manager_add_listener(Manager *m, manager_level_handler_t handler, void *userdata) {
        return manager_add_phase_listener(m, MANAGER_LISTENER_ACT, handler, userdata);
}

static int on_actions_defer(sd_event_source *es, void *userdata) {
        Manager *m = userdata;

        if (m->actions_hook)
                m->actions_hook(m, m->actions_hook_userdata);
        return 0;
}

int manager_set_actions_hook(Manager *m, manager_actions_hook_t hook, void *userdata) {
        int r;

        if (hook && !m->actions_defer) {
                r = sd_event_add_defer(m->event, &m->actions_defer, on_actions_defer, m);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_enabled(m->actions_defer, SD_EVENT_OFF);
        }
        if (!hook)
                m->actions_defer = sd_event_source_disable_unref(m->actions_defer);
        m->actions_hook = hook;
        m->actions_hook_userdata = userdata;
        return 0;
}

void manager_set_config_loader(Manager *m, manager_config_loader_t loader, void *userdata) {
        m->config_loader = loader;
        m->config_loader_userdata = userdata;
}

int manager_reload(Manager *m) {
        Config c;
        int r;

        if (!m->config_loader)
                return -EOPNOTSUPP;
        r = m->config_loader(&c, m->config_loader_userdata);
        if (r < 0)
                return log_warning_errno(r, "Reloading the configuration failed, the running one stays: %m");

        /* Sources hold &m->config.level and &m->config.params: they see the new
         * values from their next sample on. */
        m->config.level = c.level;
        m->config.params.poll = c.params.poll;
        m->config.log_level = c.log_level;
        m->config.dry_run = c.dry_run;
        m->config.max_subscribers = c.max_subscribers;
        m->config.max_subscribers_per_user = c.max_subscribers_per_user;
        log_set_max_level(c.log_level);
        for (size_t i = 0; i < m->n_scopes; i++) {
                scope_set_level_config(m, m->scopes[i]);
                if (!m->scopes[i]->gone)
                        scope_rearm(m->scopes[i]);
        }
        /* FaultWake= turned off closes the counters; turned on, they need a
         * restart (opening them needs CAP_PERFMON, dropped after start-up). */
        if (m->n_scopes > 0 && !m->config.params.poll.fault_wake && m->scopes[0]->fault_wake.n > 0) {
                fault_wake_close(&m->scopes[0]->fault_wake);
                log_info("%s: page-fault counters closed (FaultWake=no).", m->scopes[0]->name);
        }
        /* HeadroomSec= turned on, or off (the idle poll then stops at its next run). */
        if (m->n_scopes > 0 && m->scopes[0]->source) {
                scope_describe(m, m->scopes[0]);
                if (!m->scopes[0]->busy)
                        scope_arm_idle_headroom(m, m->scopes[0], source_now_usec(), 0);
        }
        log_info("Configuration reloaded: [Levels], [Poll], LogLevel=, DryRun= and MaxSubscribers= apply now; "
                 "Source=, Watch=, SyscallNumber=, SystemPressure=, [PSI], LowMemoryMonitor= and FaultWake=yes "
                 "need a restart.");
        return 0;
}

void manager_set_scope_hook(Manager *m, manager_scope_hook_t hook, void *userdata) {
        m->scope_hook = hook;
        m->scope_hook_userdata = userdata;
}

/* The v1 usage thresholds of a guard taken off (no-op on other sources). */
static void scope_guard_marks_off(Scope *s) {
        for (SourceMark k = 0; k < _SOURCE_MARK_MAX; k++)
                (void) source_set_mark(s->source, k, 0);
}

int manager_guard(Manager *m, Scope *s, uint64_t guard_bytes, unsigned guard_percent, usec_t grace_usec,
                  ScopeGuard *ret) {
        uint64_t available, limit, guard;
        ScopeGuard g = {};
        int r;

        if (!s || !s->cgroup[0])
                return -EINVAL;
        if (s->gone)
                return -ESTALE;
        if (guard_bytes == 0 && guard_percent == 0) {
                if (s->guard_bytes > 0)
                        log_info("%s: guard taken off.", s->name);
                s->guard_bytes = s->guard_limit_bytes = s->guard_mark_bytes = s->guard_warn_bytes = 0;
                s->guard_grace_usec = s->guard_entered_usec = 0;
                s->guard_warned = false;
                scope_set_level_config(m, s);
                scope_guard_marks_off(s);
                if (ret)
                        *ret = g;
                return 0;
        }
        r = headroom_read(&m->env, s->cgroup, m->read_buf, sizeof(m->read_buf), &available, &limit);
        if (r < 0)
                return r;
        guard = guard_percent > 0 ? limit / 100 * guard_percent + limit % 100 * guard_percent / 100 : guard_bytes;
        if (guard >= limit) {
                s->guard_bytes = s->guard_warn_bytes = 0;
                scope_set_level_config(m, s);
                scope_guard_marks_off(s);
                return -ERANGE;
        }
        g = (ScopeGuard) {
                .limit_bytes = limit,
                .guard_bytes = guard,
                .mark_bytes = limit - guard,
                .memcg_v1 = m->env.memcg_v1_root[0] != '\0',
        };
        s->guard_bytes = guard;
        s->guard_limit_bytes = limit;
        s->guard_mark_bytes = g.mark_bytes;
        s->guard_grace_usec = grace_usec;
        scope_set_level_config(m, s);
        s->guard_warn_bytes = 0;
        if (g.memcg_v1) {
                r = source_set_mark(s->source, SOURCE_MARK_GUARD, g.mark_bytes);
                g.mark_armed = r >= 0;
                if (r < 0 && r != -EOPNOTSUPP)
                        log_warning_errno(r, "%s: cannot arm the usage threshold of its guard, the headroom "
                                          "poll alone sees it: %m", s->name);
                /* The warning band: twice the guard, where it fits below the limit. */
                if (guard < limit / 2) {
                        s->guard_warn_bytes = 2 * guard;
                        g.warn_mark_bytes = limit - 2 * guard;
                        r = source_set_mark(s->source, SOURCE_MARK_WARN, g.warn_mark_bytes);
                        g.warn_armed = r >= 0;
                        if (r < 0 && r != -EOPNOTSUPP)
                                log_warning_errno(r, "%s: cannot arm the usage threshold of its guard's warning, "
                                                  "the headroom poll alone sees it: %m", s->name);
                } else
                        (void) source_set_mark(s->source, SOURCE_MARK_WARN, 0);
        } else if (read_memory_high(m, s, &g.high_bytes) < 0)
                g.high_bytes = UINT64_MAX;
        if (ret)
                *ret = g;
        return 0;
}

Scope *manager_find_scope(Manager *m, const char *name) {
        for (size_t i = 0; i < m->n_scopes; i++)
                if (streq(m->scopes[i]->name, name))
                        return m->scopes[i];
        return NULL;
}

void manager_set_stall_wanted(Manager *m, bool wanted) {
        m->stall_unwanted = !wanted;
}

void manager_set_reload_hook(Manager *m, manager_reload_hook_t hook, void *userdata) {
        m->reload_hook = hook;
        m->reload_hook_userdata = userdata;
}

int manager_reload_hooks(Manager *m, Diagnostics *diag) {
        _cleanup_(diag_freep) Diagnostics *own = NULL;

        if (!m->reload_hook)
                return 0;
        if (!diag) {
                own = diag_new();
                if (!own)
                        return log_oom();
                diag = own;
        }
        return m->reload_hook(m, diag, m->reload_hook_userdata);
}

/* A cgroup to watch from now on (a unit-scope policy, Watch=). An existing
 * scope of the same cgroup is reused; a cgroup that is not there takes no
 * slot (see manager.h). */
int manager_watch(Manager *m, const char *cgroup, Scope **ret) {
        const char *name = cgroup_scope_name(cgroup);
        Scope *s = NULL;
        ssize_t u;
        int r;

        if (ret)
                *ret = NULL;
        for (size_t i = 0; i < m->n_scopes; i++)
                if (streq(m->scopes[i]->cgroup, cgroup)) {
                        if (ret)
                                *ret = m->scopes[i];
                        return 0;
                }
        u = unwatched_find(m, cgroup);
        if (u >= 0) {
                /* Wanted again (systemd started the unit): no need to wait for the timer. */
                r = unwatched_try(m, (size_t) u);
                if (r < 0)
                        return r;
                if (r > 0 && ret)
                        *ret = m->scopes[m->n_scopes - 1];
                manager_arm_rewatch(m);
                return 0;
        }

        if (!cgroup_exists(m, cgroup)) {
                r = unwatched_add(m, cgroup, UNWATCHED_ABSENT);
                if (r < 0)
                        return r;
                log_info("%s: the cgroup %s does not exist (yet); watching it once it does.", name, cgroup);
                print_line(m, "gone scope=%s error=ENOENT", name);
                manager_arm_rewatch(m);
                return 1;
        }
        if (cgroup_partial(m, cgroup)) {
                /* As in a rewatch pass: a unit just started on a hybrid
                 * layout may have its cgroup2 directory before its v1 one. */
                r = unwatched_add(m, cgroup, UNWATCHED_ABSENT);
                if (r < 0)
                        return r;
                u = unwatched_find(m, cgroup);
                if (u >= 0)
                        m->unwatched[u].partial_since_usec = source_now_usec();
                log_debug("%s: the cgroup %s has no v1 memory directory yet; waiting for it.", name, cgroup);
                manager_arm_rewatch(m);
                return 1;
        }
        if (m->n_scopes >= m->scopes_max) {
                table_full_warning(m, cgroup);
                r = unwatched_add(m, cgroup, UNWATCHED_TABLE_FULL);
                if (r == -ENOMEM)
                        return r;
                manager_arm_rewatch(m);
                return -E2BIG;
        }
        r = manager_start_scope(m, cgroup, &s);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                log_warning("%s: not watched; the daemon continues without it.", name);
                print_line(m, "gone scope=%s error=%s", name, strerrorname_np(-r) ?: "unknown");
                r = unwatched_add(m, cgroup, UNWATCHED_NO_SOURCE);
                if (r == -ENOMEM)
                        return r;
                manager_arm_rewatch(m);
                return 1;
        }
        if (ret)
                *ret = s;
        return 1;
}

/* The headroom reads of an OOM (scope_memory_left()), before the first one:
 * each watched scope's files, and a cgroup's parsers on sample text for
 * units that start after the daemon. Their code is then resident and
 * locked; test-oom-path-tight.py saw single_u64_parse()'s page of the
 * binary faulted in between a unit's first OOM and the kill. Nothing is
 * fed to the engines. */
void manager_rehearse(Manager *m) {
        static const char limit[] = "134217728\n", stat[] = "anon 0\ninactive_file 4096\n";
        uint64_t available, total;

        for (size_t i = 0; i < m->n_scopes; i++) {
                LevelEvent ev = {};

                (void) headroom_read(&m->env, m->scopes[i]->cgroup, m->read_buf, sizeof(m->read_buf), &available,
                                     &total);
                scope_read_stall(m, m->scopes[i], &ev);
        }
        (void) single_u64_parse(limit, sizeof(limit) - 1, &total);
        (void) keyed_u64_parse(stat, sizeof(stat) - 1, "inactive_file", &available);
}

/* ---- accessors ---------------------------------------------------------------- */

sd_event *manager_event(const Manager *m) {
        return m->event;
}

const Config *manager_config(const Manager *m) {
        return &m->config;
}

const SourceEnv *manager_env(const Manager *m) {
        return &m->env;
}

const LatencyStats *manager_latency(const Manager *m) {
        return &m->latency;
}

const RecentActions *manager_recent_actions(const Manager *m) {
        return &m->recent_actions;
}

void manager_record_latency(Manager *m, LatencyStage stage, bool simulated, usec_t latency_usec) {
        latency_record(&m->latency, stage, simulated, latency_usec);
}

size_t manager_n_scopes(const Manager *m) {
        return m->n_scopes;
}

Scope *manager_scope(const Manager *m, size_t i) {
        return i < m->n_scopes ? m->scopes[i] : NULL;
}

Scope *manager_system_scope(const Manager *m) {
        return manager_scope(m, 0);
}

size_t manager_n_unwatched(const Manager *m) {
        return m->n_unwatched;
}

const Unwatched *manager_unwatched(const Manager *m, size_t i) {
        return i < m->n_unwatched ? &m->unwatched[i] : NULL;
}

Manager *scope_manager(const Scope *s) {
        return s->manager;
}

bool scope_is_system(const Scope *s) {
        return s == manager_system_scope(s->manager);
}

const char *scope_name(const Scope *s) {
        return s->name;
}

const char *scope_cgroup(const Scope *s) {
        return s->cgroup;
}

bool scope_simulated(const Scope *s) {
        return s->simulated;
}

void scope_status(const Scope *s, ScopeStatus *ret) {
        *ret = (ScopeStatus) {
                .name = s->name,
                .cgroup = s->cgroup,
                .level = s->engine.current,
                .index = s->engine.index,
                .source_type = s->source_type,
                .source = s->source_type >= 0 ? source_type_to_string(s->source_type) : NULL,
                .source_detail = s->source_type >= 0 ? s->source_detail : "",
                .gone = s->gone,
                .last_change_usec = s->last_change_usec,
                .simulated = s->simulated,
                .simulated_count = s->simulated_count,
        };
        memcpy(ret->announced, s->announced, sizeof(ret->announced));
        memcpy(ret->simulated_announced, s->simulated_announced, sizeof(ret->simulated_announced));
}
