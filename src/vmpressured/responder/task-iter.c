/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "macro.h"
#include "task-iter.h"
#include "task-scan-record.h"

#if HAVE_TASK_SCAN_BPF
#include <dlfcn.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

/* The object built from task-scan.bpf.c (task-scan-bpf-object.c, made by
 * the build). */
extern const unsigned char task_scan_bpf_object[];
extern const size_t task_scan_bpf_object_size;
#endif

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

/* Records are read this many bytes at a time; the kernel's buffer for a
 * BPF iterator is 8 pages, filled before each copy. */
#define TASK_ITER_BUFFER_SIZE (16 * 1024)

static struct {
        int link_fd;                    /* the iterator's link; -1: not loaded */
        TaskScanTarget *target;         /* the map's value, mapped */
        size_t target_mapped;
        long clock_ticks;               /* sysconf(_SC_CLK_TCK) */
        int last_error;                 /* of the last scan that failed */
        uint64_t n_failed;
} it = { .link_fd = -1 };

static union {
        TaskRecord records[TASK_ITER_BUFFER_SIZE / sizeof(TaskRecord)];
        char bytes[TASK_ITER_BUFFER_SIZE];
} buffer;

bool task_iter_loaded(void) {
        return it.link_fd >= 0;
}

uint64_t task_iter_failures(int *ret_last_error) {
        if (ret_last_error)
                *ret_last_error = it.last_error;
        return it.n_failed;
}

void task_iter_close(void) {
        if (it.target)
                (void) munmap(it.target, it.target_mapped);
        it.target = NULL;
        it.link_fd = safe_close(it.link_fd);
}

void task_iter_prefault(void) {
        if (!task_iter_loaded())
                return;
        /* Written, not read: a read of a never-written .bss page maps the
         * shared zero page, which is not this buffer's own. */
        memset(&buffer, 0, sizeof(buffer));
        it.target->cgroup_id = 0;
}

#if HAVE_TASK_SCAN_BPF

/* ---- the loader: a child with dlopen("libbpf.so.1") ---- */

#define LIBBPF_SONAME "libbpf.so.1"

typedef struct Libbpf {
        void *dl;
        typeof(libbpf_set_print) *set_print;
        typeof(bpf_object__open_mem) *open_mem;
        typeof(bpf_object__load) *load;
        typeof(bpf_object__find_program_by_name) *find_program;
        typeof(bpf_object__find_map_by_name) *find_map;
        typeof(bpf_program__attach_iter) *attach_iter;
        typeof(bpf_link__fd) *link_fd;
        typeof(bpf_map__fd) *map_fd;
} Libbpf;

/* What libbpf printed at warning level (the verifier's log among it), kept
 * in the child: on a failure the reason is made of its first line and the
 * verifier's last words, and the whole of it is logged at debug level. */
static char libbpf_log[16384];
static size_t libbpf_log_len;

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap) {
        int n;

        if (level == LIBBPF_DEBUG || libbpf_log_len >= sizeof(libbpf_log) - 1)
                return 0;
        n = vsnprintf(libbpf_log + libbpf_log_len, sizeof(libbpf_log) - libbpf_log_len, fmt, ap);
        if (n > 0)
                libbpf_log_len = MIN(libbpf_log_len + (size_t) n, sizeof(libbpf_log) - 1);
        return 0;
}

/* Whether line (n bytes) says nothing of the cause: libbpf's and the
 * verifier's closing lines. */
static bool log_line_is_summary(const char *line, size_t n) {
        static const char *const summary[] = {
                "-- END PROG LOAD LOG --", "processed ", "verification time", "stack depth",
                "libbpf: failed to load object", "libbpf: failed to load BPF skeleton",
        };

        if (n == 0)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(summary); i++)
                if (strncmp(line, summary[i], MIN(n, strlen(summary[i]))) == 0 && n >= strlen(summary[i]))
                        return true;
        return false;
}

/* "what": libbpf's first line, and the cause: the verifier's last words
 * (the last line of its log that is not a summary), else libbpf's last
 * line that is not one. Every line at debug level too. */
