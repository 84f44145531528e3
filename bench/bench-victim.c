/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Victim selection time with many processes in a marked unit: the daemon's
 * own code path at OOM (proc_scan_cgroup_foreach() reading /proc for each
 * pid of the unit's cgroups, victim_best_offer() keeping the best), on real
 * processes; and, for comparison, the array path (proc_scan_cgroup() into a
 * table, then victim_select()) that SignalTarget=main still uses.
 *
 *   bench-victim CGROUP_DIR N [RUNS [equal|varied]]
 *
 * CGROUP_DIR must exist (a cgroup2 or v1 directory the caller made); N
 * sleeping children are started in it and killed at the end. equal (the
 * default): the children are alike, so every RSS ties with the best so far
 * and every process is read in full (the worst case for the daemon's skip
 * of processes smaller than the best); varied: child i touches i % 16 more
 * pages, so most are ruled out on their stat alone.
 *
 * Then path=bpf: the same choice by the daemon's way where the kernel
 * allows it, the BPF task iterator (task-iter.h: loaded here first, which
 * needs root), every task of the machine visited in the kernel and one
 * record read for each process of the cgroup; same_victim says whether it
 * chose the process path=stream chose. The iterator's price grows with
 * the machine's tasks, not the cgroup's: tasks= counts them.
 *
 * Last, path=floor: what no scan of /proc can go under, the open and close
 * of one file per process (nothing read), and the price of one system call.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "proc-scan.h"
#include "task-iter.h"
#include "victim.h"

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static int move_self(const char *dir) {
        char path[4096];
        int fd, r = 0;

        snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, "0", 1) != 1)
                r = -errno;
        close(fd);
        return r;
}

typedef struct Offer {
        VictimBest best;
        pid_t self;
} Offer;

static int offer(Candidate *c, void *userdata) {
        Offer *o = userdata;

        c->unit = "bench.service";
        c->unit_marked_killable = true;
        (void) victim_best_offer(&o->best, c, o->self);
        return 0;
}

static bool want(const Candidate *partial, void *userdata) {
        Offer *o = userdata;

        return !victim_best_skip(&o->best, partial, o->self);
}

/* Every task of the machine (threads included): what the iterator visits. */
static long count_tasks(void) {
        _cleanup_(closep) int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
        char buf[128];
        const char *slash;
        ssize_t k;

        if (fd < 0 || (k = read(fd, buf, sizeof(buf) - 1)) <= 0)
                return -1;
        buf[k] = '\0';
        slash = strchr(buf, '/');
        return slash ? strtol(slash + 1, NULL, 10) : -1;
}

static int cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
        return x < y ? -1 : x > y;
}

