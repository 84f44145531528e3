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
#include "vmpressure-bus.h"     /* the table sizes and the system scope's name clients see */

/* Scopes with a cgroup that exists (and -.slice): every Watch= and every
 * unit a Scope=unit policy names, template instances one each. A real
 * machine has hundreds of units; a scope costs ~13 KiB and a few fds. The
 * table grows at watch time, never on the OOM path. */
#define MANAGER_SCOPES_MAX VMP_BUS_SCOPES_MAX
/* Cgroups wanted but not watched (absent, or no slot): a path each. */
#define MANAGER_UNWATCHED_MAX VMP_BUS_UNWATCHED_MAX
#define MANAGER_LISTENERS_MAX 4         /* per phase */
#define SCOPE_SYSTEM VMP_BUS_SCOPE_SYSTEM

typedef struct Manager Manager;
typedef struct Scope Scope;

/* Called for every announced level change or repeat: the listeners of
 * MANAGER_LISTENER_ACT first (the responder: a kill must not wait behind
 * the bus), then those of MANAGER_LISTENER_ANNOUNCE (the bus and the fd
 * subscribers), then those of MANAGER_LISTENER_RECORD (what is only
 * written down: a log line must not make anyone wait); within a phase in
 * the order registered. */
typedef void (*manager_level_handler_t)(Manager *m, const Scope *scope, const LevelEvent *ev,
                                        void *userdata);

typedef enum ManagerListenerPhase {
        MANAGER_LISTENER_ACT,           /* actions on the system */
        MANAGER_LISTENER_ANNOUNCE,      /* telling others: signals, subscribers */
        MANAGER_LISTENER_RECORD,        /* writing down: logs */
        _MANAGER_LISTENER_PHASE_MAX,
} ManagerListenerPhase;

/* Runs after the dispatch in which manager_record_action() recorded
 * actions (once for all of them): manager_recent_actions() has them. */
typedef void (*manager_actions_hook_t)(Manager *m, void *userdata);

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
        /* On a hybrid layout: when the cgroup was first seen in cgroup2 but
         * not yet in the v1 memory hierarchy (0: not so). */
        usec_t partial_since_usec;
} Unwatched;

