/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The manager owns the event loop and wires sources → level engine →
 * listeners (the event printer now; the bus and actions later). It is the
 * only module that knows them all.
 */

#include <systemd/sd-event.h>

#include "conf.h"
#include "latency.h"
#include "level.h"
#include "recent-actions.h"
#include "source.h"

/* Scopes with a cgroup that exists (and -.slice): every Watch= and every
 * unit a Scope=unit policy names, template instances one each. A real
 * machine has hundreds of units; a scope costs ~13 KiB and a few fds. The
 * table grows at watch time, never on the OOM path. */
#define MANAGER_SCOPES_MAX 1024
/* Cgroups wanted but not watched (absent, or no slot): a path each. */
#define MANAGER_UNWATCHED_MAX 4096
#define MANAGER_LISTENERS_MAX 4
#define SCOPE_SYSTEM "-.slice"

typedef struct Manager Manager;

typedef struct Scope {
        Manager *manager;
        char name[256];                 /* SCOPE_SYSTEM or the last component of cgroup */
        char cgroup[PATH_MAX];          /* "" for the whole system */
        Source *source;                 /* NULL once the cgroup is gone */
        SourceType source_type;
        LevelEngine engine;
        sd_event_source *poll_timer;    /* headroom sampling, adaptive */
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
        /* Reads of /proc/meminfo or memory.* for headroom land here: nothing is
         * allocated between the kernel's notification and the announcement. */
        char buf[8192];
} Scope;

/* Called for every announced level change or repeat, in the order registered. */
typedef void (*manager_level_handler_t)(Manager *m, const Scope *scope, const LevelEvent *ev,
                                        void *userdata);

/* Fills *ret with a fresh configuration for Reload() and SIGHUP (main.c
 * parses the file again and re-applies the command line). 0, or negative
 * errno after reporting what is wrong. */
typedef int (*manager_config_loader_t)(Config *ret, void *userdata);

/* Reload() and SIGHUP, after the configuration: the policies. Problems go
 * into diag; negative errno when the previous state stays. */
typedef int (*manager_reload_hook_t)(Manager *m, Diagnostics *diag, void *userdata);

/* Why a wanted cgroup has no scope. */
typedef enum UnwatchedReason {
        UNWATCHED_ABSENT,               /* no such cgroup (yet, or any more) */
        UNWATCHED_TABLE_FULL,           /* it exists, but scopes_max scopes are watched */
        UNWATCHED_NO_SOURCE,            /* it exists, but no source could watch it */
        _UNWATCHED_REASON_MAX,
} UnwatchedReason;

const char *unwatched_reason_to_string(UnwatchedReason r);

/* A cgroup to watch once it exists and a slot is free; looked for every
 * REWATCH interval while there is one. */
typedef struct Unwatched {
        char *cgroup;
        UnwatchedReason reason;
} Unwatched;

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
        struct {
                manager_level_handler_t handler;
                void *userdata;
        } listeners[MANAGER_LISTENERS_MAX];
        size_t n_listeners;
        sd_event_source *gc_defer;      /* frees the sources of gone scopes outside their callbacks */
        sd_event_source *rewatch_timer; /* while a watched cgroup is gone: is it back? */
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
        /* Whoever reports actions (the bus) sets this defer source; every
         * recorded action enables it once, so the report goes out after the
         * dispatch that acted (after the kill), not inside it. */
        sd_event_source *actions_defer;
};

int manager_new(const Config *config, bool print_events, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Opens the best source for the system scope and for every watched cgroup.
 * -ENODEV (with the reasons logged) when the system scope has no source, or
 * the forced source is unavailable for it. */
int manager_start(Manager *m);
int manager_run(Manager *m);

int manager_add_listener(Manager *m, manager_level_handler_t handler, void *userdata);

void manager_set_config_loader(Manager *m, manager_config_loader_t loader, void *userdata);
/* Loads the configuration again and applies what can change while running:
 * [Levels], [Poll], LogLevel=, DryRun=, MaxSubscribers=. Source=, Watch=,
 * SyscallNumber=, SystemPressure=, [PSI] and LowMemoryMonitor= need a restart. 0;
 * -EOPNOTSUPP without a loader; the loader's negative errno (the running
 * configuration stays). */
int manager_reload(Manager *m);

/* Feeds one sample to a scope (what sources do through their callback). */
void manager_feed(Manager *m, Scope *scope, const Sample *sample);
/* Simulate(): feeds a SAMPLE_LEVEL of level (LOW, MEDIUM or OOM) now, as
 * if the kernel had named it, and marks what it announces as simulated.
 * -EINVAL for another level, -ESTALE for a scope whose cgroup is gone. */
int manager_simulate(Manager *m, Scope *scope, Level level);

Scope *manager_find_scope(Manager *m, const char *name);

/* Adds a cgroup to watch while running. 1 added, 0 already wanted (a scope
 * or unwatched). A cgroup that does not exist (yet) takes no scope: it is
 * remembered as unwatched (ABSENT, *ret NULL), looked for every 2 s and
 * watched when it appears; a scope whose cgroup goes away is freed and
 * remembered the same way. -E2BIG when scopes_max scopes are watched:
 * logged at warning, listed as TABLE_FULL (UnwatchedCgroups, vmpressurectl
 * status) and watched as soon as a scope is free. -ENOMEM. */
int manager_watch(Manager *m, const char *cgroup, Scope **ret);
/* How many wanted cgroups are unwatched for that reason. */
size_t manager_count_unwatched(const Manager *m, UnwatchedReason reason);

void manager_set_reload_hook(Manager *m, manager_reload_hook_t hook, void *userdata);
/* Runs the reload hook; diag may be NULL (SIGHUP: problems are only logged). */
int manager_reload_hooks(Manager *m, Diagnostics *diag);

/* For the responder, where it signals or kills: one entry in the recent
 * actions (marked simulated when the announcement being acted on is) and,
 * for what was done (result >= 0, not a dry run), the latency from the
 * announcement into the signal or kill histogram. result: what the action
 * returned (>= 0 done, negative errno). No allocation. */
void manager_record_action(Manager *m, const char *unit, Level level, bool kill, int signo, pid_t pid,
                           int result);

/* One line on stdout for --print-events; nothing otherwise. No allocation. */
void manager_print(Manager *m, const char *fmt, ...) _printf_(2, 3);
