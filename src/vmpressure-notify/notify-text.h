/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * vmpressure-notify's decisions, pure: the text of a desktop notification
 * for each of the daemon's signals and the rate limit. No I/O, no clock:
 * the time comes in as a parameter.
 */

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

/* A notification's summary and body (the body in the Desktop Notifications
 * markup subset, so text from the bus is escaped). Long names are cut. */
typedef struct NotifyText {
        char summary[256];
        char body[1024];
        /* 0 low, 1 normal, 2 critical: the "urgency" hint. */
        uint8_t urgency;
} NotifyText;

/* Killed(s unit, u pid, s comm, t rss_bytes, s reason). */
void notify_text_killed(NotifyText *ret, const char *unit, uint32_t pid, const char *comm,
                        uint64_t rss_bytes, const char *reason);

/* Action(t realtime_usec, s unit, s level, s action, s signal, u pid, s result,
 * b simulated, t latency_usec). Returns false for the actions that are not
 * worth a notification of their own: a "kill", which has its Killed signal. */
bool notify_text_action(NotifyText *ret, const char *unit, const char *level, const char *action,
                        const char *signal_name, uint32_t pid, const char *result, bool simulated);

/* OOM(s scope, u index): the system ("-.slice") or a unit is out of memory. */
void notify_text_oom(NotifyText *ret, const char *scope, uint32_t index);

/* Appends "(N more not shown)" to the body when the rate limit held back
 * notifications before this one. */
void notify_text_add_suppressed(NotifyText *t, unsigned suppressed);

/* "1.5 GiB", "312.0 MiB", "64 KiB", "512 B". */
void format_bytes(char *buf, size_t size, uint64_t bytes);

/* Copies s into buf with &, < and > as entities (the body's markup). */
void markup_escape(char *buf, size_t size, const char *s);

/* A token bucket: at most burst notifications at once, then one per
 * interval_usec; what it holds back is counted until the next one that
 * passes. */
typedef struct NotifyRateLimit {
        usec_t interval_usec;
        unsigned burst;
        unsigned tokens;
        usec_t refilled_usec;           /* when the last token was added */
        unsigned suppressed;
} NotifyRateLimit;

void notify_ratelimit_init(NotifyRateLimit *rl, unsigned burst, usec_t interval_usec, usec_t now_usec);
/* True when a notification may go out now (a token is taken); false when it
 * is held back (and counted). */
bool notify_ratelimit_take(NotifyRateLimit *rl, usec_t now_usec);
/* How many were held back since the last one that passed; resets it. */
unsigned notify_ratelimit_pop_suppressed(NotifyRateLimit *rl);
