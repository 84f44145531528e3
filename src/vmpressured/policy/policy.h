/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Per-unit policies: a pure parser and matcher. Text in, structs out; no
 * I/O, no clock (policy-load.c reads the directories).
 *
 * One file per unit, "<unit>.policy"; "foo@.service.policy" is a template
 * that covers every instance foo@X.service. Sections:
 *
 *   [Policy]  Scope=system|unit  Description=…  SignalIntervalSec=30s
 *   [Low] [Medium] [OOM]
 *             Signal=SIGUSR1|USR1|10   SignalTarget=main|all
 *   [OOM]     Kill=yes|no              KillTarget=largest|unit
 *             Guard=32M|10%            (Scope=unit, Kill=yes: kill before the limit)
 *             GuardSec=1s              (cgroup v2: MEDIUM first, the kill this much later)
 *
 * Every problem is reported to a Diagnostics as "file:line: what is wrong",
 * and whatever is valid in the file still loads.
 */

#include <limits.h>

#include "diag.h"
#include "level.h"
#include "unit-name.h"

/* A policy file is a handful of lines; anything larger is a mistake (a
 * log file copied into the directory, say), refused with one message. */
#define POLICY_FILE_MAX (64 * 1024)
/* Problems quoted per file: a binary file would otherwise fill the whole
 * Diagnostics (DIAG_MAX lines) and hide every other file's problems. */
#define POLICY_FILE_ERRORS_MAX 10
#define POLICY_PATH_MAX 512
#define POLICY_DESCRIPTION_MAX 256
/* At most this many file names in one set; further files are reported. */
#define POLICY_SET_MAX 4096

#define POLICY_SUFFIX ".policy"

/* SignalIntervalSec=: at most one signal per unit and level in this long.
 * With the engine's defaults MEDIUM holds 2 s (HoldSec=) and LOW 10 s
 * (QuietSec=), so pressure hovering at a threshold re-announces a level
 * every 2-10 s; with HoldSec=0 as often as the kernel's events come (about
 * one per 2 MiB reclaimed under streaming reads, docs/kernel.md#memcg-v1-events). A flushed
 * cache refills at the pace of its misses, far slower than that: a second
 * flush request within 30 s finds little to free and only costs the
 * service work while memory is short. 0 turns the limit off. */
#define POLICY_SIGNAL_INTERVAL_DEFAULT_USEC (30 * USEC_PER_SEC)
#define POLICY_SIGNAL_INTERVAL_MAX_USEC (24 * 3600 * USEC_PER_SEC)

typedef enum PolicyScope {
        POLICY_SCOPE_SYSTEM,            /* act on the system's level (default) */
        POLICY_SCOPE_UNIT,              /* act on the level of the unit's own cgroup */
        _POLICY_SCOPE_MAX,
        _POLICY_SCOPE_INVALID = -EINVAL,
} PolicyScope;

typedef enum SignalTarget {
        SIGNAL_TARGET_MAIN,             /* the unit's main process (default) */
        SIGNAL_TARGET_ALL,              /* every process of the unit */
        _SIGNAL_TARGET_MAX,
        _SIGNAL_TARGET_INVALID = -EINVAL,
} SignalTarget;

typedef enum KillTarget {
        KILL_TARGET_LARGEST,            /* the unit's process with the largest RSS (default) */
        KILL_TARGET_UNIT,               /* every process of the unit */
        _KILL_TARGET_MAX,
        _KILL_TARGET_INVALID = -EINVAL,
} KillTarget;

typedef enum PolicyState {
        POLICY_LOADED,                  /* parsed; may still have had bad lines */
        POLICY_MASKED,                  /* empty file or a symlink to /dev/null */
        POLICY_BROKEN,                  /* unreadable, too large or binary: nothing loaded */
        _POLICY_STATE_MAX,
        _POLICY_STATE_INVALID = -EINVAL,
} PolicyState;

typedef struct PolicyAction {
        unsigned line;                  /* of the section header; 0: the file has no such section */
        int signal;                     /* 0: no signal */
        SignalTarget signal_target;
        bool kill;                      /* [OOM] only: the unit's processes may be killed */
        KillTarget kill_target;
} PolicyAction;

/* Guard=: a size or a whole percentage of the unit's memory limit, kept
 * free below the limit. At most this share of the limit. */
#define POLICY_GUARD_PERCENT_MAX 50
/* Smaller than a few pages is no guard at all: the kernel's charge batch is
 * 64 pages, its v1 threshold check runs every 128 pages charged. */
#define POLICY_GUARD_BYTES_MIN (UINT64_C(1) << 20)
/* GuardSec=: on cgroup v2, where the kernel throttles a unit above its
 * memory.high instead of killing it, how long the unit may stay in its
 * guard band (announced MEDIUM: its [Medium] Signal= may free memory)
 * before it is killed. 1 s: the lead issue 14 asks of a warning. */
#define POLICY_GUARD_SEC_DEFAULT_USEC USEC_PER_SEC
#define POLICY_GUARD_SEC_MAX_USEC (60 * USEC_PER_SEC)

/* StallLimit=: the share of time (1-100 %) the unit's tasks were all
 * stalled on memory (PSI "full"), over StallSec= (the kernel's own
 * averages: 10 s, 60 s or 300 s), at or above which a thrash is killed
 * although memory is left. 0: a thrash is never killed. */
#define POLICY_STALL_SEC_DEFAULT_USEC (10 * USEC_PER_SEC)

