/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The actions against real processes in real cgroups (suite 'integration'):
 *   - PID reuse: the chosen victim exits and a new process takes its pid
 *     before the kill (forced with ns_last_pid inside a new PID namespace,
 *     which starts no service manager) → nothing is killed;
 *   - a fake record whose start time does not match the live process;
 *   - a hog held under OOM in its own small memcg (oom_kill_disable=1) is
 *     killed through a pidfd, process_mrelease() returns 0, the memcg's
 *     oom_kill stays 0, an unmarked decoy survives;
 *   - signals without systemd through a cgroup tree laid out like systemd's:
 *     the main process only, or every process (child cgroups included),
 *     dry run signals nobody, another unit gets nothing.
 * Every process touched here is one this test started; every cgroup is one
 * it made (64 MiB limit) and removes. Needs root: 77 when not root, unless
 * CI=true, where not being able to run is a failure (exit 1).
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "action.h"
#include "proc-scan.h"
#include "tests.h"
#include "unit-name.h"

#define MEMCG_ROOT "/sys/fs/cgroup/memory"
#define MiB (UINT64_C(1) << 20)
#define CG_LIMIT_BYTES (64 * MiB)       /* loads only in a small memcg of our own: docs/kernel.md#test-pressure */
/* The test's own memcg above the units': larger, so that a unit's limit is
 * the one hit (a limit hit here would be an OOM with oom_kill_disable=0). */
#define BASE_LIMIT_BYTES (256 * MiB)

static bool in_ci;
static pid_t started[16];
static size_t n_started;
static char cgroups[8][PATH_MAX];
static size_t n_cgroups;

static _noreturn_ void cannot_run(const char *why) {
        fprintf(stderr, "test-action-kill: cannot run: %s\n", why);
        exit(in_ci ? 1 : 77);
}

static uint64_t now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

static ssize_t read_str(const char *path, char *buf, size_t size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        (void) close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return n;
}

static uint64_t cg_u64(const char *cg, const char *file, const char *key) {
        char path[PATH_MAX + 64], buf[4096];
        const char *p;

        (void) snprintf(path, sizeof(path), "%s/%s", cg, file);
        if (read_str(path, buf, sizeof(buf)) < 0)
                return UINT64_MAX;
        if (!key)
                return strtoull(buf, NULL, 10);
        p = strstr(buf, key);
        return p ? strtoull(p + strlen(key), NULL, 10) : UINT64_MAX;
}

static int cg_make(const char *path, uint64_t limit_bytes) {
        char file[PATH_MAX + 64], val[32];

        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        (void) snprintf(cgroups[n_cgroups++], sizeof(cgroups[0]), "%s", path);
        if (limit_bytes > 0) {
                (void) snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", path);
                (void) snprintf(val, sizeof(val), "%" PRIu64, limit_bytes);
                return tests_write_str(file, val);
        }
        return 0;
}

static int cg_move(const char *path, pid_t pid) {
        char file[PATH_MAX + 64], val[32];

        (void) snprintf(file, sizeof(file), "%s/cgroup.procs", path);
        (void) snprintf(val, sizeof(val), "%d", (int) pid);
        return tests_write_str(file, val);
}

static void track(pid_t pid) {
        if (pid > 0 && n_started < ELEMENTSOF(started))
                started[n_started++] = pid;
}

/* Kills and reaps what this test started (by pid), removes its cgroups. */
static void cleanup(void) {
        for (size_t i = 0; i < n_started; i++) {
                if (started[i] <= 0)
                        continue;
                (void) kill(started[i], SIGKILL);
                (void) waitpid(started[i], NULL, 0);
                started[i] = 0;
        }
        for (size_t i = n_cgroups; i > 0; i--)
                for (int tries = 0; tries < 50 && rmdir(cgroups[i - 1]) < 0 && errno == EBUSY; tries++)
                        usleep(20 * 1000);      /* a killed task leaves its memcg a moment later */
        n_cgroups = 0;
}

static void forget(pid_t pid) {
        for (size_t i = 0; i < n_started; i++)
                if (started[i] == pid)
                        started[i] = 0;
}

static bool alive(pid_t pid) {
        int status;

        return waitpid(pid, &status, WNOHANG) == 0;
}

static bool killed_by(pid_t pid, int sig, int timeout_ms) {
        int status;

        for (int i = 0; i < timeout_ms; i++) {
                pid_t r = waitpid(pid, &status, WNOHANG);

                if (r == pid) {
                        forget(pid);
                        return WIFSIGNALED(status) && WTERMSIG(status) == sig;
                }
                usleep(1000);
        }
        return false;
}

