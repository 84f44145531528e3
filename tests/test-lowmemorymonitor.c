/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The org.freedesktop.LowMemoryMonitor compatibility of the bus module
 * (pure parts): the LowMemoryWarning byte per level, the once-per-15 s rule
 * GLib clients expect, and the [Daemon] keys that set the bus side up:
 * LowMemoryMonitor=, MaxSubscribers=, MaxSubscribersPerUser=. */

#include <inttypes.h>

#include "bus.h"
#include "conf.h"
#include "tests.h"

static int parse(Config *c, const char *text, Diagnostics *d) {
        config_init(c);
        diag_clear(d);
        return config_parse(c, "test.conf", text, strlen(text), d);
}

static void test_lmm_levels(void) {
        /* low-memory-monitor's values, which GLib passes on as they are. */
        CHECK_EQ_INT(bus_lmm_level(LEVEL_NONE), 0);
        CHECK_EQ_INT(bus_lmm_level(LEVEL_LOW), 50);
        CHECK_EQ_INT(bus_lmm_level(LEVEL_MEDIUM), 100);
        CHECK_EQ_INT(bus_lmm_level(LEVEL_OOM), 255);
}

static void test_mode_strings(void) {
        CHECK_EQ_INT(low_memory_monitor_mode_from_string("auto"), LOW_MEMORY_MONITOR_AUTO);
        CHECK_EQ_INT(low_memory_monitor_mode_from_string("yes"), LOW_MEMORY_MONITOR_YES);
        CHECK_EQ_INT(low_memory_monitor_mode_from_string("on"), LOW_MEMORY_MONITOR_YES);
        CHECK_EQ_INT(low_memory_monitor_mode_from_string("0"), LOW_MEMORY_MONITOR_NO);
        CHECK_EQ_INT(low_memory_monitor_mode_from_string("no"), LOW_MEMORY_MONITOR_NO);
        CHECK_EQ_INT(low_memory_monitor_mode_from_string("Auto"), _LOW_MEMORY_MONITOR_INVALID);
        CHECK_EQ_INT(low_memory_monitor_mode_from_string(""), _LOW_MEMORY_MONITOR_INVALID);
        CHECK_EQ_INT(low_memory_monitor_mode_from_string(NULL), _LOW_MEMORY_MONITOR_INVALID);
        for (LowMemoryMonitorMode m = 0; m < _LOW_MEMORY_MONITOR_MAX; m++)
                CHECK_EQ_INT(low_memory_monitor_mode_from_string(low_memory_monitor_mode_to_string(m)), m);
        CHECK(low_memory_monitor_mode_to_string(_LOW_MEMORY_MONITOR_MAX) == NULL);
}

/* low-memory-monitor's rule: each level at most once per 15 s, a rise at once. */
static void test_lmm_rate(void) {
        usec_t last[_LEVEL_MAX] = {};
        Level sent = LEVEL_NONE;
        const usec_t S = USEC_PER_SEC;
        struct {
                usec_t t;
                Level level;
                bool want;
        } steps[] = {
                { 100 * S, LEVEL_LOW, true },           /* the first */
                { 101 * S, LEVEL_LOW, false },          /* a repeat */
                { 103 * S, LEVEL_LOW, false },          /* back after a Normal: a flap */
                { 105 * S, LEVEL_MEDIUM, true },        /* a rise */
                { 106 * S, LEVEL_LOW, false },          /* a fall to a level sent 6 s ago */
                { 107 * S, LEVEL_MEDIUM, false },       /* back up to what was sent last */
                { 108 * S, LEVEL_OOM, true },           /* a rise */
                { 115 * S - 1, LEVEL_LOW, false },
                { 115 * S, LEVEL_LOW, true },           /* 15 s after its last */
                { 116 * S, LEVEL_MEDIUM, true },        /* a rise over the last sent (LOW) */
                { 130 * S, LEVEL_NONE, false },         /* never: Normal is no warning */
        };

        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                bool got = bus_lmm_wanted(sent, last, steps[i].level, steps[i].t);

                if (got != steps[i].want)
                        fprintf(stderr, "step %zu: level %d at %" PRIu64 " µs\n", i, steps[i].level, steps[i].t);
                CHECK(got == steps[i].want);
                if (got) {
                        last[steps[i].level] = steps[i].t;
                        sent = steps[i].level;
                }
        }
}

static void test_keys(void) {
        static Diagnostics d;
        Config c;

        config_init(&c);
        CHECK_EQ_INT(c.low_memory_monitor, LOW_MEMORY_MONITOR_AUTO);
        CHECK_EQ_INT(c.max_subscribers, 0);             /* not set: SUBSCRIBERS_MAX_DEFAULT */
        CHECK_EQ_INT(c.max_subscribers_per_user, 0);    /* not set: a quarter */

        CHECK_EQ_INT(parse(&c, "[Daemon]\nMaxSubscribersPerUser=16\n", &d), 0);
        CHECK_EQ_INT(c.max_subscribers_per_user, 16);
        CHECK_EQ_INT(parse(&c, "[Daemon]\nMaxSubscribersPerUser=0\n", &d), -EINVAL);
        CHECK(strstr(d.msg[0], "test.conf:2:") && strstr(d.msg[0], "MaxSubscribersPerUser="));
        CHECK_EQ_INT(c.max_subscribers_per_user, 0);

        CHECK_EQ_INT(parse(&c, "[Daemon]\nLowMemoryMonitor=no\nMaxSubscribers=1\n", &d), 0);
        CHECK_EQ_INT(c.low_memory_monitor, LOW_MEMORY_MONITOR_NO);
        CHECK_EQ_INT(c.max_subscribers, 1);
        CHECK_EQ_INT(parse(&c, "[Daemon]\nLowMemoryMonitor=yes\nMaxSubscribers=65536\n", &d), 0);
        CHECK_EQ_INT(c.low_memory_monitor, LOW_MEMORY_MONITOR_YES);
        CHECK_EQ_INT(c.max_subscribers, 65536);

        /* Bad values: named with file:line, the default stays. */
        CHECK_EQ_INT(parse(&c, "[Daemon]\nLowMemoryMonitor=maybe\n", &d), -EINVAL);
        CHECK_EQ_INT(c.low_memory_monitor, LOW_MEMORY_MONITOR_AUTO);
        CHECK_EQ_INT(d.n, 1);
        CHECK(strstr(d.msg[0], "test.conf:2:") && strstr(d.msg[0], "must be auto, yes or no"));
        CHECK_EQ_INT(parse(&c, "[Daemon]\nMaxSubscribers=0\n", &d), -EINVAL);
        CHECK_EQ_INT(parse(&c, "[Daemon]\nMaxSubscribers=65537\n", &d), -EINVAL);
        CHECK_EQ_INT(parse(&c, "[Daemon]\nMaxSubscribers=many\n", &d), -EINVAL);
        CHECK_EQ_INT(c.max_subscribers, 0);
        CHECK(strstr(d.msg[0], "MaxSubscribers=") != NULL);
}

int main(void) {
        test_lmm_levels();
        test_mode_strings();
        test_lmm_rate();
        test_keys();
        return test_exit("test-bus");
}
