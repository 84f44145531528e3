/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <time.h>

#include "action.h"
#include "tests.h"
#include "victim.h"

#define SELF 4242
#define MiB (UINT64_C(1) << 20)

/* A marked, ordinary process of "db.service". */
static Candidate cand(pid_t pid, uint64_t rss_mib) {
        return (Candidate) {
                .pid = pid,
                .ppid = 1,
                .starttime_ticks = 1000 + (uint64_t) pid,
                .rss_bytes = rss_mib * MiB,
                .unit = "db.service",
                .unit_marked_killable = true,
                .comm = "postgres",
        };
}

typedef struct SelectCase {
        const char *name;
        Candidate c[6];
        size_t n;
        int expected;           /* index, or -ESRCH */
} SelectCase;

static void test_select_table(void) {
        SelectCase cases[] = {
                { "largest wins", { cand(10, 100), cand(11, 300), cand(12, 200) }, 3, 1 },
                { "empty", {}, 0, -ESRCH },
                { "single", { cand(10, 1) }, 1, 0 },
        };
        SelectCase rules[8];
        size_t n_rules = 0;
        Candidate c;

        /* Each rule: the largest is the one that must be skipped; index 1 is the answer. */
        c = cand(1, 900);
        rules[n_rules++] = (SelectCase) { "never PID 1", { c, cand(20, 50) }, 2, 1 };
        c = cand(30, 900);
        c.is_kernel_thread = true;
        rules[n_rules++] = (SelectCase) { "never a kernel thread", { c, cand(31, 50) }, 2, 1 };
        c = cand(SELF, 900);
        rules[n_rules++] = (SelectCase) { "never the daemon", { c, cand(41, 50) }, 2, 1 };
        c = cand(50, 900);
        c.unit = "web.service";
        c.unit_marked_killable = false;
        rules[n_rules++] = (SelectCase) { "never an unmarked unit", { c, cand(51, 50) }, 2, 1 };
        c = cand(60, 900);
        c.oom_score_adj = -1000;
        rules[n_rules++] = (SelectCase) { "never oom_score_adj -1000", { c, cand(61, 50) }, 2, 1 };
        c = cand(70, 0);
        c.oom_score_adj = 1000;
        rules[n_rules++] = (SelectCase) { "never RSS 0 (zombie)", { c, cand(71, 1) }, 2, 1 };
        c = cand(-5, 900);
        rules[n_rules++] = (SelectCase) { "never a bad pid", { c, cand(81, 1) }, 2, 1 };
        c = cand(90, 900);
        c.unit_marked_killable = false;
        rules[n_rules++] = (SelectCase) { "nothing eligible", { c, cand(1, 5), cand(SELF, 5) }, 3, -ESRCH };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int r = victim_select(cases[i].c, cases[i].n, SELF);
                if (r != cases[i].expected)
                        fprintf(stderr, "case '%s'\n", cases[i].name);
                CHECK_EQ_INT(r, cases[i].expected);
        }
        for (size_t i = 0; i < n_rules; i++) {
                int r = victim_select(rules[i].c, rules[i].n, SELF);
                if (r != rules[i].expected)
                        fprintf(stderr, "rule '%s'\n", rules[i].name);
                CHECK_EQ_INT(r, rules[i].expected);
        }
}

static void test_verdicts(void) {
        Candidate c = cand(100, 10);

        CHECK_EQ_INT(victim_check(&c, SELF), VICTIM_OK);
        c.pid = 1;
        CHECK_EQ_INT(victim_check(&c, SELF), VICTIM_PID1);
        c.pid = SELF;
        CHECK_EQ_INT(victim_check(&c, SELF), VICTIM_SELF);
        c.pid = 0;
        CHECK_EQ_INT(victim_check(&c, SELF), VICTIM_BAD_PID);
        c = cand(100, 10);
        c.is_kernel_thread = true;
        c.unit_marked_killable = false;
        CHECK_EQ_INT(victim_check(&c, SELF), VICTIM_KERNEL_THREAD);    /* the absolute rule is named */
        CHECK_STREQ(victim_verdict_to_string(VICTIM_KERNEL_THREAD), "kernel-thread");
        CHECK_STREQ(victim_verdict_to_string(VICTIM_UNMARKED), "unmarked");
        CHECK(victim_verdict_to_string(_VICTIM_VERDICT_MAX) == NULL);
        CHECK(victim_verdict_to_string(-1) == NULL);
}

