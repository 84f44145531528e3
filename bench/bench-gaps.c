/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the machine takes from a thread that never sleeps or blocks: the
 * gaps between two back-to-back reads of the clock, on each CPU in turn.
 *
 *   bench-gaps [SECONDS [CPU]]         (default 10 per CPU, every CPU)
 *
 * The thread is pinned to the CPU and, when it may (root), runs
 * SCHED_FIFO 1, so that no task of this machine's scheduler class takes the
 * CPU from it: what is left are interrupts and, on a virtual machine, the
 * host running something else on that CPU. It spins in 50 ms stretches,
 * each followed by a 50 ms sleep (so the kernel's real-time throttling and
 * its fair server never preempt it), until SECONDS of spinning. A gap is
 * the time between two clock reads that took 10 µs or more (a clock read
 * takes well under 1 µs). Per CPU: how many gaps a second of spinning
 * meets, by size, the largest, the share of the time they took, and how
 * often this machine's scheduler preempted the thread anyway (nonvoluntary
 * context switches). An announcement of the daemon that takes 60 µs of CPU
 * meets a gap of size G or more with a chance of about
 * rate(G) * (60 µs + G): the floor under any p99 this machine can give.
 * Nothing but the clock is needed. Not a test: figures for bench/README.md,
 * with the machine named.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench-clock.h"

static const unsigned bounds_us[] = { 10, 20, 50, 100, 200, 500, 1000 };
#define N_BOUNDS (sizeof(bounds_us) / sizeof(bounds_us[0]))

typedef struct Gaps {
        uint64_t spun_ns, lost_ns, max_ns;
        uint64_t count[N_BOUNDS];       /* gaps of at least bounds_us[i] */
} Gaps;

static void spin(uint64_t for_ns, Gaps *g) {
        uint64_t start = now_ns(), prev = start, t;

        do {
                t = now_ns();
                uint64_t d = t - prev;

                if (d >= (uint64_t) bounds_us[0] * 1000u) {
                        g->lost_ns += d;
                        if (d > g->max_ns)
                                g->max_ns = d;
                        for (size_t i = 0; i < N_BOUNDS && d >= (uint64_t) bounds_us[i] * 1000u; i++)
                                g->count[i]++;
                }
                prev = t;
        } while (t - start < for_ns);
        g->spun_ns += t - start;
}

static long nivcsw(void) {
        struct rusage ru;

        return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : -1;
}

static int run_cpu(int cpu, unsigned seconds, bool fifo) {
        const uint64_t stretch_ns = 50u * 1000000u;
        Gaps g = {};
        cpu_set_t set;
        long csw;

        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0) {
                fprintf(stderr, "bench-gaps: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
                return -1;
        }
        usleep(50000);
        csw = nivcsw();
        while (g.spun_ns < (uint64_t) seconds * 1000000000u) {
                spin(stretch_ns, &g);
                usleep(50000);
        }
        csw = nivcsw() - csw;

        double s = (double) g.spun_ns / 1e9;
        printf("%-4d %5s %7.1f", cpu, fifo ? "fifo" : "other", s);
        for (size_t i = 0; i < N_BOUNDS; i++)
                printf(" %7.1f", (double) g.count[i] / s);
        printf(" %8.1f %6.2f %6ld\n", (double) g.max_ns / 1000.0, 100.0 * (double) g.lost_ns / (double) g.spun_ns,
               csw);
        return 0;
}

int main(int argc, char **argv) {
        unsigned seconds = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 10;
        int only = argc > 2 ? atoi(argv[2]) : -1;
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        struct sched_param sp = { .sched_priority = 1 };
        bool fifo;

        if (seconds == 0 || ncpu < 1 || only >= ncpu) {
                fprintf(stderr, "usage: bench-gaps [SECONDS [CPU]]   (SECONDS > 0, CPU < %ld)\n", ncpu);
                return 2;
        }
        fifo = sched_setscheduler(0, SCHED_FIFO, &sp) == 0;
        printf("# %u s of spinning per CPU in 50 ms stretches, 50 ms asleep between; %s\n", seconds,
               fifo ? "SCHED_FIFO 1" : "SCHED_OTHER (SCHED_FIFO not permitted)");
        printf("# gaps between two clock reads, per second spun, of at least (µs); max µs; %% of the time lost; "
               "nonvoluntary context switches\n");
        printf("%-4s %5s %7s", "cpu", "class", "spun s");
        for (size_t i = 0; i < N_BOUNDS; i++)
                printf(" %6u+", bounds_us[i]);
        printf(" %8s %6s %6s\n", "max", "lost%", "nivcsw");
        for (int cpu = 0; cpu < ncpu; cpu++)
                if ((only < 0 || cpu == only) && run_cpu(cpu, seconds, fifo) < 0)
                        return 1;
        return 0;
}
