/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmp-load: the memory loads of the integration tests and the benchmark
 * (what each makes the kernel do: docs/kernel.md#memcg-v1-events). Meant to run inside a small memcg made by the
 * caller; --cgroup=DIR moves this process there before anything is touched.
 *
 *   vmp-load [--cgroup=DIR]... stream FILE [SECONDS]
 *       read() FILE in 1 MiB chunks, over and over: page-cache pressure (LOW).
 *   vmp-load [--cgroup=DIR]... [--random-pct=P] anon MIB [STEP_MIB STEP_MS]
 *       touch MIB of anonymous memory, STEP_MIB every STEP_MS, then hold it
 *       (beyond the limit: critical events, then the memcg OOM). Each page
 *       gets one non-zero byte (--random-pct=0, the default), or with
 *       --random-pct=P (1-100) its first P % filled with pseudo-random bytes
 *       and the rest zero: what a compressed
 *       swap (zram) makes of it is then about 100/P to 1 instead of the
 *       near-nothing of a page holding one byte (bench/compare --swap=zram).
 *   vmp-load [--cgroup=DIR]... hotcold FILE HOT_MIB [SECONDS]
 *       mmap the first HOT_MIB of FILE and keep re-touching it while reads
 *       stream through the rest of FILE (MEDIUM). --cold-mib=N sets how much
 *       is streamed between two passes over the hot set (default 32,
 *       tuned in tests/integration/test-memcg-medium.py). The hot set is read
 *       twice before "started", so it is already active when the limit is hit.
 *   vmp-load mkfile FILE MIB
 *       write a real on-disk FILE of MIB MiB, fsync it, drop it from the cache.
 *   vmp-load [--cgroup=DIR]... sleepers N [COMM]
 *       N sleeping processes in the cgroups (named COMM when given, through
 *       prctl(PR_SET_NAME): up to 15 bytes, any but NUL). They are forked by
 *       a leader that joins the cgroups and exits; this process stays
 *       outside them as their subreaper and reaps them as they end, so a
 *       test can count how they ended. "started <pid> <N>" once all N run.
 *       SIGTERM: SIGKILL to those still running, reap them, print
 *       "reaped killed=<ended by SIGKILL before> other=<ended otherwise>
 *       left=<still running at SIGTERM>", exit 0.
 *
 * "started <pid>" goes to stdout (flushed) when the load begins. SIGTERM or
 * SIGINT ends any mode with exit status 0; SECONDS 0 or absent means forever.
 * Exit status 1 on errors, 2 on bad usage.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB ((size_t) 1 << 20)
#define CGROUPS_MAX 4

static volatile sig_atomic_t stop_requested;
static long page_size;

static void on_stop(int sig) {
        stop_requested = 1;
}

/* No SA_RESTART: a blocking read()/nanosleep() returns EINTR and the loop
 * sees the flag. */
static int install_signals(void) {
        struct sigaction sa = { .sa_handler = on_stop };

        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
                return -errno;
        return 0;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/* SECONDS as given on the command line: 0 means no deadline. */
static bool deadline_passed(uint64_t deadline_usec) {
        return deadline_usec != 0 && now_usec() >= deadline_usec;
}

static int parse_size(const char *s, const char *what, size_t *ret) {
        unsigned long long v;
        char *end;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || end == s || *end || s[0] == '-' || v > (SIZE_MAX >> 20)) {
                fprintf(stderr, "vmp-load: invalid %s '%s'\n", what, s);
                return -EINVAL;
        }
        *ret = (size_t) v;
        return 0;
}

static int parse_deadline(int argc, char **argv, int idx, uint64_t *ret) {
        size_t seconds = 0;

        if (idx < argc && parse_size(argv[idx], "SECONDS", &seconds) < 0)
                return -EINVAL;
        *ret = seconds > 0 ? now_usec() + (uint64_t) seconds * 1000000u : 0;
        return 0;
}

/* Writes our PID to DIR/cgroup.procs; works for cgroup v1 and cgroup2 alike. */
static int join_cgroup(const char *dir) {
        char path[PATH_MAX], pid[32];
        int fd, n, r = 0;

        if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        n = snprintf(pid, sizeof(pid), "%d\n", (int) getpid());
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (write(fd, pid, (size_t) n) != n)
                r = -errno;
        (void) close(fd);
        return r;
}

static void announce_start(void) {
        printf("started %d\n", (int) getpid());
        (void) fflush(stdout);
}

/* Reads [start, end) of fd in 1 MiB chunks; end 0 is EOF. 0 when the range
 * was read or a stop was requested, negative errno on a read error. */
static int stream_range(int fd, char *buf, off_t start, off_t end) {
        off_t pos = start;

        while (!stop_requested && (end == 0 || pos < end)) {
                size_t want = MIB;
                ssize_t n;

                if (end != 0 && (off_t) want > end - pos)
                        want = (size_t) (end - pos);
                n = pread(fd, buf, want, pos);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        break;
                pos += n;
        }
        return 0;
}

static int open_file(const char *path, off_t *ret_size) {
        struct stat st;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "vmp-load: cannot open %s: %m\n", path);
                return -1;
        }
        if (fstat(fd, &st) < 0 || st.st_size < (off_t) MIB) {
                fprintf(stderr, "vmp-load: %s: not a file of at least 1 MiB\n", path);
                (void) close(fd);
                return -1;
        }
        /* Pages cached by an earlier run stay charged to where they were read
         * (a removed memcg reparents them): reading them again would charge
         * nothing here and make no pressure. Start from a cold file. */
        (void) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        *ret_size = st.st_size;
        return fd;
}

