/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A unit's memory.high, for Guard= (responder/guard.c decides when). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>

#include "action.h"
#include "systemd-names.h"

int cgroup_write_memory_high(const char *cgroup2_root, const char *cgroup, uint64_t bytes) {
        char path[PATH_MAX * 2], line[32];
        int fd, n, r = 0;

        if (!cgroup2_root || !cgroup2_root[0])
                return -EOPNOTSUPP;
        if ((size_t) snprintf(path, sizeof(path), "%s/%s/memory.high", cgroup2_root, cgroup) >= sizeof(path))
                return -ENAMETOOLONG;
        n = bytes == UINT64_MAX ? snprintf(line, sizeof(line), "max")
                                : snprintf(line, sizeof(line), "%" PRIu64, bytes);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, line, (size_t) n) != n)
                r = errno > 0 ? -errno : -EIO;
        safe_close(fd);
        return r;
}

int systemd_memory_high_message(sd_bus *bus, const char *unit, uint64_t bytes, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &msg, SYSTEMD_DEST, SYSTEMD_PATH, SYSTEMD_MANAGER,
                                           "SetUnitProperties");
        if (r < 0)
                return r;
        /* runtime: a drop-in under /run, never the administrator's files. */
        r = sd_bus_message_append(msg, "sb", unit, 1);
        if (r < 0)
                return r;
        r = sd_bus_message_append(msg, "a(sv)", 1, "MemoryHigh", "t", bytes);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(msg);
        return 0;
}
