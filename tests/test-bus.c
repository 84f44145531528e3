/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure bits of the bus issue: the LowMemoryWarning levels and the
 * [Daemon] keys LowMemoryMonitor= and MaxSubscribers=. */

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

static void test_keys(void) {
        static Diagnostics d;
        Config c;

        config_init(&c);
        CHECK_EQ_INT(c.low_memory_monitor, LOW_MEMORY_MONITOR_AUTO);
        CHECK_EQ_INT(c.max_subscribers, SUBSCRIBERS_MAX_DEFAULT);

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
        CHECK_EQ_INT(c.max_subscribers, SUBSCRIBERS_MAX_DEFAULT);
        CHECK(strstr(d.msg[0], "MaxSubscribers=") != NULL);
}

int main(void) {
        test_lmm_levels();
        test_mode_strings();
        test_keys();
        return test_exit("test-bus");
}
