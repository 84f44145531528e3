/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fault-wake.h: the period from the memory left (literal figures), and the
 * real counters: this process faults in fresh pages and the kernel wakes the
 * loop after the period, not before; a longer period set with
 * fault_wake_set_period() is what the next wake-up waits for. Without the
 * permission to count every CPU (no root, no CAP_PERFMON) the kernel part
 * is not run, except under CI=true, where that fails. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fault-wake.h"
#include "macro.h"
#include "tests.h"

#define MiB (1024ULL * 1024ULL)
#define GiB (1024ULL * MiB)

static void test_period(void) {
        /* 1 GiB, floor 20 MiB, warning share under 341 MiB, 2 CPUs, 4 KiB:
         * 800 MiB left wakes after half the way down to 341 MiB, spread
         * over the 2 CPUs: (800 - 341) / 2 / 2 / 4 KiB. */
        CHECK_EQ_U64(fault_wake_period(800 * MiB, GiB, 20 * MiB, 341 * MiB, 2, 4096),
                     (800 - 341) * MiB / 2 / 2 / 4096);
        /* Under the warning share: a quarter of what is over the floor. */
        CHECK_EQ_U64(fault_wake_period(300 * MiB, GiB, 20 * MiB, 341 * MiB, 2, 4096),
                     (300 - 20) * MiB / 4 / 2 / 4096);
        /* Next to the floor a quarter of what is left (40 MiB: 5 MiB),
         * and never under a 256th of the memory: 4 MiB of 1 GiB, near the
         * floor, under it, and just over the warning share. */
        CHECK_EQ_U64(fault_wake_period(40 * MiB, GiB, 20 * MiB, 341 * MiB, 2, 4096), 5 * MiB / 2 / 4096);
        CHECK_EQ_U64(fault_wake_period(30 * MiB, GiB, 20 * MiB, 341 * MiB, 2, 4096), 4 * MiB / 2 / 4096);
        CHECK_EQ_U64(fault_wake_period(10 * MiB, GiB, 20 * MiB, 341 * MiB, 2, 4096), 4 * MiB / 2 / 4096);
        CHECK_EQ_U64(fault_wake_period(342 * MiB, GiB, 20 * MiB, 341 * MiB, 2, 4096), 4 * MiB / 2 / 4096);
        /* One CPU takes it all; nothing at all still wakes after 1 fault. */
        CHECK_EQ_U64(fault_wake_period(800 * MiB, GiB, 20 * MiB, 341 * MiB, 1, 4096),
                     (800 - 341) * MiB / 2 / 4096);
        CHECK_EQ_U64(fault_wake_period(0, 0, 0, 0, 0, 0), 1);
        /* 24 GiB with 23.9 left (this development VM): a million faults. */
        CHECK(fault_wake_period(23900 * MiB, 24 * GiB, 491 * MiB, 8 * GiB, 2, 4096) > 1000000);
}

static unsigned wakeups;

static int on_wake(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        CHECK(!(revents & (EPOLLERR | EPOLLHUP)));
        wakeups++;
        return 0;
}

/* Faults in n fresh pages (mapped, written once each, unmapped). */
static void fault_pages(size_t n) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        CHECK(p != MAP_FAILED);
        /* Base pages: a huge page would be one fault for 512. */
        (void) madvise(p, n * page, MADV_NOHUGEPAGE);
        for (size_t i = 0; i < n; i++)
                p[i * page] = 1;
        CHECK(munmap(p, n * page) == 0);
}

/* Runs the loop until it has nothing ready. */
static void drain(sd_event *e) {
        while (sd_event_run(e, 50 * USEC_PER_MSEC) > 0)
                ;
}

static void test_kernel(void) {
        sd_event *e = NULL;
        FaultWake w;
        char reason[256] = "";
        int r;

        CHECK(sd_event_new(&e) >= 0);
        r = fault_wake_open(&w, e, 4096, on_wake, NULL, reason, sizeof(reason));
        if (r == -EACCES || r == -EPERM) {
                fprintf(stderr, "no page-fault counters here (%s): kernel part not run\n", reason);
                CHECK(!streq_ptr(getenv("CI"), "true"));
                sd_event_unref(e);
                return;
        }
        CHECK_EQ_INT(r, 0);
        CHECK(w.n >= 1);
        CHECK_EQ_U64(w.period, 4096);
        fprintf(stderr, "%u counters open, period %llu faults\n", w.n, (unsigned long long) w.period);

        /* Whatever else faulted since the open wakes at most once per
         * counter; then 64 faults are far short of 4096 on every CPU... */
        drain(e);
        wakeups = 0;
        fault_pages(64);
        drain(e);
        CHECK_EQ_INT((int) wakeups, 0);
        /* ...and 4 rounds of 4096, the loop run after each (a counter
         * past its period twice before the loop looks wakes it once), are
         * past it at least twice however the rounds fell on the CPUs (the
         * other processes of the machine may add some). */
        for (int i = 0; i < 4; i++) {
                fault_pages(4096);
                drain(e);
        }
        fprintf(stderr, "after 4 x 4096 faults: %u wake-ups\n", wakeups);
        CHECK(wakeups >= 2);

        /* A period 64 times longer: the same faults wake it at most once
         * per counter (the count already under way may end in one). */
        fault_wake_set_period(&w, 64 * 4096);
        CHECK_EQ_U64(w.period, 64 * 4096);
        /* Within a quarter of it: left as it is (no ioctl). */
        fault_wake_set_period(&w, 64 * 4096 + 1000);
        CHECK_EQ_U64(w.period, 64 * 4096);
        drain(e);
        wakeups = 0;
        for (int i = 0; i < 4; i++) {
                fault_pages(4096);
                drain(e);
        }
        fprintf(stderr, "after 4 x 4096 faults at a period of %llu: %u wake-ups\n",
                (unsigned long long) w.period, wakeups);
        CHECK(wakeups <= w.n);

        fault_wake_close(&w);
        CHECK_EQ_INT((int) w.n, 0);
        sd_event_unref(e);
}

int main(void) {
        test_period();
        test_kernel();
        return 0;
}
