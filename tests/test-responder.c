/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The responder's plan (responder-plan.h) with literal inputs and
 * hand-advanced time: policies parsed from text, units named with their
 * cgroup paths, level events written out, candidates made up. Each plan is
 * written out as one line and compared whole, so an action too many, one
 * missing or two swapped all fail.
 */
#include <signal.h>
#include <sys/wait.h>

#include "action.h"
#include "proc-scan.h"
#include "responder-plan.h"
#include "tests.h"

#define SELF 424242
#define MiB (UINT64_C(1) << 20)
#define SEC USEC_PER_SEC

static SignalLimit limit;
static KillPacer pacer;
static Plan plan;

static Policy policy(const char *unit, const char *text) {
        char filename[UNIT_NAME_MAX + 16];
        Diagnostics d;
        Policy p = {};

        diag_clear(&d);
        (void) snprintf(filename, sizeof(filename), "%s.policy", unit);
        CHECK_EQ_INT(policy_parse(filename, filename, text, strlen(text), &p, &d), 0);
        CHECK_EQ_INT(p.state, POLICY_LOADED);
        return p;
}

static void reset_state(void) {
        signal_limit_init(&limit);
        kill_pacer_init(&pacer, KILL_PAUSE_DEFAULT_USEC);
}

static LevelEvent event(Level previous, Level level, bool repeat, usec_t t) {
        return (LevelEvent) { .previous = previous, .level = level, .repeat = repeat, .timestamp_usec = t };
}

static const PlanScope system_scope = { .system = true, .cgroup = "" };

/* The plan as one line: "signal a.service low SIGUSR1 main; kill-scan a.service". */
static const char *describe(const PlanUnit *units, char *buf, size_t size) {
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < plan.n_actions && len < size; i++) {
                const PlanAction *a = &plan.actions[i];
                const char *sep = i > 0 ? "; " : "";

                switch (a->type) {
                case PLAN_SIGNAL:
                        len += snprintf(buf + len, size - len, "%ssignal %s %s %s %s", sep, units[a->unit].name,
                                        level_to_string(a->level), signal_to_string(a->signal),
                                        signal_target_to_string(a->target));
                        break;
                case PLAN_SIGNAL_HELD:
                        len += snprintf(buf + len, size - len, "%sheld %s %s %s %s next=%" PRIu64 " interval=%" PRIu64
                                        " suppressed=%" PRIu64, sep, units[a->unit].name, level_to_string(a->level),
                                        signal_to_string(a->signal), plan_held_to_string(a->why), a->next_usec,
                                        a->interval_usec, a->suppressed);
                        break;
                case PLAN_KILL_SCAN:
                        len += snprintf(buf + len, size - len, "%skill-scan", sep);
                        if (a->for_stall && len < size)
                                len += snprintf(buf + len, size - len, " stall=%u", a->stall_permyriad);
                        for (size_t j = 0; j < plan.n_kill_units && len < size; j++)
                                len += snprintf(buf + len, size - len, " %s", units[plan.kill_units[j]].name);
                        if (plan.n_kill_units == 0 && len < size)
                                len += snprintf(buf + len, size - len, " -");
                        break;
                case PLAN_KILL_HELD:
                        len += snprintf(buf + len, size - len, "%skill-held %s next=%" PRIu64, sep,
                                        plan_held_to_string(a->why), a->next_usec);
                        break;
                default:
                        len += snprintf(buf + len, size - len, "%s?", sep);
                }
        }
        return buf;
}

#define CHECK_PLAN(units, n, scope, ev, expected)                                              \
        do {                                                                                   \
                LevelEvent _ev = (ev);                                                         \
                char _buf[4096];                                                               \
                size_t _n = plan_build(&(PlanInput) { (units), (n), (scope), &_ev }, &limit,   \
                                       &pacer, &plan);                                         \
                CHECK_EQ_INT(_n, plan.n_actions);                                              \
                CHECK_STREQ(describe((units), _buf, sizeof(_buf)), (expected));                \
        } while (0)

