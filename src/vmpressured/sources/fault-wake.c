/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fault-wake.h"
#include "macro.h"

uint64_t fault_wake_period(uint64_t available, uint64_t total, uint64_t floor, uint64_t warn_bytes,
                           unsigned n_cpus, uint64_t page_size) {
        uint64_t bytes, step = total / FAULT_WAKE_STEP_DIVISOR, faults;

        if (available > warn_bytes)
                bytes = (available - warn_bytes) / 2;
        else
                bytes = available > floor ? (available - floor) / 4 : 0;
        bytes = MAX(bytes, step);
        faults = bytes / MAX(n_cpus, 1u) / MAX(page_size, (uint64_t) 1);
        return MAX(faults, (uint64_t) 1);
}

/* The ring buffer: its control page and one page of records. poll() on a
 * counter without one says EPOLLHUP at once; mapped read-only, the kernel
 * overwrites it (nothing needs to read it). */
#define FAULT_WAKE_MAP_PAGES 2

static int counter_open(int cpu, uint64_t period) {
        struct perf_event_attr a = {
                .type = PERF_TYPE_SOFTWARE,
                .size = sizeof(a),
                .config = PERF_COUNT_SW_PAGE_FAULTS,
                .sample_period = period,
                .sample_type = 0,
                .wakeup_events = 1,
        };
        long fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

        return fd < 0 ? -errno : (int) fd;
}

int fault_wake_open(FaultWake *w, sd_event *event, uint64_t period, sd_event_io_handler_t handler,
                    void *userdata, char *reason, size_t reason_size) {
        long n_conf = sysconf(_SC_NPROCESSORS_CONF);
        size_t map_size = FAULT_WAKE_MAP_PAGES * (size_t) sysconf(_SC_PAGESIZE);
        int r = 0;

        *w = (FaultWake) {};
        if (n_conf < 1)
                n_conf = 1;
        w->fds = calloc((size_t) n_conf, sizeof(int));
        w->maps = calloc((size_t) n_conf, sizeof(void *));
        w->events = calloc((size_t) n_conf, sizeof(sd_event_source *));
        if (!w->fds || !w->maps || !w->events) {
                fault_wake_close(w);
                return -ENOMEM;
        }
        w->period = MAX(period, (uint64_t) 1);
        w->page_size = (uint64_t) sysconf(_SC_PAGESIZE);
        for (long cpu = 0; cpu < n_conf; cpu++) {
                int fd = counter_open((int) cpu, w->period);
                void *map;

                /* An offline CPU has no counter (and runs nothing). */
                if (fd == -ENODEV)
                        continue;
                if (fd < 0) {
                        r = fd;
                        snprintf(reason, reason_size, "perf_event_open() of the page-fault counter on CPU %ld: %s%s",
                                 cpu, strerror(-fd),
                                 fd == -EACCES || fd == -EPERM ? " (kernel.perf_event_paranoid 1 or 2 asks for "
                                 "CAP_PERFMON, Debian's 3 for CAP_SYS_ADMIN; or a system call filter)" : "");
                        break;
                }
                map = mmap(NULL, map_size, PROT_READ, MAP_SHARED, fd, 0);
                if (map == MAP_FAILED) {
                        r = -errno;
                        snprintf(reason, reason_size, "mapping the page-fault counter's buffer on CPU %ld: %s",
                                 cpu, strerror(errno));
                        (void) close(fd);
                        break;
                }
                w->fds[w->n] = fd;
                w->maps[w->n] = map;
                w->n++;
                r = sd_event_add_io(event, &w->events[w->n - 1], fd, EPOLLIN, handler, userdata);
                if (r < 0) {
                        snprintf(reason, reason_size, "watching the page-fault counter on CPU %ld: %s", cpu,
                                 strerror(-r));
                        break;
                }
        }
        if (r >= 0 && w->n == 0) {
                r = -ENODEV;
                snprintf(reason, reason_size, "no online CPU to count page faults on");
        }
        if (r < 0) {
                fault_wake_close(w);
                return r;
        }
        return 0;
}

void fault_wake_set_period(FaultWake *w, uint64_t period) {
        period = MAX(period, (uint64_t) 1);
        /* Within a quarter of the period set: not worth the ioctls (the
         * headroom poll calls this every BusyMSec=). */
        if (period <= w->period + w->period / 4 && period >= w->period - w->period / 4)
                return;
        w->period = period;
        for (unsigned i = 0; i < w->n; i++)
                (void) ioctl(w->fds[i], PERF_EVENT_IOC_PERIOD, &period);
}

void fault_wake_close(FaultWake *w) {
        size_t map_size = FAULT_WAKE_MAP_PAGES * (size_t) sysconf(_SC_PAGESIZE);

        for (unsigned i = 0; i < w->n; i++) {
                sd_event_source_disable_unref(w->events[i]);
                (void) munmap(w->maps[i], map_size);
                (void) close(w->fds[i]);
        }
        free(w->fds);
        free(w->maps);
        free(w->events);
        *w = (FaultWake) {};
}
