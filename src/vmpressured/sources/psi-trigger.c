/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "psi-trigger.h"

int psi_trigger_write(int fd, const char *kind, usec_t stall_usec, usec_t window_usec) {
        char line[64];
        int n;

        n = snprintf(line, sizeof(line), "%s %" PRIu64 " %" PRIu64, kind, (uint64_t) stall_usec,
                     (uint64_t) window_usec);
        if (n < 0 || (size_t) n >= sizeof(line))
                return -EINVAL;
        /* The kernel replaces the last byte written with a NUL: send the NUL too. */
        if (write(fd, line, (size_t) n + 1) < 0)
                return -errno;
        return 0;
}

int psi_trigger_write_or_2s(int fd, const char *kind, usec_t stall_usec, usec_t *window_usec) {
        int r = psi_trigger_write(fd, kind, stall_usec, *window_usec);

        if (r != -EINVAL || *window_usec == PSI_UNPRIVILEGED_WINDOW_USEC)
                return r;
        r = psi_trigger_write(fd, kind, stall_usec, PSI_UNPRIVILEGED_WINDOW_USEC);
        if (r >= 0)
                *window_usec = PSI_UNPRIVILEGED_WINDOW_USEC;
        return r;
}
