/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "proc-scan.h"

/* Reads a small /proc file whole into buf (NUL-terminated). The length, or
 * negative errno; ENOENT and ESRCH (a process that exits between open and
 * read) both become -ESRCH for a process's file. */
static ssize_t read_small(const char *path, char *buf, size_t size) {
        _cleanup_(closep) int fd = -EBADF;
        size_t len = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        while (len < size - 1) {
                ssize_t k = read(fd, buf + len, size - 1 - len);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        buf[len] = '\0';
        return (ssize_t) len;
}

static int gone(int r) {
        return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
}

int proc_read_stat(const char *proc_root, pid_t pid, ProcStat *ret) {
        char path[PATH_MAX], buf[1024];  /* stat is under 400 bytes with a 64-byte name */
        ssize_t len;

        (void) snprintf(path, sizeof(path), "%s/%d/stat", proc_root ?: "/proc", (int) pid);
        len = read_small(path, buf, sizeof(buf));
        if (len < 0)
                return gone((int) len);
        if (len == 0)
                return -ESRCH;          /* read after the process was reaped */
        return proc_stat_parse(buf, (size_t) len, ret);
}

int proc_read_candidate(const char *proc_root, pid_t pid, uint64_t page_size, Candidate *ret) {
        char path[PATH_MAX], buf[64];
        ProcStat st;
        struct stat sb;
        ssize_t len;
        int adj = 0, r;

        proc_root = proc_root ?: "/proc";
        r = proc_read_stat(proc_root, pid, &st);
        if (r < 0)
                return r;

        (void) snprintf(path, sizeof(path), "%s/%d/oom_score_adj", proc_root, (int) pid);
        len = read_small(path, buf, sizeof(buf));
        if (len < 0)
                return gone((int) len);
        r = proc_oom_score_adj_parse(buf, (size_t) len, &adj);
        if (r < 0)
                return r;

        /* The owner of /proc/<pid> is the process's effective uid: one
         * stat() instead of reading and parsing status. */
        (void) snprintf(path, sizeof(path), "%s/%d", proc_root, (int) pid);
        if (stat(path, &sb) < 0)
                return gone(-errno);

        *ret = (Candidate) {
                .pid = st.pid,
                .ppid = st.ppid,
                .starttime_ticks = st.starttime_ticks,
                .rss_bytes = page_size != 0 && st.rss_pages <= UINT64_MAX / page_size ?
                             st.rss_pages * page_size : 0,
                .oom_score_adj = adj,
                .is_kernel_thread = proc_stat_is_kernel_thread(&st),
                .uid = sb.st_uid,
        };
        memcpy(ret->comm, st.comm, sizeof(ret->comm));
        return 0;
}

/* Streams cgroup_dir/cgroup.procs: no limit on the number of pids and no
 * buffer for the whole file. Returns the number of pids, or negative errno. */
static int cgroup_foreach_pid(const char *cgroup_dir, cgroup_pid_handler_t handler, void *userdata) {
        _cleanup_(closep) int fd = -EBADF;
        char path[PATH_MAX], buf[4096];
        uint64_t cur = 0;
        bool in_number = false;
        int n = 0;

        if (snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup_dir) >= (int) sizeof(path))
                return -ENAMETOOLONG;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t k = read(fd, buf, sizeof(buf));

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                for (ssize_t i = 0; i <= k; i++) {
                        bool eof = k == 0;
                        char c = i < k ? buf[i] : '\0';

                        if (i == k && !eof)
                                break;
                        if (c >= '0' && c <= '9') {
                                cur = cur * 10 + (unsigned) (c - '0');
                                if (cur > INT_MAX)
                                        return -EBADMSG;
                                in_number = true;
                        } else if (c == '\n' || eof) {
                                if (in_number) {
                                        int r = handler((pid_t) cur, userdata);

                                        if (r < 0)
                                                return r;
                                        if (n < INT_MAX)
                                                n++;
                                }
                                cur = 0;
                                in_number = false;
                        } else
                                return -EBADMSG;
                }
                if (k == 0)
                        return n;
        }
}

