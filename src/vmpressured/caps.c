/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sys/prctl.h>

#include "caps.h"
#include "log.h"

/*
 * Why each one stays (and why the usual suspects go):
 *  - CAP_KILL: the actions signal and kill processes of other users
 *    (pidfd_send_signal() checks kill permission like kill(2)); systemd's
 *    KillUnit() also accepts a caller with CAP_KILL.
 *  - CAP_IPC_LOCK: mlockall(MCL_FUTURE) keeps locking what the heap and the
 *    stack grow into, whatever RLIMIT_MEMLOCK says.
 * Not kept:
 *  - CAP_SYS_PTRACE: process_mrelease() checks no ptrace access (only a
 *    pidfd, which pidfd_open() hands out freely), and a victim's RSS comes
 *    from /proc/<pid>/statm or status, which are world-readable; only
 *    smaps/smaps_rollup would need PTRACE_MODE_READ.
 *  - CAP_DAC_OVERRIDE: the cgroup files the daemon writes are root-owned
 *    (uid 0 passes the owner check); a cgroup delegated to another user
 *    (Delegate=yes with User=) cannot be watched after start-up.
 *  - CAP_DAC_READ_SEARCH, unless the kernel needs it: before Linux 6.4
 *    memory.pressure_level is mode 000 (it had no read handler), so even
 *    root opens it only with a DAC capability, and the memcg source opens
 *    one for every cgroup it starts watching (measured in a Debian 12 guest,
 *    kernel 6.1: EACCES without it). caps_drop_to_runtime() keeps it then,
 *    and says so.
 *  - CAP_SYS_RESOURCE: PSI triggers with windows under 2 s; the sources open
 *    theirs at start-up (the kernel checks the opener's credentials) and
 *    fall back to 2 s windows otherwise.
 */
const CapKeep caps_runtime[] = {
        { CAP_KILL,     "signal and kill processes of other users (actions)" },
        { CAP_IPC_LOCK, "keep mlockall(MCL_FUTURE) locking new heap and stack pages" },
};
const size_t caps_runtime_n = ELEMENTSOF(caps_runtime);

static bool keep_has(const cap_value_t *keep, size_t n_keep, cap_value_t c) {
        for (size_t i = 0; i < n_keep; i++)
                if (keep[i] == c)
                        return true;
        return false;
}

static void capp(cap_t *c) {
        if (*c)
                (void) cap_free(*c);
}

/* Returns how many unwanted capabilities stay in the bounding set. */
static int shrink_bounding_set(const cap_value_t *keep, size_t n_keep, bool can_setpcap) {
        int left = 0;

        for (cap_value_t c = 0; c < (cap_value_t) cap_max_bits(); c++) {
                if (keep_has(keep, n_keep, c) || cap_get_bound(c) <= 0)
                        continue;
                if (can_setpcap && cap_drop_bound(c) >= 0)
                        continue;
                left++;
        }
        return left;
}

int caps_keep_only(const cap_value_t *keep, size_t n_keep) {
        _cleanup_(capp) cap_t cur = NULL, want = NULL;
        cap_flag_value_t v = CAP_CLEAR;
        int left;

        /* No execve() can hand anything back after this. */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        if (CAP_AMBIENT_SUPPORTED())
                (void) cap_reset_ambient();

        cur = cap_get_proc();
        if (!cur)
                return -errno;
        (void) cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &v);
        /* Bounding set first: dropping from it needs CAP_SETPCAP, which goes next. */
        left = shrink_bounding_set(keep, n_keep, v == CAP_SET);

        want = cap_init();
        if (!want)
                return -errno;
        for (size_t i = 0; i < n_keep; i++) {
                cap_flag_value_t p = CAP_CLEAR;

                if (cap_get_flag(cur, keep[i], CAP_PERMITTED, &p) < 0 || p != CAP_SET)
                        continue;
                if (cap_set_flag(want, CAP_PERMITTED, 1, &keep[i], CAP_SET) < 0 ||
                    cap_set_flag(want, CAP_EFFECTIVE, 1, &keep[i], CAP_SET) < 0)
                        return -errno;
        }
        if (cap_set_proc(want) < 0)
                return -errno;
        return left;
}

int caps_drop_to_runtime(bool keep_dac_read_search) {
        cap_value_t keep[8];
        char names[256] = "", *name;
        size_t n = 0;
        int r;

        for (size_t i = 0; i < caps_runtime_n && i < ELEMENTSOF(keep) - 1; i++)
                keep[n++] = caps_runtime[i].cap;
        if (keep_dac_read_search)
                keep[n++] = CAP_DAC_READ_SEARCH;

        r = caps_keep_only(keep, n);
        if (r < 0)
                return log_error_errno(r, "Cannot drop capabilities: %m");
        if (r > 0)
                log_debug("%d capabilities stay in the bounding set (no CAP_SETPCAP to drop them; "
                         "CapabilityBoundingSet= in the unit does it).", r);

        for (size_t i = 0; i < n; i++) {
                cap_flag_value_t v = CAP_CLEAR;
                _cleanup_(capp) cap_t now = cap_get_proc();

                if (!now || cap_get_flag(now, keep[i], CAP_EFFECTIVE, &v) < 0 || v != CAP_SET)
                        continue;
                name = cap_to_name(keep[i]);
                if (name) {
                        size_t l = strlen(names);
                        (void) snprintf(names + l, sizeof(names) - l, "%s%s", l ? " " : "", name);
                        (void) cap_free(name);
                }
        }
        {
                char field[300];

                (void) snprintf(field, sizeof(field), "VMP_CAPABILITIES=%s", names);
                log_struct_internal(LOG_INFO, MESSAGE_ID_PRIVILEGES, (const char *const[]) { field, NULL },
                                    "Dropped capabilities; kept: %s.", names[0] ? names : "none");
        }
        return 0;
}