static int mode_stream(int argc, char **argv) {
        uint64_t deadline;
        off_t size;
        char *buf;
        int fd, r = 0;

        if (argc < 2 || argc > 3)
                return 2;
        fd = open_file(argv[1], &size);
        if (fd < 0)
                return 1;
        if (parse_deadline(argc, argv, 2, &deadline) < 0) {
                (void) close(fd);
                return 2;
        }
        buf = malloc(MIB);
        if (!buf) {
                (void) close(fd);
                return 1;
        }

        announce_start();
        while (!stop_requested && !deadline_passed(deadline)) {
                r = stream_range(fd, buf, 0, 0);
                if (r < 0) {
                        fprintf(stderr, "vmp-load: reading %s: %s\n", argv[1], strerror(-r));
                        break;
                }
        }
        free(buf);
        (void) close(fd);
        return r < 0 ? 1 : 0;
}

static int sleep_msec(unsigned msec) {
        struct timespec ts = { .tv_sec = msec / 1000, .tv_nsec = (long) (msec % 1000) * 1000000L };

        return nanosleep(&ts, NULL) < 0 ? -errno : 0;
}

/* The first pct % of the page at p: xorshift64 words (incompressible to
 * lzo and zstd alike); the rest is left as the kernel gave it, zero. */
static void fill_random(char *p, size_t pct, uint64_t *state) {
        size_t words = (size_t) page_size * pct / 100 / sizeof(uint64_t);

        for (size_t i = 0; i < words; i++) {
                uint64_t x = *state;

                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *state = x;
                memcpy(p + i * sizeof(uint64_t), &x, sizeof(x));
        }
        p[0] |= 1;      /* never a zero page, whatever the share */
}

static int mode_anon(int argc, char **argv, size_t random_pct) {
        size_t total_mib, step_mib, step_msec = 0, done = 0;
        uint64_t state = 0x9e3779b97f4a7c15ULL ^ (uint64_t) getpid();
        char *mem;

        if (argc != 2 && argc != 4)
                return 2;
        if (parse_size(argv[1], "MIB", &total_mib) < 0 || total_mib == 0)
                return 2;
        step_mib = total_mib;
        if (argc == 4 && (parse_size(argv[2], "STEP_MIB", &step_mib) < 0 || step_mib == 0 ||
                          parse_size(argv[3], "STEP_MS", &step_msec) < 0 || step_msec > UINT_MAX))
                return 2;

        /* Reserved once, made real page by page: the memcg charges at first touch. */
        mem = mmap(NULL, total_mib * MIB, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mem == MAP_FAILED) {
                fprintf(stderr, "vmp-load: mmap of %zu MiB: %m\n", total_mib);
                return 1;
        }

        announce_start();
        while (!stop_requested && done < total_mib) {
                size_t n = step_mib < total_mib - done ? step_mib : total_mib - done;

                /* Written, each page: every page becomes a real one. */
                for (size_t off = 0; off < n * MIB; off += (size_t) page_size)
                        if (random_pct > 0)
                                fill_random(mem + done * MIB + off, random_pct, &state);
                        else
                                mem[done * MIB + off] = 1;
                done += n;
                if (done < total_mib && step_msec > 0)
                        (void) sleep_msec((unsigned) step_msec);
        }
        if (!stop_requested) {
                fprintf(stderr, "vmp-load: holding %zu MiB\n", done);
                while (!stop_requested)
                        (void) pause();
        }
        (void) munmap(mem, total_mib * MIB);
        return 0;
}