static void test_event_filter(void) {
        CHECK(!plan_event_wants_action(&(LevelEvent) { .previous = LEVEL_LOW, .level = LEVEL_NONE }));
        CHECK(plan_event_wants_action(&(LevelEvent) { .previous = LEVEL_NONE, .level = LEVEL_LOW }));
        CHECK(!plan_event_wants_action(&(LevelEvent) { .previous = LEVEL_LOW, .level = LEVEL_LOW, .repeat = true }));
        CHECK(plan_event_wants_action(&(LevelEvent) { .previous = LEVEL_OOM, .level = LEVEL_OOM, .repeat = true }));
        /* A fall is an event, but only OOM's kills come of it. */
        CHECK(plan_event_wants_action(&(LevelEvent) { .previous = LEVEL_OOM, .level = LEVEL_MEDIUM }));
}

/* HoldSec=0: LOW ↔ NONE every second; SignalIntervalSec=30s lets one
 * signal through per 30 s and says until when the others are held. */
static void test_flapping(void) {
        Policy p = policy("cache.service", "[Policy]\nSignalIntervalSec=30s\n[Low]\nSignal=SIGUSR1\n");
        PlanUnit u[] = { { "cache.service", "system.slice/cache.service", &p } };

        reset_state();
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_NONE, LEVEL_LOW, false, 0), "signal cache.service low SIGUSR1 main");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_LOW, LEVEL_NONE, false, 1 * SEC), "");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_NONE, LEVEL_LOW, false, 2 * SEC),
                   "held cache.service low SIGUSR1 signal-interval next=30000000 interval=30000000 suppressed=1");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_LOW, LEVEL_NONE, false, 3 * SEC), "");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_NONE, LEVEL_LOW, false, 29999999),
                   "held cache.service low SIGUSR1 signal-interval next=30000000 interval=30000000 suppressed=2");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_LOW, LEVEL_NONE, false, 30 * SEC), "");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_NONE, LEVEL_LOW, false, 30 * SEC),
                   "signal cache.service low SIGUSR1 main");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_NONE, LEVEL_LOW, false, 31 * SEC),
                   "held cache.service low SIGUSR1 signal-interval next=60000000 interval=30000000 suppressed=3");
        CHECK_EQ_U64(limit.suppressed, 3);
        /* A repeat of LOW is not a rise: nothing, and nothing counted. */
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_LOW, LEVEL_LOW, true, 32 * SEC), "");
        CHECK_EQ_U64(limit.suppressed, 3);
}

/* NONE → OOM in one event: the signals of LOW, MEDIUM and OOM in that
 * order (units in their order within a level), the kill decision last; a
 * fall signals nothing. */
static void test_jump_to_oom(void) {
        Policy db = policy("db.service", "[Policy]\nSignalIntervalSec=0\n"
                                         "[Low]\nSignal=SIGUSR1\n[Medium]\nSignal=SIGUSR2\nSignalTarget=all\n"
                                         "[OOM]\nKill=yes\n");
        Policy web = policy("web.service", "[Policy]\nSignalIntervalSec=0\n[Low]\nSignal=SIGHUP\n[OOM]\nSignal=SIGTERM\n");
        PlanUnit u[] = {
                { "db.service", NULL, &db },
                { "web.service", NULL, &web },
        };

        reset_state();
        CHECK_PLAN(u, 2, system_scope, event(LEVEL_NONE, LEVEL_OOM, false, 5 * SEC),
                   "signal db.service low SIGUSR1 main; signal web.service low SIGHUP main; "
                   "signal db.service medium SIGUSR2 all; signal web.service oom SIGTERM main; "
                   "kill-scan db.service");
        /* The order is the array's: signals before the kill, a level's before the next one's. */
        CHECK_EQ_INT(plan.actions[plan.n_actions - 1].type, PLAN_KILL_SCAN);
        /* LOW → MEDIUM: only what lies above LOW. */
        CHECK_PLAN(u, 2, system_scope, event(LEVEL_LOW, LEVEL_MEDIUM, false, 6 * SEC),
                   "signal db.service medium SIGUSR2 all");
        /* Falls are relief: no signal, no kill. */
        CHECK_PLAN(u, 2, system_scope, event(LEVEL_OOM, LEVEL_MEDIUM, false, 7 * SEC), "");
        CHECK_PLAN(u, 2, system_scope, event(LEVEL_MEDIUM, LEVEL_LOW, false, 8 * SEC), "");
        /* MEDIUM → OOM: OOM's signal, then the kill. */
        CHECK_PLAN(u, 2, system_scope, event(LEVEL_MEDIUM, LEVEL_OOM, false, 9 * SEC),
                   "signal web.service oom SIGTERM main; kill-scan db.service");
        /* No units: nothing at all, not even a kill decision. */
        CHECK_PLAN(u, 0, system_scope, event(LEVEL_NONE, LEVEL_OOM, false, 10 * SEC), "");
}

