/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The responder turns announced levels into the administrator's policies:
 * a signal to a unit at the level its policy names, and at OOM the kill of
 * the largest process of the units marked Kill=yes (with KillTarget=unit:
 * of every process of that one's unit).
 *
 * It is the impure half of that: it gathers the data (the units with a
 * policy in force from systemd's cache or the system.slice directory, the
 * processes of their cgroups through proc_scan_cgroup_foreach()), asks the
 * pure plan (responder-plan.h) what to do, carries the plan out through an
 * ActionOps table (real or dry run: the same plan either way) and records
 * it (manager_record_action(), --print-events, the Killed signal). Which
 * unit, which signal, in what order, whether a signal or a kill is held
 * back, whose processes are looked at and what is killed are the plan's.
 *
 * At OOM every process of every marked unit is looked at, however many
 * there are and however deep their cgroups are nested: the processes are
 * read one at a time and offered to the plan, which keeps only the best
 * victim so far. KillTarget=unit then walks the unit's cgroups again and
 * kills every process that may be killed, in batches of
 * RESPONDER_KILL_BATCH (each batch largest first), so a unit of any size is
 * killed whole with a fixed table. Nothing is allocated from the OOM
 * announcement to the kill: the tables below are the responder's.
 */

#include "action.h"
#include "manager.h"
#include "policy.h"
#include "responder-plan.h"
#include "signal-limit.h"
#include "systemd-units.h"

#define RESPONDER_UNITS_MAX PLAN_UNITS_MAX /* units with a policy looked at in one pass */
/* KillTarget=unit kills this many processes at a time, best first within
 * each batch; a unit with more is killed in several batches. */
#define RESPONDER_KILL_BATCH 1024

typedef struct Responder Responder;

/* After every kill (Killed signal on the bus). */
typedef void (*responder_killed_handler_t)(Responder *r, const char *unit, pid_t pid, const char *comm,
                                           uint64_t rss_bytes, const char *reason, void *userdata);

struct Responder {
        Manager *manager;
        PolicySet *policies;
        const char *const *policy_dirs;
        size_t n_policy_dirs;
        const ActionOps *ops;
        ActionContext *ctx;
        /* The pause after a kill: plan_build() reads it, plan_victim_decide()
         * starts it when a victim is chosen. */
        KillPacer pacer;
        char cgroup_root[PATH_MAX];     /* where units' processes are: cgroup2, else memcg v1 */
        /* PID 1's bus when PID 1 is systemd: signals then go through KillUnit. */
        bool systemd;
        struct sd_bus *(*get_bus)(void *userdata);
        void *get_bus_userdata;
        responder_killed_handler_t on_killed;
        void *on_killed_userdata;
        uint64_t n_signals;
        uint64_t n_kills;
        /* Under systemd: unit → cgroup from systemd (ControlGroup), kept
         * fresh off the OOM path; NULL without systemd. */
        SystemdUnits *systemd_units;
        /* SignalIntervalSec=: when each unit last got each level's signal
         * (plan_build() records it); signal_limit.suppressed counts what was
         * held back. */
        SignalLimit signal_limit;
        /* Preallocated for the OOM path: nothing is allocated from the OOM
         * announcement to the kill. */
        char unit_names[RESPONDER_UNITS_MAX][UNIT_NAME_MAX];
        /* The plan's input for this pass: units[i] is unit_names[i], its
         * policy, and its cgroup (below cgroup_root) borrowed from
         * systemd_units' cache, or NULL for the system.slice layout. */
        PlanUnit units[RESPONDER_UNITS_MAX];
        Plan plan;                      /* this pass's actions, in order */
        Candidate batch[RESPONDER_KILL_BATCH];  /* KillTarget=unit: the plan's batch table */
        size_t picked[RESPONDER_KILL_BATCH];
        char dirent_buf[32 * 1024];
};

/* Loads the policies from dirs (NULL: the default three), watches the cgroups
 * of unit-scope policies and registers with the manager. Problems in policy
 * files are logged; valid files still load. */
int responder_new(Manager *m, const char *const *dirs, size_t n_dirs, Responder **ret);
Responder *responder_free(Responder *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Responder *, responder_free);

void responder_set_killed_handler(Responder *r, responder_killed_handler_t h, void *userdata);
/* Where the current system bus connection comes from (it changes on reconnection). */
void responder_set_bus_getter(Responder *r, struct sd_bus *(*get_bus)(void *userdata), void *userdata);

/* Loads the policy directories again. With problems the previous policies
 * stay and the problems are returned in diag (-EINVAL); 0 when the new set
 * is in force. */
int responder_reload(Responder *r, Diagnostics *diag);
