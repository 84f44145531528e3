/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "recent-actions.h"

static const char *const kind_table[_RECENT_ACTION_KIND_MAX] = {
        [RECENT_ACTION_SIGNAL] = "signal",
        [RECENT_ACTION_WOULD_SIGNAL] = "would-signal",
        [RECENT_ACTION_KILL] = "kill",
        [RECENT_ACTION_WOULD_KILL] = "would-kill",
};

const char *recent_action_kind_to_string(RecentActionKind k) {
        if (k < 0 || k >= _RECENT_ACTION_KIND_MAX)
                return NULL;
        return kind_table[k];
}

RecentActionKind recent_action_kind_from_string(const char *s) {
        return (RecentActionKind) string_table_lookup(kind_table, ELEMENTSOF(kind_table), s);
}

void recent_actions_push(RecentActions *ra, const RecentAction *a) {
        RecentAction *slot = &ra->ring[ra->total % RECENT_ACTIONS_MAX];

        *slot = *a;
        slot->unit[sizeof(slot->unit) - 1] = '\0';
        ra->total++;
}

size_t recent_actions_size(const RecentActions *ra) {
        return ra->total < RECENT_ACTIONS_MAX ? (size_t) ra->total : RECENT_ACTIONS_MAX;
}

const RecentAction *recent_actions_get(const RecentActions *ra, size_t i) {
        size_t n = recent_actions_size(ra);

        if (i >= n)
                return NULL;
        /* The oldest held is total - n; slots wrap modulo the ring. */
        return &ra->ring[(ra->total - n + i) % RECENT_ACTIONS_MAX];
}
