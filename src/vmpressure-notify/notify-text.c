/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "notify-text.h"

void markup_escape(char *buf, size_t size, const char *s) {
        size_t n = 0;

        if (size == 0)
                return;
        for (; s && *s; s++) {
                const char *rep = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : NULL;
                size_t l = rep ? strlen(rep) : 1;

                if (n + l >= size)
                        break;          /* cut whole characters or entities only */
                if (rep)
                        memcpy(buf + n, rep, l);
                else
                        buf[n] = *s;
                n += l;
        }
        buf[n] = '\0';
}

void format_bytes(char *buf, size_t size, uint64_t bytes) {
        static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
        double v = (double) bytes;
        size_t i;

        if (bytes < 1024) {
                snprintf(buf, size, "%" PRIu64 " B", bytes);
                return;
        }
        for (i = 0, v /= 1024; v >= 1024 && i + 1 < ELEMENTSOF(units); i++)
                v /= 1024;
        if (i == 0)
                snprintf(buf, size, "%" PRIu64 " KiB", bytes / 1024);
        else
                snprintf(buf, size, "%.1f %s", v, units[i]);
}

void notify_text_killed(NotifyText *ret, const char *unit, uint32_t pid, const char *comm,
                        uint64_t rss_bytes, const char *reason) {
        char e_unit[256], e_comm[64], e_reason[256], size[32];

        markup_escape(e_unit, sizeof e_unit, unit);
        markup_escape(e_comm, sizeof e_comm, comm);
        markup_escape(e_reason, sizeof e_reason, reason);
        format_bytes(size, sizeof size, rss_bytes);
        /* The summary is plain text (not markup) in the specification. */
        snprintf(ret->summary, sizeof ret->summary, "Out of memory: killed %s", comm && *comm ? comm : "a process");
        snprintf(ret->body, sizeof ret->body, "%s (pid %" PRIu32 ") of %s was killed to free %s: %s.",
                 e_comm, pid, e_unit, size, *e_reason ? e_reason : "memory pressure");
        ret->urgency = 2;
}

bool notify_text_action(NotifyText *ret, const char *unit, const char *level, const char *action,
                        const char *signal_name, uint32_t pid, const char *result, bool simulated) {
        char e_unit[256], e_sig[32], e_res[64], target[300];
        bool dry_kill = streq_ptr(action, "would-kill"), dry_signal = streq_ptr(action, "would-signal");

        if (streq_ptr(action, "kill"))
                return false;           /* Killed says it, with what was freed */
        markup_escape(e_unit, sizeof e_unit, unit);
        markup_escape(e_sig, sizeof e_sig, signal_name);
        markup_escape(e_res, sizeof e_res, result);
        if (pid > 0)
                snprintf(target, sizeof target, "pid %" PRIu32 " of %s", pid, e_unit);
        else
                snprintf(target, sizeof target, "%s", e_unit);

        if (dry_kill || dry_signal) {
                snprintf(ret->summary, sizeof ret->summary, "Low memory: would %s %s (dry run)",
                         dry_kill ? "kill a process of" : "signal", unit);
                if (dry_kill)
                        snprintf(ret->body, sizeof ret->body,
                                 "At %s pressure the policy would kill %s; the daemon runs with DryRun=yes.",
                                 level, target);
                else
                        snprintf(ret->body, sizeof ret->body,
                                 "At %s pressure the policy would send %s to %s; the daemon runs with DryRun=yes.",
                                 level, e_sig, target);
        } else if (streq_ptr(result, "ok")) {
                snprintf(ret->summary, sizeof ret->summary, "Low memory: signalled %s", unit);
                snprintf(ret->body, sizeof ret->body, "At %s pressure %s was sent to %s.", level, e_sig, target);
        } else {
                snprintf(ret->summary, sizeof ret->summary, "Low memory: could not signal %s", unit);
                snprintf(ret->body, sizeof ret->body, "At %s pressure sending %s to %s failed: %s.",
                         level, e_sig, target, e_res);
        }
        if (simulated)
                strncat(ret->body, " (simulated pressure)", sizeof ret->body - strlen(ret->body) - 1);
        ret->urgency = 1;
        return true;
}

void notify_text_oom(NotifyText *ret, const char *scope, uint32_t index) {
        char e_scope[256];

        markup_escape(e_scope, sizeof e_scope, scope);
        snprintf(ret->summary, sizeof ret->summary, "Memory almost exhausted");
        snprintf(ret->body, sizeof ret->body,
                 "%s%s is out of memory (reclaim index %" PRIu32 "). Processes may be killed: "
                 "save your work and close what you do not need.",
                 streq_ptr(scope, "-.slice") ? "The system" : "Unit ",
                 streq_ptr(scope, "-.slice") ? "" : e_scope, index);
        ret->urgency = 2;
}

void notify_text_add_suppressed(NotifyText *t, unsigned suppressed) {
        size_t n = strlen(t->body);

        if (suppressed > 0 && n < sizeof t->body)
                snprintf(t->body + n, sizeof t->body - n, " (%u more not shown: rate limit)", suppressed);
}

void notify_ratelimit_init(NotifyRateLimit *rl, unsigned burst, usec_t interval_usec, usec_t now_usec) {
        *rl = (NotifyRateLimit) {
                .interval_usec = interval_usec,
                .burst = burst,
                .tokens = burst,
                .refilled_usec = now_usec,
        };
}

bool notify_ratelimit_take(NotifyRateLimit *rl, usec_t now_usec) {
        if (rl->interval_usec > 0 && now_usec > rl->refilled_usec) {
                uint64_t n = (now_usec - rl->refilled_usec) / rl->interval_usec;

                if (rl->tokens + n >= rl->burst) {
                        rl->tokens = rl->burst;
                        rl->refilled_usec = now_usec;
                } else {
                        rl->tokens += (unsigned) n;
                        rl->refilled_usec += n * rl->interval_usec;
                }
        }
        if (rl->tokens == 0) {
                rl->suppressed++;
                return false;
        }
        rl->tokens--;
        return true;
}

unsigned notify_ratelimit_pop_suppressed(NotifyRateLimit *rl) {
        unsigned n = rl->suppressed;

        rl->suppressed = 0;
        return n;
}
