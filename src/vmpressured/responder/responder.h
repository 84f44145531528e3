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
#include "guard.h"
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

/* What the bus shows of the responder: counters since start-up. */
typedef struct ResponderCounters {
        uint64_t n_signals;             /* signals sent */
        uint64_t n_kills;               /* processes killed */
        uint64_t n_signals_suppressed;  /* held back by SignalIntervalSec= */
} ResponderCounters;


/* Loads the policies from dirs (NULL: the default three), watches the cgroups
 * of unit-scope policies and registers with the manager. Problems in policy
 * files are logged; valid files still load. */
int responder_new(Manager *m, const char *const *dirs, size_t n_dirs, Responder **ret);

/* Runs the OOM path once on the daemon itself, without a kill, so that its
 * code, stack and heap pages are faulted in (and locked, after mlockall())
 * before an OOM needs them: the process read as a candidate and offered,
 * the pidfd opened and checked, a signal 0, the kill's journal record
 * formatted and not written. ret (may be NULL): the record read, for the
 * rest of the rehearsal (the bus's Killed signal). 0, or negative errno. */
int responder_rehearse(Responder *r, Candidate *ret);
Responder *responder_free(Responder *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Responder *, responder_free);

void responder_set_killed_handler(Responder *r, responder_killed_handler_t h, void *userdata);
/* Where the current system bus connection comes from (it changes on reconnection). */
void responder_set_bus_getter(Responder *r, struct sd_bus *(*get_bus)(void *userdata), void *userdata);
/* The bus getter's connection is up (Hello answered): under systemd, watch
 * its jobs on it and list the units again. Called by the bus for every
 * connection, the first and each one after a reconnection. */
void responder_bus_connected(Responder *r);

/* Loads the policy directories again. With problems the previous policies
 * stay and the problems are returned in diag (-EINVAL); 0 when the new set
 * is in force. */
int responder_reload(Responder *r, Diagnostics *diag);

/* At exit, before the bus goes: takes back the MemoryHigh= its guards set. */
void responder_shutdown(Responder *r);
/* The guards of Guard= policies, for status. */
const GuardTable *responder_guards(const Responder *r);

/* The policies in force (NULL before any loaded), borrowed until the next reload. */
const PolicySet *responder_policies(const Responder *r);
void responder_counters(const Responder *r, ResponderCounters *ret);
