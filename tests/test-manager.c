/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The manager's scope table, on a fake cgroup2 tree in a temporary directory
 * (the vmstat source watches a directory with a memory.stat and a
 * cgroup.procs): a cgroup that does not exist takes no slot and is watched
 * once it appears; reaching the bound is an error, reported, and the
 * refused cgroup is watched as soon as a slot is free. On a hybrid layout
 * a cgroup in cgroup2 alone waits for its v1 memory directory (up to
 * 500 ms), whether it is asked for or comes back. The listeners of an
 * announcement run by phase (the responder's actions before the bus's
 * signals), whatever the order they were registered in, and the actions
 * hook runs after the dispatch that recorded actions. The --print-events
 * lines of an announcement come level line first. */

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "manager-internal.h"
#include "tests.h"

static char root[] = "/tmp/test-manager-XXXXXX";

static void put(const char *cg, const char *file, const char *text) {
        char path[PATH_MAX];
        int fd;

        (void) snprintf(path, sizeof(path), "%s/%s/%s", root, cg, file);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        if (fd < 0)
                return;
        CHECK(write(fd, text, strlen(text)) == (ssize_t) strlen(text));
        (void) close(fd);
}

static void make_cgroup(const char *cg) {
        char path[PATH_MAX];

        (void) snprintf(path, sizeof(path), "%s/%s", root, cg);
        CHECK(mkdir(path, 0755) == 0);
        put(cg, "memory.stat", "anon 0\nfile 0\npgscan 0\npgsteal 0\n");
        put(cg, "cgroup.procs", "");
}

/* As the kernel does on rmdir: reads fail (here: nothing to parse) and
 * cgroup.procs is no more. */
static void remove_cgroup(const char *cg) {
        char path[PATH_MAX];

        put(cg, "memory.stat", "");
        (void) snprintf(path, sizeof(path), "%s/%s/cgroup.procs", root, cg);
        CHECK(unlink(path) == 0);
        (void) snprintf(path, sizeof(path), "%s/%s/memory.stat", root, cg);
        CHECK(unlink(path) == 0);
        (void) snprintf(path, sizeof(path), "%s/%s", root, cg);
        CHECK(rmdir(path) == 0);
}

static const Unwatched *find_unwatched(const Manager *m, const char *cg) {
        for (size_t i = 0; i < m->n_unwatched; i++)
                if (streq(m->unwatched[i].cgroup, cg))
                        return &m->unwatched[i];
        return NULL;
}

static bool watched(Manager *m, const char *cg) {
        for (size_t i = 0; i < m->n_scopes; i++)
                if (streq(m->scopes[i]->cgroup, cg) && !m->scopes[i]->gone)
                        return true;
        return false;
}

/* Runs the loop until pred holds or timeout_usec passed. */
static bool run_until(Manager *m, bool (*pred)(Manager *m), usec_t timeout_usec) {
        usec_t end = source_now_usec() + timeout_usec;

        while (!pred(m) && source_now_usec() < end)
                (void) sd_event_run(m->event, 50 * USEC_PER_MSEC);
        return pred(m);
}

static bool a_freed(Manager *m) {
        const Unwatched *u = find_unwatched(m, "a");
        return m->n_scopes == 3 && u && u->reason == UNWATCHED_ABSENT;
}

static bool d_watched(Manager *m) {
        return watched(m, "d");
}

static bool late_watched(Manager *m) {
        return watched(m, "late");
}

static bool late2_watched(Manager *m) {
        return watched(m, "late2");
}

