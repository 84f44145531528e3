/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the reads of an OOM's decision cost, back to back and when the
 * reader wakes from a sleep, as the daemon does at a kernel event:
 *
 *   bench-reads [SLEEP_MS [N [ROW]]]   (default 20 and 200, every row)
 *
 * Each of the files the daemon keeps open for the decision
 * (source-headroom.c: /proc/meminfo, /proc/pressure/memory) and the
 * machine's counters that the reclaim source reads at each wake-up on the
 * unified layout (/proc/vmstat) is read with one pread() at 0 into an
 * 8 KiB buffer, N times back to back and N times after sleeping SLEEP_MS
 * each. Then the same for:
 *   - one eventfd read (the memcg source's notification, signalled just
 *     before the sleep);
 *   - one bare system call (getppid());
 *   - one 4-byte send() to a SOCK_SEQPACKET socket pair, the write of a
 *     record (struct vmpressure_event) to a subscriber; nobody waits on the
 *     other end (the daemon's send() wakes its subscriber, which costs
 *     more);
 *   - the three calls of the MEDIUM that an OOM with memory left becomes
 *     on the system scope, in the daemon's order: the eventfd read, the
 *     pread() of /proc/meminfo and that send();
 *   - the same send() with a reader blocked in recv() on the other end (a
 *     thread of this program), which it wakes as the daemon's send() wakes
 *     a subscriber: the reader where the kernel puts it ("... any CPU"),
 *     then the sender pinned to the first CPU and the reader to another
 *     ("... other CPU": the wake-up of a sleeping CPU, an IPI, which on a
 *     virtual machine goes through the host) and to the same CPU ("... same
 *     CPU": no IPI; the reader then runs as soon as the sender sleeps).
 * Per row p50/p90/p99 in µs, and the share of the N that took 50 µs or
 * more. ROW runs only the rows whose name begins with it ("send" is the
 * bare send() and "wake-up send any" the one that wakes a reader, which
 * bench/bus-latency runs as the machine's floor).
 * Nothing but the real /proc is needed, and no privilege. Not a test:
 * figures for bench/README.md, to be read with the machine named (a
 * virtual CPU that sleeps is woken by its host).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bench-clock.h"

enum { OP_FILE, OP_EVENTFD, OP_SYSCALL, OP_SEND, OP_PATH, OP_WAKE };

/* The descriptors of the MEDIUM's calls (OP_PATH). */
static int path_eventfd = -1, path_meminfo = -1, path_sock[2] = { -1, -1 };
/* The socket pair whose far end a reader thread blocks on (OP_WAKE). */
static int wake_sock[2] = { -1, -1 };
static unsigned wake_sent, wake_received;       /* records; the reader counts its own */

/* One operation, timed; -1 when it failed. The eventfd is signalled
 * before the sleep, so the timed read is the first system call after it. */
static int64_t run_once(int op, int fd, unsigned sleep_ms) {
        static char buf[8192];
        uint64_t counter = 1, t;
        ssize_t n = 0;

        if (op == OP_EVENTFD && write(fd, &counter, sizeof(counter)) != (ssize_t) sizeof(counter))
                return -1;
        if (op == OP_PATH && write(path_eventfd, &counter, sizeof(counter)) != (ssize_t) sizeof(counter))
                return -1;
        if (sleep_ms > 0)
                (void) usleep(sleep_ms * 1000u);
        t = now_ns();
        switch (op) {
        case OP_FILE:
                n = pread(fd, buf, sizeof(buf), 0);
                break;
        case OP_EVENTFD:
                n = read(fd, &counter, sizeof(counter));
                break;
        case OP_SYSCALL:
                n = (ssize_t) syscall(SYS_getppid);
                break;
        case OP_SEND:
                n = send(path_sock[0], buf, 4, MSG_DONTWAIT | MSG_NOSIGNAL);
                break;
        case OP_WAKE:
                n = send(wake_sock[0], buf, 4, MSG_DONTWAIT | MSG_NOSIGNAL);
                break;
        case OP_PATH:
                n = read(path_eventfd, &counter, sizeof(counter));
                if (n >= 0)
                        n = pread(path_meminfo, buf, sizeof(buf), 0);
                if (n >= 0)
                        n = send(path_sock[0], buf, 4, MSG_DONTWAIT | MSG_NOSIGNAL);
                break;
        }
        t = now_ns() - t;
        if (op == OP_WAKE && n >= 0) {
                /* Untimed: until the reader has it, so that the queue never
                 * fills and the reader is back in recv() next time. */
                wake_sent++;
                while (__atomic_load_n(&wake_received, __ATOMIC_ACQUIRE) != wake_sent)
                        (void) sched_yield();
        }
        if ((op == OP_PATH || op == OP_SEND) && n >= 0)
                n = recv(path_sock[1], buf, sizeof(buf), MSG_DONTWAIT);     /* untimed: the record back out */
        return n < 0 ? -1 : (int64_t) t;
}

/* The reader: blocks in recv() until the sender's record, again and
 * again, counting them; pinned to *arg unless it is -1. Back to back
 * it may not be asleep yet when the next record comes (then nothing is
 * woken); after a sleep it always is. */
static void *reader(void *arg) {
        int cpu = *(int *) arg;
        char buf[16];

        if (cpu >= 0) {
                cpu_set_t set;

                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                (void) pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        }
        while (recv(wake_sock[1], buf, sizeof(buf), 0) > 0)
                __atomic_add_fetch(&wake_received, 1, __ATOMIC_RELEASE);
        return NULL;
}

/* This thread on cpu (-1: on every CPU it was allowed at start, *all). */
static int pin_self(int cpu, const cpu_set_t *all) {
        cpu_set_t set;

        if (cpu < 0)
                return sched_setaffinity(0, sizeof(*all), all);
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        return sched_setaffinity(0, sizeof(set), &set);
}

static const char *only_row;
static unsigned rows_run;

static bool row_wanted(const char *name) {
        return !only_row || strncmp(name, only_row, strlen(only_row)) == 0;
}

static int measure(const char *name, int op, int fd, unsigned sleep_ms, unsigned n, uint64_t *d) {
        if (!row_wanted(name))
                return 0;
        rows_run++;
        for (int asleep = 0; asleep <= 1; asleep++) {
                for (unsigned i = 0; i < n; i++) {
                        int64_t t;

                        t = run_once(op, fd, asleep ? sleep_ms : 0);
                        if (t < 0) {
                                fprintf(stderr, "%s: %s\n", name, strerror(errno));
                                return -1;
                        }
                        d[i] = (uint64_t) t;
                }
                qsort(d, n, sizeof(*d), cmp_u64);
                unsigned slow = 0;
                while (slow < n && d[n - 1 - slow] >= 50000)
                        slow++;
                printf("%-22s %-18s %8.1f %8.1f %8.1f %7.1f%%\n", name,
                       asleep ? "after a sleep" : "back to back",
                       d[n / 2] / 1e3, d[n * 9 / 10] / 1e3, d[n * 99 / 100] / 1e3, 100.0 * slow / n);
        }
        return 0;
}

/* The send() that wakes a reader: where the kernel puts the reader, then
 * on another CPU than the sender, then on the same one. */
static int measure_wakeups(unsigned sleep_ms, unsigned n, uint64_t *d) {
        static const struct {
                const char *name;
                int sender, reader;     /* CPU indexes into the allowed set; -1: not pinned */
        } rows[] = {
                { "wake-up send any CPU",   -1, -1 },
                { "wake-up send other CPU",  0,  1 },
                { "wake-up send same CPU",   0,  0 },
        };
        cpu_set_t all;
        int cpus[2], ncpus = 0, r = 0;

        if (sched_getaffinity(0, sizeof(all), &all) < 0)
                return -1;
        for (int c = 0; c < CPU_SETSIZE && ncpus < 2; c++)
                if (CPU_ISSET(c, &all))
                        cpus[ncpus++] = c;
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                int reader_cpu = rows[i].reader < 0 ? -1 : cpus[rows[i].reader % ncpus];
                pthread_t t;

                if (!row_wanted(rows[i].name))
                        continue;
                if (rows[i].reader > 0 && ncpus < 2) {
                        printf("%-22s unavailable: one CPU\n", rows[i].name);
                        continue;
                }
                if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, wake_sock) < 0)
                        return -1;
                wake_sent = wake_received = 0;
                if (pin_self(rows[i].sender < 0 ? -1 : cpus[rows[i].sender], &all) < 0 ||
                    pthread_create(&t, NULL, reader, &reader_cpu) != 0) {
                        r = -1;
                        close(wake_sock[0]);
                        close(wake_sock[1]);
                        break;
                }
                if (measure(rows[i].name, OP_WAKE, -1, sleep_ms, n, d) < 0)
                        r = -1;
                (void) shutdown(wake_sock[0], SHUT_RDWR);       /* the reader's recv() returns 0 */
                (void) pthread_join(t, NULL);
                close(wake_sock[0]);
                close(wake_sock[1]);
        }
        (void) pin_self(-1, &all);
        return r;
}

