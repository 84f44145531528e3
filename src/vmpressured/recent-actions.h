/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The last RECENT_ACTIONS_MAX actions of the policies (signals, kills, and
 * what a dry run would have done), for vmpressurectl status and the
 * RecentActions property. Pure: a fixed ring inside its owner, filled by
 * copy; the caller brings the time. Nothing is allocated, so recording on
 * the OOM path costs a ~300-byte copy.
 */

#include <sys/types.h>

#include "level.h"
#include "macro.h"
#include "unit-name.h"

#define RECENT_ACTIONS_MAX 16

typedef enum RecentActionKind {
        RECENT_ACTION_SIGNAL,
        RECENT_ACTION_WOULD_SIGNAL,     /* dry run */
        RECENT_ACTION_KILL,
        RECENT_ACTION_WOULD_KILL,       /* dry run */
        _RECENT_ACTION_KIND_MAX,
        _RECENT_ACTION_KIND_INVALID = -EINVAL,
} RecentActionKind;

typedef struct RecentAction {
        usec_t realtime_usec;           /* CLOCK_REALTIME when it was done */
        usec_t latency_usec;            /* from the level's announcement; 0 when unknown */
        char unit[UNIT_NAME_MAX];
        Level level;                    /* the level whose policy asked for it */
        RecentActionKind kind;
        int signo;                      /* SIGKILL for kills */
        pid_t pid;                      /* 0: the unit as a whole (signals) */
        int result;                     /* >= 0 done (signals: processes reached), negative errno */
        bool simulated;                 /* during a Simulate() of the scope */
} RecentAction;

typedef struct RecentActions {
        RecentAction ring[RECENT_ACTIONS_MAX];
        uint64_t total;                 /* ever recorded; the ring holds the last ones */
} RecentActions;

const char *recent_action_kind_to_string(RecentActionKind k);
RecentActionKind recent_action_kind_from_string(const char *s);

/* Copies *a in, over the oldest entry once the ring is full; a unit name too
 * long is cut (it cannot be: unit names are shorter than UNIT_NAME_MAX). */
void recent_actions_push(RecentActions *ra, const RecentAction *a);
/* How many entries are held: min(total, RECENT_ACTIONS_MAX). */
size_t recent_actions_size(const RecentActions *ra);
/* Entry i, 0 the oldest held; NULL past the end. */
const RecentAction *recent_actions_get(const RecentActions *ra, size_t i);
