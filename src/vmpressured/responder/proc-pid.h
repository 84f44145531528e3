/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Pure parsers for a process's files under /proc/<pid>/ and for
 * cgroup.procs: the text comes in as a parameter (need not be
 * NUL-terminated), so tests and fuzzers feed strings. No allocation. */

#include <sys/types.h>

#include "macro.h"

/* /proc/<pid>/stat shows the task name as proc_task_name() makes it:
 * TASK_COMM_LEN (16) for processes, up to 64 bytes for workqueue workers
 * ("kworker/u8:3-events_unbound"). */
#define PROC_COMM_MAX 64
/* include/linux/sched.h; stable since 2.6. */
#define PROC_PF_KTHREAD 0x00200000u

typedef struct ProcStat {
        pid_t pid;
        /* Between the first '(' and the last ')': a name may hold ')', ' ' and
         * '\n'. Bytes that are not printable ASCII become '?', so the name is
         * always one line of valid UTF-8 (journal field, D-Bus string). */
        char comm[PROC_COMM_MAX];
        char state;                     /* 'R', 'S', 'D', 'Z', … */
        pid_t ppid;
        unsigned flags;                 /* PF_* */
        uint64_t starttime_ticks;       /* since boot, in USER_HZ ticks: with the pid, the process's identity */
        uint64_t vsize_bytes;
        uint64_t rss_pages;
} ProcStat;

/* /proc/<pid>/stat. 0, or -EBADMSG when malformed or cut short. */
int proc_stat_parse(const char *text, size_t len, ProcStat *ret);

/* PF_KTHREAD in the flags. Not "ppid == 2": in a PID namespace pid 2 is an
 * ordinary process, and kthreadd itself has ppid 0. */
bool proc_stat_is_kernel_thread(const ProcStat *st);

/* n bytes of s into buf (size PROC_COMM_MAX), cut, with every byte that is
 * not printable ASCII replaced by '?'. */
void proc_comm_sanitize(char *buf, const char *s, size_t n);

typedef struct ProcStatus {
        char name[PROC_COMM_MAX];       /* "Name:", sanitized like ProcStat.comm */
        pid_t tgid;
        pid_t pid;
        pid_t ppid;
        uid_t uid_real;
        uid_t uid_effective;
        uint64_t vm_rss_bytes;          /* 0 when absent (kernel threads, zombies) */
        bool have_vm_rss;
        int kthread;                    /* "Kthread:" (Linux ≥ 6.8): 0 or 1; -1 when absent */
} ProcStatus;

/* /proc/<pid>/status. 0, or -EBADMSG when Pid: or Uid: is missing or a
 * known line is malformed. Unknown lines are skipped. */
int proc_status_parse(const char *text, size_t len, ProcStatus *ret);

/* /proc/<pid>/statm: resident pages × page_size. 0, or -EBADMSG. */
int proc_statm_parse(const char *text, size_t len, uint64_t page_size, uint64_t *ret_rss_bytes);

/* /proc/<pid>/oom_score_adj: -1000…1000. 0, or -EBADMSG. */
int proc_oom_score_adj_parse(const char *text, size_t len, int *ret);

/* /proc/<pid>/cgroup: the path of the line for one hierarchy. controller is
 * NULL or "" for the cgroup2 line ("0::/…"), else a v1 controller as the
 * file lists it: "memory", "name=systemd" (matched within a comma list
 * like "cpu,cpuacct"). 0, -ENOENT when there is no such line, -EBADMSG,
 * -ENOBUFS. */
int proc_cgroup_parse(const char *text, size_t len, const char *controller, char *buf, size_t size);

/* cgroup.procs: one pid per line. Stores at most max pids and returns how
 * many the file lists (more than max: the rest were not stored), or
 * -EBADMSG. */
int cgroup_procs_parse(const char *text, size_t len, pid_t *pids, size_t max);