int main(int argc, char *argv[]) {
        static const char *const files[] = { "/proc/meminfo", "/proc/pressure/memory", "/proc/vmstat" };
        unsigned sleep_ms = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 20;
        unsigned n = argc > 2 ? (unsigned) strtoul(argv[2], NULL, 10) : 200;
        only_row = argc > 3 ? argv[3] : NULL;
        uint64_t *d;
        int fd, r = 0;

        if (n < 2 || n > 1000000) {
                fprintf(stderr, "usage: %s [SLEEP_MS [N [ROW]]], N from 2 to 1000000\n", argv[0]);
                return 2;
        }
        d = calloc(n, sizeof(*d));
        if (!d)
                return 1;
        printf("# %u reads per row, %u ms asleep before each of the second; µs\n", n, sleep_ms);
        printf("%-22s %-18s %8s %8s %8s %8s\n", "read", "when", "p50", "p90", "p99", ">=50");
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                fd = open(files[i], O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        printf("%-22s unavailable: %s\n", files[i], strerror(errno));
                        continue;
                }
                if (measure(files[i], OP_FILE, fd, sleep_ms, n, d) < 0)
                        r = 1;
                close(fd);
        }
        fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (fd < 0 || measure("eventfd read", OP_EVENTFD, fd, sleep_ms, n, d) < 0)
                r = 1;
        if (fd >= 0)
                close(fd);
        if (measure("getppid()", OP_SYSCALL, -1, sleep_ms, n, d) < 0)
                r = 1;
        path_eventfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        path_meminfo = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
        if (path_eventfd < 0 || path_meminfo < 0 ||
            socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, path_sock) < 0 ||
            measure("send() of a record", OP_SEND, -1, sleep_ms, n, d) < 0 ||
            measure("eventfd+meminfo+send", OP_PATH, -1, sleep_ms, n, d) < 0)
                r = 1;
        if (measure_wakeups(sleep_ms, n, d) < 0)
                r = 1;
        if (only_row && rows_run == 0) {
                fprintf(stderr, "%s: no row's name begins with '%s'\n", argv[0], only_row);
                r = 2;
        }
        free(d);
        return r;
}
