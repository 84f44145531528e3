/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* systemd's side of the actions, when PID 1 is systemd. */
#include "action-internal.h"
#include "log.h"
#include "unit-name.h"

#include "systemd-names.h"

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
