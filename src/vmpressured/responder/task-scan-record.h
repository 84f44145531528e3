/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What task-scan.bpf.c and task-iter.c share: the target the daemon writes
 * into the program's map before a read, and the record the program writes
 * for each process found. Fixed-width types only: one definition for the
 * BPF target and the host. */

#include <linux/types.h>

/* Which cgroup of a task is compared with the target. */
enum {
        TASK_SCAN_UNIFIED = 1,          /* its cgroup on the cgroup2 hierarchy */
        TASK_SCAN_MEMORY_V1 = 2,        /* its memory controller's cgroup (cgroup v1) */
};

typedef struct TaskScanTarget {
        __u64 cgroup_id;                /* the cgroup directory's inode number; 0: find nothing */
        __u32 hierarchy;                /* TASK_SCAN_* */
        __u32 last_match;               /* the program's: whether last_cset is below the target */
        __u64 last_cset;                /* the program's: the css_set looked at last; the daemon
                                         * zeroes it before each read */
} TaskScanTarget;

#define TASK_RECORD_KTHREAD 0x1u

typedef struct TaskRecord {
        __s32 pid;                      /* the process (thread-group leader) */
        __s32 ppid;
        __u64 start_boottime_ns;        /* /proc/<pid>/stat's starttime, in ns */
        __u64 rss_pages;                /* file + anon + shmem, as /proc/<pid>/stat's rss */
        __s32 oom_score_adj;
        __u32 flags;                    /* TASK_RECORD_* */
        char comm[16];
} TaskRecord;
