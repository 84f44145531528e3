/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The victim scan's walk in the kernel: a BPF task iterator (see
 * task-iter.h). Each read of an iterator made from its link visits every
 * task once; for the thread-group leaders whose cgroup is, or is below, the
 * one the daemon wrote into vmp_target, it writes one TaskRecord (the
 * fields /proc/<pid>/stat and oom_score_adj would give) to the reader.
 *
 * Built with clang -target bpf; CO-RE: the kernel's types are declared here
 * with only the fields read, and libbpf relocates them against the running
 * kernel's BTF when the program is loaded, so one object runs on every
 * kernel that has task iterators (5.8) and cgroup->ancestors[] (6.0).
 * Where a relocation fails the load fails, and the daemon reads /proc.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "task-scan-record.h"

#define PF_KTHREAD 0x00200000
/* Deeper cgroups than this below their hierarchy's root are not matched
 * (the daemon then finds no process there and says so). */
#define LEVELS_MAX 64

struct kernfs_node {
        __u64 id;
} __attribute__((preserve_access_index));

struct cgroup {
        struct kernfs_node *kn;
        int level;
        struct cgroup *ancestors[];
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
        struct cgroup *cgroup;
} __attribute__((preserve_access_index));

struct css_set {
        struct cgroup_subsys_state *subsys[16];
        struct cgroup *dfl_cgrp;
} __attribute__((preserve_access_index));

/* Linux ≤ 6.1: atomic counters in struct mm_rss_stat. */
typedef struct {
        long counter;
} atomic_long_t;

struct mm_rss_stat {
        atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___atomic {
        struct mm_rss_stat rss_stat;
} __attribute__((preserve_access_index));

/* Linux ≥ 6.2: one percpu_counter each; its count is what /proc shows. */
struct percpu_counter {
        __s64 count;
} __attribute__((preserve_access_index));

struct mm_struct___percpu {
        struct percpu_counter rss_stat[4];
} __attribute__((preserve_access_index));

struct mm_struct;

struct signal_struct {
        short oom_score_adj;
} __attribute__((preserve_access_index));

struct task_struct {
        unsigned int flags;
        int pid;
        int tgid;
        __u64 start_boottime;
        struct task_struct *real_parent;
        struct mm_struct *mm;
        struct signal_struct *signal;
        struct css_set *cgroups;
        char comm[16];
} __attribute__((preserve_access_index));

struct seq_file;

struct bpf_iter_meta {
        struct seq_file *seq;
        __u64 session_id;
        __u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
        struct bpf_iter_meta *meta;
        struct task_struct *task;
} __attribute__((preserve_access_index));

enum cgroup_subsys_id {
        memory_cgrp_id = 4,     /* relocated: the running kernel's value */
};

/* MM_FILEPAGES, MM_ANONPAGES, MM_SHMEMPAGES (MM_SWAPENTS, 2, is not RSS). */
#define MM_FILEPAGES 0
#define MM_ANONPAGES 1
#define MM_SHMEMPAGES 3

/* Written by the daemon through its mmap() of the map before each read. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 1);
        __uint(map_flags, BPF_F_MMAPABLE);
        __type(key, __u32);
        __type(value, TaskScanTarget);
} vmp_target SEC(".maps");

/* Clamped as the kernel's get_mm_counter() is for /proc. */
static __always_inline __s64 nonneg(__s64 v) {
        return v < 0 ? 0 : v;
}

/* file + anon + shmem pages: /proc/<pid>/stat's rss. Direct loads through
 * the task's BTF-typed pointers (the verifier makes them faulting loads),
 * no helper call each; literal indices, so that CO-RE relocates each
 * element with the running kernel's stride. */
static __always_inline __u64 rss_pages(struct mm_struct *mm) {
        if (!bpf_core_type_exists(struct mm_rss_stat)) {
                struct mm_struct___percpu *m = (void *) mm;

                return nonneg(m->rss_stat[MM_FILEPAGES].count) + nonneg(m->rss_stat[MM_ANONPAGES].count) +
                       nonneg(m->rss_stat[MM_SHMEMPAGES].count);
        } else {
                /* Up to 6.1 the verifier will not load through an array of
                 * atomic_long_t ("is not a struct"): the four counters in
                 * one read instead. */
                long count[4] = {};
                unsigned long at = (unsigned long) mm +
                                   bpf_core_field_offset(struct mm_struct___atomic, rss_stat) +
                                   bpf_core_field_offset(struct mm_rss_stat, count);

                if (bpf_probe_read_kernel(count, sizeof(count), (void *) at) < 0)
                        return 0;
                return nonneg(count[MM_FILEPAGES]) + nonneg(count[MM_ANONPAGES]) + nonneg(count[MM_SHMEMPAGES]);
        }
}

static __always_inline struct cgroup *task_cgroup(struct task_struct *t, __u32 hierarchy) {
        struct css_set *cset = BPF_CORE_READ(t, cgroups);
        struct cgroup_subsys_state *css = 0;
        unsigned long at;

        if (!cset)
                return 0;
        if (hierarchy != TASK_SCAN_MEMORY_V1)
                return BPF_CORE_READ(cset, dfl_cgrp);
        /* A kernel without the memory controller: nothing is below a v1
         * memory cgroup (and the load does not fail on the relocation). */
        if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
                return 0;
        at = (unsigned long) cset + bpf_core_field_offset(struct css_set, subsys) +
             (unsigned long) bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id) * sizeof(void *);
        if (bpf_probe_read_kernel(&css, sizeof(css), (void *) at) < 0 || !css)
                return 0;
        return BPF_CORE_READ(css, cgroup);
}

