/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The victim scan's BPF task iterator (task-iter.h) against /proc, on real
 * processes in real cgroups (suite 'integration'):
 *   - on the cgroup v1 memory hierarchy and on cgroup2, a tree of this
 *     test's own cgroups (the top, a child, a grandchild) holding sleeping
 *     processes of varied RSS, oom_score_adj and names, some with threads,
 *     and a sibling cgroup that is not asked for: the iterator finds exactly
 *     the processes the /proc walk finds, each with the same pid, parent,
 *     start time (what the kill checks through the pidfd), RSS,
 *     oom_score_adj and name, threads not counted as processes;
 *   - the same after every capability is dropped (as the daemon runs);
 *   - a filter that refuses everything: the handler is never called, every
 *     process still counted; a handler's error stops the scan;
 *   - the cgroup2 root: kthreadd (pid 2) found and marked a kernel thread;
 *   - a directory that is gone (-ENOENT), one on no cgroup hierarchy
 *     (-EOPNOTSUPP, the caller reads /proc).
 * Every process is one this test started; every cgroup one it made and
 * removes (64 MiB limit on the v1 memory one; the processes hold at most
 * 3 MiB each). Needs root and an iterator that loads: 77 otherwise, unless
 * CI=true, where not being able to run is a failure (exit 1).
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "log.h"
#include "proc-scan.h"
#include "task-iter.h"
#include "tests.h"

#define MiB (UINT64_C(1) << 20)
#define N_PROCS 24
#define N_OTHER 2

static bool in_ci;
static pid_t procs[N_PROCS + N_OTHER];
static size_t n_procs;
static char made[16][PATH_MAX];
static size_t n_made;

static _noreturn_ void cannot_run(const char *why) {
        fprintf(stderr, "test-task-iter: cannot run: %s\n", why);
        exit(in_ci ? 1 : 77);
}

static int cg_make(const char *path) {
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                return -errno;
        (void) snprintf(made[n_made++], sizeof(made[0]), "%s", path);
        return 0;
}

static int cg_move(const char *cg, pid_t pid) {
        char file[4 * PATH_MAX], val[32];

        (void) snprintf(file, sizeof(file), "%s/cgroup.procs", cg);
        (void) snprintf(val, sizeof(val), "%d", (int) pid);
        return tests_write_str(file, val);
}

static void *sleeper(void *arg) {
        for (;;)
                pause();
        return NULL;
}

/* A process holding mib MiB (written), with oom_score_adj adj, named name,
 * with n_threads more threads; it tells it is ready on the pipe. */
static pid_t start_proc(unsigned mib, int adj, const char *name, unsigned n_threads) {
        int p[2];
        pid_t pid;
        char c;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        pid = fork();
        if (pid == 0) {
                char val[16];
                char *m;

                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                (void) prctl(PR_SET_NAME, name);
                (void) snprintf(val, sizeof(val), "%d", adj);
                (void) tests_write_str("/proc/self/oom_score_adj", val);
                if (mib > 0) {
                        m = malloc((size_t) mib * MiB);
                        if (m)
                                memset(m, 0x5a, (size_t) mib * MiB);
                }
                for (unsigned i = 0; i < n_threads; i++) {
                        pthread_t t;

                        (void) pthread_create(&t, NULL, sleeper, NULL);
                }
                (void) write(p[1], "r", 1);
                for (;;)
                        pause();
        }
        (void) close(p[1]);
        if (pid < 0 || read(p[0], &c, 1) != 1)
                pid = -1;
        (void) close(p[0]);
        if (pid > 0)
                procs[n_procs++] = pid;
        return pid;
}

typedef struct Found {
        Candidate c[N_PROCS + N_OTHER + 8];
        size_t n;
        size_t n_handled;
} Found;

static int collect(Candidate *c, void *userdata) {
        Found *f = userdata;

        f->n_handled++;
        if (f->n < ELEMENTSOF(f->c))
                f->c[f->n++] = *c;
        return 0;
}

static bool refuse_all(const Candidate *partial, void *userdata) {
        return false;
}

static int stop_at_first(Candidate *c, void *userdata) {
        (*(size_t *) userdata)++;
        return -ECANCELED;
}

static const Candidate *find(const Found *f, pid_t pid) {
        for (size_t i = 0; i < f->n; i++)
                if (f->c[i].pid == pid)
                        return &f->c[i];
        return NULL;
}

static uint64_t now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

/* The iterator's records of top and below against /proc's, process by
 * process. Returns how many the iterator found. */
