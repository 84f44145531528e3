/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The unit → cgroup cache (pure) and unit_name_dbus_interface(). */
#include "tests.h"
#include "unit-cgroup.h"

static UnitCgroupCache cache;   /* 400 KiB: not on the stack */

static void test_set_get(void) {
        UnitCgroupCache *c = &cache;
        uint64_t g;

        unit_cgroup_cache_init(c);
        CHECK(unit_cgroup_cache_get(c, "foo.service") == NULL);
        g = unit_cgroup_cache_begin(c);
        CHECK_EQ_U64(g, 1);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo.service", "/system.slice/foo.service", g), 1);
        /* Any slice: what systemd says is what is kept. */
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "hog@1.service", "/vmp-test.slice/vmp-test-hog.slice/hog@1.service", g), 1);
        CHECK_STREQ(unit_cgroup_cache_get(c, "foo.service"), "/system.slice/foo.service");
        CHECK_STREQ(unit_cgroup_cache_get(c, "hog@1.service"), "/vmp-test.slice/vmp-test-hog.slice/hog@1.service");
        CHECK(unit_cgroup_cache_get(c, "hog@2.service") == NULL);
        CHECK(unit_cgroup_cache_get(c, NULL) == NULL);
        CHECK_EQ_INT(c->n, 2);

        /* Moved (Slice= changed and restarted): updated in place, not added. */
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo.service", "/other.slice/foo.service", g), 0);
        CHECK_STREQ(unit_cgroup_cache_get(c, "foo.service"), "/other.slice/foo.service");
        CHECK_EQ_INT(c->n, 2);
}

static void test_refused(void) {
        UnitCgroupCache *c = &cache;
        char long_path[UNIT_CGROUP_MAX + 8];

        unit_cgroup_cache_init(c);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo@.service", "/system.slice/foo@.service", 1), -EINVAL); /* a template runs nothing */
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo.timer", "/system.slice/foo.timer", 1), -EINVAL);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo.service", "system.slice/foo.service", 1), -EINVAL);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo.service", "/", 1), -EINVAL);        /* the root is nobody's own */
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo.service", "", 1), -EINVAL);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo.service", NULL, 1), -EINVAL);
        memset(long_path, 'a', sizeof(long_path) - 1);
        long_path[0] = '/';
        long_path[UNIT_CGROUP_MAX] = '\0';               /* strlen UNIT_CGROUP_MAX: no room for the NUL */
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo.service", long_path, 1), -ENOBUFS);
        long_path[UNIT_CGROUP_MAX - 1] = '\0';           /* exactly fits */
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "foo.service", long_path, 1), 1);
        CHECK_EQ_INT(c->n, 1);
}

static void test_full(void) {
        UnitCgroupCache *c = &cache;
        char unit[64], cg[96];

        unit_cgroup_cache_init(c);
        for (int i = 0; i < UNIT_CGROUP_CACHE_MAX; i++) {
                (void) snprintf(unit, sizeof(unit), "u%d.service", i);
                (void) snprintf(cg, sizeof(cg), "/system.slice/%s", unit);
                CHECK_EQ_INT(unit_cgroup_cache_set(c, unit, cg, 1), 1);
        }
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "one-more.service", "/system.slice/one-more.service", 1), -ENOSPC);
        /* An update still works when full. */
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "u7.service", "/x.slice/u7.service", 1), 0);
        CHECK_EQ_INT(unit_cgroup_cache_remove(c, "u0.service"), 1);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "one-more.service", "/system.slice/one-more.service", 1), 1);
        CHECK_STREQ(unit_cgroup_cache_get(c, "u7.service"), "/x.slice/u7.service");
        CHECK_STREQ(unit_cgroup_cache_get(c, "u511.service"), "/system.slice/u511.service");
}

/* A full refresh drops what it did not see; a late reply of an older
 * refresh neither survives a newer refresh nor looks newer than it is. */
static void test_generations(void) {
        UnitCgroupCache *c = &cache;
        uint64_t g1, g2;

        unit_cgroup_cache_init(c);
        g1 = unit_cgroup_cache_begin(c);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "a.service", "/system.slice/a.service", g1), 1);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "b.service", "/system.slice/b.service", g1), 1);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "c.service", "/system.slice/c.service", g1), 1);
        CHECK_EQ_INT(unit_cgroup_cache_end(c, g1), 0);
        CHECK_EQ_INT(c->n, 3);

        g2 = unit_cgroup_cache_begin(c);
        CHECK(g2 > g1);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "a.service", "/system.slice/a.service", g2), 0);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "d.service", "/system.slice/d.service", g2), 1);
        /* b: a late reply of refresh 1 after refresh 2 saw it: stays at g2. */
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "b.service", "/system.slice/b.service", g2), 0);
        CHECK_EQ_INT(unit_cgroup_cache_set(c, "b.service", "/system.slice/b.service", g1), 0);
        /* c was stopped: refresh 2 does not see it. */
        CHECK_EQ_INT(unit_cgroup_cache_end(c, g2), 1);
        CHECK_EQ_INT(c->n, 3);
        CHECK(unit_cgroup_cache_get(c, "c.service") == NULL);
        CHECK(unit_cgroup_cache_get(c, "a.service") != NULL);
        CHECK(unit_cgroup_cache_get(c, "b.service") != NULL);
        CHECK(unit_cgroup_cache_get(c, "d.service") != NULL);

        CHECK_EQ_INT(unit_cgroup_cache_remove(c, "a.service"), 1);
        CHECK_EQ_INT(unit_cgroup_cache_remove(c, "a.service"), 0);
        CHECK_EQ_INT(unit_cgroup_cache_remove(c, NULL), 0);
        CHECK_EQ_INT(c->n, 2);
        CHECK_STREQ(unit_cgroup_cache_get(c, "d.service"), "/system.slice/d.service");
}

static void test_dbus_interface(void) {
        CHECK_STREQ(unit_name_dbus_interface("foo.service"), "org.freedesktop.systemd1.Service");
        CHECK_STREQ(unit_name_dbus_interface("foo@bar.service"), "org.freedesktop.systemd1.Service");
        CHECK_STREQ(unit_name_dbus_interface("session-2.scope"), "org.freedesktop.systemd1.Scope");
        CHECK_STREQ(unit_name_dbus_interface("vmp-test.slice"), "org.freedesktop.systemd1.Slice");
        CHECK_STREQ(unit_name_dbus_interface("a.socket"), "org.freedesktop.systemd1.Socket");
        CHECK_STREQ(unit_name_dbus_interface("a.mount"), "org.freedesktop.systemd1.Mount");
        CHECK_STREQ(unit_name_dbus_interface("a.swap"), "org.freedesktop.systemd1.Swap");
        CHECK(unit_name_dbus_interface("a.timer") == NULL);
        CHECK(unit_name_dbus_interface("service") == NULL);
        CHECK(unit_name_dbus_interface("") == NULL);
        CHECK(unit_name_dbus_interface(NULL) == NULL);
}

int main(void) {
        test_set_get();
        test_refused();
        test_full();
        test_generations();
        test_dbus_interface();
        return test_exit("test-unit-cgroup");
}