int main(int argc, char *argv[]) {
        char origin[4096] = "";
        pid_t *kids;
        Candidate *cands;
        uint64_t *times;
        size_t n, runs, max;
        bool varied;
        FILE *f;

        if (argc < 3) {
                fprintf(stderr, "usage: %s CGROUP_DIR N [RUNS]\n", argv[0]);
                return 2;
        }
        n = strtoul(argv[2], NULL, 10);
        runs = argc > 3 ? strtoul(argv[3], NULL, 10) : 5;
        varied = argc > 4 && strcmp(argv[4], "varied") == 0;
        if (n == 0 || runs == 0)
                return 2;
        max = n + 16;
        kids = calloc(n, sizeof(pid_t));
        cands = calloc(max, sizeof(Candidate));
        times = calloc(runs, sizeof(uint64_t));
        if (!kids || !cands || !times)
                return 1;

        /* Where we are now, to go back after forking into CGROUP_DIR. */
        f = fopen("/proc/self/cgroup", "re");
        if (f) {
                char line[4096];
                while (fgets(line, sizeof(line), f))
                        if (strncmp(line, "0::", 3) == 0) {
                                line[strcspn(line, "\n")] = '\0';
                                snprintf(origin, sizeof(origin), "%s", line + 3);
                        }
                fclose(f);
        }
        if (move_self(argv[1]) < 0) {
                fprintf(stderr, "cannot enter %s: %m\n", argv[1]);
                return 1;
        }
        for (size_t i = 0; i < n; i++) {
                kids[i] = fork();
                if (kids[i] == 0) {
                        if (varied) {
                                size_t bytes = (i % 16 + 1) * 4096;
                                volatile char *p = malloc(bytes);

                                for (size_t b = 0; p && b < bytes; b += 4096)
                                        p[b] = 1;
                        }
                        pause();
                        _exit(0);
                }
                if (kids[i] < 0) {
                        fprintf(stderr, "fork: %m\n");
                        n = i;
                        break;
                }
        }
        /* Back out, so only the children are scanned. */
        if (origin[0]) {
                char back[4200];
                snprintf(back, sizeof(back), "%s%s", strstr(argv[1], "/unified") ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup", origin);
                (void) move_self(back);
        }

        for (size_t r = 0; r < runs; r++) {
                Offer o = { .self = getpid() };
                uint64_t t0 = now_ns();
                int k;

                victim_best_init(&o.best);
                k = proc_scan_cgroup_foreach_filtered("/proc", argv[1], (uint64_t) sysconf(_SC_PAGESIZE), want,
                                                      offer, &o);
                times[r] = now_ns() - t0;
                if (k < 0 || !o.best.found)
                        fprintf(stderr, "run %zu: scan %d, found %d\n", r, k, (int) o.best.found);
        }
        qsort(times, runs, sizeof(uint64_t), cmp_u64);
        printf("path=stream rss=%s processes=%zu runs=%zu median_usec=%.0f min_usec=%.0f max_usec=%.0f\n",
               varied ? "varied" : "equal", n, runs, times[runs / 2] / 1000.0, times[0] / 1000.0, times[runs - 1] / 1000.0);
        {
                char reason[400];
                pid_t stream_victim = 0;
                Offer o = { .self = getpid() };
                bool same = true;

                victim_best_init(&o.best);
                (void) proc_scan_cgroup_foreach_filtered("/proc", argv[1], (uint64_t) sysconf(_SC_PAGESIZE), want,
                                                         offer, &o);
                stream_victim = o.best.found ? o.best.best.pid : 0;
                if (task_iter_load(reason, sizeof(reason)) < 0)
                        printf("path=bpf not-loaded reason=\"%s\"\n", reason);
                else {
                        for (size_t r = 0; r < runs; r++) {
                                uint64_t t0 = now_ns();
                                int k;

                                o = (Offer) { .self = getpid() };
                                victim_best_init(&o.best);
                                k = task_iter_scan_cgroup(argv[1], (uint64_t) sysconf(_SC_PAGESIZE), want, offer, &o);
                                times[r] = now_ns() - t0;
                                if (k < 0 || !o.best.found)
                                        fprintf(stderr, "run %zu: bpf scan %d, found %d\n", r, k, (int) o.best.found);
                                same = same && o.best.found && o.best.best.pid == stream_victim;
                        }
                        qsort(times, runs, sizeof(uint64_t), cmp_u64);
                        printf("path=bpf rss=%s processes=%zu tasks=%ld runs=%zu median_usec=%.0f min_usec=%.0f "
                               "max_usec=%.0f same_victim=%s\n", varied ? "varied" : "equal", n, count_tasks(), runs,
                               times[runs / 2] / 1000.0, times[0] / 1000.0, times[runs - 1] / 1000.0,
                               same ? "yes" : "no");
                        /* The visit alone: an empty cgroup, every task
                         * looked at and none written. */
                        char empty[4200];

                        (void) snprintf(empty, sizeof(empty), "%s/empty", argv[1]);
                        if (mkdir(empty, 0755) == 0) {
                                for (size_t r = 0; r < runs; r++) {
                                        uint64_t t0 = now_ns();

                                        o = (Offer) { .self = getpid() };
                                        (void) task_iter_scan_cgroup(empty, (uint64_t) sysconf(_SC_PAGESIZE), want,
                                                                     offer, &o);
                                        times[r] = now_ns() - t0;
                                }
                                qsort(times, runs, sizeof(uint64_t), cmp_u64);
                                printf("path=bpf-visit-only processes=0 tasks=%ld runs=%zu median_usec=%.0f "
                                       "min_usec=%.0f max_usec=%.0f\n", count_tasks(), runs, times[runs / 2] / 1000.0,
                                       times[0] / 1000.0, times[runs - 1] / 1000.0);
                                (void) rmdir(empty);
                        }
                }
        }

        for (size_t r = 0; r < runs; r++) {
                size_t found = 0;
                uint64_t t0 = now_ns();
                int k = proc_scan_cgroup("/proc", argv[1], "bench.service", true,
                                         (uint64_t) sysconf(_SC_PAGESIZE), cands, max, &found);
                int v = victim_select(cands, found, getpid());
                times[r] = now_ns() - t0;
                if (k < 0 || v < 0)
                        fprintf(stderr, "run %zu: scan %d, victim %d\n", r, k, v);
        }
        qsort(times, runs, sizeof(uint64_t), cmp_u64);
        printf("path=array processes=%zu runs=%zu median_usec=%.0f min_usec=%.0f max_usec=%.0f\n", n, runs,
               times[runs / 2] / 1000.0, times[0] / 1000.0, times[runs - 1] / 1000.0);

        /* The floor under any scan of /proc: for each process only the
         * open and close of its smallest file (statm, relative to an open
         * /proc, so no path walk from /), nothing read; and one trivial
         * system call, the price of entering the kernel here. */
        {
                _cleanup_(closep) int proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                uint64_t calls[7];

                if (proc_fd < 0) {
                        fprintf(stderr, "/proc: %m\n");
                        return 1;
                }
                for (size_t r = 0; r < runs; r++) {
                        uint64_t t0 = now_ns();

                        for (size_t i = 0; i < n; i++) {
                                char name[32];
                                int fd;

                                (void) snprintf(name, sizeof(name), "%d/statm", (int) kids[i]);
                                fd = openat(proc_fd, name, O_RDONLY | O_CLOEXEC);
                                if (fd >= 0)
                                        (void) close(fd);
                        }
                        times[r] = now_ns() - t0;
                }
                for (size_t r = 0; r < ELEMENTSOF(calls); r++) {
                        uint64_t t0 = now_ns();

                        for (size_t i = 0; i < 10000; i++)
                                (void) syscall(SYS_getppid);
                        calls[r] = now_ns() - t0;
                }
                qsort(times, runs, sizeof(uint64_t), cmp_u64);
                qsort(calls, ELEMENTSOF(calls), sizeof(uint64_t), cmp_u64);
                printf("path=floor what=open+close-statm processes=%zu runs=%zu median_usec=%.0f "
                       "per_process_usec=%.2f syscall_usec=%.3f\n",
                       n, runs, times[runs / 2] / 1000.0, times[runs / 2] / 1000.0 / (double) n,
                       calls[ELEMENTSOF(calls) / 2] / 1000.0 / 10000.0);
        }

        for (size_t i = 0; i < n; i++)
                kill(kids[i], SIGKILL);
        for (size_t i = 0; i < n; i++)
                waitpid(kids[i], NULL, 0);
        return 0;
}
