/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What configures the sources, as plain data: the configuration (conf.h)
 * holds it without pulling in the sources and sd-event. */

#include "level.h"

typedef enum SourceType {
        SOURCE_SYSCALL,         /* vmpressure_fd(2), only where the kernel advertises it */
        SOURCE_MEMCG,           /* cgroup v1 memory.pressure_level + memory.oom_control eventfds */
        SOURCE_RECLAIM,         /* cgroup v2: memory.stat or /proc/vmstat, sampled when PSI or memory.events wake it */
        SOURCE_PSI,             /* PSI triggers: /proc/pressure/memory, cgroup2 memory.pressure */
        SOURCE_VMSTAT,          /* poll /proc/vmstat (or cgroup2 memory.stat): the seed's index */
        _SOURCE_TYPE_MAX,
        _SOURCE_TYPE_INVALID = -EINVAL,
} SourceType;

const char *source_type_to_string(SourceType t);
SourceType source_type_from_string(const char *s);

typedef struct PsiConfig {
        usec_t window_usec;             /* trigger window; retried as 2 s when the kernel refuses it */
        usec_t stall_usec[_LEVEL_MAX];  /* [LOW], [MEDIUM]: "some" stall per window; [OOM]: "full" */
} PsiConfig;

typedef struct PollConfig {
        usec_t idle_usec;               /* poll interval at level NONE */
        usec_t busy_usec;               /* poll interval under pressure */
        /* The system scope's headroom (MemAvailable) also sampled this often
         * while idle, so that a fall with no reclaim yet is seen; 0: off (the
         * default: then nothing is read until the kernel reports pressure). */
        usec_t headroom_usec;
        /* FaultWake=: the system scope's headroom also read when page faults
         * could have used a share of it (fault-wake.h); on by default. */
        bool fault_wake;
} PollConfig;

/* SystemPressure=: what the system scope counts as pressure. */
typedef enum SystemPressure {
        SYSTEM_PRESSURE_MACHINE,        /* reclaim for the whole machine (or the container the daemon runs in) */
        SYSTEM_PRESSURE_ANY_CGROUP,     /* also any cgroup below at its own limit (the kernel's default mode) */
        _SYSTEM_PRESSURE_MAX,
        _SYSTEM_PRESSURE_INVALID = -EINVAL,
} SystemPressure;

const char *system_pressure_to_string(SystemPressure p);
SystemPressure system_pressure_from_string(const char *s);

typedef struct SourceParams {
        long syscall_nr;                /* vmpressure_fd number; -1: not configured, never guessed */
        SystemPressure system_pressure; /* the memcg source's listener mode for the system scope */
        PsiConfig psi;
        PollConfig poll;
} SourceParams;