static pid_t spawn_pause(void) {
        pid_t pid = fork();

        if (pid == 0) {
                for (;;)
                        pause();
        }
        track(pid);
        return pid;
}

/* ---- PID reuse, forced inside a new PID namespace ---- */

static int set_ns_last_pid(int last) {
        char buf[16];

        (void) snprintf(buf, sizeof(buf), "%d", last);
        return tests_write_str("/proc/sys/kernel/ns_last_pid", buf);
}

/* Runs as PID 1 of a fresh PID namespace with its own /proc. */
static int pid_reuse_in_namespace(void) {
        _cleanup_(action_context_freep) ActionContext *ctx = NULL;
        Candidate victim, reuser;
        KillRequest req;
        KillResult res = { .mrelease_error = 1 };
        pid_t v, r;
        int status;

        n_started = 0;          /* the parent's processes and cgroups are not ours here */
        n_cgroups = 0;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
                fprintf(stderr, "mount /proc in the namespace: %m\n");
                return 2;
        }
        CHECK_EQ_INT(getpid(), 1);
        CHECK_EQ_INT(action_context_new(0, NULL, &ctx), 0);
        CHECK_EQ_INT(ctx->self_pid, 1);

        /* The victim, pid 200, chosen with its start time. */
        CHECK_EQ_INT(set_ns_last_pid(199), 0);
        v = spawn_pause();
        CHECK_EQ_INT(v, 200);
        CHECK_EQ_INT(proc_read_candidate("/proc", v, ctx->page_size, &victim), 0);
        usleep(50 * 1000);      /* start times are in 10 ms ticks: the reuser's will differ */

        /* It exits, and a new process takes its pid before the kill. */
        (void) kill(v, SIGKILL);
        (void) waitpid(v, &status, 0);
        forget(v);
        CHECK_EQ_INT(set_ns_last_pid(199), 0);
        r = spawn_pause();
        if (r != v) {
                fprintf(stderr, "could not force the reuse of pid %d (got %d)\n", (int) v, (int) r);
                return 2;
        }
        CHECK_EQ_INT(proc_read_candidate("/proc", r, ctx->page_size, &reuser), 0);
        CHECK(reuser.starttime_ticks != victim.starttime_ticks);

        req = (KillRequest) {
                .pid = victim.pid,
                .starttime_ticks = victim.starttime_ticks,
                .unit = "victim.service",
                .comm = victim.comm,
                .rss_bytes = victim.rss_bytes,
                .reason = "test: pid reuse",
        };
        CHECK_EQ_INT(action_ops_dry_run.kill_process(ctx, &req, &res), -ESTALE);
        CHECK_EQ_INT(action_ops_real.kill_process(ctx, &req, &res), -ESTALE);
        usleep(50 * 1000);
        CHECK(alive(r));                /* nothing else was killed */

        /* PID 1 (this process) and the daemon itself are refused. */
        req.pid = 1;
        CHECK_EQ_INT(action_ops_real.kill_process(ctx, &req, &res), -EPERM);
        CHECK_EQ_INT(action_ops_dry_run.kill_process(ctx, &req, &res), -EPERM);

        /* With the right identity the same pid is killed. */
        req.pid = r;
        req.starttime_ticks = reuser.starttime_ticks;
        CHECK_EQ_INT(action_ops_dry_run.kill_process(ctx, &req, &res), 0);
        CHECK(alive(r));
        CHECK_EQ_INT(action_ops_real.kill_process(ctx, &req, &res), 1);
        CHECK(killed_by(r, SIGKILL, 2000));
        CHECK_EQ_INT(res.mrelease_error, 0);

        /* Gone now: -ESRCH, nothing sent anywhere. */
        CHECK_EQ_INT(action_ops_real.kill_process(ctx, &req, &res), -ESRCH);
        cleanup();
        return test_exit("test-action-kill (pid namespace)") ? 1 : 0;
}

static void test_pid_reuse(void) {
        pid_t outer = fork();
        int status;

        if (outer == 0) {
                pid_t init;

                if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0) {
                        fprintf(stderr, "unshare(CLONE_NEWPID|CLONE_NEWNS): %m\n");
                        _exit(2);
                }
                init = fork();
                if (init == 0)
                        _exit(pid_reuse_in_namespace());
                if (init < 0 || waitpid(init, &status, 0) != init)
                        _exit(2);
                _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 3);
        }
        CHECK(outer > 0);
        CHECK(waitpid(outer, &status, 0) == outer);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
                cannot_run("the PID namespace for the pid-reuse case could not be set up");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The same guard in this namespace: a record whose start time is not the
 * live process's is not killed. */
