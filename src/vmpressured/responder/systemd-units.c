/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "log.h"
#include "systemd-units.h"

#include "systemd-names.h"
#define SYSTEMD_UNIT_PREFIX "/org/freedesktop/systemd1/unit"

/* One ControlGroup query in flight. Owned by its slot: the slot's destroy
 * callback frees it, whether the reply came or the call was cancelled (a
 * new connection, _free()). While linked into units->requests, the list
 * holds the slot's reference. */
struct SystemdUnitsRequest {
        SystemdUnits *units;            /* NULL once unlinked */
        sd_bus_slot *slot;
        SystemdUnitsRequest *prev, *next;
        uint64_t generation;
        bool full;                      /* part of the full refresh of that generation */
        char unit[UNIT_NAME_MAX];
};

static void request_unlink(SystemdUnitsRequest *q) {
        SystemdUnits *u = q->units;

        if (!u)
                return;
        if (q->prev)
                q->prev->next = q->next;
        else
                u->requests = q->next;
        if (q->next)
                q->next->prev = q->prev;
        q->prev = q->next = NULL;
        q->units = NULL;
}

static void request_destroy(void *userdata) {
        SystemdUnitsRequest *q = userdata;

        request_unlink(q);
        free(q);
}

static void listing_done(SystemdUnits *u) {
        size_t dropped = unit_cgroup_cache_end(&u->cache, u->listing_generation);

        u->listing = false;
        u->ready = true;
        u->n_full++;
        log_debug("systemd: %zu units with policies running, %zu gone from the cache.", u->cache.n, dropped);
        if (u->again) {
                u->again = false;
                (void) systemd_units_refresh(u);
        }
}

/* job: after a job of systemd's on the unit (a start, a restart), which
 * counts as a start even when the cgroup is the same as before. */
static void cache_store(SystemdUnits *u, const char *unit, const char *cgroup, uint64_t generation, bool job) {
        const char *old = unit_cgroup_cache_get(&u->cache, unit);
        bool changed = !old || !streq(old, cgroup);
        int r;

        r = unit_cgroup_cache_set(&u->cache, unit, cgroup, generation);
        if (r < 0) {
                log_warning_errno(r, "Cannot keep the cgroup %s of %s, ignoring the unit: %m", cgroup, unit);
                return;
        }
        if (changed || job) {
                log_debug("systemd: %s is in %s.", unit, cgroup);
                if (u->cb.started)
                        u->cb.started(unit, cgroup, u->userdata);
        }
}

static int on_control_group(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        SystemdUnitsRequest *q = userdata;
        SystemdUnits *u = q->units;
        sd_bus_slot *slot = q->slot;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const char *cgroup = NULL;
        int r;

        if (!u)
                return 0;       /* cancelled */
        /* Out of the list first: what follows may start a refresh on a new
         * connection, which cancels everything still listed. sd-bus holds
         * the slot (and so q) until we return. */
        request_unlink(q);
        if (e)
                /* NoSuchUnit: unloaded meanwhile; the unit is not running. */
                log_debug("systemd: no ControlGroup for %s: %s", q->unit, e->message ?: e->name);
        else {
                r = sd_bus_message_read(reply, "v", "s", &cgroup);
                if (r < 0)
                        log_warning_errno(r, "Bad ControlGroup reply for %s, ignoring: %m", q->unit);
        }
        /* "": the unit is not running (systemd releases a stopped unit's cgroup). */
        if (cgroup && cgroup[0] != '\0')
                cache_store(u, q->unit, cgroup, q->generation, !q->full);
        else if (unit_cgroup_cache_remove(&u->cache, q->unit) > 0)
                log_debug("systemd: %s has no cgroup now.", q->unit);

        if (q->full && u->listing && q->generation == u->listing_generation && --u->pending == 0)
                listing_done(u);
        sd_bus_slot_unref(slot);        /* the list's reference; q is freed with the slot */
        return 0;
}

/* Properties.Get(ControlGroup) on the unit's object: one round trip, the
 * object path derived as systemd derives it (sd_bus_path_encode()). */
