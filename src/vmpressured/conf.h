/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* vmpressured.conf: pure parser; the text comes in as a parameter. */

#include "diag.h"
#include "level.h"
#include "source-params.h"

#define CONFIG_WATCH_MAX 32

/* [Daemon] LowMemoryMonitor=: also own org.freedesktop.LowMemoryMonitor for GLib. */
typedef enum LowMemoryMonitorMode {
        LOW_MEMORY_MONITOR_NO,
        LOW_MEMORY_MONITOR_YES,         /* queue for the name if another service holds it */
        LOW_MEMORY_MONITOR_AUTO,        /* only when nobody else holds it */
        _LOW_MEMORY_MONITOR_MAX,
        _LOW_MEMORY_MONITOR_INVALID = -EINVAL,
} LowMemoryMonitorMode;

typedef struct Config {
        SourceType source;              /* _SOURCE_TYPE_INVALID: the best available */
        SourceParams params;            /* syscall number, PSI, polling */
        LevelConfig level;
        char watch[CONFIG_WATCH_MAX][256];      /* extra cgroups to watch (paths below the root) */
        size_t n_watch;
        int log_level;                  /* syslog priority, LOG_INFO by default */
        bool dry_run;
        LowMemoryMonitorMode low_memory_monitor;        /* auto by default */
        /* Subscribe() descriptors at once. 0: not set, SUBSCRIBERS_MAX_DEFAULT
         * (4096), lowered to what RLIMIT_NOFILE's hard limit holds; a value set
         * here must fit or the daemon does not start (Reload() refuses it). */
        unsigned max_subscribers;
        unsigned max_subscribers_per_user;      /* users other than root; 0: MaxSubscribers/4 */
        /* Input, not a key: the machine's RAM (MemTotal) for the bound on
         * HeadroomFloor= sizes, set by the caller before config_parse(); 0
         * (config_init()'s) when unknown, and then only percentages are bounded. */
        uint64_t mem_total_bytes;
} Config;

void config_init(Config *c);

/* Parses the text of one vmpressured.conf into c (which holds defaults or an
 * earlier file's values, and c->mem_total_bytes). Every bad line is added to
 * diag as file:line.
 * Returns 0 when the file is clean, -EINVAL when diag got errors. */
int config_parse(Config *c, const char *filename, const char *text, size_t len, Diagnostics *diag);

/* Adds one cgroup to watch; -E2BIG when full, -EINVAL for an unusable path. */
int config_add_watch(Config *c, const char *cgroup);

/* Values in the man page: */
int log_level_from_string(const char *s);               /* "debug"…"emerg" or 0..7; -EINVAL */
const char *log_level_to_string(int level);
const char *low_memory_monitor_mode_to_string(LowMemoryMonitorMode m);
LowMemoryMonitorMode low_memory_monitor_mode_from_string(const char *s);      /* also yes/no booleans */
