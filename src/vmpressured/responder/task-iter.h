/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The victim scan in the kernel: a BPF task iterator (task-scan.bpf.c).
 *
 * Reading /proc costs an open, a read and a close of a file per process
 * (about 6 µs a process here, bench/README.md): 10,000 processes take over
 * 100 ms at the OOM. The iterator visits every task in the kernel and
 * writes a fixed record for each process of the cgroup asked for, so a
 * scan is one bpf(BPF_ITER_CREATE) and a few read(2)s of 16 KiB.
 *
 * Loading it needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN): done once at
 * start-up, before the daemon drops them, in a child process that opens
 * libbpf with dlopen() (the daemon itself never maps libbpf, its BTF
 * parsing or its heap) and hands back the iterator's link and the target
 * map over a socket pair. What stays in the daemon: the link's fd, one
 * mapped page (the target), a 16 KiB static buffer. Making an iterator from
 * a link needs no capability (Linux 6.1's kernel/bpf/syscall.c checks one
 * only to create maps and load programs; tests/test-task-iter.c scans
 * without any on 6.1 and 6.18), so scans keep working after the drop.
 *
 * Where it cannot be loaded (built without clang and libbpf's headers,
 * libbpf1 not installed, no BTF, kernel lockdown, a kernel whose types the
 * program does not know), the daemon says why once and reads /proc.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proc-scan.h"

/* At start-up, with the capabilities. 0, or negative errno with why in
 * reason (may be NULL). Calling it again when loaded does nothing. */
int task_iter_load(char *reason, size_t reason_size);
bool task_iter_loaded(void);
void task_iter_close(void);
/* How many scans the kernel failed (iterator or read), and the errno of
 * the last one (may be NULL). */
uint64_t task_iter_failures(int *ret_last_error);

/* proc_scan_cgroup_foreach_filtered()'s contract, for the processes
 * (thread-group leaders) of cgroup_dir and every cgroup below it, read in
 * the kernel. The filter sees each full record (oom_score_adj included).
 * -EOPNOTSUPP: not loaded, cgroup_dir is on no hierarchy the iterator
 * matches (only cgroup2, and cgroup v1's memory controller), or the kernel
 * failed the iterator before a single record was handed out (then counted
 * by task_iter_failures()): read /proc. -ENOENT: cgroup_dir is gone. A
 * failure after records were handed out: negative errno, counted too.
 * Nothing is allocated in user space. */
int task_iter_scan_cgroup(const char *cgroup_dir, uint64_t page_size, proc_candidate_filter_t filter,
                          proc_candidate_handler_t handler, void *userdata);

/* The buffer and the map page touched, for mlockall(MCL_ONFAULT): at the
 * start-up rehearsal of the OOM path. */
void task_iter_prefault(void);