/* One read per page of the mapping: keeps the whole hot set referenced. */
static unsigned touch_range(const volatile char *p, size_t len) {
        unsigned sum = 0;

        for (size_t off = 0; off < len && !stop_requested; off += (size_t) page_size)
                sum += (unsigned char) p[off];
        return sum;
}

static int mode_hotcold(int argc, char **argv, size_t cold_mib) {
        size_t hot_mib;
        uint64_t deadline;
        off_t size, cold_pos;
        char *hot, *buf;
        int fd, r = 0;

        if (argc < 3 || argc > 4)
                return 2;
        if (parse_size(argv[2], "HOT_MIB", &hot_mib) < 0 || hot_mib == 0)
                return 2;
        fd = open_file(argv[1], &size);
        if (fd < 0)
                return 1;
        if ((off_t) ((hot_mib + 2 * cold_mib) * MIB) > size) {
                fprintf(stderr, "vmp-load: %s is too small for a hot set of %zu MiB plus a cold part\n",
                        argv[1], hot_mib);
                (void) close(fd);
                return 1;
        }
        if (parse_deadline(argc, argv, 3, &deadline) < 0) {
                (void) close(fd);
                return 2;
        }
        hot = mmap(NULL, hot_mib * MIB, PROT_READ, MAP_SHARED, fd, 0);
        buf = malloc(MIB);
        if (hot == MAP_FAILED || !buf) {
                fprintf(stderr, "vmp-load: cannot map the hot set: %m\n");
                if (hot != MAP_FAILED)
                        (void) munmap(hot, hot_mib * MIB);
                free(buf);
                (void) close(fd);
                return 1;
        }

        /* Two reads make the hot set active before the limit is reached; mapped
         * pages found on the inactive list at the first reclaim would all be
         * rotated at once (a burst of "critical" before any "medium"). */
        for (int pass = 0; pass < 2 && !stop_requested; pass++)
                (void) stream_range(fd, buf, 0, (off_t) (hot_mib * MIB));

        announce_start();
        cold_pos = (off_t) (hot_mib * MIB);
        while (!stop_requested && !deadline_passed(deadline)) {
                off_t end = cold_pos + (off_t) (cold_mib * MIB);

                (void) touch_range(hot, hot_mib * MIB);
                if (end > size)
                        end = size;
                r = stream_range(fd, buf, cold_pos, end);
                if (r < 0) {
                        fprintf(stderr, "vmp-load: reading %s: %s\n", argv[1], strerror(-r));
                        break;
                }
                cold_pos = end >= size ? (off_t) (hot_mib * MIB) : end;
        }
        (void) munmap(hot, hot_mib * MIB);
        free(buf);
        (void) close(fd);
        return r < 0 ? 1 : 0;
}

static int mode_mkfile(int argc, char **argv) {
        size_t mib;
        char *buf;
        int fd, r = 0;

        if (argc != 3)
                return 2;
        if (parse_size(argv[2], "MIB", &mib) < 0 || mib == 0)
                return 2;
        buf = malloc(MIB);
        if (!buf)
                return 1;
        /* Not zeros: a file system that compresses or dedups would make a sparse fixture. */
        for (size_t i = 0; i < MIB; i++)
                buf[i] = (char) (i * 131 + 7);

        fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
                fprintf(stderr, "vmp-load: cannot create %s: %m\n", argv[1]);
                free(buf);
                return 1;
        }
        announce_start();
        for (size_t i = 0; i < mib && !stop_requested && r == 0; i++) {
                size_t off = 0;

                buf[0] = (char) i;      /* every MiB differs */
                while (off < MIB) {
                        ssize_t n = write(fd, buf + off, MIB - off);
                        if (n < 0) {
                                if (errno == EINTR)
                                        continue;
                                r = -errno;
                                break;
                        }
                        off += (size_t) n;
                }
        }
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        /* The pages we wrote are charged to our memcg; a test starts from a cold file. */
        if (r == 0)
                (void) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        if (close(fd) < 0 && r == 0)
                r = -errno;
        free(buf);
        if (r < 0) {
                fprintf(stderr, "vmp-load: writing %s: %s\n", argv[1], strerror(-r));
                (void) unlink(argv[1]);
                return 1;
        }
        return stop_requested ? 1 : 0;
}

/* ---- sleepers ---- */

static int cmp_pid(const void *a, const void *b) {
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;

        return x < y ? -1 : x > y;
}

