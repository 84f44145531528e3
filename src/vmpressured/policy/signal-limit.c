/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "signal-limit.h"

void signal_limit_init(SignalLimit *l) {
        l->n = 0;
        l->suppressed = 0;
}

static SignalLimitUnit *limit_find(const SignalLimit *l, const char *unit) {
        for (size_t i = 0; i < l->n; i++)
                if (streq(l->units[i].unit, unit))
                        return (SignalLimitUnit *) &l->units[i];
        return NULL;
}

static usec_t unit_latest_usec(const SignalLimitUnit *u) {
        usec_t t = 0;

        for (Level v = LEVEL_LOW; v < _LEVEL_MAX; v++)
                if (u->sent[v])
                        t = MAX(t, u->last_usec[v]);
        return t;
}

/* A slot for unit: a free one, else the one whose latest signal is the oldest. */
static SignalLimitUnit *limit_add(SignalLimit *l, const char *unit) {
        SignalLimitUnit *u;

        if (l->n < SIGNAL_LIMIT_UNITS_MAX)
                u = &l->units[l->n++];
        else {
                u = &l->units[0];
                for (size_t i = 1; i < l->n; i++)
                        if (unit_latest_usec(&l->units[i]) < unit_latest_usec(u))
                                u = &l->units[i];
        }
        *u = (SignalLimitUnit) {};
        (void) snprintf(u->unit, sizeof(u->unit), "%s", unit);
        return u;
}

bool signal_limit_check(SignalLimit *l, const char *unit, Level level, usec_t now_usec, usec_t interval_usec,
                        usec_t *ret_next_usec) {
        SignalLimitUnit *u;
        usec_t next;

        if (ret_next_usec)
                *ret_next_usec = now_usec;
        if (interval_usec == 0 || !unit || level <= LEVEL_NONE || level >= _LEVEL_MAX)
                return true;
        u = limit_find(l, unit);
        if (u && u->sent[level]) {
                next = u->last_usec[level] > USEC_INFINITY - interval_usec ? USEC_INFINITY :
                       u->last_usec[level] + interval_usec;
                if (now_usec < next) {
                        u->suppressed++;
                        l->suppressed++;
                        if (ret_next_usec)
                                *ret_next_usec = next;
                        return false;
                }
        }
        if (!u)
                u = limit_add(l, unit);
        u->sent[level] = true;
        u->last_usec[level] = now_usec;
        return true;
}

void signal_limit_reset(SignalLimit *l, const char *unit) {
        SignalLimitUnit *u = unit ? limit_find(l, unit) : NULL;

        if (!u)
                return;
        /* The count of held-back signals stays: it is history, not state. */
        for (Level v = LEVEL_NONE; v < _LEVEL_MAX; v++)
                u->sent[v] = false;
}

uint64_t signal_limit_suppressed(const SignalLimit *l, const char *unit) {
        const SignalLimitUnit *u = unit ? limit_find(l, unit) : NULL;

        return u ? u->suppressed : 0;
}
