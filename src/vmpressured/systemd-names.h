/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* PID 1's bus names, for the calls to systemd (KillUnit, ListUnits,
 * SetUnitProperties). */
#define SYSTEMD_DEST "org.freedesktop.systemd1"
#define SYSTEMD_PATH "/org/freedesktop/systemd1"
#define SYSTEMD_MANAGER "org.freedesktop.systemd1.Manager"