/* Scope=system policies act on the system's events, Scope=unit ones on
 * their own cgroup's, matched by path: a scope named like the unit but
 * elsewhere is not its. */
static void test_scopes(void) {
        const char *kill = "[Policy]\nSignalIntervalSec=0\n[Low]\nSignal=SIGUSR1\n[OOM]\nKill=yes\n";
        const char *kill_unit = "[Policy]\nScope=unit\nSignalIntervalSec=0\n[Low]\nSignal=SIGUSR1\n[OOM]\nKill=yes\n";
        Policy a = policy("a.service", kill), b = policy("b.service", kill), c = policy("c.service", kill_unit),
               d = policy("db.service", kill_unit), e = policy("e.service", kill_unit),
               n = policy("n.service", "[Policy]\nSignalIntervalSec=0\n[Low]\nSignal=SIGUSR1\n");
        PlanUnit u[] = {
                { "a.service", "/system.slice/a.service", &a },
                { "b.service", "app.slice/b.service", &b },
                { "c.service", "system.slice/c.service", &c },
                { "db.service", "other.slice/db.service", &d },
                { "e.service", NULL, &e },                     /* system.slice/e.service */
                { "n.service", NULL, &n },                     /* no Kill= */
        };
        PlanScope c_scope = { .cgroup = "/system.slice/c.service/" };
        PlanScope db_scope = { .cgroup = "system.slice/db.service" };  /* named db.service, not the unit's */
        PlanScope e_scope = { .cgroup = "system.slice/e.service" };

        reset_state();
        CHECK_PLAN(u, 6, system_scope, event(LEVEL_NONE, LEVEL_OOM, false, 1 * SEC),
                   "signal a.service low SIGUSR1 main; signal b.service low SIGUSR1 main; "
                   "signal n.service low SIGUSR1 main; kill-scan a.service b.service");
        reset_state();
        CHECK_PLAN(u, 6, c_scope, event(LEVEL_NONE, LEVEL_OOM, false, 1 * SEC),
                   "signal c.service low SIGUSR1 main; kill-scan c.service");
        reset_state();
        CHECK_PLAN(u, 6, db_scope, event(LEVEL_NONE, LEVEL_OOM, false, 1 * SEC), "kill-scan -");
        reset_state();
        CHECK_PLAN(u, 6, e_scope, event(LEVEL_NONE, LEVEL_OOM, false, 1 * SEC),
                   "signal e.service low SIGUSR1 main; kill-scan e.service");

        CHECK(plan_scope_covers(&system_scope, &u[0]));
        CHECK(!plan_scope_covers(&c_scope, &u[0]));
        CHECK(plan_scope_covers(&c_scope, &u[2]));
        CHECK(!plan_scope_covers(&system_scope, &u[2]));
        CHECK(!plan_scope_covers(&db_scope, &u[3]));
}