static void test_scope_table(void) {
        _cleanup_(manager_freep) Manager *m = NULL;
        char name[32];
        Config c;
        Scope *s;

        config_init(&c);
        c.params.poll.fault_wake = false;   /* the real counters: tests/test-fault-wake.c */
        c.source = SOURCE_VMSTAT;
        c.params.poll.idle_usec = 20 * USEC_PER_MSEC;
        c.params.poll.busy_usec = 20 * USEC_PER_MSEC;
        CHECK_EQ_INT(manager_new(&c, false, &m), 0);
        if (!m)
                return;
        (void) snprintf(m->env.cgroup2_root, sizeof(m->env.cgroup2_root), "%s", root);
        m->env.memcg_v1_root[0] = '\0';
        CHECK_EQ_INT(m->scopes_max, MANAGER_SCOPES_MAX);
        CHECK(MANAGER_SCOPES_MAX >= 1024);
        m->scopes_max = 4;      /* -.slice and three */
        CHECK_EQ_INT(manager_start(m), 0);
        CHECK_EQ_INT(m->n_scopes, 1);

        /* 50 cgroups that do not exist: remembered, no slot taken. */
        for (int i = 0; i < 50; i++) {
                (void) snprintf(name, sizeof(name), "absent-%02d", i);
                CHECK_EQ_INT(manager_watch(m, name, &s), 1);
                CHECK(s == NULL);
        }
        CHECK_EQ_INT(m->n_scopes, 1);
        CHECK_EQ_INT(manager_count_unwatched(m, UNWATCHED_ABSENT), 50);
        CHECK_EQ_INT(manager_watch(m, "absent-07", NULL), 0);  /* wanted already */
        CHECK_EQ_INT(m->n_unwatched, 50);

        /* Three real ones fill the table; the fourth and fifth are refused, and listed. */
        make_cgroup("a");
        make_cgroup("b");
        make_cgroup("c");
        make_cgroup("d");
        make_cgroup("e");
        CHECK_EQ_INT(manager_watch(m, "a", &s), 1);
        CHECK(s && streq(s->cgroup, "a") && s->source_type == SOURCE_VMSTAT);
        CHECK_EQ_INT(manager_watch(m, "b", NULL), 1);
        CHECK_EQ_INT(manager_watch(m, "c", NULL), 1);
        CHECK_EQ_INT(manager_watch(m, "a", NULL), 0);          /* the same scope again */
        CHECK_EQ_INT(m->n_scopes, 4);
        CHECK_EQ_INT(manager_watch(m, "d", &s), -E2BIG);
        CHECK(s == NULL);
        CHECK_EQ_INT(manager_watch(m, "e", NULL), -E2BIG);
        CHECK_EQ_INT(m->n_scopes, 4);
        CHECK(find_unwatched(m, "d") && find_unwatched(m, "d")->reason == UNWATCHED_TABLE_FULL);
        CHECK_EQ_INT(manager_count_unwatched(m, UNWATCHED_TABLE_FULL), 2);
        CHECK_STREQ(unwatched_reason_to_string(UNWATCHED_TABLE_FULL), "table-full");
        CHECK(manager_find_scope(m, "d") == NULL);

        /* a goes away: its slot is freed, a is remembered as absent, and d
         * (first in line) gets the slot at the next look, e still waits. */
        remove_cgroup("a");
        CHECK(run_until(m, a_freed, 2 * USEC_PER_SEC));
        CHECK(run_until(m, d_watched, 4 * USEC_PER_SEC));
        CHECK(manager_find_scope(m, "d") != NULL);
        CHECK(find_unwatched(m, "d") == NULL);
        CHECK_EQ_INT(m->n_scopes, 4);
        CHECK(find_unwatched(m, "e") && find_unwatched(m, "e")->reason == UNWATCHED_TABLE_FULL);

        /* A cgroup that appears after it was asked for is watched without a
         * new manager_watch(). */
        m->scopes_max = 6;
        CHECK_EQ_INT(manager_watch(m, "late", &s), 1);
        CHECK(s == NULL);
        CHECK(find_unwatched(m, "late") && find_unwatched(m, "late")->reason == UNWATCHED_ABSENT);
        make_cgroup("late");
        CHECK(run_until(m, late_watched, 5 * USEC_PER_SEC));
        CHECK(find_unwatched(m, "late") == NULL);
        /* e had waited for a slot: there is one now. */
        CHECK(watched(m, "e"));
        CHECK_EQ_INT(manager_count_unwatched(m, UNWATCHED_TABLE_FULL), 0);
        CHECK_EQ_INT(m->n_scopes, 6);

        /* With only absent cgroups waiting no timer runs: inotify on their
         * parent wakes the daemon when one is made. */
        m->scopes_max = 7;
        CHECK_EQ_INT(manager_watch(m, "late2", &s), 1);
        CHECK(manager_count_unwatched(m, UNWATCHED_ABSENT) > 0);
        CHECK_EQ_INT(manager_count_unwatched(m, UNWATCHED_TABLE_FULL), 0);
        CHECK(m->n_rewatch_wds > 0);
        CHECK(m->rewatch_timer != NULL);
        CHECK_EQ_INT(sd_event_source_get_enabled(m->rewatch_timer, NULL), 0);  /* SD_EVENT_OFF */
        /* And nothing wakes the pass while nothing is made: re-arming removes
         * watches, whose IN_IGNORED must not start it again (it spun). */
        {
                uint64_t passes = m->n_rewatch_passes;

                for (int i = 0; i < 5; i++)
                        (void) sd_event_run(m->event, 50 * USEC_PER_MSEC);
                CHECK_EQ_U64(m->n_rewatch_passes, passes);
        }
        make_cgroup("late2");
        CHECK(run_until(m, late2_watched, 5 * USEC_PER_SEC));
        CHECK_EQ_INT(m->n_scopes, 7);

        remove_cgroup("b");
        remove_cgroup("c");
        remove_cgroup("d");
        remove_cgroup("e");
        remove_cgroup("late");
        remove_cgroup("late2");
}

