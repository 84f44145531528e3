/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The insides of Manager and Scope: for manager.c and its unit test
 * (tests/test-manager.c lowers scopes_max and points env at a fake cgroup
 * tree). Everyone else goes through the accessors in manager.h.
 */

#include "fault-wake.h"
#include "manager.h"

#define MANAGER_REWATCH_WATCHES_MAX 64     /* distinct ancestor directories watched */

struct Scope {
        Manager *manager;
        char name[256];                 /* SCOPE_SYSTEM or the last component of cgroup */
        char cgroup[PATH_MAX];          /* "" for the whole system */
        Source *source;                 /* NULL once the cgroup is gone */
        SourceType source_type;
        LevelEngine engine;
        sd_event_source *poll_timer;    /* headroom sampling, on only while the source speaks */
        usec_t active_usec;             /* the last sample of the source (not headroom) */
        char source_detail[512];        /* source_describe() of the source */
        sd_event_source *deadline_timer;/* the engine's next drop */
        bool busy;
        bool headroom;                  /* false when the scope has no limit to measure */
        bool gone;
        uint64_t announced[_LEVEL_MAX]; /* level changes and repeats, per level */
        usec_t last_change_usec;
        /* Simulate(): announcements are marked simulated (--print-events,
         * the journal) from the injected sample until the scope is back at
         * NONE. A real sample in between is marked too: it cannot be told
         * apart once the engine merged it. */
        bool simulated;
        uint64_t simulated_count;       /* Simulate() calls on this scope */
        uint64_t simulated_announced[_LEVEL_MAX]; /* the part of announced[] marked simulated */
        /* Guard= of the unit's policy (manager_guard()): the scope's floor is
         * at least guard_bytes; on the v1 memcg source the kernel wakes us
         * when the usage crosses guard_mark_bytes. */
        uint64_t guard_bytes;
        uint64_t guard_limit_bytes;
        uint64_t guard_mark_bytes;
        usec_t guard_grace_usec;        /* GuardSec=: cgroup v2, MEDIUM this long before the OOM */
        usec_t guard_entered_usec;      /* when the headroom fell into the band; 0: not in it */
        /* cgroup v1: nothing throttles the unit in its band, so a headroom
         * under twice the guard (the source's warning mark, at the usage
         * limit - 2 x guard) is announced MEDIUM first, once each time it
         * enters there; 0: no warning band (twice the guard is the whole
         * limit or more, or cgroup v2). */
        uint64_t guard_warn_bytes;
        bool guard_warned;              /* MEDIUM said since the headroom was last above guard_warn_bytes */
        /* The stall band's inputs (level.h, headroom_stall_usec;
         * level_headroom_stall()), used for the system scope alone: */
        uint64_t stall_some_usec;       /* PSI "some" total at the last headroom read */
        usec_t stall_read_usec;         /* when that read was; 0: no read to compare with */
        usec_t stall_event_usec;        /* when a PSI trigger last woke it (the reclaim source's, or
                                         * stall_wake_fd below on memcg); 0: never */
        uint64_t stall_event_stall_usec; /* the stall that trigger guarantees (its threshold) */
        /* On the memcg source (a hybrid layout), which has no PSI trigger of
         * its own: the manager's, on /proc/pressure/memory, for the system
         * scope (scope_open_stall_wake()). */
        int stall_wake_fd;              /* -EBADF when none */
        sd_event_source *stall_wake_event;
        usec_t stall_wake_window_usec;  /* the window the kernel accepted */
        uint64_t stall_wakeups;         /* how often it fired (for a debugger: not exported yet) */
        /* FaultWake=, the system scope alone: page-fault counters that wake
         * the headroom reads of a fill no kernel event reports (fault-wake.h,
         * scope_open_fault_wake()); n == 0 when none are open. */
        FaultWake fault_wake;
};

struct Manager {
        sd_event *event;
        Config config;
        SourceEnv env;
        Scope **scopes;                 /* [0] is -.slice; the others in the order watched */
        size_t n_scopes, n_scopes_allocated;
        size_t scopes_max;              /* MANAGER_SCOPES_MAX (tests lower it) */
        Unwatched *unwatched;
        size_t n_unwatched, n_unwatched_allocated;
        bool print_events;
        /* Every read of /proc/meminfo or memory.* for headroom lands here
         * (one loop, one reader at a time): nothing is allocated between the
         * kernel's notification and the announcement, and the buffer is
         * written at manager_new(), so it is resident and, after
         * mlockall(), locked before the first OOM. A buffer per scope, left
         * as calloc() gave it, was the kernel's zero page until a unit's
         * first OOM wrote it (test-oom-path-tight.py saw the fault). */
        char read_buf[8192];
        struct {
                manager_level_handler_t handler;
                void *userdata;
        } listeners[_MANAGER_LISTENER_PHASE_MAX][MANAGER_LISTENERS_MAX];
        size_t n_listeners[_MANAGER_LISTENER_PHASE_MAX];
        sd_event_source *gc_defer;      /* frees the sources of gone scopes outside their callbacks */
        sd_event_source *rewatch_timer; /* while a watched cgroup is gone: is it back? */
        /* While cgroups are only absent: inotify (IN_CREATE) on the nearest
         * existing ancestor of each, in both hierarchies, so a mkdir wakes the
         * rewatch pass and no timer runs; the timer is left for what a mkdir
         * does not announce (a full table, a cgroup without a source). */
        int rewatch_inotify_fd;
        sd_event_source *rewatch_inotify;
        int rewatch_wds[MANAGER_REWATCH_WATCHES_MAX];
        size_t n_rewatch_wds;
        uint64_t n_rewatch_passes;      /* how often absent cgroups were looked for (tests) */
        manager_config_loader_t config_loader;
        void *config_loader_userdata;
        manager_reload_hook_t reload_hook;
        void *reload_hook_userdata;
        /* While the listeners of an announcement run: its scope and when it
         * was decided (CLOCK_MONOTONIC), for the actions' records. */
        const Scope *announcing;
        usec_t announcing_usec;
        LatencyStats latency;           /* preallocated: recording is a few adds */
        RecentActions recent_actions;
        /* The actions hook (the bus's Action signals) runs from this defer
         * source; every recorded action enables it once, so the report goes
         * out after the dispatch that acted (after the kill), not inside it. */
        sd_event_source *actions_defer;
        manager_actions_hook_t actions_hook;
        void *actions_hook_userdata;
        manager_scope_hook_t scope_hook;        /* a scope started watching (responder: Guard=) */
        void *scope_hook_userdata;
        bool stall_unwanted;            /* manager_set_stall_wanted(false) */
};