static Candidate cand(pid_t pid, uint64_t rss_mib) {
        return (Candidate) {
                .pid = pid,
                .ppid = 1,
                .starttime_ticks = 1000 + (uint64_t) pid,
                .rss_bytes = rss_mib * MiB,
                .comm = "worker",
        };
}

/* An OOM of reclaim inefficiency with memory left (the manager read the
 * headroom above the floor: a thrash) kills nothing, repeat or not; the
 * OOM signal still goes; the next OOM with memory gone kills at once. */
static void test_memory_left(void) {
        Policy db = policy("db.service", "[Policy]\nSignalIntervalSec=0\n[OOM]\nSignal=SIGTERM\nKill=yes\n");
        PlanUnit u[] = { { "db.service", NULL, &db } };
        LevelEvent ev;

        reset_state();
        ev = event(LEVEL_MEDIUM, LEVEL_OOM, false, 10 * SEC);
        ev.memory_left = true;
        CHECK_PLAN(u, 1, system_scope, ev, "signal db.service oom SIGTERM main; kill-held memory-left next=0");
        ev = event(LEVEL_OOM, LEVEL_OOM, true, 11 * SEC);
        ev.memory_left = true;
        CHECK_PLAN(u, 1, system_scope, ev, "kill-held memory-left next=0");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_OOM, LEVEL_OOM, true, 12 * SEC), "kill-scan db.service");
}

/* StallLimit=: a thrash (memory left) kills the units whose limit the
 * stall reached, over their own StallSec= average, and only them; no PSI
 * read, or below the limit: held as before. */
static void test_stall_limit(void) {
        Policy web = policy("web.service", "[OOM]\nKill=yes\nStallLimit=40%\n");
        Policy db = policy("db.service", "[OOM]\nKill=yes\nStallLimit=20%\nStallSec=1min\n");
        Policy plain = policy("plain.service", "[OOM]\nKill=yes\n");
        PlanUnit u[] = { { "web.service", NULL, &web }, { "db.service", NULL, &db }, { "plain.service", NULL, &plain } };
        LevelEvent ev;

        CHECK_EQ_INT(web.stall_limit_percent, 40);
        CHECK_EQ_U64(web.stall_usec, 10 * SEC);
        CHECK_EQ_U64(db.stall_usec, 60 * SEC);
        reset_state();
        ev = event(LEVEL_MEDIUM, LEVEL_OOM, false, 10 * SEC);
        ev.memory_left = true;
        /* Not read: held. */
        CHECK_PLAN(u, 3, system_scope, ev, "kill-held memory-left next=0");
        /* avg10 45 %, avg60 10 %: web's limit (40 % over 10 s) only. */
        ev.stall_known = true;
        ev.stall_full_permyriad[0] = 4500;
        ev.stall_full_permyriad[1] = 1000;
        CHECK_PLAN(u, 3, system_scope, ev, "kill-scan stall=4500 web.service");
        /* avg10 39.99 %, avg60 25 %: db's (20 % over 60 s) only. */
        reset_state();
        ev.stall_full_permyriad[0] = 3999;
        ev.stall_full_permyriad[1] = 2500;
        CHECK_PLAN(u, 3, system_scope, ev, "kill-scan stall=2500 db.service");
        /* Below both: held. */
        reset_state();
        ev.stall_full_permyriad[1] = 1999;
        CHECK_PLAN(u, 3, system_scope, ev, "kill-held memory-left next=0");
        /* Memory gone: every Kill=yes unit, as before, whatever the stall. */
        reset_state();
        CHECK_PLAN(u, 3, system_scope, event(LEVEL_OOM, LEVEL_OOM, true, 12 * SEC),
                   "kill-scan web.service db.service plain.service");
}

/* A unit with no process: nothing to kill, and the pause does not start
 * (the next OOM may kill at once). */