static size_t compare_with_proc(const char *what, const char *top, uint64_t page_size) {
        static Found by_proc, by_iter;
        uint64_t t0, t1, t2;
        int k_proc, k_iter;

        by_proc = (Found) {};
        by_iter = (Found) {};
        t0 = now_usec();
        k_proc = proc_scan_cgroup_foreach_filtered("/proc", top, page_size, NULL, collect, &by_proc);
        t1 = now_usec();
        k_iter = task_iter_scan_cgroup(top, page_size, NULL, collect, &by_iter);
        t2 = now_usec();
        fprintf(stderr, "test-task-iter: %s: %s: /proc %d processes in %" PRIu64 " us, iterator %d in %" PRIu64
                " us\n", what, top, k_proc, t1 - t0, k_iter, t2 - t1);
        CHECK_EQ_INT(k_proc, N_PROCS);
        CHECK_EQ_INT(k_iter, N_PROCS);
        CHECK_EQ_INT(by_iter.n, by_proc.n);
        for (size_t i = 0; i < by_proc.n; i++) {
                const Candidate *p = &by_proc.c[i], *q = find(&by_iter, p->pid);

                CHECK(q != NULL);
                if (!q)
                        continue;
                CHECK_EQ_INT(q->ppid, p->ppid);
                CHECK_EQ_U64(q->starttime_ticks, p->starttime_ticks);
                CHECK_EQ_U64(q->rss_bytes, p->rss_bytes);
                CHECK_EQ_INT(q->oom_score_adj, p->oom_score_adj);
                CHECK_EQ_INT(q->is_kernel_thread, p->is_kernel_thread);
                CHECK_STREQ(q->comm, p->comm);
        }
        /* Every one of ours in the tree, none of the sibling's. */
        for (size_t i = 0; i < n_procs; i++)
                CHECK((find(&by_iter, procs[i]) != NULL) == (i < N_PROCS));
        return by_iter.n;
}

static void other_checks(const char *top, uint64_t page_size) {
        Found f = {};
        size_t n_stopped = 0;
        int k;

        k = task_iter_scan_cgroup(top, page_size, refuse_all, collect, &f);
        CHECK_EQ_INT(k, N_PROCS);
        CHECK_EQ_INT(f.n_handled, 0);
        k = task_iter_scan_cgroup(top, page_size, NULL, stop_at_first, &n_stopped);
        CHECK_EQ_INT(k, -ECANCELED);
        CHECK_EQ_INT(n_stopped, 1);
}

/* In a child without a single capability and with no_new_privs, as the
 * daemon after start-up: the count the iterator gives. */
static int count_without_caps(const char *top, uint64_t page_size) {
        int p[2], count = -1;
        pid_t pid;

        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        pid = fork();
        if (pid == 0) {
                cap_t none = cap_init();
                int k = -EPERM;

                if (none && cap_set_proc(none) == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0)
                        k = task_iter_scan_cgroup(top, page_size, NULL, collect, &(Found) {});
                (void) write(p[1], &k, sizeof(k));
                _exit(0);
        }
        (void) close(p[1]);
        if (pid < 0 || read(p[0], &count, sizeof(count)) != sizeof(count))
                count = -1;
        (void) close(p[0]);
        if (pid > 0)
                (void) waitpid(pid, NULL, 0);
        return count;
}

static const char *cgroup2_mount(char *buf, size_t size) {
        FILE *f = fopen("/proc/self/mounts", "re");
        char dev[256], dir[PATH_MAX], type[64];
        const char *ret = NULL;

        while (f && fscanf(f, "%255s %4095s %63s %*s %*d %*d", dev, dir, type) == 3)
                if (streq(type, "cgroup2")) {
                        (void) snprintf(buf, size, "%s", dir);
                        ret = buf;
                        break;
                }
        if (f)
                fclose(f);
        return ret;
}