static void libbpf_reason(const char *what, char *reason, size_t size) {
        const char *first = NULL, *last = NULL, *verifier = NULL;
        size_t first_n = 0, last_n = 0, verifier_n = 0;
        bool in_log = false;

        for (const char *p = libbpf_log; p < libbpf_log + libbpf_log_len;) {
                const char *nl = memchr(p, '\n', (size_t) (libbpf_log + libbpf_log_len - p));
                size_t n = nl ? (size_t) (nl - p) : (size_t) (libbpf_log + libbpf_log_len - p);

                log_debug("task iterator: %.*s", (int) n, p);
                if (memmem(p, n, "-- BEGIN PROG LOAD LOG --", 25))
                        in_log = true;
                else if (memmem(p, n, "-- END PROG LOAD LOG --", 23))
                        in_log = false;
                else if (in_log && !log_line_is_summary(p, n)) {
                        verifier = p;
                        verifier_n = n;
                } else if (!in_log && n > 0 && !first) {
                        first = p;
                        first_n = n;
                } else if (!in_log && !log_line_is_summary(p, n) && !memmem(p, n, "failed to load", 14)) {
                        last = p;
                        last_n = n;
                }
                p += n + 1;
        }
        if (verifier) {
                last = verifier;
                last_n = verifier_n;
        }
        if (!first)
                (void) snprintf(reason, size, "%s", what);
        else if (!last || last == first)
                (void) snprintf(reason, size, "%s: %.*s", what, (int) first_n, first);
        else
                (void) snprintf(reason, size, "%s: %.*s … %.*s", what, (int) first_n, first, (int) last_n, last);
}

static int libbpf_open(Libbpf *l, char *reason, size_t size) {
        *l = (Libbpf) { .dl = dlopen(LIBBPF_SONAME, RTLD_NOW | RTLD_LOCAL) };
        if (!l->dl) {
                (void) snprintf(reason, size, "cannot open %s (package libbpf1): %s", LIBBPF_SONAME, dlerror());
                return -EOPNOTSUPP;
        }
#define SYM(field, name)                                                                                \
        do {                                                                                            \
                l->field = (typeof(l->field)) dlsym(l->dl, name);                                       \
                if (!l->field) {                                                                        \
                        (void) snprintf(reason, size, "%s has no %s", LIBBPF_SONAME, name);            \
                        return -EOPNOTSUPP;                                                             \
                }                                                                                       \
        } while (0)
        SYM(set_print, "libbpf_set_print");
        SYM(open_mem, "bpf_object__open_mem");
        SYM(load, "bpf_object__load");
        SYM(find_program, "bpf_object__find_program_by_name");
        SYM(find_map, "bpf_object__find_map_by_name");
        SYM(attach_iter, "bpf_program__attach_iter");
        SYM(link_fd, "bpf_link__fd");
        SYM(map_fd, "bpf_map__fd");
#undef SYM
        return 0;
}

/* In the child: loads and attaches, fills fds[0] (link) and fds[1] (map).
 * Returns 0 or negative errno with reason set. Nothing is closed: the
 * child exits. */
static int child_load(int fds[2], char *reason, size_t size) {
        struct bpf_object *obj;
        struct bpf_program *prog;
        struct bpf_map *map;
        struct bpf_link *link;
        Libbpf l;
        int r;

        r = libbpf_open(&l, reason, size);
        if (r < 0)
                return r;
        (void) l.set_print(libbpf_print);
        obj = l.open_mem(task_scan_bpf_object, task_scan_bpf_object_size, NULL);
        if (!obj) {
                r = -errno;
                libbpf_reason("cannot open the program", reason, size);
                return r < 0 ? r : -EINVAL;
        }
        r = l.load(obj);
        if (r < 0) {
                libbpf_reason("cannot load the program", reason, size);
                return r;
        }
        prog = l.find_program(obj, "vmp_task_scan");
        map = l.find_map(obj, "vmp_target");
        if (!prog || !map) {
                (void) snprintf(reason, size, "the object lacks vmp_task_scan or vmp_target");
                return -EINVAL;
        }
        link = l.attach_iter(prog, NULL);
        if (!link) {
                r = -errno;
                libbpf_reason("cannot attach the task iterator", reason, size);
                return r < 0 ? r : -EINVAL;
        }
        fds[0] = l.link_fd(link);
        fds[1] = l.map_fd(map);
        return 0;
}