/* The leader: joins the cgroups, forks n sleepers, writes their pids to fd. */
static _Noreturn void sleepers_leader(const char *const *cgroups, size_t n_cgroups, size_t n, const char *comm,
                                      const sigset_t *unblocked, int fd) {
        for (size_t i = 0; i < n_cgroups; i++)
                if (join_cgroup(cgroups[i]) < 0) {
                        fprintf(stderr, "vmp-load: cannot join cgroup %s: %m\n", cgroups[i]);
                        _exit(1);
                }
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        (void) sigprocmask(SIG_SETMASK, unblocked, NULL);
        /* Named before they are forked (fork copies the name), so they bear
         * it by the time "started" is printed. */
        if (comm)
                (void) prctl(PR_SET_NAME, (unsigned long) comm, 0, 0, 0);
        for (size_t i = 0; i < n; i++) {
                pid_t pid = fork();

                if (pid < 0) {
                        fprintf(stderr, "vmp-load: fork of sleeper %zu: %m\n", i);
                        _exit(1);
                }
                if (pid == 0) {
                        (void) close(fd);
                        for (;;)
                                pause();
                }
                if (write(fd, &pid, sizeof(pid)) != (ssize_t) sizeof(pid))
                        _exit(1);
        }
        _exit(0);
}

/* The pids of the n sleepers from the leader, sorted. 0, or -1. */
static int sleepers_read_pids(int fd, pid_t *pids, size_t n) {
        size_t got = 0;

        while (got < n * sizeof(pid_t)) {
                ssize_t k = read(fd, (char *) pids + got, n * sizeof(pid_t) - got);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                got += (size_t) k;
        }
        qsort(pids, n, sizeof(pid_t), cmp_pid);
        return 0;
}

typedef struct Sleepers {
        pid_t *pids;            /* sorted */
        bool *reaped;           /* per pids[] slot */
        size_t n;
        size_t killed, other, n_reaped;
} Sleepers;

/* Reaps what has ended; count: note how (before the SIGTERM). */
static void sleepers_reap(Sleepers *s, bool count) {
        for (;;) {
                int status;
                pid_t pid = waitpid(-1, &status, WNOHANG);
                pid_t *slot;

                if (pid <= 0)
                        return;
                slot = bsearch(&pid, s->pids, s->n, sizeof(pid_t), cmp_pid);
                if (!slot || s->reaped[slot - s->pids])
                        continue;
                s->reaped[slot - s->pids] = true;
                s->n_reaped++;
                if (!count)
                        continue;
                if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
                        s->killed++;
                else
                        s->other++;
        }
}

static int mode_sleepers(int argc, char **argv, const char *const *cgroups, size_t n_cgroups) {
        struct timespec tick = { .tv_nsec = 100 * 1000 * 1000 };
        sigset_t mask, old;
        Sleepers s = {};
        const char *comm;
        siginfo_t si;
        pid_t leader;
        size_t left;
        int p[2], status;

        if (argc < 2 || argc > 3 || parse_size(argv[1], "N", &s.n) < 0 || s.n == 0)
                return 2;
        comm = argc > 2 ? argv[2] : NULL;
        s.pids = calloc(s.n, sizeof(pid_t));
        s.reaped = calloc(s.n, sizeof(bool));
        if (!s.pids || !s.reaped)
                return 1;
        /* Orphaned sleepers (their leader exits at once) come to us, not to PID 1. */
        if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0 || pipe2(p, O_CLOEXEC) < 0) {
                fprintf(stderr, "vmp-load: %m\n");
                return 1;
        }
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGCHLD);
        (void) sigprocmask(SIG_BLOCK, &mask, &old);

        leader = fork();
        if (leader < 0)
                return 1;
        if (leader == 0) {
                (void) close(p[0]);
                sleepers_leader(cgroups, n_cgroups, s.n, comm, &old, p[1]);
        }
        (void) close(p[1]);
        if (sleepers_read_pids(p[0], s.pids, s.n) < 0 || waitpid(leader, &status, 0) != leader ||
            !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "vmp-load: the leader could not start %zu sleepers\n", s.n);
                (void) kill(leader, SIGKILL);
                for (size_t i = 0; i < s.n; i++)
                        if (s.pids[i] > 0)
                                (void) kill(s.pids[i], SIGKILL);
                return 1;
        }
        (void) close(p[0]);
        printf("started %d %zu\n", (int) getpid(), s.n);
        (void) fflush(stdout);

        do
                sleepers_reap(&s, true);
        while (sigtimedwait(&mask, &si, &tick) < 0 || si.si_signo == SIGCHLD);
        sleepers_reap(&s, true);
        left = s.n - s.n_reaped;
        for (size_t i = 0; i < s.n; i++)
                if (!s.reaped[i])
                        (void) kill(s.pids[i], SIGKILL);
        for (;;) {
                sleepers_reap(&s, false);
                if (s.n_reaped >= s.n)
                        break;
                (void) sigtimedwait(&mask, &si, &tick);
        }
        printf("reaped killed=%zu other=%zu left=%zu\n", s.killed, s.other, left);
        (void) fflush(stdout);
        free(s.pids);
        free(s.reaped);
        return 0;
}

