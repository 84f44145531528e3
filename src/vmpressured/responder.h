/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The responder turns announced levels into the administrator's policies:
 * a signal to a unit at the level its policy names, and at OOM the kill of
 * the largest process of the units marked Kill=yes (with KillTarget=unit:
 * of every process of that one's unit). It listens to the manager, decides
 * with the pure modules (policy, victim) and acts only through an
 * ActionOps table (real or dry run).
 *
 * At OOM every process of every marked unit is looked at, however many
 * there are and however deep their cgroups are nested: the processes are
 * read one at a time (proc_scan_cgroup_foreach()) and only the best victim
 * so far is kept (VictimBest). KillTarget=unit then walks the unit's
 * cgroups again and kills every process that may be killed, in batches of
 * RESPONDER_KILL_BATCH (each batch largest first), so a unit of any size is
 * killed whole with a fixed table.
 */

#include "action.h"
#include "manager.h"
#include "policy.h"
#include "signal-limit.h"
#include "systemd-units.h"

#define RESPONDER_UNITS_MAX 512         /* units with a policy looked at in one pass */
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
        /* SignalIntervalSec=: when each unit last got each level's signal;
         * signal_limit.suppressed counts what was held back. */
        SignalLimit signal_limit;
        /* Preallocated for the OOM path: nothing is allocated from the OOM
         * announcement to the kill. */
        char units[RESPONDER_UNITS_MAX][UNIT_NAME_MAX];
        /* The cgroup (below cgroup_root) of units[i] for this pass, borrowed
         * from systemd_units' cache; NULL: the system.slice layout. */
        const char *unit_cgroups[RESPONDER_UNITS_MAX];
        Candidate batch[RESPONDER_KILL_BATCH];
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