static void test_stale_record(ActionContext *ctx) {
        Candidate c;
        KillRequest req;
        KillResult res;
        pid_t p = spawn_pause();

        CHECK_EQ_INT(proc_read_candidate(NULL, p, ctx->page_size, &c), 0);
        CHECK(!c.is_kernel_thread);
        req = (KillRequest) { .pid = p, .starttime_ticks = c.starttime_ticks + 1, .comm = c.comm,
                              .unit = "stale.service", .reason = "test: stale record" };
        CHECK_EQ_INT(action_ops_real.kill_process(ctx, &req, &res), -ESTALE);
        CHECK_EQ_INT(action_pidfd_open_verified(ctx, p, c.starttime_ticks - 1), -ESTALE);
        usleep(20 * 1000);
        CHECK(alive(p));
        /* the daemon itself is refused */
        req.pid = ctx->self_pid;
        CHECK_EQ_INT(action_ops_real.kill_process(ctx, &req, &res), -EPERM);
        /* kthreadd: verified as a kernel thread, refused (nothing is sent: the
         * check opens a pidfd and reads /proc only; the dry run sends nothing) */
        {
                ProcStat st;

                CHECK_EQ_INT(proc_read_stat(NULL, 2, &st), 0);
                if (proc_stat_is_kernel_thread(&st)) {
                        CHECK_EQ_INT(action_pidfd_open_verified(ctx, 2, st.starttime_ticks), -EPERM);
                        req = (KillRequest) { .pid = 2, .starttime_ticks = st.starttime_ticks };
                        CHECK_EQ_INT(action_ops_dry_run.kill_process(ctx, &req, &res), -EPERM);
                }
        }
        (void) kill(p, SIGKILL);
        CHECK(killed_by(p, SIGKILL, 2000));
}

/* ---- a hog held under OOM in its own memcg ---- */

static _noreturn_ void hog(int go_fd) {
        size_t size = 2 * CG_LIMIT_BYTES;
        char c;
        uint8_t *m;

        if (read(go_fd, &c, 1) != 1)
                _exit(10);
        m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                _exit(11);
        for (size_t i = 0; i < size; i += 4096)
                m[i] = 1;               /* blocks at the limit: oom_kill_disable=1 */
        _exit(12);
}

static void make_base(char *base, size_t size) {
        (void) snprintf(base, size, MEMCG_ROOT "/vmp-test-action-kill-%d", (int) getpid());
        if (cg_make(base, BASE_LIMIT_BYTES) < 0)
                cannot_run("could not create a memcg under " MEMCG_ROOT);
}

