/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * At most one signal per unit and level per interval (a policy's
 * SignalIntervalSec=), so that a level flapping around its threshold
 * (HoldSec=0, LOW → NONE → LOW within a second) does not make a service
 * flush its caches again and again. Pure: time comes in, a preallocated
 * table, nothing allocated (it is consulted on the OOM path).
 */

#include "level.h"
#include "unit-name.h"

#define SIGNAL_LIMIT_UNITS_MAX 512

typedef struct SignalLimitUnit {
        char unit[UNIT_NAME_MAX];
        usec_t last_usec[_LEVEL_MAX];   /* when the last signal of that level went */
        bool sent[_LEVEL_MAX];
        uint64_t suppressed;            /* signals of this unit held back */
} SignalLimitUnit;

typedef struct SignalLimit {
        SignalLimitUnit units[SIGNAL_LIMIT_UNITS_MAX];
        size_t n;
        uint64_t suppressed;            /* all units */
} SignalLimit;

void signal_limit_init(SignalLimit *l);

/* Whether a signal to unit at level may go at now_usec (CLOCK_MONOTONIC),
 * interval_usec after the last one of that level that went: true, and the
 * signal is recorded as gone; false: it is held back and counted, and
 * *ret_next_usec (may be NULL) says from when one may go again. A time
 * older than the last signal (an event read late) is held back too.
 * interval_usec 0: always true, nothing recorded. With the table full the
 * unit whose latest signal is the oldest is forgotten (its next signal
 * goes). */
bool signal_limit_check(SignalLimit *l, const char *unit, Level level, usec_t now_usec, usec_t interval_usec,
                        usec_t *ret_next_usec);

/* The unit was started again: its new processes have had no signal yet. */
void signal_limit_reset(SignalLimit *l, const char *unit);

/* Signals held back for unit (0 when unknown). */
uint64_t signal_limit_suppressed(const SignalLimit *l, const char *unit);