static void test_empty_unit(void) {
        Policy p = policy("db.service", "[OOM]\nKill=yes\n");
        PlanUnit u[] = { { "db.service", NULL, &p } };
        PlanVictim v;
        PlanKill k;

        reset_state();
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_MEDIUM, LEVEL_OOM, false, 10 * SEC), "kill-scan db.service");
        plan_victim_init(&v, SELF);
        plan_victim_offer(&v, u, 0, NULL, 0);
        CHECK_EQ_INT(plan_victim_decide(&v, u, &pacer, 10 * SEC, &k), PLAN_KILL_NONE);
        CHECK_STREQ(plan_kill_kind_to_string(k.kind), "none");
        CHECK_EQ_U64(k.n_seen, 0);
        CHECK_EQ_U64(k.n_eligible, 0);
        CHECK_EQ_U64(kill_pacer_next_usec(&pacer), 0);
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_OOM, LEVEL_OOM, true, 10 * SEC + 1), "kill-scan db.service");
}

/* Never PID 1, a kernel thread, the daemon, a process of an unmarked unit,
 * one with oom_score_adj -1000, nor a zombie; each is far larger than the
 * process that is chosen. */
static void test_never_chosen(void) {
        Policy marked = policy("db.service", "[OOM]\nKill=yes\nKillTarget=unit\n");
        Policy unmarked = policy("web.service", "[Low]\nSignal=SIGUSR1\n");
        PlanUnit u[] = {
                { "db.service", NULL, &marked },
                { "web.service", NULL, &unmarked },
        };
        Candidate bad[5], ok = cand(300, 1), table[8];
        size_t order[8];
        PlanBatch b;
        PlanVictim v;
        PlanKill k;

        bad[0] = cand(1, 9000);
        bad[1] = cand(2, 9000), bad[1].is_kernel_thread = true;
        bad[2] = cand(SELF, 9000);
        bad[3] = cand(5, 9000), bad[3].oom_score_adj = OOM_SCORE_ADJ_MIN;
        bad[4] = cand(6, 0);
        reset_state();
        plan_victim_init(&v, SELF);
        plan_victim_offer(&v, u, 0, bad, ELEMENTSOF(bad));
        {
                Candidate w = cand(400, 9000);      /* web.service's, Kill= unset */

                plan_victim_offer(&v, u, 1, &w, 1);
        }
        CHECK_EQ_INT(plan_victim_decide(&v, u, &pacer, 0, &k), PLAN_KILL_NONE);
        CHECK_EQ_U64(k.n_seen, 6);
        CHECK_EQ_U64(k.n_eligible, 0);
        plan_victim_offer(&v, u, 0, &ok, 1);
        CHECK_EQ_INT(plan_victim_decide(&v, u, &pacer, 0, &k), PLAN_KILL_UNIT);
        CHECK_EQ_INT(k.victim.pid, 300);
        CHECK_STREQ(k.victim.unit, "db.service");
        CHECK_EQ_INT(k.unit, 0);

        /* KillTarget=unit skips them too. */
        plan_batch_init(&b, &u[0], SELF, table, order, ELEMENTSOF(table));
        CHECK_EQ_INT(plan_batch_add(&b, bad, ELEMENTSOF(bad)), ELEMENTSOF(bad));
        CHECK_EQ_INT(plan_batch_add(&b, &ok, 1), 1);
        CHECK_EQ_INT(plan_batch_take(&b), 1);
        CHECK_EQ_INT(b.table[b.order[0]].pid, 300);
        CHECK_EQ_INT(plan_batch_take(&b), 0);
        CHECK_EQ_U64(b.n_batches, 1);
}

#define N_PROCS 10000
#define CHUNK 337
#define BATCH 1024

/* rss: all different, the largest in the middle of the stream. */
static Candidate big_unit_cand(size_t i) {
        Candidate c = cand((pid_t) (1000 + i), 0);

        c.rss_bytes = (i * 7919 % N_PROCS + 1) * 4096;
        if (i == 6543)
                c.rss_bytes = 512 * MiB;
        return c;
}

/* A unit of 10,000 processes (and PID 1, a kernel thread and the daemon
 * among them), fed in chunks of 337 as a scan would give them. */