/* Whether cgrp is target_id or below it: its ancestors[] (itself at its own
 * level) read from the deepest up. */
static __always_inline int under(struct cgroup *cgrp, __u64 target_id) {
        int level = BPF_CORE_READ(cgrp, level);
        unsigned long base = (unsigned long) cgrp + bpf_core_field_offset(struct cgroup, ancestors);

        for (int i = 0; i < LEVELS_MAX; i++) {
                struct cgroup *a = 0;
                int l = level - i;

                if (l < 0)
                        break;
                if (bpf_probe_read_kernel(&a, sizeof(a), (void *) (base + (unsigned long) l * sizeof(void *))) < 0 ||
                    !a)
                        break;
                if (BPF_CORE_READ(a, kn, id) == target_id)
                        return 1;
        }
        return 0;
}

SEC("iter/task")
int vmp_task_scan(struct bpf_iter__task *ctx) {
        struct task_struct *t = ctx->task;
        struct seq_file *seq = ctx->meta->seq;
        TaskScanTarget *target;
        struct cgroup *cgrp;
        struct mm_struct *mm;
        TaskRecord r;
        __u32 zero = 0;
        __u64 cset;

        if (!t)
                return 0;
        __builtin_memset(&r, 0, sizeof(r));
        target = bpf_map_lookup_elem(&vmp_target, &zero);
        if (!target || target->cgroup_id == 0)
                return 0;
        if (t->pid != t->tgid)
                return 0;               /* a thread: its process is its leader's record */
        /* The tasks of a unit share a few css_sets (one for each set of
         * cgroups a task can be in): the walk up the cgroup's ancestors, a
         * chain of pointers to follow, is done again only for another. */
        cset = (__u64) (unsigned long) t->cgroups;
        if (cset != target->last_cset) {
                cgrp = task_cgroup(t, target->hierarchy);
                target->last_match = cgrp && under(cgrp, target->cgroup_id);
                target->last_cset = cset;
        }
        if (!target->last_match)
                return 0;

        r.pid = t->tgid;
        r.ppid = t->real_parent->tgid;
        r.flags = t->flags & PF_KTHREAD ? TASK_RECORD_KTHREAD : 0;
        r.start_boottime_ns = t->start_boottime;
        r.oom_score_adj = t->signal->oom_score_adj;
        mm = t->mm;
        if (mm)
                r.rss_pages = rss_pages(mm);
        __builtin_memcpy(r.comm, t->comm, sizeof(r.comm));
        bpf_seq_write(seq, &r, sizeof(r));
        return 0;
}

/* The kernel lends bpf_probe_read_kernel() and bpf_seq_write() only to
 * programs that say they are under the GPL, and knows no LGPL: this one is
 * LGPL-2.1-or-later, which lets it be conveyed under the GPL (LGPL 2.1,
 * section 3), as its loaded form is. */
char LICENSE[] SEC("license") = "GPL";