int main(void) {
        char reason[400], v2root[PATH_MAX], roots[2][PATH_MAX], top[2][PATH_MAX], a[PATH_MAX + 8],
             b[3 * PATH_MAX], other[2][PATH_MAX + 8];
        uint64_t page_size = (uint64_t) sysconf(_SC_PAGESIZE);
        size_t n_roots = 0;
        struct stat st;
        int r;

        in_ci = streq_ptr(getenv("CI"), "true");
        if (geteuid() != 0)
                cannot_run("needs root (cgroups, and CAP_BPF/CAP_PERFMON to load the iterator)");
        /* On a failure the loader logs libbpf's whole account (the
         * verifier's log) at debug level: on stderr here. */
        log_set_max_level(LOG_DEBUG);
        r = task_iter_load(reason, sizeof(reason));
        log_set_max_level(LOG_INFO);
        if (r < 0) {
                fprintf(stderr, "test-task-iter: the iterator did not load: %s\n", reason);
                cannot_run("no BPF task iterator here");
        }
        if (stat("/sys/fs/cgroup/memory/memory.usage_in_bytes", &st) == 0)
                (void) snprintf(roots[n_roots++], sizeof(roots[0]), "/sys/fs/cgroup/memory");
        if (cgroup2_mount(v2root, sizeof(v2root)))
                (void) snprintf(roots[n_roots++], sizeof(roots[0]), "%s", v2root);
        if (n_roots == 0)
                cannot_run("neither a cgroup v1 memory hierarchy nor cgroup2 is mounted");

        for (size_t i = 0; i < n_roots; i++) {
                (void) snprintf(top[i], sizeof(top[i]), "%s/vmpt-task-iter-%d", roots[i], (int) getpid());
                (void) snprintf(a, sizeof(a), "%s/a", top[i]);
                (void) snprintf(b, sizeof(b), "%s/b", a);
                (void) snprintf(other[i], sizeof(other[i]), "%s-other", top[i]);
                if (cg_make(top[i]) < 0 || cg_make(a) < 0 || cg_make(b) < 0 || cg_make(other[i]) < 0)
                        cannot_run("cannot make the test's cgroups");
                if (streq(roots[i], "/sys/fs/cgroup/memory")) {
                        char file[PATH_MAX + 32];

                        (void) snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", top[i]);
                        (void) tests_write_str(file, "67108864");
                }
        }
        /* Processes in the three levels and the sibling, each in the same
         * place on both hierarchies. */
        for (unsigned j = 0; j < N_PROCS + N_OTHER; j++) {
                char name[16];
                pid_t pid;

                (void) snprintf(name, sizeof(name), j % 5 == 0 ? "vmpt ti\t%u" : "vmpt-ti-%u", j);
                pid = start_proc(j % 4, (int) (j * 37 % 1000), name, j % 3 == 0 ? 2 : 0);
                if (pid < 0)
                        cannot_run("cannot start the processes");
                for (size_t i = 0; i < n_roots; i++) {
                        char where[3 * PATH_MAX];

                        if (j >= N_PROCS)
                                (void) snprintf(where, sizeof(where), "%s", other[i]);
                        else
                                (void) snprintf(where, sizeof(where), "%s%s", top[i],
                                                j % 3 == 0 ? "" : j % 3 == 1 ? "/a" : "/a/b");
                        if (cg_move(where, pid) < 0)
                                cannot_run("cannot move a process into the test's cgroups");
                }
        }

        for (size_t i = 0; i < n_roots; i++) {
                const char *what = streq(roots[i], "/sys/fs/cgroup/memory") ? "memory v1" : "cgroup2";

                CHECK_EQ_INT(compare_with_proc(what, top[i], page_size), N_PROCS);
                other_checks(top[i], page_size);
                CHECK_EQ_INT(count_without_caps(top[i], page_size), N_PROCS);
        }
        if (cgroup2_mount(v2root, sizeof(v2root))) {
                Found f = {};
                const Candidate *k;

                /* All of the machine, so only the first records are kept. */
                (void) task_iter_scan_cgroup(v2root, page_size, NULL, collect, &f);
                k = find(&f, 2);
                CHECK(k != NULL);
                if (k) {
                        CHECK(k->is_kernel_thread);
                        CHECK_EQ_U64(k->rss_bytes, 0);
                        CHECK_STREQ(k->comm, "kthreadd");
                }
        }
        (void) snprintf(b, sizeof(b), "%s/vmpt-task-iter-gone-%d", roots[0], (int) getpid());
        CHECK_EQ_INT(task_iter_scan_cgroup(b, page_size, NULL, collect, &(Found) {}), -ENOENT);
        CHECK_EQ_INT(task_iter_scan_cgroup("/tmp", page_size, NULL, collect, &(Found) {}), -EOPNOTSUPP);

        for (size_t i = 0; i < n_procs; i++) {
                (void) kill(procs[i], SIGKILL);
                (void) waitpid(procs[i], NULL, 0);
        }
        for (size_t i = n_made; i > 0; i--)
                if (rmdir(made[i - 1]) < 0)
                        fprintf(stderr, "test-task-iter: cannot remove %s: %m\n", made[i - 1]);
        task_iter_close();
        return test_exit("test-task-iter");
}