static void test_ten_thousand(void) {
        Policy largest = policy("big.service", "[OOM]\nKill=yes\n");
        Policy whole = policy("big.service", "[OOM]\nKill=yes\nKillTarget=unit\n");
        PlanUnit u = { "big.service", NULL, &largest };
        static Candidate procs[N_PROCS + 3], table[BATCH];
        static size_t order[BATCH];
        static bool killed[N_PROCS];
        size_t n_killed = 0, n_wrong = 0, n_unordered = 0, sizes[16] = {}, n_takes = 0;
        PlanVictim v;
        PlanKill k;
        PlanBatch b;

        for (size_t i = 0; i < N_PROCS; i++)
                procs[i] = big_unit_cand(i);
        procs[N_PROCS] = cand(1, 4096);
        procs[N_PROCS + 1] = cand(2, 4096), procs[N_PROCS + 1].is_kernel_thread = true;
        procs[N_PROCS + 2] = cand(SELF, 4096);

        /* KillTarget=largest: the biggest, whatever the chunking. */
        for (size_t chunk = 1; chunk <= CHUNK; chunk += CHUNK - 1) {
                reset_state();
                plan_victim_init(&v, SELF);
                for (size_t i = 0; i < ELEMENTSOF(procs); i += chunk)
                        plan_victim_offer(&v, &u, 0, procs + i, MIN(chunk, ELEMENTSOF(procs) - i));
                CHECK_EQ_INT(plan_victim_decide(&v, &u, &pacer, 50 * SEC, &k), PLAN_KILL_LARGEST);
                CHECK_EQ_INT(k.victim.pid, 1000 + 6543);
                CHECK_EQ_U64(k.n_seen, N_PROCS + 3);
                CHECK_EQ_U64(k.n_eligible, N_PROCS);
                CHECK_EQ_U64(kill_pacer_next_usec(&pacer), 51 * SEC);
        }

        /* KillTarget=unit: every one of the 10,000, in batches of 1,024, each best first. */
        u.policy = &whole;
        plan_victim_init(&v, SELF);
        plan_victim_offer(&v, &u, 0, procs, ELEMENTSOF(procs));
        CHECK_EQ_INT(plan_victim_decide(&v, &u, &pacer, 60 * SEC, &k), PLAN_KILL_UNIT);
        CHECK_EQ_INT(k.victim.pid, 1000 + 6543);
        plan_batch_init(&b, &u, SELF, table, order, BATCH);
        for (size_t i = 0; i < ELEMENTSOF(procs) || b.n > 0;) {
                size_t m = 0, got;

                if (i < ELEMENTSOF(procs)) {
                        m = plan_batch_add(&b, procs + i, MIN((size_t) CHUNK, ELEMENTSOF(procs) - i));
                        i += m;
                }
                if (!plan_batch_full(&b) && i < ELEMENTSOF(procs))
                        continue;
                got = plan_batch_take(&b);
                if (n_takes < ELEMENTSOF(sizes))
                        sizes[n_takes] = got;
                n_takes++;
                for (size_t j = 0; j < got; j++) {
                        const Candidate *c = &b.table[b.order[j]];
                        size_t idx = (size_t) (c->pid - 1000);

                        if (c->pid < 1000 || idx >= N_PROCS || killed[idx])
                                n_wrong++;
                        else
                                killed[idx] = true, n_killed++;
                        if (j > 0 && victim_compare(&b.table[b.order[j - 1]], c) >= 0)
                                n_unordered++;
                        if (!streq_ptr(c->unit, "big.service"))
                                n_wrong++;
                }
        }
        CHECK_EQ_INT(n_killed, N_PROCS);
        CHECK_EQ_INT(n_wrong, 0);
        CHECK_EQ_INT(n_unordered, 0);
        CHECK_EQ_INT(n_takes, 10);
        CHECK_EQ_U64(b.n_batches, 10);
        CHECK_EQ_U64(b.n_picked, N_PROCS);
        for (size_t j = 0; j < 9; j++)
                CHECK_EQ_INT(sizes[j], BATCH);
        CHECK_EQ_INT(sizes[9], N_PROCS - 9 * BATCH);
        /* Nothing left: an empty take is no batch. */
        CHECK_EQ_INT(plan_batch_take(&b), 0);
        CHECK_EQ_U64(b.n_batches, 10);
}

