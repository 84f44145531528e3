/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vmpressure-notify's texts and rate limit: literal inputs, hand-advanced time. */

#include <string.h>

#include "notify-text.h"
#include "tests.h"

static void test_format_bytes(void) {
        static const struct {
                uint64_t bytes;
                const char *want;
        } table[] = {
                { 0, "0 B" },
                { 1023, "1023 B" },
                { 1024, "1 KiB" },
                { 65536, "64 KiB" },
                { 1048575, "1023 KiB" },
                { 1048576, "1.0 MiB" },
                { 327155712, "312.0 MiB" },
                { 1610612736, "1.5 GiB" },
                { UINT64_MAX, "16777216.0 TiB" },
        };
        char buf[32];

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                format_bytes(buf, sizeof buf, table[i].bytes);
                CHECK_STREQ(buf, table[i].want);
        }
}

static void test_escape(void) {
        char buf[32];

        markup_escape(buf, sizeof buf, "a<b>&c");
        CHECK_STREQ(buf, "a&lt;b&gt;&amp;c");
        /* Cut before an entity that does not fit whole: never "&am". */
        markup_escape(buf, 8, "ab&cd");
        CHECK_STREQ(buf, "ab&amp;");
        markup_escape(buf, 7, "ab&cd");
        CHECK_STREQ(buf, "ab");
        markup_escape(buf, sizeof buf, NULL);
        CHECK_STREQ(buf, "");
}

static void test_killed(void) {
        NotifyText t;

        notify_text_killed(&t, "web<1>.service", 4242, "fire&fox", 327155712, "largest in unit at OOM");
        CHECK_STREQ(t.summary, "Out of memory: killed fire&fox");
        CHECK_STREQ(t.body, "fire&amp;fox (pid 4242) of web&lt;1&gt;.service was killed to free 312.0 MiB: "
                            "largest in unit at OOM.");
        CHECK_EQ_INT(t.urgency, 2);
        notify_text_killed(&t, "x.service", 1, "", 0, "");
        CHECK_STREQ(t.summary, "Out of memory: killed a process");
        CHECK(strstr(t.body, "memory pressure") != NULL);
}

static void test_action(void) {
        NotifyText t;

        /* A kill has its Killed signal: no second notification. */
        CHECK(!notify_text_action(&t, "a.service", "oom", "kill", "SIGKILL", 10, "ok", false));
        CHECK(notify_text_action(&t, "db.service", "medium", "signal", "SIGUSR1", 0, "ok", false));
        CHECK_STREQ(t.summary, "Low memory: signalled db.service");
        CHECK_STREQ(t.body, "At medium pressure SIGUSR1 was sent to db.service.");
        CHECK(notify_text_action(&t, "db.service", "medium", "signal", "SIGUSR1", 77, "ESRCH", true));
        CHECK_STREQ(t.summary, "Low memory: could not signal db.service");
        CHECK_STREQ(t.body, "At medium pressure sending SIGUSR1 to pid 77 of db.service failed: ESRCH. "
                            "(simulated pressure)");
        CHECK(notify_text_action(&t, "b.service", "oom", "would-kill", "SIGKILL", 9, "ok", false));
        CHECK_STREQ(t.summary, "Low memory: would kill a process of b.service (dry run)");
        CHECK(strstr(t.body, "would kill pid 9 of b.service") != NULL);
        CHECK_EQ_INT(t.urgency, 1);
}

static void test_oom(void) {
        NotifyText t;

        notify_text_oom(&t, "-.slice", 100);
        CHECK(strncmp(t.body, "The system is out of memory (reclaim index 100).", 48) == 0);
        notify_text_oom(&t, "a.service", 97);
        CHECK(strncmp(t.body, "Unit a.service is out of memory", 31) == 0);
        CHECK_EQ_INT(t.urgency, 2);
}

static void test_ratelimit(void) {
        NotifyRateLimit rl;
        NotifyText t = { .body = "x" };
        const usec_t s = USEC_PER_SEC;

        notify_ratelimit_init(&rl, 3, 10 * s, 100 * s);
        /* The burst, then held back and counted. */
        CHECK(notify_ratelimit_take(&rl, 100 * s));
        CHECK(notify_ratelimit_take(&rl, 100 * s));
        CHECK(notify_ratelimit_take(&rl, 101 * s));
        CHECK(!notify_ratelimit_take(&rl, 101 * s));
        CHECK(!notify_ratelimit_take(&rl, 109 * s));
        /* One token per interval since the last refill. */
        CHECK(notify_ratelimit_take(&rl, 110 * s));
        CHECK_EQ_INT(notify_ratelimit_pop_suppressed(&rl), 2);
        CHECK_EQ_INT(notify_ratelimit_pop_suppressed(&rl), 0);
        CHECK(!notify_ratelimit_take(&rl, 119 * s));
        /* A long quiet refills the whole burst, not more. */
        CHECK(notify_ratelimit_take(&rl, 1000 * s));
        CHECK(notify_ratelimit_take(&rl, 1000 * s));
        CHECK(notify_ratelimit_take(&rl, 1000 * s));
        CHECK(!notify_ratelimit_take(&rl, 1000 * s));
        /* Time going backwards (never on CLOCK_MONOTONIC) gives nothing. */
        CHECK(!notify_ratelimit_take(&rl, 10 * s));

        notify_text_add_suppressed(&t, 0);
        CHECK_STREQ(t.body, "x");
        notify_text_add_suppressed(&t, 3);
        CHECK_STREQ(t.body, "x (3 more not shown: rate limit)");
}

int main(void) {
        test_format_bytes();
        test_escape();
        test_killed();
        test_action();
        test_oom();
        test_ratelimit();
        return test_exit("test-notify-text");
}
