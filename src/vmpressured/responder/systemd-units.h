/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Unit → cgroup through systemd's D-Bus API, when PID 1 is systemd: keeps a
 * UnitCgroupCache (unit-cgroup.h) of the running units the caller wants
 * (those with a policy, templates' instances included, in any slice) from
 * ListUnits and each unit's ControlGroup property. Every bus call here is
 * asynchronous and none is made on the OOM path: that path reads the cache.
 *
 * When the cache is refreshed, and why:
 *   - in full when a bus connection is first seen (start-up, and after the
 *     bus reconnected: the signal match and Subscribe() went with the old
 *     connection) and on request (Reload/SIGHUP: which units have a policy
 *     may have changed);
 *   - one unit on systemd's JobRemoved for a wanted unit: every start, stop
 *     and restart through systemd ends a job, so a unit started after the
 *     daemon is in the cache one round trip (~1 ms) after systemd started
 *     it, not at the next poll. UnitNew comes when a unit is loaded, before
 *     it has a cgroup, and UnitRemoved when it is unloaded, which a stopped
 *     unit often is not: neither says more than JobRemoved;
 *   - never on a timer: a ListUnits every 60 s was the last thing that woke
 *     an idle daemon (2 wake-ups a minute, measured in the guest). What no
 *     signal tells is harmless: a main process that exits without a job
 *     leaves its cgroup in the cache, where no process is found any more;
 *     a reconnection refreshes in full; a unit started again ends a job.
 */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "unit-cgroup.h"

/* Until a bus connection is there (start-up races, reconnection). */
#define SYSTEMD_UNITS_RETRY_USEC (1 * USEC_PER_SEC)

typedef struct SystemdUnitsRequest SystemdUnitsRequest;

typedef struct SystemdUnitsCallbacks {
        /* The current system bus connection, or NULL; it changes on reconnection. */
        sd_bus *(*get_bus)(void *userdata);
        /* Whether unit is to be cached (it has a policy that acts). */
        bool (*wanted)(const char *unit, void *userdata);
        /* unit entered the cache (started, or seen for the first time) or
         * its cgroup changed. May be NULL. */
        void (*started)(const char *unit, const char *cgroup, void *userdata);
} SystemdUnitsCallbacks;

typedef struct SystemdUnits {
        UnitCgroupCache cache;          /* preallocated; what the OOM path reads */
        sd_event *event;
        sd_event_source *timer;
        sd_bus *bus;                    /* the connection the match is on (referenced) */
        sd_bus_slot *match_slot;        /* JobRemoved */
        sd_bus_slot *list_slot;         /* ListUnits in flight */
        sd_bus_slot *disconnect_slot;   /* the connection's local Disconnected */
        SystemdUnitsCallbacks cb;
        void *userdata;
        SystemdUnitsRequest *requests;  /* in flight; cancelled by _free() */
        bool listing;                   /* a full refresh is in flight */
        bool again;                     /* another full refresh was asked for meanwhile */
        uint64_t listing_generation;
        unsigned pending;               /* its ControlGroup replies still to come */
        bool ready;                     /* a full refresh completed at least once */
        uint64_t n_full;                /* full refreshes completed */
} SystemdUnits;

/* The first full refresh starts when the event loop runs. -ENOMEM. */
int systemd_units_new(sd_event *event, const SystemdUnitsCallbacks *cb, void *userdata, SystemdUnits **ret);
SystemdUnits *systemd_units_free(SystemdUnits *u);
DEFINE_TRIVIAL_CLEANUP_FUNC(SystemdUnits *, systemd_units_free);

/* Starts a full refresh (or queues one after the one in flight). 0, or
 * -ENOTCONN without a bus (the timer retries). */
int systemd_units_refresh(SystemdUnits *u);

/* The cache, NULL until a full refresh completed (then the caller falls
 * back to the system.slice layout). */
const UnitCgroupCache *systemd_units_cache(const SystemdUnits *u);