/* OOM repeats: no signal again, a kill only after the pause (1 s) since the
 * victim was chosen; a repeat within it is held back and says until when. */
static void test_oom_repeats(void) {
        Policy p = policy("db.service", "[Policy]\nSignalIntervalSec=0\n[OOM]\nSignal=SIGTERM\nKill=yes\n");
        PlanUnit u[] = { { "db.service", NULL, &p } };
        Candidate c = cand(77, 100);
        PlanVictim v;
        PlanKill k;

        reset_state();
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_MEDIUM, LEVEL_OOM, false, 100 * SEC),
                   "signal db.service oom SIGTERM main; kill-scan db.service");
        plan_victim_init(&v, SELF);
        plan_victim_offer(&v, u, 0, &c, 1);
        CHECK_EQ_INT(plan_victim_decide(&v, u, &pacer, 100 * SEC, &k), PLAN_KILL_LARGEST);
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_OOM, LEVEL_OOM, true, 100 * SEC + 500000),
                   "kill-held kill-pause next=101000000");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_OOM, LEVEL_OOM, true, 101 * SEC - 1),
                   "kill-held kill-pause next=101000000");
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_OOM, LEVEL_OOM, true, 101 * SEC), "kill-scan db.service");
        /* A repeat never signals, whatever it says it came from. */
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_MEDIUM, LEVEL_OOM, true, 101 * SEC), "kill-scan db.service");
        /* An event older than the last kill (read late) may not kill either. */
        plan_victim_init(&v, SELF);
        plan_victim_offer(&v, u, 0, &c, 1);
        CHECK_EQ_INT(plan_victim_decide(&v, u, &pacer, 101 * SEC, &k), PLAN_KILL_LARGEST);
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_OOM, LEVEL_OOM, true, 100 * SEC),
                   "kill-held kill-pause next=102000000");
        /* A new rise to OOM is paced as well, and its signal goes. */
        CHECK_PLAN(u, 1, system_scope, event(LEVEL_MEDIUM, LEVEL_OOM, false, 101 * SEC + 1),
                   "signal db.service oom SIGTERM main; kill-held kill-pause next=102000000");
}

/* The worst case fits: 512 units each with a signal at LOW, MEDIUM and
 * OOM, a jump from NONE to OOM, and Kill=yes on all of them. */
static void test_capacity(void) {
        static char names[PLAN_UNITS_MAX][32];
        static PlanUnit u[PLAN_UNITS_MAX];
        Policy p = policy("x.service", "[Policy]\nSignalIntervalSec=0\n[Low]\nSignal=SIGUSR1\n"
                                       "[Medium]\nSignal=SIGUSR2\n[OOM]\nSignal=SIGTERM\nKill=yes\n");
        LevelEvent ev = event(LEVEL_NONE, LEVEL_OOM, false, 1);

        for (size_t i = 0; i < PLAN_UNITS_MAX; i++) {
                (void) snprintf(names[i], sizeof(names[i]), "u%zu.service", i);
                u[i] = (PlanUnit) { names[i], NULL, &p };
        }
        reset_state();
        CHECK_EQ_INT(plan_build(&(PlanInput) { u, PLAN_UNITS_MAX, system_scope, &ev }, &limit, &pacer, &plan),
                     PLAN_ACTIONS_MAX);
        CHECK_EQ_INT(plan.n_kill_units, PLAN_UNITS_MAX);
        CHECK_EQ_INT(plan.actions[0].level, LEVEL_LOW);
        CHECK_EQ_INT(plan.actions[PLAN_UNITS_MAX].level, LEVEL_MEDIUM);
        CHECK_EQ_INT(plan.actions[2 * PLAN_UNITS_MAX].level, LEVEL_OOM);
        CHECK_EQ_INT(plan.actions[PLAN_ACTIONS_MAX - 1].type, PLAN_KILL_SCAN);
        CHECK_STREQ(u[plan.actions[PLAN_UNITS_MAX - 1].unit].name, "u511.service");
}

