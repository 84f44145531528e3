/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The responder's decisions, pure: plain data in, the actions to take out.
 * No I/O, no clock (time comes from the level event), nothing allocated,
 * nothing logged above debug. responder.c gathers the data (the units and
 * their cgroups, the processes), calls this module and carries out what it
 * says through an ActionOps table; a dry run gets the same plan.
 *
 * Three steps, each fed by the one before:
 *
 *   plan_build()       level event + units + policies + SignalLimit + KillPacer
 *                      → signals, signals held back (SignalIntervalSec=), and at
 *                        OOM the kill decision: scan these units, or held back
 *                        (a kill happened less than the pause ago);
 *   plan_victim_*()    the candidates of the scanned units, in any chunks
 *                      → nothing to kill, the largest process (KillTarget=largest),
 *                        or the victim's whole unit (KillTarget=unit);
 *   plan_batch_*()     KillTarget=unit: that unit's candidates, in any chunks
 *                      → every one that may be killed, a batch at a time, each
 *                        batch best victim first.
 *
 * Which process may be killed and which is the better victim is victim.c's
 * rule (victim_check(), VictimBest, victim_select_unit()); this module only
 * says whose candidates are looked at and what becomes of the choice.
 */

#include "action.h"
#include "level.h"
#include "policy.h"
#include "signal-limit.h"
#include "victim.h"

/* Units with a policy looked at in one pass. */
#define PLAN_UNITS_MAX 512
/* Worst case: every unit has a signal at each of LOW, MEDIUM and OOM (a jump
 * from NONE to OOM), then one kill decision. */
#define PLAN_ACTIONS_MAX (PLAN_UNITS_MAX * (_LEVEL_MAX - 1) + 1)

/* One unit with a policy in force, as the caller found it. */
typedef struct PlanUnit {
        const char *name;               /* borrowed */
        /* Its cgroup below the hierarchies' root (slashes at either end do
         * not count), borrowed; NULL: where systemd puts it by default
         * (unit_name_to_cgroup_path(): system.slice/<name>). */
        const char *cgroup;
        const Policy *policy;           /* borrowed; POLICY_LOADED */
} PlanUnit;

/* The scope the level event is for. */
typedef struct PlanScope {
        bool system;                    /* the whole system's (-.slice) */
        const char *cgroup;             /* below the root; "" for the system */
} PlanScope;

typedef struct PlanInput {
        const PlanUnit *units;
        size_t n_units;                 /* ≤ PLAN_UNITS_MAX */
        PlanScope scope;
        const LevelEvent *event;
} PlanInput;

typedef enum PlanActionType {
        PLAN_SIGNAL,                    /* send signal to target of units[unit] */
        PLAN_SIGNAL_HELD,               /* that signal is held back: why, until next_usec */
        PLAN_KILL_SCAN,                 /* OOM: look for a victim among plan.kill_units */
        PLAN_KILL_HELD,                 /* OOM, but no kill now: why, until next_usec */
        _PLAN_ACTION_TYPE_MAX,
        _PLAN_ACTION_TYPE_INVALID = -EINVAL,
} PlanActionType;

typedef enum PlanHeld {
        PLAN_HELD_NONE,
        PLAN_HELD_SIGNAL_INTERVAL,      /* SignalIntervalSec= since that unit's last signal of that level */
        PLAN_HELD_KILL_PAUSE,           /* KillPacer: less than the pause since the last kill */
        PLAN_HELD_MEMORY_LEFT,          /* an OOM of reclaim inefficiency with the headroom above the floor */
        _PLAN_HELD_MAX,
        _PLAN_HELD_INVALID = -EINVAL,
} PlanHeld;

typedef struct PlanAction {
        PlanActionType type;
        Level level;
        size_t unit;                    /* PLAN_SIGNAL*: index in PlanInput.units */
        int signal;                     /* PLAN_SIGNAL*: the policy's Signal= at level */
        SignalTarget target;            /* PLAN_SIGNAL*: its SignalTarget= */
        PlanHeld why;                   /* *_HELD; PLAN_HELD_NONE otherwise */
        usec_t next_usec;               /* *_HELD: when it may go again */
        usec_t interval_usec;           /* PLAN_SIGNAL_HELD: SignalIntervalSec= */
        uint64_t suppressed;            /* PLAN_SIGNAL_HELD: the unit's signals held back so far */
        /* PLAN_KILL_SCAN of a thrash (the event had memory left): only the
         * units whose StallLimit= the stall reached are scanned; the
         * stall, in hundredths of a percent, of the first of them. */
        bool for_stall;
        unsigned stall_permyriad;
} PlanAction;

typedef struct Plan {
        PlanAction actions[PLAN_ACTIONS_MAX];
        size_t n_actions;
        /* PLAN_KILL_SCAN: the units whose processes are looked at, indices in
         * PlanInput.units, in its order (may be none: then nothing can be
         * killed, which is worth saying). */
        size_t kill_units[PLAN_UNITS_MAX];
        size_t n_kill_units;
} Plan;

const char *plan_action_type_to_string(PlanActionType t);
const char *plan_held_to_string(PlanHeld h);

/* Whether p asks for anything at any level: a Signal= or Kill=yes. Only
 * such units are worth listing. */