static void usage(FILE *f) {
        fputs("usage: vmp-load [--cgroup=DIR]... [--delay-ms=N] stream FILE [SECONDS]\n"
              "       vmp-load [--cgroup=DIR]... [--random-pct=P] anon MIB [STEP_MIB STEP_MS]\n"
              "       vmp-load [--cgroup=DIR]... [--cold-mib=N] hotcold FILE HOT_MIB [SECONDS]\n"
              "       vmp-load mkfile FILE MIB\n"
              "       vmp-load [--cgroup=DIR]... sleepers N [COMM]\n", f);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "cgroup",   required_argument, NULL, 'g' },
                { "cold-mib", required_argument, NULL, 'C' },
                { "delay-ms", required_argument, NULL, 'D' },
                { "random-pct", required_argument, NULL, 'R' },
                { "help",     no_argument,       NULL, 'h' },
                {}
        };
        const char *cgroups[CGROUPS_MAX];
        size_t n_cgroups = 0, cold_mib = 32, delay_ms = 0, random_pct = 0;
        const char *mode;
        int c, r;

        /* Options only before the mode: "+" stops at the first non-option. */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'g':
                        if (n_cgroups >= CGROUPS_MAX) {
                                fprintf(stderr, "vmp-load: at most %d --cgroup=\n", CGROUPS_MAX);
                                return 2;
                        }
                        cgroups[n_cgroups++] = optarg;
                        break;
                case 'C':
                        if (parse_size(optarg, "--cold-mib", &cold_mib) < 0 || cold_mib == 0)
                                return 2;
                        break;
                case 'D':       /* a service that runs a while before it grows */
                        if (parse_size(optarg, "--delay-ms", &delay_ms) < 0)
                                return 2;
                        break;
                case 'R':       /* how compressible each anon page is */
                        if (parse_size(optarg, "--random-pct", &random_pct) < 0 || random_pct > 100) {
                                fprintf(stderr, "vmp-load: --random-pct takes 0 to 100\n");
                                return 2;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 2;
                }
        if (optind >= argc) {
                usage(stderr);
                return 2;
        }
        page_size = sysconf(_SC_PAGESIZE);
        if (install_signals() < 0) {
                fprintf(stderr, "vmp-load: sigaction: %m\n");
                return 1;
        }

        if (delay_ms > 0)
                (void) nanosleep(&(struct timespec) { .tv_sec = (time_t) (delay_ms / 1000),
                                                      .tv_nsec = (long) (delay_ms % 1000) * 1000000L }, NULL);
        mode = argv[optind];
        /* The sleepers' leader joins the cgroups; this process stays out. */
        if (strcmp(mode, "sleepers") == 0) {
                r = mode_sleepers(argc - optind, argv + optind, cgroups, n_cgroups);
                if (r == 2)
                        usage(stderr);
                return r;
        }

        /* Before anything is allocated: what we touch is charged where we run. */
        for (size_t i = 0; i < n_cgroups; i++) {
                r = join_cgroup(cgroups[i]);
                if (r < 0) {
                        fprintf(stderr, "vmp-load: cannot join cgroup %s: %s\n", cgroups[i], strerror(-r));
                        return 1;
                }
        }

        if (delay_ms > 0)
                (void) nanosleep(&(struct timespec) { .tv_sec = (time_t) (delay_ms / 1000),
                                                      .tv_nsec = (long) (delay_ms % 1000) * 1000000L }, NULL);
        mode = argv[optind];
        argc -= optind;
        argv += optind;
        if (strcmp(mode, "stream") == 0)
                r = mode_stream(argc, argv);
        else if (strcmp(mode, "anon") == 0)
                r = mode_anon(argc, argv, random_pct);
        else if (strcmp(mode, "hotcold") == 0)
                r = mode_hotcold(argc, argv, cold_mib);
        else if (strcmp(mode, "mkfile") == 0)
                r = mode_mkfile(argc, argv);
        else
                r = 2;
        if (r == 2)
                usage(stderr);
        return r;
}
