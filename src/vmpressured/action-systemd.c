/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* systemd's side of the actions, when PID 1 is systemd. */
#include "action-internal.h"
#include "log.h"

#define SYSTEMD_DEST "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"

/* ControlGroup lives on the type's interface (…systemd1.Service), not on …systemd1.Unit. */
static const char *unit_type_interface(const char *unit) {
        static const struct {
                const char *suffix;
                const char *interface;
        } table[] = {
                { ".service", "org.freedesktop.systemd1.Service" },
                { ".scope",   "org.freedesktop.systemd1.Scope" },
                { ".slice",   "org.freedesktop.systemd1.Slice" },
                { ".socket",  "org.freedesktop.systemd1.Socket" },
                { ".mount",   "org.freedesktop.systemd1.Mount" },
                { ".swap",    "org.freedesktop.systemd1.Swap" },
        };
        const char *dot = strrchr(unit, '.');

        for (size_t i = 0; dot && i < ELEMENTSOF(table); i++)
                if (streq(dot, table[i].suffix))
                        return table[i].interface;
        return NULL;
}

static int kill_unit_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const sd_bus_error *e = sd_bus_message_get_error(m);

        /* The error text names the unit ("Unit foo.service not loaded."). */
        if (e)
                log_warning("KillUnit failed: %s", e->message ?: e->name);
        return 0;
}

int systemd_kill_unit(sd_bus *bus, const char *unit, SignalTarget target, int sig) {
        const char *whom = signal_target_to_string(target);

        if (!bus || !unit || !whom || sig <= 0)
                return -EINVAL;
        /* Asynchronous: a KillUnit call on the OOM path must not wait for a
         * PID 1 that is itself stalled in reclaim (the default timeout is 25 s). */
        return sd_bus_call_method_async(bus, NULL, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "KillUnit",
                                        kill_unit_reply, NULL, "ssi", unit, whom, (int32_t) sig);
}

int systemd_unit_cgroup(sd_bus *bus, const char *unit, char *buf, size_t size) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(freep) char *cgroup = NULL;
        const char *path, *interface;
        size_t n;
        int r;

        if (!bus || !unit || !buf || size == 0)
                return -EINVAL;
        interface = unit_type_interface(unit);
        if (!interface)
                return -ENODATA;        /* a unit type without a cgroup (target, timer) */
        r = sd_bus_call_method(bus, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER, "GetUnit", &error, &reply,
                               "s", unit);
        if (r < 0) {
                if (sd_bus_error_has_name(&error, "org.freedesktop.systemd1.NoSuchUnit"))
                        return -ENOENT;
                return log_debug_errno(r, "GetUnit(%s) failed: %s", unit, error.message ?: "");
        }
        r = sd_bus_message_read(reply, "o", &path);
        if (r < 0)
                return r;
        r = sd_bus_get_property_string(bus, SYSTEMD_DEST, path, interface, "ControlGroup", &error, &cgroup);
        if (r < 0)
                return r;
        n = strlen(cgroup);
        if (n == 0)
                return -ENODATA;
        if (n + 1 > size)
                return -ENOBUFS;
        memcpy(buf, cgroup, n + 1);
        return 0;
}
