/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* vmpressured.conf: pure parser; the text comes in as a parameter. */

#include "diag.h"
#include "level.h"
#include "source.h"

#define CONFIG_WATCH_MAX 32

typedef struct Config {
        SourceType source;              /* _SOURCE_TYPE_INVALID: the best available */
        SourceParams params;            /* syscall number, PSI, polling */
        LevelConfig level;
        char watch[CONFIG_WATCH_MAX][256];      /* extra cgroups to watch (paths below the root) */
        size_t n_watch;
        int log_level;                  /* syslog priority, LOG_INFO by default */
        bool dry_run;
} Config;

void config_init(Config *c);

/* Parses the text of one vmpressured.conf into c (which holds defaults or an
 * earlier file's values). Every bad line is added to diag as file:line.
 * Returns 0 when the file is clean, -EINVAL when diag got errors. */
int config_parse(Config *c, const char *filename, const char *text, size_t len, Diagnostics *diag);

/* Adds one cgroup to watch; -E2BIG when full, -EINVAL for an unusable path. */
int config_add_watch(Config *c, const char *cgroup);

/* Values in the man page: */
int log_level_from_string(const char *s);               /* "debug"…"emerg" or 0..7; -EINVAL */
const char *log_level_to_string(int level);
