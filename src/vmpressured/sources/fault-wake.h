/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The fault wake ([Poll] FaultWake=): the kernel counts the page faults of
 * every process, on each CPU (perf_event_open(2), the software event
 * PERF_COUNT_SW_PAGE_FAULTS, pid -1), and wakes the daemon after a number of
 * them that it sets from the memory left. An anonymous fill that meets no
 * page cache raises no reclaim, no PSI stall and no memcg event before the
 * low watermark, next to the headroom floor (docs/kernel.md#psi-silent-anon);
 * it does fault in every page it takes. So the system scope reads
 * MemAvailable when the faults since its last read could have used a share
 * of what is left, and nothing runs while nothing faults: no timer.
 *
 * Counted in faults, assumed of one base page each: a transparent huge page
 * fault maps 512 of them at once and wakes the daemon later than the memory
 * it took (THP "always"; Debian's default is "madvise").
 *
 * perf_event_open() for every CPU needs CAP_PERFMON (or CAP_SYS_ADMIN) where
 * kernel.perf_event_paranoid is 1 or 2, and CAP_SYS_ADMIN where it is 3
 * (Debian's own patch: its 6.1 checks capable(CAP_SYS_ADMIN) alone); the
 * counters are opened at start-up, and neither is kept after it (caps.h).
 */

#include <stdint.h>
#include <systemd/sd-event.h>

/* The least memory over which the daemon is woken: a 256th of the memory
 * (4 MiB in 1 GiB). It is reached only next to the floor, where each
 * wake-up is a headroom read with its stall (the stall band: a burst of
 * stall there is seen within 4 MiB of faults, not at the next BusyMSec=);
 * above it the step is a share of what is left. */
#define FAULT_WAKE_STEP_DIVISOR 256

/* Faults per CPU until the next wake-up, for available of total bytes with
 * the floor and the warning share's upper bound (warn_bytes: the trend's
 * warning speaks only under it, level.h LEVEL_WARN_SHARE_DIVISOR): above
 * warn_bytes, half the way down to it; under it, a quarter of what is left
 * over the floor; never under total / FAULT_WAKE_STEP_DIVISOR. Spread over
 * n_cpus counters (one CPU may do all the faulting), of page_size each.
 * At least 1. */
uint64_t fault_wake_period(uint64_t available, uint64_t total, uint64_t floor, uint64_t warn_bytes,
                           unsigned n_cpus, uint64_t page_size);

typedef struct FaultWake {
        unsigned n;                     /* counters open (one per online CPU) */
        int *fds;
        void **maps;                    /* each counter's ring buffer, read-only: never read, needed for poll() */
        sd_event_source **events;
        uint64_t period;                /* faults per CPU, as last set */
        uint64_t page_size;
        uint64_t wakeups;
} FaultWake;

/* Opens a counter on every online CPU, waking after period faults, and
 * calls handler on each wake-up. 0 on success; a negative errno, with a
 * sentence in reason, when there is none to open (no permission, no perf
 * events in the kernel): nothing is left open then. */
int fault_wake_open(FaultWake *w, sd_event *event, uint64_t period, sd_event_io_handler_t handler,
                    void *userdata, char *reason, size_t reason_size);
/* A new period for every counter: a few ioctls, nothing allocated; none
 * when it is within a quarter of the one set. */
void fault_wake_set_period(FaultWake *w, uint64_t period);
void fault_wake_close(FaultWake *w);