/* What the listeners and the actions hook saw, in order. */
static char calls[16][16];
static size_t n_calls;

static void note(const char *what) {
        if (n_calls < ELEMENTSOF(calls))
                (void) snprintf(calls[n_calls++], sizeof(calls[0]), "%s", what);
}

static void on_act(Manager *m, const Scope *s, const LevelEvent *ev, void *userdata) {
        note(userdata);
        if (streq(userdata, "act-1"))   /* as the responder does where it signals */
                manager_record_action(m, "x.service", ev->level, false, SIGTERM, 0, 0);
}

static void on_announce(Manager *m, const Scope *s, const LevelEvent *ev, void *userdata) {
        note(userdata);
}

static void on_actions(Manager *m, void *userdata) {
        note("actions");
}

/* A manager on the vmstat source over the fake cgroup2 tree, not started;
 * NULL when it cannot be made. */
static Manager *fake_root_manager(bool print_events) {
        Manager *m = NULL;
        Config c;

        config_init(&c);
        c.params.poll.fault_wake = false;   /* the real counters: tests/test-fault-wake.c */
        c.source = SOURCE_VMSTAT;
        CHECK_EQ_INT(manager_new(&c, print_events, &m), 0);
        if (!m)
                return NULL;
        (void) snprintf(m->env.cgroup2_root, sizeof(m->env.cgroup2_root), "%s", root);
        m->env.memcg_v1_root[0] = '\0';
        return m;
}