static void test_oom_kill(ActionContext *ctx) {
        char hog_cg[PATH_MAX], decoy_cg[PATH_MAX + 16], path[PATH_MAX + 64];
        Candidate cands[8];
        KillRequest req;
        KillResult res = { .mrelease_error = 1 };
        size_t n = 0;
        int pipefd[2], i, r;
        pid_t h, decoy;
        uint64_t t0, t_kill, t_freed = 0, usage;
        char base[PATH_MAX - 32];

        make_base(base, sizeof(base));

        (void) snprintf(hog_cg, sizeof(hog_cg), "%s/hog", base);
        (void) snprintf(decoy_cg, sizeof(decoy_cg), "%s/decoy", base);
        CHECK_EQ_INT(cg_make(hog_cg, CG_LIMIT_BYTES), 0);
        CHECK_EQ_INT(cg_make(decoy_cg, CG_LIMIT_BYTES), 0);
        (void) snprintf(path, sizeof(path), "%s/memory.oom_control", hog_cg);
        CHECK_EQ_INT(tests_write_str(path, "1"), 0);

        CHECK_EQ_INT(pipe2(pipefd, O_CLOEXEC), 0);
        h = fork();
        if (h == 0)
                hog(pipefd[0]);
        track(h);
        (void) close(pipefd[0]);
        decoy = spawn_pause();
        CHECK_EQ_INT(cg_move(hog_cg, h), 0);
        CHECK_EQ_INT(cg_move(decoy_cg, decoy), 0);
        CHECK(write(pipefd[1], "g", 1) == 1);
        (void) close(pipefd[1]);

        /* Wait until the hog is held at the limit. */
        t0 = now_usec();
        while (cg_u64(hog_cg, "memory.oom_control", "under_oom ") != 1 && now_usec() - t0 < 10 * USEC_PER_SEC)
                usleep(5 * 1000);
        CHECK_EQ_U64(cg_u64(hog_cg, "memory.oom_control", "under_oom "), 1);
        if (!alive(h)) {
                fprintf(stderr, "the hog is gone before the kill\n");
                forget(h);
        }

        /* What the manager will do: scan the marked unit and the unmarked one, choose, kill. */
        r = proc_scan_cgroup(NULL, hog_cg, "hog.service", true, ctx->page_size, cands, ELEMENTSOF(cands), &n);
        CHECK_EQ_INT(r, 1);
        r = proc_scan_cgroup(NULL, decoy_cg, "decoy.service", false, ctx->page_size, cands, ELEMENTSOF(cands), &n);
        CHECK_EQ_INT(r, 1);
        CHECK_EQ_INT(n, 2);
        i = victim_select(cands, n, ctx->self_pid);
        CHECK(i >= 0 && cands[i].pid == h);
        if (i < 0 || cands[i].pid != h) {
                cleanup();
                return;
        }
        CHECK(cands[i].rss_bytes > CG_LIMIT_BYTES / 2);
        req = (KillRequest) {
                .pid = h,
                .starttime_ticks = cands[i].starttime_ticks,
                .unit = cands[i].unit,
                .comm = cands[i].comm,
                .rss_bytes = cands[i].rss_bytes,
                .reason = "test: OOM in hog.service",
        };
        CHECK_EQ_INT(action_ops_dry_run.kill_process(ctx, &req, &res), 0);
        CHECK(alive(h));
        t_kill = now_usec();
        CHECK_EQ_INT(action_ops_real.kill_process(ctx, &req, &res), 1);
        CHECK_EQ_INT(res.mrelease_error, 0);
        /* Freed while the victim may not even have been reaped yet. */
        for (;;) {
                usage = cg_u64(hog_cg, "memory.usage_in_bytes", NULL);
                if (usage < 8 * MiB) {
                        t_freed = now_usec();
                        break;
                }
                if (now_usec() - t_kill > 2 * USEC_PER_SEC)
                        break;
                usleep(500);
        }
        CHECK(t_freed > 0);
        fprintf(stderr, "hog: %" PRIu64 " MiB RSS, usage %" PRIu64 " MiB %" PRIu64 " µs after the kill\n",
                req.rss_bytes >> 20, usage >> 20, t_freed ? t_freed - t_kill : 0);
        CHECK(killed_by(h, SIGKILL, 2000));
        CHECK_EQ_U64(cg_u64(hog_cg, "memory.oom_control", "oom_kill "), 0);      /* not the kernel */
        CHECK_EQ_U64(cg_u64(base, "memory.oom_control", "oom_kill "), 0);
        CHECK(alive(decoy));
        cleanup();
}

/* ---- signals without systemd, through a systemd-like cgroup tree ---- */

static int sig_pipe = -1;
static char my_tag;

static void record_signal(int sig) {
        char rec[2] = { my_tag, sig == SIGUSR1 ? '1' : sig == SIGUSR2 ? '2' : '?' };
        int saved = errno;

        (void) !write(sig_pipe, rec, 2);
        errno = saved;
}

/* A unit's process that records the signals it gets as "<tag><1|2>". With
 * child_tag, it first waits for "go", then forks a child (same cgroup) that
 * does the same. Both say "<tag>R" when ready. */
static _noreturn_ void recorder(char tag, char child_tag, int go_fd) {
        struct sigaction sa = { .sa_handler = record_signal, .sa_flags = SA_RESTART };
        char c;

        my_tag = tag;
        (void) sigaction(SIGUSR1, &sa, NULL);
        (void) sigaction(SIGUSR2, &sa, NULL);
        if (go_fd >= 0 && read(go_fd, &c, 1) != 1)
                _exit(10);
        if (child_tag) {
                pid_t w = fork();

                if (w == 0) {
                        my_tag = child_tag;
                        (void) !write(sig_pipe, (char[]) { child_tag, 'R' }, 2);
                        for (;;)
                                pause();
                }
                /* tell the parent test the worker's pid */
                (void) !write(sig_pipe, (char[]) { 'P', (char) (w & 0xff), (char) ((w >> 8) & 0xff),
                                                    (char) ((w >> 16) & 0xff) }, 4);
        }
        (void) !write(sig_pipe, (char[]) { tag, 'R' }, 2);
        for (;;)
                pause();
}

