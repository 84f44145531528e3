/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Pure parsers for the kernel's text files: the text comes in as a
 * parameter, so tests and fuzzers feed strings. No allocation. */

#include "macro.h"

typedef struct VmstatCounters {
        uint64_t pgscan;        /* pages scanned for reclaim (all reclaimers) */
        uint64_t pgsteal;       /* pages reclaimed */
        uint64_t oom_kill;      /* kernel OOM kills so far */
        bool have_oom_kill;
} VmstatCounters;

/* /proc/vmstat. Uses pgscan_anon+pgscan_file (pgsteal_*) where present —
 * they count memcg-limit reclaim, which pgscan_direct does not (docs/kernel.md#vmstat-counters) —
 * else pgscan_kswapd+pgscan_direct+pgscan_khugepaged. Also accepts a cgroup2
 * memory.stat ("pgscan", "pgsteal"). -EBADMSG when no scan counter is found
 * or a line is malformed. */
int vmstat_parse(const char *text, size_t len, VmstatCounters *ret);
/* /proc/vmstat, the machine's own reclaim only: pgscan_kswapd+pgscan_direct
 * (+khugepaged), which leave out the reclaim of a cgroup at its own limit
 * (docs/kernel.md#vmstat-counters). -EBADMSG when they are missing. */
int vmstat_parse_machine(const char *text, size_t len, VmstatCounters *ret);

typedef struct Meminfo {
        uint64_t mem_total_bytes;
        uint64_t mem_available_bytes;
        uint64_t swap_total_bytes;
        uint64_t swap_free_bytes;
} Meminfo;

/* /proc/meminfo. -EBADMSG when MemTotal or MemAvailable is missing or malformed. */
int meminfo_parse(const char *text, size_t len, Meminfo *ret);

typedef struct PsiLine {
        unsigned avg10_permyriad;       /* "avg10=12.34" → 1234 */
        unsigned avg60_permyriad;
        unsigned avg300_permyriad;
        uint64_t total_usec;
} PsiLine;

typedef struct PsiStats {
        PsiLine some;
        PsiLine full;
        bool have_full;
} PsiStats;

/* /proc/pressure/memory or a cgroup2 memory.pressure. -EBADMSG on malformed text. */
int psi_parse(const char *text, size_t len, PsiStats *ret);

/* One "key value" line of a memory.stat-like file. -ENOENT when the key is absent. */
int keyed_u64_parse(const char *text, size_t len, const char *key, uint64_t *ret);

/* A single-number file (memory.limit_in_bytes, memory.max). "max" → UINT64_MAX. */
int single_u64_parse(const char *text, size_t len, uint64_t *ret);