static void test_listener_phases(void) {
        _cleanup_(manager_freep) Manager *m = fake_root_manager(false);

        if (!m)
                return;
        CHECK_EQ_INT(manager_start(m), 0);
        if (!manager_system_scope(m))
                return;

        /* The bus registers after the responder in main(); here the
         * announcers come first and the phases must still put them last. */
        CHECK_EQ_INT(manager_add_phase_listener(m, MANAGER_LISTENER_RECORD, on_announce, (void *) "record-1"), 0);
        CHECK_EQ_INT(manager_add_phase_listener(m, MANAGER_LISTENER_ANNOUNCE, on_announce, (void *) "announce-1"), 0);
        CHECK_EQ_INT(manager_add_phase_listener(m, MANAGER_LISTENER_ACT, on_act, (void *) "act-1"), 0);
        CHECK_EQ_INT(manager_add_phase_listener(m, MANAGER_LISTENER_ANNOUNCE, on_announce, (void *) "announce-2"), 0);
        CHECK_EQ_INT(manager_add_listener(m, on_act, (void *) "act-2"), 0);    /* the old call: ACT */
        CHECK_EQ_INT(manager_set_actions_hook(m, on_actions, NULL), 0);

        CHECK_EQ_INT(manager_simulate(m, manager_system_scope(m), LEVEL_LOW), 0);
        /* The hook waits for the loop: nothing of it inside the announcement. */
        CHECK_EQ_INT(n_calls, 5);
        for (int i = 0; i < 3 && sd_event_run(manager_event(m), 0) >= 0; i++)
                ;
        CHECK_EQ_INT(n_calls, 6);
        CHECK_STREQ(calls[0], "act-1");
        CHECK_STREQ(calls[1], "act-2");
        CHECK_STREQ(calls[2], "announce-1");
        CHECK_STREQ(calls[3], "announce-2");
        CHECK_STREQ(calls[4], "record-1");
        CHECK_STREQ(calls[5], "actions");
        CHECK_EQ_INT(recent_actions_size(manager_recent_actions(m)), 1);

        /* Four per phase. */
        CHECK_EQ_INT(manager_add_phase_listener(m, MANAGER_LISTENER_ACT, on_act, (void *) "act-3"), 0);
        CHECK_EQ_INT(manager_add_phase_listener(m, MANAGER_LISTENER_ACT, on_act, (void *) "act-4"), 0);
        CHECK_EQ_INT(manager_add_phase_listener(m, MANAGER_LISTENER_ACT, on_act, (void *) "act-5"), -E2BIG);
        CHECK_EQ_INT(manager_add_phase_listener(m, MANAGER_LISTENER_ANNOUNCE, on_announce, (void *) "announce-3"), 0);
        CHECK_EQ_INT(manager_set_actions_hook(m, NULL, NULL), 0);
}

static Scope *h_scope;

static int unlink_in(const char *cg, const char *file) {
        char path[PATH_MAX];

        (void) snprintf(path, sizeof(path), "%s/%s/%s", root, cg, file);
        return unlink(path);
}

static bool h_headroom_on(Manager *m) {
        int enabled = SD_EVENT_OFF;

        (void) sd_event_source_get_enabled(h_scope->poll_timer, &enabled);
        return enabled != SD_EVENT_OFF;
}

static bool h_headroom_off(Manager *m) {
        return !h_headroom_on(m);
}

static bool h_oom(Manager *m) {
        return h_scope->announced[LEVEL_OOM] > 0;
}

static bool h_back_to_none(Manager *m) {
        return h_scope->engine.current == LEVEL_NONE && h_scope->announced[LEVEL_NONE] > 0;
}

/* A manager of c on the vmstat source, polling every 20 ms, over the fake
 * cgroup2 tree, and the cgroup cg made there with a limit of 100 MiB, 10 MiB
 * of it used; NULL when the manager cannot be made. */
static Manager *manager_with_limited_cgroup(Config *c, const char *cg) {
        Manager *m = NULL;

        c->source = SOURCE_VMSTAT;
        c->params.poll.idle_usec = 20 * USEC_PER_MSEC;
        c->params.poll.busy_usec = 20 * USEC_PER_MSEC;
        CHECK_EQ_INT(manager_new(c, false, &m), 0);
        if (!m)
                return NULL;
        (void) snprintf(m->env.cgroup2_root, sizeof(m->env.cgroup2_root), "%s", root);
        m->env.memcg_v1_root[0] = '\0';
        make_cgroup(cg);
        put(cg, "memory.max", "104857600\n");          /* 100 MiB */
        put(cg, "memory.current", "10485760\n");       /* 10 MiB used */
        return m;
}

/* Headroom is read only after the source said something, and no longer
 * once the scope is back at NONE and QuietSec= passed: an idle scope reads
 * nothing and keeps no timer on. (The headroom timer used to run from the
 * start, every Poll IdleSec=, forever.) */
