/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reads processes from /proc and cgroup directories into the records the
 * pure modules take (proc-pid.h parses, victim.h decides). Fixed-size
 * buffers on the stack: nothing is allocated, so it works on the OOM path.
 * The responder asks task-iter.h first where it was loaded: the same
 * records read in the kernel; this is the way that works everywhere. */

#include "victim.h"

/* Each level of nesting adds at least "/x" to a cgroup's path, so no
 * cgroup that can be opened by path is deeper below the walk's start than
 * this: the walk keeps one resume position per level, never more. */
#define CGROUP_WALK_LEVELS_MAX (PATH_MAX / 2)

/* /proc/<pid>/stat of one process. -ESRCH when it is gone. */
int proc_read_stat(const char *proc_root, pid_t pid, ProcStat *ret);

/* One process's record: stat (RSS, start time, flags, comm) and
 * oom_score_adj. unit and unit_marked_killable are left
 * for the caller. -ESRCH when the process is gone. */
int proc_read_candidate(const char *proc_root, pid_t pid, uint64_t page_size, Candidate *ret);

/* The pids in cgroup_dir/cgroup.procs (not below), at most max stored.
 * Returns how many the file listed (may exceed max), or negative errno
 * (-ENOENT: the cgroup is gone). */
int cgroup_read_procs(const char *cgroup_dir, pid_t *pids, size_t max);

/* Called for every pid listed; a negative return stops the walk and is
 * returned. */
typedef int (*cgroup_pid_handler_t)(pid_t pid, void *userdata);

/* Streams the pids of cgroup_dir and of every cgroup below it, at any
 * depth, without a limit on their number. Depth first, one directory open
 * at a time: for each level only the getdents64 position to resume at is
 * kept (CGROUP_WALK_LEVELS_MAX of them, 16 KiB), and a directory is opened
 * again when the walk comes back up to it, so memory is fixed (about
 * 23 KiB of stack) whatever the nesting. A cgroup whose cgroup.procs path
 * would not fit in PATH_MAX (4,096 bytes: over 2,000 levels below a unit)
 * cannot be opened by path; it is skipped, with a warning. Returns how many
 * pids were listed, or negative errno (-ENOENT: cgroup_dir is gone; a
 * negative handler return stops the walk and is returned). A child cgroup
 * removed during the walk is skipped. A pid listed was in the cgroup when
 * the file was read: a handler that acts on it must pin it (pidfd) and
 * check it is still the same process. */
int cgroup_walk_pids(const char *cgroup_dir, cgroup_pid_handler_t handler, void *userdata);

/* Called with the record of each process found (unit and
 * unit_marked_killable unset: the caller's to fill); the handler may change
 * it. A negative return stops the scan and is returned. */
typedef int (*proc_candidate_handler_t)(Candidate *c, void *userdata);

/* Called with what /proc/<pid>/stat gave (oom_score_adj not read yet, 0):
 * false skips the process, and its oom_score_adj is never read. */
typedef bool (*proc_candidate_filter_t)(const Candidate *partial, void *userdata);

/* proc_scan_cgroup_foreach() with a filter (may be NULL) that rules
 * processes out before their oom_score_adj is read. */
int proc_scan_cgroup_foreach_filtered(const char *proc_root, const char *cgroup_dir, uint64_t page_size,
                                      proc_candidate_filter_t filter, proc_candidate_handler_t handler,
                                      void *userdata);

/* The record of every process in cgroup_dir and below (cgroup_walk_pids()),
 * one at a time in a stack buffer: nothing is stored, so any number of
 * processes can be looked at. Processes that exit meanwhile are skipped.
 * Returns how many pids were listed, or negative errno. */
int proc_scan_cgroup_foreach(const char *proc_root, const char *cgroup_dir, uint64_t page_size,
                             proc_candidate_handler_t handler, void *userdata);

/* Candidates for every process in cgroup_dir and its child cgroups,
 * appended to cands[*n..max) with unit and marked set. Processes that
 * exit meanwhile are skipped. Returns how many processes were found (may
 * exceed what fitted), or negative errno for cgroup_dir itself. */
int proc_scan_cgroup(const char *proc_root, const char *cgroup_dir, const char *unit, bool marked,
                     uint64_t page_size, Candidate *cands, size_t max, size_t *n);