static int query_unit(SystemdUnits *u, const char *unit, const char *object, uint64_t generation, bool full) {
        _cleanup_(freep) char *encoded = NULL;
        const char *interface = unit_name_dbus_interface(unit);
        SystemdUnitsRequest *q;
        int r;

        if (!interface || !u->bus)
                return -EINVAL;
        if (!object) {
                r = sd_bus_path_encode(SYSTEMD_UNIT_PREFIX, unit, &encoded);
                if (r < 0)
                        return r;
                object = encoded;
        }
        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        *q = (SystemdUnitsRequest) { .units = u, .generation = generation, .full = full };
        (void) snprintf(q->unit, sizeof(q->unit), "%s", unit);
        r = sd_bus_call_method_async(u->bus, &q->slot, SYSTEMD_DEST, object, "org.freedesktop.DBus.Properties",
                                     "Get", on_control_group, q, "ss", interface, "ControlGroup");
        if (r < 0) {
                free(q);
                return r;
        }
        (void) sd_bus_slot_set_destroy_callback(q->slot, request_destroy);
        q->next = u->requests;
        if (q->next)
                q->next->prev = q;
        u->requests = q;
        return 0;
}

static bool state_has_cgroup(const char *active_state) {
        /* "inactive" and "failed" units have released their cgroup. */
        return streq(active_state, "active") || streq(active_state, "reloading") ||
               streq(active_state, "activating") || streq(active_state, "deactivating");
}

static int on_list_units(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        SystemdUnits *u = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const char *name, *active, *object;
        int r;

        /* sd-bus keeps the slot alive while it dispatches to us. */
        u->list_slot = sd_bus_slot_unref(u->list_slot);
        if (e) {
                log_warning("systemd: ListUnits failed, keeping the unit cgroups known: %s", e->message ?: e->name);
                u->listing = false;
                return 0;
        }
        u->pending = 1;         /* held until every query is sent */
        r = sd_bus_message_enter_container(reply, 'a', "(ssssssouso)");
        while (r > 0) {
                r = sd_bus_message_read(reply, "(ssssssouso)", &name, NULL, NULL, &active, NULL, NULL, &object,
                                        NULL, NULL, NULL);
                if (r <= 0)
                        break;
                if (!state_has_cgroup(active) || !unit_name_dbus_interface(name) ||
                    !u->cb.wanted(name, u->userdata))
                        continue;
                if (query_unit(u, name, object, u->listing_generation, true) >= 0)
                        u->pending++;
                else
                        log_warning("systemd: cannot ask for the cgroup of %s, ignoring the unit.", name);
        }
        if (r < 0)
                log_warning_errno(r, "systemd: bad ListUnits reply, using what was read: %m");
        if (--u->pending == 0)
                listing_done(u);
        return 0;
}

static int on_job_removed(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        SystemdUnits *u = userdata;
        const char *unit, *result;
        uint32_t id;
        int r;

        r = sd_bus_message_read(msg, "uoss", &id, NULL, &unit, &result);
        if (r < 0 || !unit_name_dbus_interface(unit) || !u->cb.wanted(unit, u->userdata))
                return 0;
        log_debug("systemd: job %u for %s ended (%s), asking for its cgroup.", id, unit, result);
        /* The current generation: an in-flight full refresh must not drop it. */
        r = query_unit(u, unit, NULL, u->cache.generation, false);
        if (r < 0)
                log_warning_errno(r, "systemd: cannot ask for the cgroup of %s, ignoring: %m", unit);
        return 0;
}

/* The connection went (bus.c reconnects): attach to the new one within
 * SYSTEMD_UNITS_RETRY_USEC rather than at the next full refresh, so that
 * few JobRemoved are missed. Nothing is called on the dead connection. */
static int on_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        SystemdUnits *u = userdata;
        usec_t now = 0;

        (void) sd_event_now(u->event, CLOCK_MONOTONIC, &now);
        (void) sd_event_source_set_time(u->timer, now + SYSTEMD_UNITS_RETRY_USEC);
        (void) sd_event_source_set_enabled(u->timer, SD_EVENT_ONESHOT);
        return 0;
}