/* Ties broken the same way whatever the order of the array. */
static void test_ties(void) {
        Candidate base[4] = { cand(10, 100), cand(11, 100), cand(12, 100), cand(13, 100) };
        static const int perms[][4] = {
                { 0, 1, 2, 3 }, { 3, 2, 1, 0 }, { 1, 3, 0, 2 }, { 2, 0, 3, 1 }, { 1, 0, 2, 3 },
        };
        Candidate arr[4];
        int r;

        /* equal RSS: the higher oom_score_adj */
        base[2].oom_score_adj = 500;
        for (size_t p = 0; p < ELEMENTSOF(perms); p++) {
                for (size_t i = 0; i < 4; i++)
                        arr[i] = base[perms[p][i]];
                r = victim_select(arr, 4, SELF);
                CHECK(r >= 0 && arr[r].pid == 12);
        }
        /* equal RSS and adj: the younger (later start) */
        base[2].oom_score_adj = 0;
        base[0].starttime_ticks = 99999;
        for (size_t p = 0; p < ELEMENTSOF(perms); p++) {
                for (size_t i = 0; i < 4; i++)
                        arr[i] = base[perms[p][i]];
                r = victim_select(arr, 4, SELF);
                CHECK(r >= 0 && arr[r].pid == 10);
        }
        /* all equal but the pid: the higher pid */
        for (size_t i = 0; i < 4; i++)
                base[i].starttime_ticks = 7;
        for (size_t p = 0; p < ELEMENTSOF(perms); p++) {
                for (size_t i = 0; i < 4; i++)
                        arr[i] = base[perms[p][i]];
                r = victim_select(arr, 4, SELF);
                CHECK(r >= 0 && arr[r].pid == 13);
        }
        /* RSS beats everything else */
        base[0].rss_bytes += 1;
        base[3].oom_score_adj = 1000;
        r = victim_select(base, 4, SELF);
        CHECK_EQ_INT(r, 0);
        CHECK(victim_compare(&base[0], &base[0]) == 0);
        CHECK(victim_compare(&base[0], &base[1]) < 0 && victim_compare(&base[1], &base[0]) > 0);
}

static void test_select_unit(void) {
        Candidate c[7] = {
                cand(10, 30), cand(11, 10), cand(12, 50), cand(13, 20), cand(1, 99), cand(14, 40), cand(15, 60),
        };
        size_t idx[8], eligible = 0;

        c[5].unit = "web.service";      /* another unit */
        c[6].is_kernel_thread = true;
        CHECK_EQ_INT(victim_select_unit(c, 7, "db.service", SELF, idx, 8, &eligible), 4);
        CHECK_EQ_INT(eligible, 4);
        CHECK_EQ_INT(c[idx[0]].pid, 12);
        CHECK_EQ_INT(c[idx[1]].pid, 10);
        CHECK_EQ_INT(c[idx[2]].pid, 13);
        CHECK_EQ_INT(c[idx[3]].pid, 11);
        /* room for 2: the best 2 stored and returned, the rest counted only */
        idx[2] = 777;
        CHECK_EQ_INT(victim_select_unit(c, 7, "db.service", SELF, idx, 2, &eligible), 2);
        CHECK_EQ_INT(eligible, 4);
        CHECK_EQ_INT(c[idx[0]].pid, 12);
        CHECK_EQ_INT(c[idx[1]].pid, 10);
        CHECK_EQ_INT(idx[2], 777);
        CHECK_EQ_INT(victim_select_unit(c, 7, "web.service", SELF, idx, 8, NULL), 1);
        CHECK_EQ_INT(c[idx[0]].pid, 14);
        CHECK_EQ_INT(victim_select_unit(c, 7, "none.service", SELF, idx, 8, &eligible), 0);
        CHECK_EQ_INT(eligible, 0);
        CHECK_EQ_INT(victim_select_unit(c, 7, "db.service", SELF, NULL, 0, &eligible), 0);
        CHECK_EQ_INT(eligible, 4);
        CHECK_EQ_INT(victim_select_unit(c, 7, "db.service", SELF, NULL, 8, &eligible), 0);
}

/* More processes than room (the responder's batches): what is returned
 * never exceeds the room, is the best of all, best first; 1,100 of one
 * unit into 1,024 as the responder's table had it. */
static void test_select_unit_more_than_room(void) {
        enum { N = 1100, ROOM = 1024 };
        Candidate *c = calloc(N + 1, sizeof(*c));
        size_t *idx = calloc(ROOM + 1, sizeof(*idx)), eligible = 0, k;
        unsigned seed = 11;

        CHECK(c && idx);
        if (!c || !idx)
                return;
        for (size_t i = 0; i < N; i++)
                c[i] = cand((pid_t) (100 + i), (uint64_t) (rand_r(&seed) % 5000));
        idx[ROOM] = 4242;               /* a guard just past the room */
        k = victim_select_unit(c, N, "db.service", SELF, idx, ROOM, &eligible);
        CHECK_EQ_INT(k, ROOM);
        CHECK_EQ_INT(eligible, N);
        CHECK_EQ_INT(idx[ROOM], 4242);
        for (size_t j = 1; j < k; j++)
                CHECK(victim_compare(&c[idx[j - 1]], &c[idx[j]]) < 0);
        /* the N - ROOM left out are each worse than the last one kept */
        {
                size_t worse_than_last = 0;

                for (size_t i = 0; i < N; i++)
                        if (victim_compare(&c[i], &c[idx[k - 1]]) > 0)
                                worse_than_last++;
                CHECK_EQ_INT(worse_than_last, N - ROOM);
        }
        CHECK_EQ_INT(idx[0], (size_t) victim_select(c, N, SELF));
        free(c);
        free(idx);
}