/* A dry run gets the same plan (the plan knows no ActionOps); only the
 * execution differs: the dry-run ops leave the victim alive, the real ones
 * kill it. The victim is a child of this test. */
static void test_dry_run(void) {
        Policy p = policy("db.service", "[OOM]\nKill=yes\n");
        PlanUnit u[] = { { "db.service", NULL, &p } };
        LevelEvent ev = event(LEVEL_MEDIUM, LEVEL_OOM, false, 5 * SEC);
        static Plan first;
        _cleanup_(action_context_freep) ActionContext *ctx = NULL;
        PlanKill k_dry, k_real;
        PlanVictim v;
        ProcStat st;
        Candidate c;
        KillRequest req;
        KillResult res;
        int status = 0, r;
        pid_t child;

        child = fork();
        if (child == 0) {
                pause();
                _exit(0);
        }
        CHECK(child > 0);
        CHECK_EQ_INT(action_context_new(SELF, NULL, &ctx), 0);
        CHECK_EQ_INT(proc_read_stat(ctx->proc_root, child, &st), 0);
        c = cand(child, 64);
        c.starttime_ticks = st.starttime_ticks;

        /* Same inputs, same state: byte for byte the same plan and choice. */
        reset_state();
        (void) plan_build(&(PlanInput) { u, 1, system_scope, &ev }, &limit, &pacer, &plan);
        first = plan;
        plan_victim_init(&v, SELF);
        plan_victim_offer(&v, u, 0, &c, 1);
        (void) plan_victim_decide(&v, u, &pacer, ev.timestamp_usec, &k_dry);
        reset_state();
        (void) plan_build(&(PlanInput) { u, 1, system_scope, &ev }, &limit, &pacer, &plan);
        plan_victim_init(&v, SELF);
        plan_victim_offer(&v, u, 0, &c, 1);
        (void) plan_victim_decide(&v, u, &pacer, ev.timestamp_usec, &k_real);
        CHECK(memcmp(&first, &plan, sizeof(plan)) == 0);
        CHECK_EQ_INT(k_dry.kind, PLAN_KILL_LARGEST);
        CHECK(memcmp(&k_dry, &k_real, sizeof(k_dry)) == 0);

        req = (KillRequest) { .pid = k_dry.victim.pid, .starttime_ticks = k_dry.victim.starttime_ticks,
                              .unit = k_dry.victim.unit, .comm = k_dry.victim.comm,
                              .rss_bytes = k_dry.victim.rss_bytes, .reason = "test" };
        CHECK_EQ_INT(action_ops_dry_run.kill_process(ctx, &req, &res), 0);
        CHECK_EQ_INT(kill(child, 0), 0);        /* still there */
        r = action_ops_real.kill_process(ctx, &req, &res);
        if (r == -ENOSYS) {
                /* valgrind 3.19 has no pidfd_open() (syscall 434); the real
                 * kill is the action-kill test's, natively. */
                fprintf(stderr, "pidfd_open() not available here: not checking the real kill\n");
                (void) kill(child, SIGKILL);
        } else
                CHECK_EQ_INT(r, 1);
        CHECK_EQ_INT(waitpid(child, &status, 0), child);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

int main(void) {
        test_event_filter();
        test_flapping();
        test_jump_to_oom();
        test_scopes();
        test_empty_unit();
        test_memory_left();
        test_stall_limit();
        test_never_chosen();
        test_ten_thousand();
        test_oom_repeats();
        test_capacity();
        test_dry_run();
        return test_exit("test-responder");
}