/* Reads what arrived on the pipe within wait_ms into buf. */
static size_t drain(int fd, char *buf, size_t size, int wait_ms) {
        size_t n = 0;

        usleep((useconds_t) wait_ms * 1000);
        for (;;) {
                ssize_t k = read(fd, buf + n, size - 1 - n);

                if (k <= 0)
                        break;
                n += (size_t) k;
        }
        buf[n] = '\0';
        return n;
}

static bool has_record(const char *buf, size_t n, char tag, char what) {
        for (size_t i = 0; i + 1 < n; i += 2)
                if (buf[i] == tag && buf[i + 1] == what)
                        return true;
        return false;
}

static void test_signals(ActionContext *ctx) {
        char foo_dir[PATH_MAX], bar_dir[PATH_MAX], sub_dir[PATH_MAX + 8], slice[PATH_MAX + 16], buf[256];
        char empty_dir[PATH_MAX], missing_dir[PATH_MAX];
        int recv[2], go[2], r;
        pid_t m, b, w = 0;
        size_t n;
        char base[PATH_MAX - 64];

        make_base(base, sizeof(base));

        /* base/system.slice/{foo,bar,empty}.service, as systemd lays units out */
        (void) snprintf(slice, sizeof(slice), "%s/system.slice", base);
        CHECK_EQ_INT(cg_make(slice, 0), 0);
        CHECK_EQ_INT(unit_cgroup_dir(base, "foo.service", foo_dir, sizeof(foo_dir)), 0);
        CHECK_EQ_INT(unit_cgroup_dir(base, "bar.service", bar_dir, sizeof(bar_dir)), 0);
        CHECK_EQ_INT(unit_cgroup_dir(base, "empty.service", empty_dir, sizeof(empty_dir)), 0);
        CHECK_EQ_INT(unit_cgroup_dir(base, "missing.service", missing_dir, sizeof(missing_dir)), 0);
        CHECK_EQ_INT(cg_make(foo_dir, 0), 0);
        (void) snprintf(sub_dir, sizeof(sub_dir), "%s/sub", foo_dir);
        CHECK_EQ_INT(cg_make(sub_dir, 0), 0);
        CHECK_EQ_INT(cg_make(bar_dir, 0), 0);
        CHECK_EQ_INT(cg_make(empty_dir, 0), 0);

        CHECK_EQ_INT(pipe2(recv, O_CLOEXEC), 0);
        CHECK_EQ_INT(pipe2(go, O_CLOEXEC), 0);
        sig_pipe = recv[1];
        m = fork();
        if (m == 0)
                recorder('M', 'W', go[0]);
        track(m);
        b = fork();
        if (b == 0)
                recorder('B', 0, -1);
        track(b);
        CHECK_EQ_INT(cg_move(foo_dir, m), 0);
        CHECK_EQ_INT(cg_move(bar_dir, b), 0);
        CHECK(write(go[1], "g", 1) == 1);
        (void) fcntl(recv[0], F_SETFL, O_NONBLOCK);

        /* Wait for M, W and B to be ready; learn W's pid. Pipe writes of a
         * few bytes are atomic: records never interleave. */
        {
                char acc[64];
                size_t have = 0, ready = 0;
                uint64_t t0 = now_usec();

                while ((ready < 3 || w == 0) && now_usec() - t0 < 5 * USEC_PER_SEC) {
                        ssize_t k = read(recv[0], acc + have, sizeof(acc) - have);

                        if (k <= 0) {
                                usleep(1000);
                                continue;
                        }
                        have += (size_t) k;
                        while (have >= 2 && (acc[0] != 'P' || have >= 4)) {
                                size_t len = acc[0] == 'P' ? 4 : 2;

                                if (acc[0] == 'P')
                                        w = (pid_t) ((unsigned char) acc[1] | (unsigned char) acc[2] << 8 |
                                                     (unsigned char) acc[3] << 16);
                                else if (acc[1] == 'R')
                                        ready++;
                                memmove(acc, acc + len, have - len);
                                have -= len;
                        }
                }
                CHECK_EQ_INT(ready, 3);
        }
        CHECK(w > 0);
        track(w);
        CHECK_EQ_INT(cg_move(sub_dir, w), 0);           /* the worker in a child cgroup of the unit */

        /* main: only M */
        r = action_ops_real.signal_unit(ctx, "foo.service", foo_dir, SIGUSR1, SIGNAL_TARGET_MAIN);
        CHECK_EQ_INT(r, 1);
        n = drain(recv[0], buf, sizeof(buf), 100);
        CHECK(has_record(buf, n, 'M', '1'));
        CHECK(!has_record(buf, n, 'W', '1'));
        CHECK(!has_record(buf, n, 'B', '1'));

        /* all: M and W (in the child cgroup), not B */
        r = action_ops_real.signal_unit(ctx, "foo.service", foo_dir, SIGUSR2, SIGNAL_TARGET_ALL);
        CHECK_EQ_INT(r, 2);
        n = drain(recv[0], buf, sizeof(buf), 100);
        CHECK(has_record(buf, n, 'M', '2'));
        CHECK(has_record(buf, n, 'W', '2'));
        CHECK(!has_record(buf, n, 'B', '2'));

        /* dry run: counts, signals nobody */
        CHECK_EQ_INT(action_ops_dry_run.signal_unit(ctx, "foo.service", foo_dir, SIGUSR1, SIGNAL_TARGET_ALL), 2);
        CHECK_EQ_INT(action_ops_dry_run.signal_unit(ctx, "foo.service", foo_dir, SIGUSR1, SIGNAL_TARGET_MAIN), 1);
        n = drain(recv[0], buf, sizeof(buf), 100);
        CHECK_EQ_INT(n, 0);

        /* no processes, no cgroup */
        CHECK_EQ_INT(action_ops_real.signal_unit(ctx, "empty.service", empty_dir, SIGUSR1, SIGNAL_TARGET_ALL), -ESRCH);
        CHECK_EQ_INT(action_ops_real.signal_unit(ctx, "empty.service", empty_dir, SIGUSR1, SIGNAL_TARGET_MAIN), -ESRCH);
        CHECK_EQ_INT(action_ops_real.signal_unit(ctx, "missing.service", missing_dir, SIGUSR1, SIGNAL_TARGET_ALL),
                     -ENOENT);

        /* KillTarget=unit: every process of foo.service, largest first; bar survives */
        {
                Candidate cands[8];
                size_t idx[8], k, nc = 0;

                CHECK_EQ_INT(proc_scan_cgroup(NULL, foo_dir, "foo.service", true, ctx->page_size, cands,
                                              ELEMENTSOF(cands), &nc), 2);
                CHECK_EQ_INT(proc_scan_cgroup(NULL, bar_dir, "bar.service", false, ctx->page_size, cands,
                                              ELEMENTSOF(cands), &nc), 1);
                k = victim_select_unit(cands, nc, "foo.service", ctx->self_pid, idx, ELEMENTSOF(idx), NULL);
                CHECK_EQ_INT(k, 2);
                for (size_t j = 0; j < k; j++) {
                        const Candidate *c = &cands[idx[j]];
                        KillRequest req = { .pid = c->pid, .starttime_ticks = c->starttime_ticks,
                                            .unit = c->unit, .comm = c->comm, .rss_bytes = c->rss_bytes,
                                            .reason = "test: KillTarget=unit" };
                        KillResult res;

                        CHECK_EQ_INT(action_ops_real.kill_process(ctx, &req, &res), 1);
                }
                CHECK(killed_by(m, SIGKILL, 2000));
                /* W was M's child: reparented to us, the subreaper */
                CHECK(killed_by(w, SIGKILL, 2000));
                CHECK(alive(b));
        }

        (void) close(recv[0]);
        (void) close(recv[1]);
        (void) close(go[0]);
        (void) close(go[1]);
        sig_pipe = -1;
        cleanup();
}

int main(void) {
        _cleanup_(action_context_freep) ActionContext *ctx = NULL;
        const char *ci = getenv("CI");

        in_ci = ci && streq(ci, "true");
        if (geteuid() != 0)
                cannot_run("needs root (cgroups, pidfds of other users' processes, PID namespaces)");
        if (access(MEMCG_ROOT "/cgroup.procs", W_OK) < 0)
                cannot_run("no writable cgroup v1 memory hierarchy at " MEMCG_ROOT);

        CHECK_EQ_INT(action_context_new(0, NULL, &ctx), 0);
        /* Orphans of our children (a unit's worker when its main process is
         * killed) come to us, so we reap them instead of PID 1 seconds later. */
        CHECK_EQ_INT(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);

        test_pid_reuse();
        test_stale_record(ctx);
        test_oom_kill(ctx);
        test_signals(ctx);
        cleanup();
        return test_exit("test-action-kill");
}