/* The streaming choice equals victim_select()'s whatever the order. */
static void test_best_stream(void) {
        Candidate c[6] = { cand(10, 30), cand(11, 90), cand(12, 90), cand(1, 999), cand(SELF, 999), cand(13, 5) };
        static const int orders[][6] = { { 0, 1, 2, 3, 4, 5 }, { 5, 4, 3, 2, 1, 0 }, { 2, 0, 4, 1, 5, 3 } };
        VictimBest b;
        int v;

        c[2].oom_score_adj = 100;       /* ties 11 on RSS, wins on adj */
        c[5].unit_marked_killable = false;
        v = victim_select(c, 6, SELF);
        CHECK_EQ_INT(v, 2);
        for (size_t o = 0; o < ELEMENTSOF(orders); o++) {
                victim_best_init(&b);
                for (size_t i = 0; i < 6; i++)
                        (void) victim_best_offer(&b, &c[orders[o][i]], SELF);
                CHECK(b.found);
                CHECK_EQ_INT(b.best.pid, 12);
                CHECK_EQ_U64(b.n_seen, 6);
                CHECK_EQ_U64(b.n_eligible, 3);
        }
        victim_best_init(&b);
        CHECK(!victim_best_offer(&b, &c[3], SELF));     /* PID 1 */
        CHECK(!victim_best_offer(&b, &c[5], SELF));     /* unmarked */
        CHECK(!b.found);
        CHECK(victim_best_offer(&b, &c[0], SELF));
        CHECK(!victim_best_offer(&b, &c[0], SELF));     /* the same record is not better than itself */
        CHECK(victim_best_offer(&b, &c[1], SELF));
}

/* With victim_best_skip() before each offer (what stat alone says), the
 * choice is still victim_select()'s in any order: an equal RSS is not
 * skipped (its oom_score_adj may win), a smaller one is, and so are
 * PID 1, the daemon and empty processes. */
static void test_best_skip(void) {
        Candidate c[7] = { cand(10, 30), cand(11, 90), cand(12, 90), cand(1, 999), cand(SELF, 999), cand(13, 5),
                           cand(14, 0) };
        static const int orders[][7] = { { 0, 1, 2, 3, 4, 5, 6 }, { 6, 5, 4, 3, 2, 1, 0 }, { 2, 0, 4, 1, 6, 5, 3 } };
        VictimBest b;

        c[2].oom_score_adj = 100;       /* ties 11 on RSS, wins on adj */
        CHECK_EQ_INT(victim_select(c, 7, SELF), 2);
        for (size_t o = 0; o < ELEMENTSOF(orders); o++) {
                size_t skipped = 0;

                victim_best_init(&b);
                for (size_t i = 0; i < 7; i++) {
                        Candidate partial = c[orders[o][i]];

                        partial.oom_score_adj = 0;      /* not read yet */
                        if (victim_best_skip(&b, &partial, SELF)) {
                                skipped++;
                                continue;
                        }
                        (void) victim_best_offer(&b, &c[orders[o][i]], SELF);
                }
                CHECK(b.found);
                CHECK_EQ_INT(b.best.pid, 12);
                CHECK_EQ_U64(b.n_seen, 7);
                CHECK(skipped >= 3);    /* PID 1, the daemon, the empty one */
        }
        /* Order 0: 10 (30), then 11 and 12 (90, equal: both read), then 13 (5) is smaller. */
        victim_best_init(&b);
        (void) victim_best_offer(&b, &c[1], SELF);
        CHECK(!victim_best_skip(&b, &c[2], SELF));
        CHECK(victim_best_skip(&b, &c[0], SELF));
        CHECK(victim_best_skip(&b, &c[5], SELF));
}

