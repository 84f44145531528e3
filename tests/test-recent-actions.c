/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The recent-actions ring: order (oldest first), wrap-around after
 * RECENT_ACTIONS_MAX, a copy that does not keep the caller's buffer, and
 * the kind names. */

#include <signal.h>

#include "recent-actions.h"
#include "tests.h"

static RecentAction make(unsigned i) {
        RecentAction a = {
                .realtime_usec = 1000 + i,
                .latency_usec = i,
                .level = LEVEL_OOM,
                .kind = i % 2 ? RECENT_ACTION_KILL : RECENT_ACTION_SIGNAL,
                .signo = i % 2 ? SIGKILL : SIGUSR1,
                .pid = (pid_t) (100 + i),
                .result = i % 3 == 0 ? -ESRCH : 1,
                .simulated = i % 4 == 0,
        };
        (void) snprintf(a.unit, sizeof(a.unit), "unit-%u.service", i);
        return a;
}

static void test_empty(void) {
        RecentActions ra = {};

        CHECK_EQ_INT(recent_actions_size(&ra), 0);
        CHECK(recent_actions_get(&ra, 0) == NULL);
}

static void test_fill_and_wrap(void) {
        static RecentActions ra;        /* ~5 KiB: not on the stack */
        char name[64];

        for (unsigned i = 0; i < 5; i++) {
                RecentAction a = make(i);
                recent_actions_push(&ra, &a);
                memset(&a, 0xaa, sizeof(a));    /* the ring holds a copy */
        }
        CHECK_EQ_INT(recent_actions_size(&ra), 5);
        CHECK_EQ_U64(ra.total, 5);
        CHECK_STREQ(recent_actions_get(&ra, 0)->unit, "unit-0.service");
        CHECK_STREQ(recent_actions_get(&ra, 4)->unit, "unit-4.service");
        CHECK(recent_actions_get(&ra, 5) == NULL);
        CHECK_EQ_INT(recent_actions_get(&ra, 3)->result, -ESRCH);
        CHECK(recent_actions_get(&ra, 4)->simulated);
        CHECK_EQ_INT(recent_actions_get(&ra, 1)->signo, SIGKILL);

        /* 3 full turns and a bit more: the last 16 stay, oldest first. */
        for (unsigned i = 5; i < 3 * RECENT_ACTIONS_MAX + 7; i++) {
                RecentAction a = make(i);
                recent_actions_push(&ra, &a);
        }
        CHECK_EQ_U64(ra.total, 3 * RECENT_ACTIONS_MAX + 7);
        CHECK_EQ_INT(recent_actions_size(&ra), RECENT_ACTIONS_MAX);
        for (size_t i = 0; i < RECENT_ACTIONS_MAX; i++) {
                unsigned want = 2 * RECENT_ACTIONS_MAX + 7 + (unsigned) i;
                const RecentAction *a = recent_actions_get(&ra, i);

                (void) snprintf(name, sizeof(name), "unit-%u.service", want);
                CHECK_STREQ(a->unit, name);
                CHECK_EQ_U64(a->realtime_usec, 1000 + want);
                CHECK_EQ_INT(a->pid, 100 + want);
        }
        CHECK(recent_actions_get(&ra, RECENT_ACTIONS_MAX) == NULL);
}

static void test_unterminated(void) {
        RecentActions ra = {};
        RecentAction a = make(1);

        /* A caller that filled unit to the brim: the copy is terminated. */
        memset(a.unit, 'x', sizeof(a.unit));
        recent_actions_push(&ra, &a);
        CHECK_EQ_INT(strlen(recent_actions_get(&ra, 0)->unit), UNIT_NAME_MAX - 1);
}

static void test_kinds(void) {
        for (RecentActionKind k = 0; k < _RECENT_ACTION_KIND_MAX; k++)
                CHECK_EQ_INT(recent_action_kind_from_string(recent_action_kind_to_string(k)), k);
        CHECK_STREQ(recent_action_kind_to_string(RECENT_ACTION_WOULD_KILL), "would-kill");
        CHECK(recent_action_kind_to_string(_RECENT_ACTION_KIND_MAX) == NULL);
        CHECK_EQ_INT(recent_action_kind_from_string("killed"), _RECENT_ACTION_KIND_INVALID);
}

int main(void) {
        test_empty();
        test_fill_and_wrap();
        test_unterminated();
        test_kinds();
        return test_exit("test-recent-actions");
}