static void test_headroom_armed_by_source(void) {
        _cleanup_(manager_freep) Manager *m = NULL;
        Config c;

        config_init(&c);
        c.params.poll.fault_wake = false;   /* the real counters: tests/test-fault-wake.c */
        c.level.hold_usec = 50 * USEC_PER_MSEC;
        c.level.quiet_usec = 200 * USEC_PER_MSEC;
        c.level.repeat_usec = 50 * USEC_PER_MSEC;
        m = manager_with_limited_cgroup(&c, "h");
        if (!m)
                return;
        CHECK_EQ_INT(manager_start(m), 0);
        CHECK_EQ_INT(manager_watch(m, "h", &h_scope), 1);
        if (!h_scope)
                return;

        /* Idle: the vmstat source polls, sees nothing, and the headroom stays off. */
        (void) run_until(m, h_oom, 200 * USEC_PER_MSEC);
        CHECK(h_headroom_off(m));
        CHECK(!h_oom(m));

        /* Reclaim (fewer pages than a window: no level yet) arms the headroom,
         * which finds the cgroup at its limit: OOM from headroom. */
        put("h", "memory.stat", "anon 0\nfile 0\ninactive_file 0\npgscan 10\npgsteal 10\n");
        CHECK(run_until(m, h_headroom_on, 500 * USEC_PER_MSEC));
        put("h", "memory.current", "104857600\n");
        CHECK(run_until(m, h_oom, 500 * USEC_PER_MSEC));
        CHECK(h_scope->engine.last_cause == SAMPLE_HEADROOM);

        /* Memory back, no more reclaim: NONE, and after QuietSec= the timer is off. */
        put("h", "memory.current", "10485760\n");
        CHECK(run_until(m, h_back_to_none, USEC_PER_SEC));
        CHECK(run_until(m, h_headroom_off, USEC_PER_SEC));
        CHECK(unlink_in("h", "memory.max") == 0);
        CHECK(unlink_in("h", "memory.current") == 0);
        remove_cgroup("h");
}

static bool p_watched(Manager *m) {
        return watched(m, "hybrid/p");
}

static bool q_watched(Manager *m) {
        return watched(m, "hybrid/q");
}

static void make_dir(const char *rel) {
        char path[PATH_MAX];

        (void) snprintf(path, sizeof(path), "%s/%s", root, rel);
        CHECK(mkdir(path, 0755) == 0);
}

static void remove_dir(const char *rel) {
        char path[PATH_MAX];

        (void) snprintf(path, sizeof(path), "%s/%s", root, rel);
        CHECK(rmdir(path) == 0);
}

/* A hybrid layout (a v1 memory hierarchy beside cgroup2), the source not
 * forced: systemd makes a unit's directories one hierarchy after the other,
 * and a cgroup seen in cgroup2 alone is not watched yet, so that it is not
 * settled with a lesser source a moment before its v1 memcg appears. It is
 * watched once its v1 directory is made (the mkdir wakes the pass), or,
 * when none comes, after REWATCH_PARTIAL_USEC (500 ms) with what there is.
 * Here the v1 directories hold no memcg files, so both end with the vmstat
 * source on the cgroup2 files; what is checked is when. */
