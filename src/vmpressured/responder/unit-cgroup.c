/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "unit-cgroup.h"

void unit_cgroup_cache_init(UnitCgroupCache *c) {
        c->n = 0;
        c->generation = 0;
}

uint64_t unit_cgroup_cache_begin(UnitCgroupCache *c) {
        return ++c->generation;
}

static UnitCgroup *cache_find(const UnitCgroupCache *c, const char *unit) {
        /* Linear: at most 512 entries, a few µs, and no index to keep in step. */
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->entries[i].unit, unit))
                        return (UnitCgroup *) &c->entries[i];
        return NULL;
}

int unit_cgroup_cache_set(UnitCgroupCache *c, const char *unit, const char *cgroup, uint64_t generation) {
        UnitCgroup *e;
        size_t n;

        if (!unit_name_is_valid(unit, UNIT_NAME_PLAIN | UNIT_NAME_INSTANCE))
                return -EINVAL;
        if (!cgroup || cgroup[0] != '/' || cgroup[1] == '\0')
                return -EINVAL;
        n = strlen(cgroup);
        if (n >= UNIT_CGROUP_MAX)
                return -ENOBUFS;
        e = cache_find(c, unit);
        if (!e) {
                if (c->n >= UNIT_CGROUP_CACHE_MAX)
                        return -ENOSPC;
                e = &c->entries[c->n++];
                (void) snprintf(e->unit, sizeof(e->unit), "%s", unit);
                memcpy(e->cgroup, cgroup, n + 1);
                e->generation = generation;
                return 1;
        }
        memcpy(e->cgroup, cgroup, n + 1);
        /* A late reply of an older refresh must not make the entry look newer. */
        e->generation = MAX(e->generation, generation);
        return 0;
}

static void cache_delete(UnitCgroupCache *c, size_t i) {
        if (i + 1 < c->n)
                c->entries[i] = c->entries[c->n - 1];
        c->n--;
}

size_t unit_cgroup_cache_end(UnitCgroupCache *c, uint64_t generation) {
        size_t dropped = 0;

        for (size_t i = 0; i < c->n;)
                if (c->entries[i].generation < generation) {
                        cache_delete(c, i);
                        dropped++;
                } else
                        i++;
        return dropped;
}

int unit_cgroup_cache_remove(UnitCgroupCache *c, const char *unit) {
        UnitCgroup *e = unit ? cache_find(c, unit) : NULL;

        if (!e)
                return 0;
        cache_delete(c, (size_t) (e - c->entries));
        return 1;
}

const char *unit_cgroup_cache_get(const UnitCgroupCache *c, const char *unit) {
        const UnitCgroup *e = unit ? cache_find(c, unit) : NULL;

        return e ? e->cgroup : NULL;
}