int manager_new(const Config *config, bool print_events, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Opens the best source for the system scope and for every watched cgroup.
 * -ENODEV (with the reasons logged) when the system scope has no source, or
 * the forced source is unavailable for it. */
int manager_start(Manager *m);
int manager_run(Manager *m);

/* MANAGER_LISTENERS_MAX per phase. 0, or -E2BIG. */
int manager_add_phase_listener(Manager *m, ManagerListenerPhase phase, manager_level_handler_t handler,
                               void *userdata);
/* The responder's registration: manager_add_phase_listener(MANAGER_LISTENER_ACT). */
int manager_add_listener(Manager *m, manager_level_handler_t handler, void *userdata);

/* One hook (the bus's Action signals); NULL removes it. Replaces the one
 * before. 0, or negative errno (the defer source could not be made). */
int manager_set_actions_hook(Manager *m, manager_actions_hook_t hook, void *userdata);

/* Called whenever a scope of a watched cgroup starts watching (at
 * manager_watch(), and again when its cgroup comes back): the responder
 * arms a policy's Guard= there. Not for the system scope. */
typedef void (*manager_scope_hook_t)(Manager *m, Scope *scope, void *userdata);
void manager_set_scope_hook(Manager *m, manager_scope_hook_t hook, void *userdata);

/* Guard= on a scope: what manager_guard() found and armed. */
typedef struct ScopeGuard {
        uint64_t limit_bytes;           /* the cgroup's own memory limit */
        uint64_t guard_bytes;           /* kept free below it: the scope's floor is at least this */
        uint64_t mark_bytes;            /* limit - guard: the usage where the guard band begins */
        bool memcg_v1;                  /* the limit is v1's memory.limit_in_bytes */
        bool mark_armed;                /* v1: the source wakes us when the usage crosses the mark */
        uint64_t warn_mark_bytes;       /* v1: limit - 2 x guard, where MEDIUM comes first; 0: none */
        bool warn_armed;                /* v1: the source wakes us when the usage crosses it */
        uint64_t high_bytes;            /* cgroup v2: memory.high now (UINT64_MAX: "max"); 0 on v1 */
} ScopeGuard;

/* Arms a guard on a watched cgroup's scope: reads its memory limit, takes
 * guard_bytes (or guard_percent of the limit) as the scope's headroom floor
 * and, on the v1 memcg source, a usage threshold at the mark, and one at
 * twice the guard below the limit, where a headroom under twice the guard
 * is announced MEDIUM before the band's OOM (nothing throttles a v1
 * memcg: the band itself is crossed in a moment). On cgroup v2,
 * while the cgroup's memory.high is at the mark or below (the kernel
 * throttles it there instead of killing), a headroom in the band is
 * announced MEDIUM for grace_usec before it is the OOM (0: at once). Both 0: the
 * guard is taken off. 0 with *ret filled in; -ENODATA when the cgroup has no
 * limit, -ERANGE when the guard is the whole limit or more (the guard is
 * off then), -ESTALE for a gone scope, or a read's negative errno. Off the
 * OOM path: it reads files and may open an eventfd. */
int manager_guard(Manager *m, Scope *s, uint64_t guard_bytes, unsigned guard_percent, usec_t grace_usec,
                  ScopeGuard *ret);

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
 * remembered as unwatched (ABSENT, *ret NULL), waited for with inotify and
 * watched when it appears; a scope whose cgroup goes away is freed and
 * remembered the same way. -E2BIG when scopes_max scopes are watched:
 * logged at warning, listed as TABLE_FULL (UnwatchedCgroups, vmpressurectl
 * status) and watched as soon as a scope is free. -ENOMEM. */
/* Start-up, after mlockall(): the reads an OOM makes, once, so that their
 * code and buffers are resident before it. */
void manager_rehearse(Manager *m);
int manager_watch(Manager *m, const char *cgroup, Scope **ret);
/* How many wanted cgroups are unwatched for that reason. */
size_t manager_count_unwatched(const Manager *m, UnwatchedReason reason);

void manager_set_reload_hook(Manager *m, manager_reload_hook_t hook, void *userdata);
/* Whether an OOM with memory left reads the memory stall (PSI "full") into
 * its LevelEvent before the listeners: only a policy that may kill at OOM
 * uses it (StallLimit=, the held kill's line). Wanted unless the responder
 * says no policy kills; without it the event's stall_known is false. */
void manager_set_stall_wanted(Manager *m, bool wanted);
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

/* ---- what the others read --------------------------------------------------- */

sd_event *manager_event(const Manager *m);
/* The running configuration (manager_reload() changes part of it). */
const Config *manager_config(const Manager *m);
const SourceEnv *manager_env(const Manager *m);
const LatencyStats *manager_latency(const Manager *m);
const RecentActions *manager_recent_actions(const Manager *m);
/* For the bus: the announcement stage, measured where the signals went out. */
void manager_record_latency(Manager *m, LatencyStage stage, bool simulated, usec_t latency_usec);

/* Scopes: [0] is -.slice (NULL before manager_start()), the others in the
 * order watched. An index is valid until the loop runs again (a gone scope
 * is freed from a defer source). */
size_t manager_n_scopes(const Manager *m);
Scope *manager_scope(const Manager *m, size_t i);
Scope *manager_system_scope(const Manager *m);
size_t manager_n_unwatched(const Manager *m);
const Unwatched *manager_unwatched(const Manager *m, size_t i);

Manager *scope_manager(const Scope *s);
bool scope_is_system(const Scope *s);
const char *scope_name(const Scope *s);
const char *scope_cgroup(const Scope *s);       /* "" for the whole system */
/* Announcements are marked simulated now (from a Simulate() until NONE). */
bool scope_simulated(const Scope *s);

/* What the bus and the status say of a scope: borrowed strings, valid as
 * long as the scope. */
typedef struct ScopeStatus {
        const char *name;
        const char *cgroup;
        Level level;
        unsigned index;
        SourceType source_type;         /* _SOURCE_TYPE_INVALID: none (gone) */
        const char *source;             /* its name, NULL for none */
        const char *source_detail;      /* what it reads and what wakes it, "" when the name says it all */
        bool gone;
        usec_t last_change_usec;
        uint64_t announced[_LEVEL_MAX];
        bool simulated;                 /* as scope_simulated() */
        uint64_t simulated_count;       /* Simulate() calls */
        uint64_t simulated_announced[_LEVEL_MAX];
} ScopeStatus;

void scope_status(const Scope *s, ScopeStatus *ret);