typedef struct LoadReply {
        int error;                      /* 0 or negative errno */
        char reason[400];
} LoadReply;

static _noreturn_ void child_main(int sock) {
        LoadReply reply = {};
        int fds[2] = { -1, -1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(fds))];
        } control = {};
        struct iovec iov = { .iov_base = &reply, .iov_len = sizeof(reply) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        reply.error = child_load(fds, reply.reason, sizeof(reply.reason));
        if (reply.error == 0) {
                struct cmsghdr *c;

                mh.msg_control = &control;
                mh.msg_controllen = sizeof(control.buf);
                c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(fds));
                memcpy(CMSG_DATA(c), fds, sizeof(fds));
        }
        (void) sendmsg(sock, &mh, MSG_NOSIGNAL);
        _exit(0);
}

static int load_in_child(int *ret_link, int *ret_map, char *reason, size_t size) {
        int sv[2], fds[2] = { -1, -1 }, status;
        LoadReply reply = {};
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(fds))];
        } control = {};
        struct iovec iov = { .iov_base = &reply, .iov_len = sizeof(reply) };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
                             .msg_controllen = sizeof(control.buf) };
        ssize_t n;
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                (void) snprintf(reason, size, "socketpair: %s", strerror(errno));
                return -errno;
        }
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                int e = errno;

                (void) snprintf(reason, size, "fork: %s", strerror(e));
                safe_close(sv[0]);
                safe_close(sv[1]);
                return -e;
        }
        if (pid == 0) {
                safe_close(sv[0]);
                child_main(sv[1]);
        }
        safe_close(sv[1]);
        do
                n = recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        safe_close(sv[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (n != (ssize_t) sizeof(reply)) {
                (void) snprintf(reason, size, "the loader (pid %d) ended without an answer", (int) pid);
                return -EIO;
        }
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
                    c->cmsg_len == CMSG_LEN(sizeof(fds)))
                        memcpy(fds, CMSG_DATA(c), sizeof(fds));
        if (reply.error < 0 || fds[0] < 0 || fds[1] < 0) {
                reply.reason[sizeof(reply.reason) - 1] = '\0';
                (void) snprintf(reason, size, "%s", reply.reason[0] ? reply.reason : "no fds came back");
                safe_close(fds[0]);
                safe_close(fds[1]);
                return reply.error < 0 ? reply.error : -EIO;
        }
        *ret_link = fds[0];
        *ret_map = fds[1];
        return 0;
}