static void test_main_process(void) {
        size_t scratch[8];
        Candidate c[6];

        /* 100 (main) → 101 → 102; 103 was reparented to PID 1 later (newer) */
        c[0] = cand(101, 5); c[0].ppid = 100; c[0].starttime_ticks = 20;
        c[1] = cand(102, 5); c[1].ppid = 101; c[1].starttime_ticks = 30;
        c[2] = cand(100, 1); c[2].ppid = 1;   c[2].starttime_ticks = 10;
        c[3] = cand(103, 5); c[3].ppid = 1;   c[3].starttime_ticks = 40;
        CHECK_EQ_INT(victim_main_process(c, 4, SELF, scratch), 2);
        CHECK_EQ_INT(victim_main_process(c, 4, SELF, NULL), 2);
        /* the main process gone: the oldest remaining root */
        CHECK_EQ_INT(victim_main_process(c, 2, SELF, scratch), 0);
        c[3].starttime_ticks = 5;
        CHECK_EQ_INT(victim_main_process(c, 4, SELF, scratch), 3);
        /* two roots started in the same tick: the lower pid */
        c[3].starttime_ticks = 10;
        CHECK_EQ_INT(victim_main_process(c, 4, SELF, scratch), 2);
        /* never the daemon, PID 1 or a kernel thread */
        c[2].pid = SELF;
        c[0].ppid = 99;         /* 101 is a root now, but younger than 103 */
        CHECK_EQ_INT(victim_main_process(c, 4, SELF, scratch), 3);
        c[3].pid = 1;
        CHECK_EQ_INT(victim_main_process(c, 4, SELF, scratch), 0);
        c[0].is_kernel_thread = true;
        CHECK_EQ_INT(victim_main_process(c, 4, SELF, scratch), -ESRCH);
        CHECK_EQ_INT(victim_main_process(c, 0, SELF, scratch), -ESRCH);
}

/* The pause after a kill: pure, time handed in. */
static void test_pacer(void) {
        KillPacer p;

        kill_pacer_init(&p, KILL_PAUSE_DEFAULT_USEC);
        CHECK(kill_pacer_may_kill(&p, 0));
        CHECK_EQ_U64(kill_pacer_next_usec(&p), 0);
        kill_pacer_record(&p, 10 * USEC_PER_SEC);
        CHECK(!kill_pacer_may_kill(&p, 10 * USEC_PER_SEC));
        CHECK(!kill_pacer_may_kill(&p, 10 * USEC_PER_SEC + KILL_PAUSE_DEFAULT_USEC - 1));
        CHECK(kill_pacer_may_kill(&p, 10 * USEC_PER_SEC + KILL_PAUSE_DEFAULT_USEC));
        /* an event from before the kill never kills again */
        CHECK(!kill_pacer_may_kill(&p, 9 * USEC_PER_SEC));
        CHECK_EQ_U64(kill_pacer_next_usec(&p), 10 * USEC_PER_SEC + KILL_PAUSE_DEFAULT_USEC);
        /* recording an older time does not shorten the pause */
        kill_pacer_record(&p, 5 * USEC_PER_SEC);
        CHECK_EQ_U64(kill_pacer_next_usec(&p), 10 * USEC_PER_SEC + KILL_PAUSE_DEFAULT_USEC);
        /* no overflow at the end of time */
        kill_pacer_init(&p, USEC_INFINITY);
        kill_pacer_record(&p, 1);
        CHECK(!kill_pacer_may_kill(&p, USEC_INFINITY - 1));
        kill_pacer_init(&p, 0);
        kill_pacer_record(&p, 1);
        CHECK(kill_pacer_may_kill(&p, 1));
}

/* bench-victim measures 10,000 processes; this keeps an eye on the choice alone. */
static void test_select_many(void) {
        size_t n = 10000;
        Candidate *c = calloc(n, sizeof(*c));
        struct timespec a, b;
        unsigned seed = 7;
        int r;

        for (size_t i = 0; i < n; i++) {
                c[i] = cand((pid_t) (100 + i), (uint64_t) (rand_r(&seed) % 1000));
                c[i].unit_marked_killable = i % 3 != 0;
        }
        c[4321].rss_bytes = 5000 * MiB;
        c[4323].rss_bytes = 6000 * MiB;
        c[4323].unit_marked_killable = false;
        (void) clock_gettime(CLOCK_MONOTONIC, &a);
        r = victim_select(c, n, SELF);
        (void) clock_gettime(CLOCK_MONOTONIC, &b);
        CHECK_EQ_INT(r, 4321);
        fprintf(stderr, "victim_select over %zu candidates: %ld µs\n", n,
                (long) ((b.tv_sec - a.tv_sec) * 1000000 + (b.tv_nsec - a.tv_nsec) / 1000));
        free(c);
}

int main(void) {
        test_select_table();
        test_verdicts();
        test_ties();
        test_select_unit();
        test_select_unit_more_than_room();
        test_best_stream();
        test_best_skip();
        test_main_process();
        test_pacer();
        test_select_many();
        return test_exit("test-victim");
}