typedef struct Policy {
        char unit[UNIT_NAME_MAX];       /* "foo.service", or the template "foo@.service" */
        char path[POLICY_PATH_MAX];     /* the file it came from */
        PolicyState state;
        bool is_template;
        PolicyScope scope;
        char description[POLICY_DESCRIPTION_MAX];
        usec_t signal_interval_usec;    /* SignalIntervalSec=: per level; 0: no limit */
        PolicyAction actions[_LEVEL_MAX];       /* [LEVEL_LOW…LEVEL_OOM]; [LEVEL_NONE] unused */
        /* [OOM] Guard=: keep this much of the unit's limit as a guard band
         * (bytes, or percent of the limit; both 0: no guard). Only with
         * Scope=unit and Kill=yes. */
        uint64_t guard_bytes;
        unsigned guard_percent;
        usec_t guard_grace_usec;        /* GuardSec= */
        unsigned stall_limit_percent;   /* [OOM] StallLimit=; 0: none */
        usec_t stall_usec;              /* StallSec=: 10 s, 60 s or 300 s */
        unsigned n_errors;              /* problems reported for this file */
} Policy;

const char *policy_scope_to_string(PolicyScope s);
PolicyScope policy_scope_from_string(const char *s);
const char *signal_target_to_string(SignalTarget t);
SignalTarget signal_target_from_string(const char *s);
const char *kill_target_to_string(KillTarget t);
KillTarget kill_target_from_string(const char *s);
const char *policy_state_to_string(PolicyState s);

/* "SIGUSR1", "USR1", "10", "SIGRTMIN+2", "RTMAX-1" → the number; -EINVAL. */
int signal_from_string(const char *s);
/* "SIGUSR1", "SIGRTMIN+2"; NULL for an invalid number. Static storage for
 * real-time signals: one call's result is valid until the next call. */
const char *signal_to_string(int sig);

/* Parses the text of one policy file. filename is the base name
 * ("foo.service.policy") and gives the unit; path is what the messages say
 * (dir + "/" + filename). text need not be NUL-terminated.
 * An empty text (len 0) is a mask: *ret is POLICY_MASKED.
 * Returns the number of problems found (≥ 0) with *ret filled in
 * (POLICY_LOADED, POLICY_MASKED, or POLICY_BROKEN for a file too large or
 * binary), or -EINVAL when filename does not name a unit (reported, *ret
 * untouched). diag gets at most POLICY_FILE_ERRORS_MAX of a file's
 * problems, then one line with how many more there were. */
int policy_parse(const char *path, const char *filename, const char *text, size_t len,
                 Policy *ret, Diagnostics *diag);

/* What the policy does at a level, for logs and ListPolicies:
 * "signal SIGUSR1 to main, kill largest", "nothing". */
const char *policy_action_describe(const PolicyAction *a, char *buf, size_t size);
/* The unit's processes may be killed at OOM: [OOM] Kill=yes. */
bool policy_kill_enabled(const Policy *p);
/* A loaded policy with Guard=. */
bool policy_has_guard(const Policy *p);
/* The guard in bytes for a unit whose memory limit is limit_bytes: Guard='s
 * size, or its share of the limit; 0 without a guard, or when the guard
 * would be the whole limit or more. */
uint64_t policy_guard_bytes(const Policy *p, uint64_t limit_bytes);
/* "32.0M", "10%": Guard= as written, for logs and status. */
const char *policy_guard_describe(const Policy *p, char *buf, size_t size);

/* Whether p kills a thrash of its unit once the memory stall (PSI "full")
 * averaged over StallSec= reaches StallLimit=. */
bool policy_has_stall_limit(const Policy *p);
/* Whether a "full" stall of full_permyriad (hundredths of a percent), the
 * kernel's average over p's StallSec=, reaches p's StallLimit=. */
bool policy_stall_exceeded(const Policy *p, unsigned full_permyriad);

/* The policies in force: one entry per file name, sorted by unit name. */
typedef struct PolicySet {
        Policy *policies;
        size_t n;
        size_t n_allocated;
} PolicySet;

/* One file as the loader found it, in directory priority order. */
typedef struct PolicyFile {
        const char *dir;                /* "/etc/vmpressured/policies" */
        const char *filename;           /* "foo.service.policy" */
        const char *text;               /* NULL when it could not be read */
        size_t len;
        int error;                      /* negative errno when text is NULL;
                                         * -EBADFD: not a regular file */
        const char *reason;             /* with text NULL, instead of strerror(error):
                                         * why the file was refused, a sentence */
} PolicyFile;

int policy_set_new(PolicySet **ret);
PolicySet *policy_set_free(PolicySet *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(PolicySet *, policy_set_free);

/* Adds one file. The first file with a name wins, as for systemd's
 * conf-files: call in priority order, later ones with the same name are
 * shadowed (logged at debug). A file that cannot be used (unreadable,
 * too large, binary) still takes its name, so that /etc always overrides
 * /usr/lib. Problems are reported for shadowed files too, so that a
 * check shows every broken file. Returns the number of problems found in
 * the file (≥ 0), or -ENOMEM. */
int policy_set_add(PolicySet *s, const PolicyFile *f, Diagnostics *diag);
/* policy_set_add() for each of files[0..n). Total problems, or -ENOMEM. */
int policy_set_add_files(PolicySet *s, const PolicyFile *files, size_t n, Diagnostics *diag);

/* The policy for a unit: its own file, else the template's for an instance
 * ("foo@bar.service" → "foo@.service"). A masked or broken file of the
 * unit's own name hides the template. NULL when there is none. */
const Policy *policy_set_find(const PolicySet *s, const char *unit);
/* The entry of that exact name in any state, NULL if none. */
const Policy *policy_set_get(const PolicySet *s, const char *unit);
size_t policy_set_count_loaded(const PolicySet *s);
/* Whether a loaded policy may kill at OOM ([OOM] Kill=yes). */
bool policy_set_any_kill(const PolicySet *s);