int task_iter_load(char *reason, size_t reason_size) {
        char why[400] = "";
        int link_fd = -1, map_fd = -1, r;
        long page = sysconf(_SC_PAGESIZE);
        void *p;

        if (task_iter_loaded())
                return 0;
        r = load_in_child(&link_fd, &map_fd, why, sizeof(why));
        if (r < 0)
                goto fail;
        /* The map's one value, shared with the program: written before each
         * read without a system call (and without the capability that
         * BPF_MAP_UPDATE_ELEM would need once they are dropped). */
        p = mmap(NULL, (size_t) page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
        safe_close(map_fd);
        if (p == MAP_FAILED) {
                r = -errno;
                (void) snprintf(why, sizeof(why), "cannot map the target: %s", strerror(-r));
                safe_close(link_fd);
                goto fail;
        }
        it.target = p;
        it.target_mapped = (size_t) page;
        it.target->cgroup_id = 0;
        it.link_fd = link_fd;
        it.clock_ticks = sysconf(_SC_CLK_TCK);
        return 0;
fail:
        if (reason)
                (void) snprintf(reason, reason_size, "%s", why);
        return r;
}

static int iter_create(int link_fd) {
        union bpf_attr attr;

        memset(&attr, 0, sizeof(attr));
        attr.iter_create.link_fd = (__u32) link_fd;
        return (int) syscall(__NR_bpf, BPF_ITER_CREATE, &attr, sizeof(attr));
}

#else /* !HAVE_TASK_SCAN_BPF */

int task_iter_load(char *reason, size_t reason_size) {
        if (reason)
                (void) snprintf(reason, reason_size, "built without it (clang and libbpf's headers were missing)");
        return -EOPNOTSUPP;
}

static int iter_create(int link_fd) {
        errno = EOPNOTSUPP;
        return -1;
}

#endif

/* Which cgroup of a task the directory is compared with. */
static int target_of(const char *cgroup_dir, TaskScanTarget *ret) {
        _cleanup_(closep) int fd = -EBADF;
        struct statfs sfs;
        struct stat st;

        fd = open(cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstatfs(fd, &sfs) < 0 || fstat(fd, &st) < 0)
                return -errno;
        if ((unsigned long) sfs.f_type == CGROUP2_SUPER_MAGIC)
                *ret = (TaskScanTarget) { .cgroup_id = st.st_ino, .hierarchy = TASK_SCAN_UNIFIED };
        else if ((unsigned long) sfs.f_type == CGROUP_SUPER_MAGIC &&
                 faccessat(fd, "memory.usage_in_bytes", F_OK, 0) == 0)
                *ret = (TaskScanTarget) { .cgroup_id = st.st_ino, .hierarchy = TASK_SCAN_MEMORY_V1 };
        else
                return -EOPNOTSUPP;     /* another v1 hierarchy (name=systemd): only /proc knows */
        return 0;
}

static void candidate_of(const TaskRecord *rec, uint64_t page_size, long clock_ticks, Candidate *c) {
        uint64_t ns_per_tick = clock_ticks > 0 ? UINT64_C(1000000000) / (uint64_t) clock_ticks : 0;

        *c = (Candidate) {
                .pid = rec->pid,
                .ppid = rec->ppid,
                /* As the kernel's nsec_to_clock_t() for /proc/<pid>/stat. */
                .starttime_ticks = ns_per_tick ? rec->start_boottime_ns / ns_per_tick : 0,
                .rss_bytes = page_size != 0 && rec->rss_pages <= UINT64_MAX / page_size ?
                             rec->rss_pages * page_size : 0,
                .oom_score_adj = rec->oom_score_adj,
                .is_kernel_thread = rec->flags & TASK_RECORD_KTHREAD,
        };
        proc_comm_sanitize(c->comm, rec->comm, strnlen(rec->comm, sizeof(rec->comm)));
}

int task_iter_scan_cgroup(const char *cgroup_dir, uint64_t page_size, proc_candidate_filter_t filter,
                          proc_candidate_handler_t handler, void *userdata) {
        _cleanup_(closep) int fd = -EBADF;
        TaskScanTarget target = {};
        size_t have = 0;
        int count = 0, r;

        if (!task_iter_loaded())
                return -EOPNOTSUPP;
        r = target_of(cgroup_dir, &target);
        if (r < 0)
                return r;
        it.target->hierarchy = target.hierarchy;
        it.target->last_cset = 0;
        it.target->last_match = 0;
        it.target->cgroup_id = target.cgroup_id;
        fd = iter_create(it.link_fd);
        if (fd < 0) {
                it.last_error = -errno;
                it.n_failed++;
                it.target->cgroup_id = 0;
                return -EOPNOTSUPP;
        }
        for (;;) {
                ssize_t n = read(fd, buffer.bytes + have, sizeof(buffer) - have);
                size_t k;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        it.last_error = r;
                        it.n_failed++;
                        /* Nothing handed out yet (the kernel could not
                         * make its buffer): the caller reads /proc. */
                        if (count == 0)
                                r = -EOPNOTSUPP;
                        break;
                }
                if (n == 0) {
                        r = 0;
                        break;
                }
                have += (size_t) n;
                k = have / sizeof(TaskRecord);
                for (size_t i = 0; i < k && r >= 0; i++) {
                        Candidate c;

                        candidate_of(&buffer.records[i], page_size, it.clock_ticks, &c);
                        if (count < INT_MAX)
                                count++;
                        if (filter && !filter(&c, userdata))
                                continue;
                        r = handler(&c, userdata);
                }
                if (r < 0)
                        break;
                /* A record cut by the end of this read: its start first. */
                memmove(buffer.bytes, buffer.bytes + k * sizeof(TaskRecord), have - k * sizeof(TaskRecord));
                have -= k * sizeof(TaskRecord);
        }
        it.target->cgroup_id = 0;
        return r < 0 ? r : count;
}