typedef struct PidArray {
        pid_t *pids;
        size_t max;
        size_t n;
} PidArray;

static int store_pid(pid_t pid, void *userdata) {
        PidArray *a = userdata;

        if (a->n < a->max)
                a->pids[a->n] = pid;
        a->n++;
        return 0;
}

int cgroup_read_procs(const char *cgroup_dir, pid_t *pids, size_t max) {
        PidArray a = { pids, max, 0 };

        return cgroup_foreach_pid(cgroup_dir, store_pid, &a);
}

typedef struct Walk {
        cgroup_pid_handler_t handler;
        void *userdata;
} Walk;

/* path holds the directory (len bytes); children are appended in place. */
static int walk_dir(const Walk *w, char *path, size_t len, unsigned depth) {
        _cleanup_(closep) int fd = -EBADF;
        char buf[2048];         /* per level: PROC_SCAN_DEPTH_MAX × 2 KiB of stack at most */
        int count, r;

        count = cgroup_foreach_pid(path, w->handler, w->userdata);
        if (count < 0)
                return count;
        if (depth >= PROC_SCAN_DEPTH_MAX)
                return count;

        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return count;   /* removed meanwhile */
        for (;;) {
                ssize_t k = getdents64(fd, buf, sizeof(buf));

                if (k <= 0)
                        break;
                for (ssize_t off = 0; off < k;) {
                        struct dirent64 *de = (struct dirent64 *) (buf + off);
                        size_t l = strlen(de->d_name);

                        off += de->d_reclen;
                        if (de->d_type != DT_DIR || streq(de->d_name, ".") || streq(de->d_name, ".."))
                                continue;
                        if (len + 1 + l + 1 > PATH_MAX)
                                continue;
                        path[len] = '/';
                        memcpy(path + len + 1, de->d_name, l + 1);
                        r = walk_dir(w, path, len + 1 + l, depth + 1);
                        path[len] = '\0';
                        if (r < 0 && r != -ENOENT)
                                return r;       /* the handler stopped the walk */
                        if (r > 0 && count <= INT_MAX - r)
                                count += r;
                }
        }
        return count;
}

int cgroup_walk_pids(const char *cgroup_dir, cgroup_pid_handler_t handler, void *userdata) {
        char path[PATH_MAX];
        Walk w = { handler, userdata };
        size_t len;

        len = strlen(cgroup_dir);
        if (len + 1 > sizeof(path))
                return -ENAMETOOLONG;
        memcpy(path, cgroup_dir, len + 1);
        while (len > 1 && path[len - 1] == '/')
                path[--len] = '\0';
        return walk_dir(&w, path, len, 0);
}

typedef struct Scan {
        const char *proc_root;
        const char *unit;
        bool marked;
        uint64_t page_size;
        Candidate *cands;
        size_t max;
        size_t *n;
} Scan;

static int scan_pid(pid_t pid, void *userdata) {
        Scan *s = userdata;
        Candidate *c;

        if (*s->n >= s->max)
                return 0;       /* counted by the walk, not stored */
        c = &s->cands[*s->n];
        if (proc_read_candidate(s->proc_root, pid, s->page_size, c) < 0)
                return 0;       /* exited meanwhile */
        c->unit = s->unit;
        c->unit_marked_killable = s->marked;
        (*s->n)++;
        return 0;
}

int proc_scan_cgroup(const char *proc_root, const char *cgroup_dir, const char *unit, bool marked,
                     uint64_t page_size, Candidate *cands, size_t max, size_t *n) {
        Scan s = {
                .proc_root = proc_root ?: "/proc",
                .unit = unit,
                .marked = marked,
                .page_size = page_size,
                .cands = cands,
                .max = max,
                .n = n,
        };

        return cgroup_walk_pids(cgroup_dir, scan_pid, &s);
}