bool plan_policy_has_actions(const Policy *p);

/* Whether ev calls for anything, whatever the units: a rise (signals), or
 * OOM, first or repeated (kills). Lets the caller skip listing the units. */
bool plan_event_wants_action(const LevelEvent *ev);

/* The cgroup of u below the hierarchies' root, without a leading '/'.
 * 0, -ENOBUFS, -EINVAL (no default layout for that name). */
int plan_unit_cgroup(const PlanUnit *u, char *buf, size_t size);

/* Whether a level event of scope may act on u: a Scope=system policy on the
 * system's events, a Scope=unit policy on those of the unit's own cgroup,
 * compared by path, never by name (a scope named "db.service" may be
 * other.slice/db.service, watched with --watch=). */
bool plan_scope_covers(const PlanScope *scope, const PlanUnit *u);

/* Fills *ret with the actions in->event calls for, in the order they are to
 * be taken, and returns how many:
 *
 *   1. on a rise, the signals of every level passed on the way up, lowest
 *      level first and the units in their order within a level (a jump from
 *      NONE to OOM still gives a unit its LOW and MEDIUM signals, its chance
 *      to flush caches); once per rise: none for a repeat, none on a fall;
 *   2. at OOM, first or repeated, the kill decision (PLAN_KILL_SCAN or
 *      PLAN_KILL_HELD) last, after the signals.
 *
 * That order is this function's and nobody else's: the caller takes the
 * actions in array order.
 *
 * Signals go through limit (SignalIntervalSec=): one that may go is recorded
 * there as gone at the event's time; one held back is counted there and
 * comes out as PLAN_SIGNAL_HELD. pacer is only read: the pause starts when a
 * victim is chosen (plan_victim_decide()). Nothing for no units. */
size_t plan_build(const PlanInput *in, SignalLimit *limit, const KillPacer *pacer, Plan *ret);

/* ---- the victim: candidates of the PLAN_KILL_SCAN units, in any chunks ---- */

typedef struct PlanVictim {
        VictimBest best;
        pid_t self_pid;
        size_t best_unit;               /* index in PlanInput.units of best.best */
} PlanVictim;

typedef enum PlanKillKind {
        PLAN_KILL_NONE,                 /* no candidate may be killed: nothing to kill */
        PLAN_KILL_LARGEST,              /* kill victim */
        PLAN_KILL_UNIT,                 /* kill every process of units[unit] that may be killed (plan_batch_*) */
        _PLAN_KILL_KIND_MAX,
        _PLAN_KILL_KIND_INVALID = -EINVAL,
} PlanKillKind;

typedef struct PlanKill {
        PlanKillKind kind;
        size_t unit;                    /* LARGEST, UNIT: index in PlanInput.units */
        Candidate victim;               /* LARGEST, UNIT: the best victim (.unit borrowed) */
        uint64_t n_seen;                /* candidates offered */
        uint64_t n_eligible;            /* of those, ones that may be killed */
} PlanKill;

const char *plan_kill_kind_to_string(PlanKillKind k);

/* self_pid: the daemon's own, never chosen. */
void plan_victim_init(PlanVictim *v, pid_t self_pid);
/* Offers c[0..n), processes of units[unit]: each is taken as that unit's
 * (Candidate.unit, and .unit_marked_killable from its [OOM] Kill=) and
 * kept if it is the best victim so far. Any chunking gives the same choice
 * (victim_compare() is a total order). */
void plan_victim_offer(PlanVictim *v, const PlanUnit *units, size_t unit, const Candidate *c, size_t n);
/* What to kill, from the policy of the best victim's unit (KillTarget=). A
 * victim chosen starts the pause in pacer at now_usec (the event's time),
 * whether or not its kill then succeeds. Returns ret->kind. */
PlanKillKind plan_victim_decide(const PlanVictim *v, const PlanUnit *units, KillPacer *pacer, usec_t now_usec,
                                PlanKill *ret);

/* ---- KillTarget=unit: every process of one unit, a batch at a time ---- */

typedef struct PlanBatch {
        const PlanUnit *unit;
        pid_t self_pid;
        Candidate *table;               /* the caller's, room for max */
        size_t *order;                  /* the caller's, room for max */
        size_t max;
        size_t n;                       /* in table */
        size_t n_order;                 /* of the batch last taken */
        uint64_t n_batches;             /* taken so far (empty takes do not count) */
        uint64_t n_picked;              /* candidates in those batches */
} PlanBatch;

void plan_batch_init(PlanBatch *b, const PlanUnit *unit, pid_t self_pid, Candidate *table, size_t *order,
                     size_t max);
/* Adds the candidates of c[0..n) that may be killed (taken as the unit's,
 * as plan_victim_offer()). Returns how many of c were consumed: it stops as
 * soon as the batch is full (plan_batch_full()); then plan_batch_take(),
 * kill those, and add the rest. */
size_t plan_batch_add(PlanBatch *b, const Candidate *c, size_t n);
bool plan_batch_full(const PlanBatch *b);
/* Ends the batch: returns how many to kill (0 when it is empty); they are
 * b->table[b->order[0..k)], best victim first, valid until the next add. */
size_t plan_batch_take(PlanBatch *b);