static void drop_connection(SystemdUnits *u) {
        /* Cancels what is in flight: each slot's destroy callback frees its
         * request, at once or after a dispatch in progress. */
        while (u->requests) {
                sd_bus_slot *slot = u->requests->slot;

                request_unlink(u->requests);
                sd_bus_slot_unref(slot);
        }
        u->match_slot = sd_bus_slot_unref(u->match_slot);
        u->list_slot = sd_bus_slot_unref(u->list_slot);
        u->disconnect_slot = sd_bus_slot_unref(u->disconnect_slot);
        u->bus = sd_bus_unref(u->bus);
        u->listing = false;
}

/* A new connection: the match and the subscription are per connection. */
static int attach(SystemdUnits *u, sd_bus *bus) {
        int r;

        drop_connection(u);
        u->bus = sd_bus_ref(bus);
        /* Local: installs nothing on the bus. */
        r = sd_bus_match_signal(bus, &u->disconnect_slot, "org.freedesktop.DBus.Local",
                                "/org/freedesktop/DBus/Local", "org.freedesktop.DBus.Local", "Disconnected",
                                on_disconnected, u);
        if (r < 0)
                return log_warning_errno(r, "systemd: cannot watch the bus connection: %m");
        r = sd_bus_match_signal_async(bus, &u->match_slot, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                      "JobRemoved", on_job_removed, NULL, u);
        if (r < 0)
                return log_warning_errno(r, "systemd: cannot watch JobRemoved: %m");
        /* systemd sends its unit and job signals only while someone is subscribed. */
        r = sd_bus_call_method_async(bus, NULL, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "Subscribe",
                                     NULL, NULL, "");
        if (r < 0)
                return log_warning_errno(r, "systemd: cannot subscribe to its signals: %m");
        log_debug("systemd: watching its jobs on a new bus connection.");
        return 0;
}

int systemd_units_refresh(SystemdUnits *u) {
        sd_bus *bus = u->cb.get_bus ? u->cb.get_bus(u->userdata) : NULL;
        int r;

        if (!bus)
                return -ENOTCONN;
        if (bus != u->bus)
                (void) attach(u, bus);
        if (u->listing) {
                u->again = true;
                return 0;
        }
        r = sd_bus_call_method_async(bus, &u->list_slot, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "ListUnits",
                                     on_list_units, u, "");
        if (r < 0)
                return log_warning_errno(r, "systemd: cannot list units: %m");
        u->listing = true;
        u->listing_generation = unit_cgroup_cache_begin(&u->cache);
        return 0;
}

static int on_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        SystemdUnits *u = userdata;
        usec_t now = usec;
        int r;

        /* From now: the first run is scheduled at time 1 (at once). Once a
         * listing is on its way the timer stays off: JobRemoved keeps the
         * cache, nothing polls. */
        (void) sd_event_now(u->event, CLOCK_MONOTONIC, &now);
        r = systemd_units_refresh(u);
        if (r == -ENOTCONN) {
                log_debug("systemd: no bus connection yet, asking again in %s.", "1s");
                (void) sd_event_source_set_time(es, MAX(now, usec) + SYSTEMD_UNITS_RETRY_USEC);
                (void) sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
        }
        return 0;
}

int systemd_units_new(sd_event *event, const SystemdUnitsCallbacks *cb, void *userdata, SystemdUnits **ret) {
        SystemdUnits *u;
        int r;

        u = calloc(1, sizeof(*u));
        if (!u)
                return -ENOMEM;
        unit_cgroup_cache_init(&u->cache);
        u->cb = *cb;
        u->userdata = userdata;
        u->event = sd_event_ref(event);
        /* At time 1: as soon as the loop runs, when the bus is connected. */
        r = sd_event_add_time(event, &u->timer, CLOCK_MONOTONIC, 1, 50 * USEC_PER_MSEC, on_timer, u);
        if (r >= 0)
                r = sd_event_source_set_enabled(u->timer, SD_EVENT_ONESHOT);
        if (r < 0) {
                systemd_units_free(u);
                return r;
        }
        *ret = u;
        return 0;
}

SystemdUnits *systemd_units_free(SystemdUnits *u) {
        if (!u)
                return NULL;
        drop_connection(u);
        sd_event_source_disable_unref(u->timer);
        sd_event_unref(u->event);
        free(u);
        return NULL;
}

const UnitCgroupCache *systemd_units_cache(const SystemdUnits *u) {
        return u && u->ready ? &u->cache : NULL;
}
