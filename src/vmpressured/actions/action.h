/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Actions: the only code that changes the system. One ops table, two
 * implementations: action_ops_real (signals and kills) and
 * action_ops_dry_run (checks the same rules, logs what it would do, and
 * does nothing). The ops log every action themselves, at NOTICE with
 * MESSAGE_ID_ACTION / MESSAGE_ID_KILL and VMP_* fields; the manager
 * decides *whether* to act and emits the bus signals.
 *
 * Kills go through a pidfd: pidfd_open(pid) first, then the process is
 * re-read and must still be the one chosen (same start time), else the pid
 * was reused and nothing is done; then pidfd_send_signal(SIGKILL) and
 * process_mrelease() so its memory is freed at once, not when it gets to
 * run its exit path. The one window left is between reading cgroup.procs
 * and reading /proc/<pid>/stat when the candidates are scanned
 * (microseconds): a pid would have to be freed and the whole pid space
 * wrap around inside it.
 */

#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "policy.h"
#include "victim.h"

/* SignalTarget=main without systemd looks at this many processes of the
 * unit to find its main process (the rest are not considered). */
#define ACTION_PROCS_MAX 1024

/* After a kill, no other kill for this long: the freed memory needs time
 * to show in the pressure signals, and an OOM event queued before the kill
 * must not take a second victim. */
#define KILL_PAUSE_DEFAULT_USEC (1 * USEC_PER_SEC)

typedef struct ActionContext {
        pid_t self_pid;                 /* never signalled, never killed */
        char proc_root[64];             /* "/proc" */
        uint64_t page_size;
        /* PID 1's bus when PID 1 is systemd (signals then go through
         * KillUnit); NULL: signals go to the pids of the unit's cgroup.
         * Not owned. */
        sd_bus *systemd_bus;
        /* For SignalTarget=main without systemd: preallocated, so nothing
         * is allocated between an OOM event and the signal. */
        Candidate procs[ACTION_PROCS_MAX];
        size_t scratch[ACTION_PROCS_MAX];
} ActionContext;

/* self_pid 0: getpid(). -ENOMEM. */
int action_context_new(pid_t self_pid, sd_bus *systemd_bus, ActionContext **ret);
ActionContext *action_context_free(ActionContext *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(ActionContext *, action_context_free);

typedef struct KillRequest {
        pid_t pid;
        uint64_t starttime_ticks;       /* /proc/<pid>/stat field 22 when the victim was chosen */
        const char *unit;               /* for the log */
        const char *comm;
        uint64_t rss_bytes;
        const char *reason;             /* "OOM on -.slice", for the log and the Killed signal */
} KillRequest;

typedef struct KillResult {
        int mrelease_error;             /* 0: the memory is freed (by process_mrelease(), or the
                                         * victim's exit was faster); else negative errno */
} KillResult;

typedef struct ActionOps {
        const char *name;               /* "real", "dry-run" */

        /* Sends sig to the unit's main process or to all its processes.
         * With ctx->systemd_bus: KillUnit(unit, "main"|"all", sig), queued
         * (never blocks; a failure is logged when the reply comes), returns 0.
         * Else through the pids of cgroup_dir (the unit's cgroup directory
         * and its children), each by pidfd, never PID 1 or ctx->self_pid:
         * returns how many were signalled (dry run: would be), -ESRCH when
         * there was none, -ENOENT when cgroup_dir does not exist. */
        int (*signal_unit)(ActionContext *ctx, const char *unit, const char *cgroup_dir, int sig,
                           SignalTarget target);

        /* Kills the process that victim_select() chose.
         * 1: killed (dry run: 0, it would have been);
         * -EPERM: refused (PID 1, ctx->self_pid, a kernel thread);
         * -ESRCH: already gone; -ESTALE: the pid now belongs to another
         * process, nothing was done; other negative errno: the kill failed. */
        int (*kill_process)(ActionContext *ctx, const KillRequest *req, KillResult *ret);
} ActionOps;

/* The kill path without the kill, for a start-up rehearsal on a live
 * process (the daemon itself): pidfd, the identity check, a pidfd signal 0
 * and the journal record formatted but not written (log_set_rehearsal()).
 * 0, or negative errno. */
int action_rehearse_kill(ActionContext *ctx, const KillRequest *req);

extern const ActionOps action_ops_real;
extern const ActionOps action_ops_dry_run;

/* ---- shared helpers (also what the dry run checks) ---- */

/* The rules a kill request must pass before anything is opened: 0 or -EPERM. */
int action_kill_allowed(const ActionContext *ctx, const KillRequest *req);

/* Opens a pidfd for pid and checks through /proc that it is still the
 * process that started at starttime_ticks and not a kernel thread.
 * Returns the pidfd (O_CLOEXEC), or -ESRCH, -ESTALE, -EPERM (kernel
 * thread), other negative errno. */
int action_pidfd_open_verified(const ActionContext *ctx, pid_t pid, uint64_t starttime_ticks);

/* ---- the pause after a kill (pure: time comes in) ---- */

typedef struct KillPacer {
        usec_t pause_usec;
        usec_t last_kill_usec;
        bool have_last;
} KillPacer;

void kill_pacer_init(KillPacer *p, usec_t pause_usec);
/* Whether a kill may happen for an event at now_usec (CLOCK_MONOTONIC). An
 * event older than the last kill + pause may not kill: it may be the very
 * pressure that the last kill relieved. */
bool kill_pacer_may_kill(const KillPacer *p, usec_t now_usec);
void kill_pacer_record(KillPacer *p, usec_t now_usec);
/* When the next kill may happen: 0 when it may now (no kill yet). */
usec_t kill_pacer_next_usec(const KillPacer *p);

/* ---- systemd (action-systemd.c) ---- */

/* org.freedesktop.systemd1.Manager.KillUnit(unit, "main"|"all", sig),
 * asynchronous: returns 0 once queued, the reply's error (if any) is logged.
 * Negative errno when it could not be queued. */
int systemd_kill_unit(sd_bus *bus, const char *unit, SignalTarget target, int sig);

/* Guard='s memory.high (action-memory-high.c). Without systemd: written
 * into <cgroup2_root>/<cgroup>/memory.high, UINT64_MAX as "max". Under
 * systemd: SetUnitProperties(unit, runtime, MemoryHigh=bytes), built here
 * and sent by the caller (asynchronously when it arms a guard, with a
 * timeout when it takes one back at exit). 0, or negative errno. */
int cgroup_write_memory_high(const char *cgroup2_root, const char *cgroup, uint64_t bytes);
int systemd_memory_high_message(sd_bus *bus, const char *unit, uint64_t bytes, sd_bus_message **ret);