static void test_partial_cgroup_waits(void) {
        _cleanup_(manager_freep) Manager *m = NULL;
        const Unwatched *u;
        usec_t seen;
        Config c;
        Scope *s;

        config_init(&c);
        c.params.poll.fault_wake = false;   /* the real counters: tests/test-fault-wake.c */
        CHECK(c.source < 0);            /* the shipped default: the best source there is */
        c.params.poll.idle_usec = 20 * USEC_PER_MSEC;
        c.params.poll.busy_usec = 20 * USEC_PER_MSEC;
        CHECK_EQ_INT(manager_new(&c, false, &m), 0);
        if (!m)
                return;
        make_dir("v1");
        make_dir("hybrid");             /* the cgroup2 root: root/hybrid/<cg> is root/<cg> */
        make_dir("v1/hybrid");
        (void) snprintf(m->env.cgroup2_root, sizeof(m->env.cgroup2_root), "%s", root);
        (void) snprintf(m->env.memcg_v1_root, sizeof(m->env.memcg_v1_root), "%s/v1", root);
        CHECK_EQ_INT(manager_start(m), 0);

        /* In both hierarchies from the start: watched at once. */
        make_cgroup("hybrid/both");
        make_dir("v1/hybrid/both");
        CHECK_EQ_INT(manager_watch(m, "hybrid/both", &s), 1);
        CHECK(s != NULL);

        /* p in cgroup2 alone: asked for, not watched while its v1 directory
         * may still come (200 ms of the loop, well inside the wait). */
        make_cgroup("hybrid/p");
        seen = source_now_usec();
        CHECK_EQ_INT(manager_watch(m, "hybrid/p", &s), 1);
        CHECK(s == NULL);
        u = find_unwatched(m, "hybrid/p");
        CHECK(u && u->reason == UNWATCHED_ABSENT && u->partial_since_usec >= seen);
        while (source_now_usec() < seen + 200 * USEC_PER_MSEC)
                (void) sd_event_run(m->event, 20 * USEC_PER_MSEC);
        CHECK(!p_watched(m));
        /* Its v1 directory appears: watched now, not 500 ms after p was seen. */
        make_dir("v1/hybrid/p");
        CHECK(run_until(m, p_watched, 2 * USEC_PER_SEC));
        CHECK(find_unwatched(m, "hybrid/p") == NULL);

        /* q never gets a v1 directory: not watched within the wait, watched
         * after it with the source there is. */
        make_cgroup("hybrid/q");
        seen = source_now_usec();
        CHECK_EQ_INT(manager_watch(m, "hybrid/q", &s), 1);
        CHECK(s == NULL);
        CHECK(!run_until(m, q_watched, 300 * USEC_PER_MSEC));
        CHECK(run_until(m, q_watched, 5 * USEC_PER_SEC));
        CHECK(source_now_usec() >= seen + 500 * USEC_PER_MSEC);
        s = manager_find_scope(m, "q");         /* by its name, the last component */
        CHECK(s && s->source_type == SOURCE_VMSTAT);

        m = manager_free(m);
        remove_cgroup("hybrid/both");
        remove_cgroup("hybrid/p");
        remove_cgroup("hybrid/q");
        remove_dir("v1/hybrid/both");
        remove_dir("v1/hybrid/p");
        remove_dir("v1/hybrid");
        remove_dir("v1");
        remove_dir("hybrid");
}

/* What the scope "g" announced, in order: the level, and whether graded or
 * with memory left. */
static Scope *g_scope;
static struct {
        Level level;
        bool graded, memory_left, repeat, stall_known;
        unsigned stall_full_avg10;
} g_seen[8];
static size_t n_g_seen;

static void on_g(Manager *m, const Scope *s, const LevelEvent *ev, void *userdata) {
        if (s != g_scope || n_g_seen >= ELEMENTSOF(g_seen))
                return;
        g_seen[n_g_seen].level = ev->level;
        g_seen[n_g_seen].graded = ev->graded;
        g_seen[n_g_seen].memory_left = ev->memory_left;
        g_seen[n_g_seen].repeat = ev->repeat;
        g_seen[n_g_seen].stall_known = ev->stall_known;
        g_seen[n_g_seen].stall_full_avg10 = ev->stall_full_permyriad[0];
        n_g_seen++;
}

static bool g_seen_1(Manager *m) {
        return n_g_seen >= 1;
}

static bool g_seen_2(Manager *m) {
        return n_g_seen >= 2;
}

static bool g_seen_3(Manager *m) {
        return n_g_seen >= 3;
}

/* A thrash: reclaim that frees nothing (the seed's index at 100: OOM) in a
 * cgroup far from its limit. With memory left nothing is killed, so the OOM
 * that jumped from NONE is announced MEDIUM first; no further window comes,
 * so the level timer raises it to OOM (memory_left) LEVEL_GRADE_USEC later;
 * and when the cgroup then reaches its limit the
 * headroom's OOM is announced at once, although RepeatSec= (10 s here) has
 * not passed: that is the one that may kill. The OOM with memory left
 * carries the cgroup's stall (PSI "full") when it is wanted, and has none
 * when no policy kills (manager_set_stall_wanted(false)). */
