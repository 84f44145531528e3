/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Victim choice: pure. Candidate records in, an index out. The rules live
 * here and nowhere else: never PID 1, never a kernel thread,
 * never the daemon itself, never a process of a unit not marked killable
 * (Kill=yes), never one the administrator made unkillable for the kernel's
 * OOM killer too (oom_score_adj -1000).
 */

#include <sys/types.h>

#include "proc-pid.h"

#define OOM_SCORE_ADJ_MIN (-1000)

typedef struct Candidate {
        pid_t pid;
        pid_t ppid;
        uint64_t starttime_ticks;       /* identity: re-checked through the pidfd before the kill */
        uint64_t rss_bytes;
        int oom_score_adj;
        bool is_kernel_thread;
        char comm[PROC_COMM_MAX];
        const char *unit;               /* borrowed: the manager's unit table outlives the array */
        bool unit_marked_killable;      /* the unit's policy has [OOM] Kill=yes */
} Candidate;

typedef enum VictimVerdict {
        VICTIM_OK,
        VICTIM_PID1,
        VICTIM_SELF,
        VICTIM_KERNEL_THREAD,
        VICTIM_UNMARKED,                /* its unit has no Kill=yes */
        VICTIM_OOM_DISABLED,            /* oom_score_adj -1000 */
        VICTIM_NO_MEMORY,               /* RSS 0: a zombie or exiting, killing frees nothing */
        VICTIM_BAD_PID,                 /* pid ≤ 0 */
        _VICTIM_VERDICT_MAX,
        _VICTIM_VERDICT_INVALID = -EINVAL,
} VictimVerdict;

const char *victim_verdict_to_string(VictimVerdict v);

/* Whether c may be killed by a daemon whose own pid is self_pid. */
VictimVerdict victim_check(const Candidate *c, pid_t self_pid);

/* Orders a before b when a is the better victim: larger RSS, then higher
 * oom_score_adj (the administrator's preference), then younger (later
 * start: less work lost), then higher pid. A total order whatever the
 * array order, so the choice is deterministic. <0, 0 (same record), >0. */
int victim_compare(const Candidate *a, const Candidate *b);

/* The index of the victim among c[0..n), or -ESRCH when none may be
 * killed. One pass, no allocation: 10,000 candidates in well under 1 ms. */
int victim_select(const Candidate *c, size_t n, pid_t self_pid);

/* The choice of victim_select() over a stream of candidates that are not
 * kept anywhere (the responder reads one process at a time): only the best
 * so far is stored, so any number of processes can be looked at in fixed
 * memory. victim_compare() is a total order, so the choice is the one
 * victim_select() would make over the same candidates, in any order. */
typedef struct VictimBest {
        Candidate best;                 /* valid when found */
        bool found;
        uint64_t n_seen;                /* offered */
        uint64_t n_eligible;            /* of those, victim_check() OK (of those skipped by
                                         * victim_best_skip(), none is counted) */
} VictimBest;

void victim_best_init(VictimBest *b);
/* Offers c: true when it may be killed and is the best so far (then it
 * was copied into b->best; c->unit stays borrowed). */
bool victim_best_offer(VictimBest *b, const Candidate *c, pid_t self_pid);
/* Before a candidate is read in full: true (and it is counted as seen)
 * when what is known of it already (pid, RSS, kernel thread: stat) rules
 * it out, whatever its oom_score_adj — it may not be killed, or it is
 * smaller than the best so far (RSS is the first key of victim_compare()).
 * The choice stays victim_select()'s: an equal RSS is read in full. */
bool victim_best_skip(VictimBest *b, const Candidate *partial, pid_t self_pid);

/* KillTarget=unit: the indices of the candidates of unit that may be
 * killed, best victim first, in ret_idx (room for max): all of them when
 * there are at most max, else the best max. Returns how many indices were
 * stored (never more than max); ret_eligible (may be NULL) gets how many
 * may be killed in all. O(n log max), no allocation. */
size_t victim_select_unit(const Candidate *c, size_t n, const char *unit, pid_t self_pid,
                          size_t *ret_idx, size_t max, size_t *ret_eligible);

/* SignalTarget=main without systemd: the unit's main process among the
 * processes of its cgroup: the root of the process tree there (its parent
 * is not in the cgroup), the oldest if there are several, then the lowest
 * pid. PID 1, kernel threads and self_pid are never chosen. The index, or
 * -ESRCH. O(n log n) with scratch (room for n indices); without scratch
 * (NULL) O(n²), fine for a few hundred. */
int victim_main_process(const Candidate *c, size_t n, pid_t self_pid, size_t *scratch);
