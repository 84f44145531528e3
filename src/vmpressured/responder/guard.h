/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Guard= ([OOM] of a Scope=unit, Kill=yes policy): the daemon kills a unit
 * that fills its own memory limit before the kernel's OOM killer does, by
 * keeping a band of the limit as a guard and acting when the unit enters it.
 * The kernel gives user space that head start only in these ways:
 *
 *  - cgroup v2: memory.high below memory.max. Above it the kernel throttles
 *    the allocating tasks (mem_cgroup_handle_over_high(): reclaim, then a
 *    sleep that grows with the square of the overage, up to 2 s per return
 *    to user space) and counts "high" in memory.events, which wakes the
 *    daemon; it never invokes the OOM killer there. So the daemon sets the
 *    unit's MemoryHigh= to the mark (MemoryMax= less the guard), at
 *    runtime, through systemd's SetUnitProperties (runtime: a drop-in under
 *    /run, gone at reboot; written into memory.high without systemd), and
 *    takes it back ("infinity") when the guard goes or the daemon stops. A
 *    MemoryHigh= the administrator set is never changed: the guard is then
 *    the headroom floor alone.
 *  - cgroup v1: a usage threshold at the mark (cgroup.event_control on
 *    memory.usage_in_bytes), signalled in the charging task. Nothing
 *    throttles the unit there: the band is what the daemon has to act in.
 *
 * Either way the scope's headroom floor is at least the guard, so the
 * wake-up reads the headroom (limit - usage + inactive file) and announces
 * OOM on the unit's scope once it is under the guard: the policy's Kill=
 * does the rest. Everything here runs off the OOM path (scope start, policy
 * load, bus replies).
 */

#include <systemd/sd-bus.h>

#include "manager.h"
#include "policy.h"
#include "unit-name.h"

/* Units with Guard= followed at once; more are logged and left unguarded. */
#define GUARDS_MAX 64

typedef enum GuardState {
        GUARD_HIGH,                     /* v2: memory.high is at the mark */
        GUARD_HIGH_PENDING,             /* v2: SetUnitProperties sent, no answer yet */
        GUARD_HIGH_KEPT,                /* v2: the unit's own MemoryHigh= is set: kept, the floor alone */
        GUARD_THRESHOLD,                /* v1: the usage threshold is armed */
        GUARD_FLOOR_ONLY,               /* the headroom floor alone (the kernel may win) */
        GUARD_DRY_RUN,                  /* DryRun=: memory.high would be set, is not */
        GUARD_NO_LIMIT,                 /* the unit has no memory limit: nothing to guard */
        GUARD_FAILED,                   /* the guard could not be armed (detail says why) */
        _GUARD_STATE_MAX,
        _GUARD_STATE_INVALID = -EINVAL,
} GuardState;

typedef struct Guard {
        char unit[UNIT_NAME_MAX];       /* "" for a free entry */
        GuardState state;
        ScopeGuard g;
        bool ours;                      /* memory.high was set by us: ours to take back */
        uint64_t generation;            /* a reply for an older request is ignored */
        char cgroup[PATH_MAX];          /* the scope's, below the hierarchy's root */
        char detail[192];
} Guard;

typedef struct GuardTable {
        /* GUARDS_MAX entries, allocated at the first Guard= (off the OOM
         * path), NULL until then: a daemon without guards never touches
         * them (a table in place faulted in 64 pages at every reload). */
        Guard *entries;
        uint64_t generation;
        bool systemd;                   /* PID 1 is systemd: MemoryHigh= through SetUnitProperties */
        const SourceEnv *env;
} GuardTable;

const char *guard_state_to_string(GuardState s);

void guard_table_init(GuardTable *t, bool systemd, const SourceEnv *env);
/* Frees the entries (guard_release_all() first, to take back memory.high). */
void guard_table_done(GuardTable *t);

/* Arms the guard of policy p (NULL or without Guard=: takes it off) on the
 * scope of a unit's cgroup; bus is PID 1's (NULL: not connected yet, then
 * memory.high is set on the next call, at the bus's connection). */
void guard_apply(GuardTable *t, Manager *m, Scope *s, const Policy *p, sd_bus *bus, bool dry_run);

/* Takes back every memory.high set by us and forgets every guard (at exit:
 * synchronous calls to systemd, a short timeout each). */
void guard_release_all(GuardTable *t, sd_bus *bus);

/* Takes back the memory.high set for e (when ours) and frees the entry. */
void guard_forget_entry(GuardTable *t, Guard *e, sd_bus *bus);

/* The guard of a unit, NULL if none. */
const Guard *guard_find(const GuardTable *t, const char *unit);
