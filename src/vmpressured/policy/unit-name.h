/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Unit names and the cgroup layout systemd gives them. Pure: strings in,
 * strings out, no I/O. Used where systemd is not there to ask (PID 1 is not
 * systemd), and by the policy file names. */

#include "macro.h"

#define UNIT_NAME_MAX 256       /* with the NUL, as systemd's UNIT_NAME_MAX */

typedef enum UnitNameFlags {
        UNIT_NAME_PLAIN    = 1 << 0,    /* "foo.service" */
        UNIT_NAME_TEMPLATE = 1 << 1,    /* "foo@.service" */
        UNIT_NAME_INSTANCE = 1 << 2,    /* "foo@bar.service" */
        UNIT_NAME_ANY      = UNIT_NAME_PLAIN | UNIT_NAME_TEMPLATE | UNIT_NAME_INSTANCE,
} UnitNameFlags;

/* systemd's rules: [a-zA-Z0-9:_.\\-] plus one '@', at most 255 bytes, a
 * known type suffix. Only the types that hold processes are accepted:
 * service, scope, slice, socket, mount, swap. */
bool unit_name_is_valid(const char *name, UnitNameFlags flags);

/* The D-Bus interface of systemd's that holds the unit type's ControlGroup
 * property ("foo.service" → "org.freedesktop.systemd1.Service"); NULL for a
 * type without a cgroup or an invalid name. */
const char *unit_name_dbus_interface(const char *name);

/* "foo@bar.service" → "foo@.service". -EINVAL when name is not an instance,
 * -ENOBUFS when buf is too small. */
int unit_name_template(const char *name, char *buf, size_t size);

/* The cgroup path below a hierarchy's root that systemd gives a system unit,
 * without a leading '/': "foo.service" → "system.slice/foo.service",
 * "a-b.slice" → "a.slice/a-b.slice", "-.slice" → "". Names are escaped as
 * systemd's cg_escape() does ("cpu.service" → "_cpu.service"). Without systemd
 * nothing says which slice a unit is in (Slice=): system.slice is assumed,
 * as for every system service by default. 0, -EINVAL, -ENOBUFS. */
int unit_name_to_cgroup_path(const char *name, char *buf, size_t size);

/* root + "/" + unit_name_to_cgroup_path(name). 0, -EINVAL, -ENOBUFS. */
int unit_cgroup_dir(const char *root, const char *name, char *buf, size_t size);

/* The unit a cgroup path belongs to, as systemd's cg_path_get_unit(): the
 * first component after the leading slices that is not a slice, or the last
 * slice: "/system.slice/foo.service/sub" → "foo.service", "/user.slice" →
 * "user.slice", "/" → "-.slice". 0, -ENXIO when no unit is in the path,
 * -ENOBUFS. */
int cgroup_path_get_unit(const char *path, char *buf, size_t size);