static void test_memory_left_graded(bool stall_wanted) {
        _cleanup_(manager_freep) Manager *m = NULL;
        Config c;

        n_g_seen = 0;

        config_init(&c);
        c.params.poll.fault_wake = false;   /* the real counters: tests/test-fault-wake.c */
        c.level.repeat_usec = 10 * USEC_PER_SEC;
        m = manager_with_limited_cgroup(&c, "g");
        if (!m)
                return;
        put("g", "memory.stat", "anon 0\nfile 0\ninactive_file 0\npgscan 0\npgsteal 0\n");
        put("g", "memory.pressure", "some avg10=30.00 avg60=10.00 avg300=2.00 total=100\n"
                                    "full avg10=12.34 avg60=5.00 avg300=1.00 total=50\n");
        if (!stall_wanted)
                manager_set_stall_wanted(m, false);
        CHECK_EQ_INT(manager_add_phase_listener(m, MANAGER_LISTENER_ANNOUNCE, on_g, NULL), 0);
        CHECK_EQ_INT(manager_start(m), 0);
        CHECK_EQ_INT(manager_watch(m, "g", &g_scope), 1);
        if (!g_scope)
                return;
        (void) run_until(m, g_seen_1, 100 * USEC_PER_MSEC);
        CHECK_EQ_INT(n_g_seen, 0);

        put("g", "memory.stat", "anon 0\nfile 0\ninactive_file 0\npgscan 1000\npgsteal 0\n");
        CHECK(run_until(m, g_seen_1, USEC_PER_SEC));
        CHECK_EQ_INT(g_seen[0].level, LEVEL_MEDIUM);
        CHECK(g_seen[0].graded);
        CHECK(!g_seen[0].memory_left);
        CHECK_EQ_INT(g_scope->engine.current, LEVEL_MEDIUM);
        CHECK_EQ_INT(g_scope->announced[LEVEL_OOM], 0);

        /* No more reclaim: the OOM held back comes LEVEL_GRADE_USEC later by
         * the level timer, decided again (memory is still left). */
        CHECK(run_until(m, g_seen_2, USEC_PER_SEC));
        CHECK_EQ_INT(g_seen[1].level, LEVEL_OOM);
        CHECK_EQ_INT(g_scope->engine.last_cause, SAMPLE_RECLAIM);
        CHECK(!g_seen[1].graded);
        CHECK(g_seen[1].memory_left);
        CHECK(g_scope->engine.oom_held);
        CHECK_EQ_INT(g_seen[1].stall_known, stall_wanted);
        CHECK_EQ_INT(g_seen[1].stall_full_avg10, stall_wanted ? 1234 : 0);

        put("g", "memory.current", "104857600\n");     /* at the limit */
        CHECK(run_until(m, g_seen_3, USEC_PER_SEC));
        CHECK_EQ_INT(g_seen[2].level, LEVEL_OOM);
        CHECK(g_seen[2].repeat);
        CHECK(!g_seen[2].memory_left);
        CHECK_EQ_INT(g_scope->engine.last_cause, SAMPLE_HEADROOM);

        CHECK(unlink_in("g", "memory.max") == 0);
        CHECK(unlink_in("g", "memory.current") == 0);
        CHECK(unlink_in("g", "memory.pressure") == 0);
        remove_cgroup("g");
}

/* ---- --print-events: the lines of one announcement ---- */

static int print_n;                     /* lines each ACT call prints */
static Scope *print_nest;               /* announced from inside the system scope's */

static void on_act_print(Manager *m, const Scope *s, const LevelEvent *ev, void *userdata) {
        if (s != manager_system_scope(m)) {
                manager_print(m, "inner scope=%s", s->name);
                return;
        }
        for (int i = 0; i < print_n; i++)
                manager_print(m, "act i=%d pad=%s", i, "................................................");
        if (print_nest) {
                manager_print(m, "before-nested");
                CHECK_EQ_INT(manager_simulate(m, print_nest, LEVEL_LOW), 0);
                manager_print(m, "after-nested");
        }
}

/* What fd 1 got since the last call, from the file standing in for it. */
static size_t read_printed(int fd, char *buf, size_t size) {
        static off_t done;
        ssize_t n = pread(fd, buf, size - 1, done);

        CHECK(n >= 0);
        if (n < 0)
                return 0;
        buf[n] = '\0';
        done += n;
        return (size_t) n;
}

