/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Writing a PSI trigger (Documentation/accounting/psi.rst) to an open
 * /proc/pressure/memory or a cgroup's memory.pressure: the one copy of the
 * line's format and of the 2 s fallback, for the psi and reclaim sources and
 * the stall band's own trigger. No allocation. */

#include "macro.h"

/* Without CAP_SYS_RESOURCE the kernel refuses windows that are not a
 * multiple of 2 s (EINVAL: 1 s fails, 2 s works; docs/kernel.md#psi-windows). */
#define PSI_UNPRIVILEGED_WINDOW_USEC (2 * USEC_PER_SEC)

/* The window of the wake-up triggers ("some" 1 ms: the reclaim source's and
 * the stall band's own), not [PSI] WindowSec=: the kernel's smallest
 * (WINDOW_MIN_US). On the first stall after a quiet spell the kernel resets
 * the triggers' windows and looks at them again only a tenth of the
 * smallest window later (kernel/sched/psi.c: init_rtpoll_triggers(),
 * rtpoll_min_period): a stall still going on then wakes the daemon 50 ms
 * in, not 100 ms as with 1 s (a burst over before the reset is not counted:
 * bench/README.md); at most once a window. Without CAP_SYS_RESOURCE: 2 s,
 * as every window. */
#define PSI_WAKE_WINDOW_USEC (500 * USEC_PER_MSEC)

/* What status and the start-up log add where a trigger got 2 s instead. */
#define PSI_UNPRIVILEGED_NOTE " (no CAP_SYS_RESOURCE: 2 s PSI windows)"

/* Writes "KIND STALL WINDOW" (kind "some" or "full", both in µs) to fd.
 * 0, or negative errno: -EINVAL for a value the kernel refuses. */
int psi_trigger_write(int fd, const char *kind, usec_t stall_usec, usec_t window_usec);

/* psi_trigger_write() with *window_usec; where the kernel refuses that
 * window (EINVAL) and it is not already 2 s, once more with 2 s and the
 * same stall, and *window_usec says 2 s. A source that scales its stall to
 * the window (psi) calls psi_trigger_write() itself. */
int psi_trigger_write_or_2s(int fd, const char *kind, usec_t stall_usec, usec_t *window_usec);
