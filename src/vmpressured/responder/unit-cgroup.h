/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Which cgroup each unit with a policy is in, as systemd said (its
 * ControlGroup property). Pure bookkeeping on a preallocated table: filled
 * off the OOM path (systemd-units.c), read on it without allocating.
 *
 * A full refresh runs as begin() → set()… → end(): end() drops the units
 * the refresh did not see (stopped, unloaded, or without a policy now).
 */

#include "macro.h"
#include "unit-name.h"

/* A unit's cgroup path with the NUL: "/system.slice/system-foo.slice/foo@a.service"
 * is 45 bytes; a longer one than this is refused (-ENOBUFS) and logged. */
#define UNIT_CGROUP_MAX 512
/* As many units with a policy as the responder looks at in one pass. */
#define UNIT_CGROUP_CACHE_MAX 512

typedef struct UnitCgroup {
        char unit[UNIT_NAME_MAX];       /* "foo@a.service" */
        char cgroup[UNIT_CGROUP_MAX];   /* "/vmp.slice/foo@a.service": absolute, below a hierarchy's root */
        uint64_t generation;            /* the refresh that last set it */
} UnitCgroup;

typedef struct UnitCgroupCache {
        UnitCgroup entries[UNIT_CGROUP_CACHE_MAX];      /* [0, n) in use, in no order */
        size_t n;
        uint64_t generation;            /* of the latest refresh begun */
} UnitCgroupCache;

void unit_cgroup_cache_init(UnitCgroupCache *c);

/* A full refresh begins: the generation to pass to set() and end(). */
uint64_t unit_cgroup_cache_begin(UnitCgroupCache *c);
/* Sets (or adds) unit's cgroup as seen by the refresh of that generation.
 * cgroup must be absolute ("/…"; "/" itself is refused: the root cgroup
 * is no unit's own). 1: added, 0: updated, -EINVAL: not a unit name or not
 * an absolute path, -ENOBUFS: too long, -ENOSPC: the table is full. */
int unit_cgroup_cache_set(UnitCgroupCache *c, const char *unit, const char *cgroup, uint64_t generation);
/* The refresh of generation is complete: drops what was set by an older
 * one only. Returns how many were dropped. */
size_t unit_cgroup_cache_end(UnitCgroupCache *c, uint64_t generation);
/* 1: removed, 0: was not there. */
int unit_cgroup_cache_remove(UnitCgroupCache *c, const char *unit);
/* The unit's cgroup, NULL when unknown. */
const char *unit_cgroup_cache_get(const UnitCgroupCache *c, const char *unit);
