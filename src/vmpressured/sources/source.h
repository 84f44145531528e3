/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Sources turn the kernel's memory-pressure notifications into Samples.
 * All four implement SourceOps; the manager tries them in the order of
 * SourceType (best first) and logs why a better one was unavailable.
 */

#include <limits.h>
#include <systemd/sd-event.h>

#include "level.h"
#include "proc-parse.h"
#include "source-params.h"

/* Where this kernel keeps its files, found once at start-up. */
typedef struct SourceEnv {
        char proc_root[64];             /* "/proc" */
        char memcg_v1_root[PATH_MAX];   /* "/sys/fs/cgroup/memory", "" when not mounted */
        char cgroup2_root[PATH_MAX];    /* "/sys/fs/cgroup/unified" (hybrid) or "/sys/fs/cgroup", "" if none */
} SourceEnv;

/* Reads /proc/self/mountinfo. 0, or negative errno. */
int source_env_detect(SourceEnv *ret);

typedef struct Source Source;

typedef void (*source_sample_handler_t)(Source *s, const Sample *sample, void *userdata);
/* The watched cgroup went away or the kernel's fd broke; the source is dead
 * afterwards and the owner frees it. error is a negative errno. */
typedef void (*source_gone_handler_t)(Source *s, int error, void *userdata);

/* The usage thresholds a Guard= arms on the v1 memcg source. */
typedef enum SourceMark {
        SOURCE_MARK_GUARD,              /* limit - guard: the band where the daemon kills */
        SOURCE_MARK_WARN,               /* limit - 2 x guard: MEDIUM first (v1: nothing throttles) */
        _SOURCE_MARK_MAX,
} SourceMark;

typedef struct SourceOps {
        SourceType type;
        size_t size;                    /* of the implementation's struct, which starts with Source */
        /* 0, or negative errno with a sentence in reason saying why it is unavailable. */
        int (*open)(Source *s, char *reason, size_t reason_size);
        void (*close)(Source *s);       /* releases what open() made; safe after a failed open() */
        void (*set_busy)(Source *s, bool busy); /* adapt polling; NULL for event-driven sources */
        /* One line on what the source reads and what wakes it, for status and
         * the start-up log; NULL when the type's name says it all. */
        void (*describe)(const Source *s, char *buf, size_t size);
        /* Wake the owner when the cgroup's usage crosses usage_bytes (a
         * Guard=: its mark, and on cgroup v1 the warning mark below it),
         * 0 taking that mark off: 0, or negative errno. NULL where the
         * kernel has another way (memory.high's "high" events) or none. */
        int (*set_mark)(Source *s, SourceMark which, uint64_t usage_bytes);
} SourceOps;

struct Source {
        const SourceOps *ops;
        sd_event *event;
        const SourceEnv *env;
        const SourceParams *params;
        const LevelConfig *level;
        char scope[256];                /* "-.slice" for the system, else the unit or cgroup name */
        char cgroup[PATH_MAX];          /* "" for the system, else the path below the hierarchy root */
        source_sample_handler_t on_sample;
        source_gone_handler_t on_gone;
        void *userdata;
};

typedef struct SourceTarget {
        const char *scope;
        const char *cgroup;             /* NULL or "" for the whole system; no leading '/' needed */
} SourceTarget;

/* Opens one source of the given type. 0, or negative errno with reason filled in. */
int source_new(SourceType type,
               sd_event *event,
               const SourceEnv *env,
               const SourceParams *params,
               const LevelConfig *level,
               const SourceTarget *target,
               source_sample_handler_t on_sample,
               source_gone_handler_t on_gone,
               void *userdata,
               Source **ret,
               char *reason,
               size_t reason_size);
Source *source_free(Source *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Source *, source_free);
void source_set_busy(Source *s, bool busy);
/* ops->set_mark(); -EOPNOTSUPP when the source has none. */
int source_set_mark(Source *s, SourceMark which, uint64_t usage_bytes);
/* The describe() line, or "" when the source has none. */
void source_describe(const Source *s, char *buf, size_t size);

/* Helpers the implementations share. */
usec_t source_now_usec(void);           /* CLOCK_MONOTONIC, for Sample.timestamp_usec */
void source_emit(Source *s, const Sample *sample);
void source_gone(Source *s, int error);

extern const SourceOps source_syscall_ops;
extern const SourceOps source_memcg_ops;
extern const SourceOps source_reclaim_ops;
extern const SourceOps source_psi_ops;
extern const SourceOps source_vmstat_ops;

/* Whether the v1 memory controller is mounted and its root
 * memory.pressure_level has no read permission (mode 000: kernels before
 * 6.4), so that watching a cgroup needs CAP_DAC_READ_SEARCH. */
bool memcg_pressure_level_unreadable(const SourceEnv *env);

/* Headroom for SAMPLE_HEADROOM: the system (cgroup NULL/""): MemAvailable +
 * SwapFree of MemTotal + SwapTotal; a cgroup: limit - (usage - inactive_file).
 * -ENODATA when the cgroup has no limit. Reads into a caller's buffer: no allocation. */
int headroom_read(const SourceEnv *env, const char *cgroup, char *buf, size_t buf_size,
                  uint64_t *ret_available_bytes, uint64_t *ret_total_bytes);
/* A cgroup2 directory's memory.high ("max": UINT64_MAX), for Guard=: read
 * into the caller's buffer. -ENOENT without a cgroup2 hierarchy or file. */
int memory_high_read(const SourceEnv *env, const char *cgroup, char *buf, size_t buf_size, uint64_t *ret);
/* The memory stall of the system (cgroup NULL/"": /proc/pressure/memory) or
 * of a cgroup (its cgroup2 memory.pressure), for StallLimit=: read into the
 * caller's buffer. -ENOENT without PSI or a cgroup2 hierarchy, -ENODATA
 * without a "full" line. */
int memory_stall_read(const SourceEnv *env, const char *cgroup, char *buf, size_t buf_size, PsiStats *ret);
