/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reads processes from /proc and cgroup directories into the records the
 * pure modules take (proc-pid.h parses, victim.h decides). Fixed-size
 * buffers on the stack: nothing is allocated, so it works on the OOM path. */

#include "victim.h"

#define PROC_SCAN_DEPTH_MAX 32          /* nested cgroups below a unit's cgroup */

/* /proc/<pid>/stat of one process. -ESRCH when it is gone. */
int proc_read_stat(const char *proc_root, pid_t pid, ProcStat *ret);

/* One process's record: stat (RSS, start time, flags, comm), oom_score_adj
 * and the owner of /proc/<pid>. unit and unit_marked_killable are left
 * for the caller. -ESRCH when the process is gone. */
int proc_read_candidate(const char *proc_root, pid_t pid, uint64_t page_size, Candidate *ret);

/* The pids in cgroup_dir/cgroup.procs (not below), at most max stored.
 * Returns how many the file listed (may exceed max), or negative errno
 * (-ENOENT: the cgroup is gone). */
int cgroup_read_procs(const char *cgroup_dir, pid_t *pids, size_t max);

/* Called for every pid listed; a negative return stops the walk and is
 * returned. */
typedef int (*cgroup_pid_handler_t)(pid_t pid, void *userdata);

/* Streams the pids of cgroup_dir and its child cgroups (depth ≤
 * PROC_SCAN_DEPTH_MAX), without a limit on their number. Returns how many
 * were listed, or negative errno (-ENOENT: cgroup_dir is gone). A pid
 * listed was in the cgroup when the file was read: a handler that acts on
 * it must pin it (pidfd) and check it is still the same process. */
int cgroup_walk_pids(const char *cgroup_dir, cgroup_pid_handler_t handler, void *userdata);

/* Candidates for every process in cgroup_dir and its child cgroups,
 * appended to cands[*n..max) with unit and marked set. Processes that
 * exit meanwhile are skipped. Returns how many processes were found (may
 * exceed what fitted), or negative errno for cgroup_dir itself. */
int proc_scan_cgroup(const char *proc_root, const char *cgroup_dir, const char *unit, bool marked,
                     uint64_t page_size, Candidate *cands, size_t max, size_t *n);