/* Line i of text (0-based) starts with prefix. */
static bool line_starts(const char *text, int i, const char *prefix) {
        for (; i > 0 && text; i--)
                text = strchr(text, '\n') ? strchr(text, '\n') + 1 : NULL;
        return text && strncmp(text, prefix, strlen(prefix)) == 0;
}

static int count_lines(const char *text) {
        int n = 0;

        for (; *text; text++)
                n += *text == '\n';
        return n;
}

/* Simulates level on the system scope with n lines from each ACT call;
 * what was printed lands in out. Returns its number of lines. */
static int announce_printed(Manager *m, Level level, int n, int fd, char *out, size_t size) {
        print_n = n;
        CHECK_EQ_INT(manager_simulate(m, manager_system_scope(m), level), 0);
        (void) read_printed(fd, out, size);
        return count_lines(out);
}

/* The level line is made after the listeners but comes first: before a
 * few lines, before lines that outgrow the 8 KiB hold (flushed early),
 * and before an announcement made from inside it, whose own level line
 * comes before its own lines. */
static void test_print_order(void) {
        _cleanup_(manager_freep) Manager *m = fake_root_manager(true);
        static char out[64 * 1024];
        char path[] = "/tmp/test-manager-out-XXXXXX";
        int fd, saved;

        if (!m)
                return;
        make_cgroup("p");
        fd = mkstemp(path);
        CHECK(fd >= 0);
        saved = dup(STDOUT_FILENO);
        CHECK(saved >= 0);
        if (fd < 0 || saved < 0)
                return;
        (void) unlink(path);
        fflush(stdout);
        CHECK(dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
        CHECK_EQ_INT(manager_start(m), 0);
        CHECK(manager_watch(m, "p", NULL) >= 0);
        CHECK_EQ_INT(manager_add_listener(m, on_act_print, NULL), 0);
        (void) read_printed(fd, out, sizeof(out));              /* the source and ready lines */

        /* A few lines. */
        CHECK_EQ_INT(announce_printed(m, LEVEL_LOW, 3, fd, out, sizeof(out)), 4);
        CHECK(line_starts(out, 0, "level scope=-.slice level=low "));
        CHECK(line_starts(out, 1, "act i=0 "));
        CHECK(line_starts(out, 3, "act i=2 "));

        /* 200 lines of 70 bytes: the hold is flushed early, the level line
         * still first, every line there in order. */
        CHECK_EQ_INT(announce_printed(m, LEVEL_MEDIUM, 200, fd, out, sizeof(out)), 201);
        CHECK(line_starts(out, 0, "level scope=-.slice level=medium "));
        CHECK(line_starts(out, 1, "act i=0 "));
        CHECK(line_starts(out, 117, "act i=116 "));
        CHECK(line_starts(out, 200, "act i=199 "));

        /* An announcement inside another's listeners. */
        print_nest = manager_find_scope(m, "p");
        CHECK(print_nest != NULL);
        if (print_nest) {
                CHECK_EQ_INT(announce_printed(m, LEVEL_OOM, 1, fd, out, sizeof(out)), 6);
                CHECK(line_starts(out, 0, "level scope=-.slice level=oom "));
                CHECK(line_starts(out, 1, "act i=0 "));
                CHECK(line_starts(out, 2, "before-nested"));
                CHECK(line_starts(out, 3, "level scope=p level=low "));
                CHECK(line_starts(out, 4, "inner scope=p"));
                CHECK(line_starts(out, 5, "after-nested"));
                if (count_lines(out) != 6)
                        fprintf(stderr, "printed:\n%s", out);
        }
        print_nest = NULL;

        CHECK(dup2(saved, STDOUT_FILENO) == STDOUT_FILENO);
        (void) close(saved);
        (void) close(fd);
        manager_free(m);
        m = NULL;
        remove_cgroup("p");
}

int main(void) {
        if (!mkdtemp(root)) {
                perror("mkdtemp");
                return 1;
        }
        test_scope_table();
        test_listener_phases();
        test_headroom_armed_by_source();
        test_partial_cgroup_waits();
        test_memory_left_graded(true);
        test_memory_left_graded(false);
        test_print_order();
        (void) rmdir(root);
        return test_exit("test-manager");
}
