/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>

#include "log.h"
#include "proc-scan.h"
#include "read-file.h"

/* A process's file: ENOENT and ESRCH (a process that exits between open
 * and read) both become -ESRCH. */
static int gone(int r) {
        return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
}

/* Reads /proc/<pid>/<name> in one read: relative to proc_fd, the scan's
 * open /proc (one path component less to look up, for each of thousands of
 * processes), or to the path proc_root where proc_fd < 0. */
static ssize_t read_pid_file(int proc_fd, const char *proc_root, pid_t pid, const char *name,
                             char *buf, size_t size) {
        char path[PATH_MAX];
        ssize_t len;

        if (proc_fd >= 0)
                (void) snprintf(path, sizeof(path), "%d/%s", (int) pid, name);
        else
                (void) snprintf(path, sizeof(path), "%s/%d/%s", proc_root ?: "/proc", (int) pid, name);
        len = read_small_file(proc_fd >= 0 ? proc_fd : AT_FDCWD, path, buf, size,
                              READ_FILE_NUL | READ_FILE_TRUNCATE | READ_FILE_ONE_READ);
        return len < 0 ? gone((int) len) : len;
}

static int read_stat(int proc_fd, const char *proc_root, pid_t pid, ProcStat *ret) {
        char buf[1024];  /* stat is under 400 bytes with a 64-byte name */
        ssize_t len;

        len = read_pid_file(proc_fd, proc_root, pid, "stat", buf, sizeof(buf));
        if (len < 0)
                return (int) len;
        if (len == 0)
                return -ESRCH;          /* read after the process was reaped */
        return proc_stat_parse(buf, (size_t) len, ret);
}

int proc_read_stat(const char *proc_root, pid_t pid, ProcStat *ret) {
        return read_stat(-EBADF, proc_root, pid, ret);
}

/* The record from /proc/<pid>/stat alone: oom_score_adj is left 0. */
static int read_candidate_stat(int proc_fd, const char *proc_root, pid_t pid, uint64_t page_size,
                               Candidate *ret) {
        ProcStat st;
        int r;

        r = read_stat(proc_fd, proc_root, pid, &st);
        if (r < 0)
                return r;
        *ret = (Candidate) {
                .pid = st.pid,
                .ppid = st.ppid,
                .starttime_ticks = st.starttime_ticks,
                .rss_bytes = page_size != 0 && st.rss_pages <= UINT64_MAX / page_size ?
                             st.rss_pages * page_size : 0,
                .is_kernel_thread = proc_stat_is_kernel_thread(&st),
        };
        memcpy(ret->comm, st.comm, sizeof(ret->comm));
        return 0;
}

static int read_oom_score_adj(int proc_fd, const char *proc_root, pid_t pid, int *ret) {
        char buf[64];
        ssize_t len;

        len = read_pid_file(proc_fd, proc_root, pid, "oom_score_adj", buf, sizeof(buf));
        if (len < 0)
                return (int) len;
        return proc_oom_score_adj_parse(buf, (size_t) len, ret);
}

static int read_candidate(int proc_fd, const char *proc_root, pid_t pid, uint64_t page_size, Candidate *ret) {
        Candidate c;
        int r;

        r = read_candidate_stat(proc_fd, proc_root, pid, page_size, &c);
        if (r < 0)
                return r;
        r = read_oom_score_adj(proc_fd, proc_root, pid, &c.oom_score_adj);
        if (r < 0)
                return r;
        *ret = c;
        return 0;
}

int proc_read_candidate(const char *proc_root, pid_t pid, uint64_t page_size, Candidate *ret) {
        return read_candidate(-EBADF, proc_root, pid, page_size, ret);
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

/* The state of one cgroup_walk_pids(): fixed size, on the caller's stack. */
typedef struct CgroupWalk {
        char path[PATH_MAX];            /* the cgroup being listed; children are appended in place */
        size_t len;
        size_t depth;                   /* levels below the start */
        /* Where listing each level's directory resumes: getdents64's d_off
         * of the last entry taken (0: from the start). */
        off_t pos[CGROUP_WALK_LEVELS_MAX + 1];
        /* The child just walked, when back at its parent: a removal of its
         * next sibling meanwhile can make a directory (kernfs) list it once
         * more from the saved position; it is not walked twice. */
        char done[NAME_MAX + 1];
        size_t n_too_deep;
        char dirents[2048];
} CgroupWalk;

static bool dot_or_dotdot(const char *name) {
        return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* Descends into the next child cgroup of w->path after w->pos[w->depth]:
 * 1 (its name appended, one level deeper), 0 when there is none left,
 * negative errno when the directory cannot be listed (gone meanwhile). */
static int walk_next_child(CgroupWalk *w) {
        _cleanup_(closep) int fd = -EBADF;
        off_t *pos = &w->pos[w->depth];

        fd = open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (*pos != 0 && lseek(fd, *pos, SEEK_SET) < 0)
                return -errno;
        for (;;) {
                ssize_t k = getdents64(fd, w->dirents, sizeof(w->dirents));

                if (k < 0)
                        return -errno;
                if (k == 0)
                        return 0;
                for (ssize_t off = 0; off < k;) {
                        struct dirent64 *de = (struct dirent64 *) (w->dirents + off);
                        size_t l = strlen(de->d_name);

                        off += de->d_reclen;
                        *pos = de->d_off;
                        if (de->d_type != DT_DIR || dot_or_dotdot(de->d_name) || streq(de->d_name, w->done))
                                continue;
                        w->done[0] = '\0';
                        /* Room for "/<name>/cgroup.procs" and the NUL. */
                        if (w->len + 1 + l + strlen("/cgroup.procs") >= sizeof(w->path) ||
                            w->depth >= CGROUP_WALK_LEVELS_MAX) {
                                w->n_too_deep++;
                                continue;
                        }
                        w->path[w->len] = '/';
                        memcpy(w->path + w->len + 1, de->d_name, l + 1);
                        w->len += 1 + l;
                        w->pos[++w->depth] = 0;
                        return 1;
                }
        }
}

/* Back to the parent; the child's name is remembered in w->done. */
static void walk_up(CgroupWalk *w) {
        char *slash = memrchr(w->path, '/', w->len);

        /* depth > 0: the last component is one the walk appended. */
        (void) snprintf(w->done, sizeof(w->done), "%s", slash + 1);
        w->len = (size_t) (slash - w->path);
        w->path[w->len] = '\0';
        w->depth--;
}

int cgroup_walk_pids(const char *cgroup_dir, cgroup_pid_handler_t handler, void *userdata) {
        CgroupWalk w;
        int count, r;

        w.len = strlen(cgroup_dir);
        if (w.len + 1 > sizeof(w.path))
                return -ENAMETOOLONG;
        memcpy(w.path, cgroup_dir, w.len + 1);
        while (w.len > 1 && w.path[w.len - 1] == '/')
                w.path[--w.len] = '\0';
        w.depth = 0;
        w.pos[0] = 0;
        w.done[0] = '\0';
        w.n_too_deep = 0;

        count = cgroup_foreach_pid(w.path, handler, userdata);
        if (count < 0)
                return count;
        for (;;) {
                r = walk_next_child(&w);
                if (r > 0) {
                        r = cgroup_foreach_pid(w.path, handler, userdata);
                        if (r == -ENOENT)
                                walk_up(&w);    /* removed meanwhile: nothing below it either */
                        else if (r < 0)
                                return r;       /* the handler stopped the walk */
                        else if (count <= INT_MAX - r)
                                count += r;
                        continue;
                }
                /* Listed to the end (or gone meanwhile: nothing more to find there). */
                if (w.depth == 0)
                        break;
                walk_up(&w);
        }
        if (w.n_too_deep > 0)
                log_warning("Cgroups below %s are nested too deep to be opened by path (PATH_MAX), "
                            "their processes are not seen: %zu skipped.", cgroup_dir, w.n_too_deep);
        return count;
}

typedef struct ScanEach {
        const char *proc_root;
        int proc_fd;                    /* proc_root opened, or negative: by path */
        uint64_t page_size;
        proc_candidate_filter_t filter;
        proc_candidate_handler_t handler;
        void *userdata;
} ScanEach;

/* Each file read costs 3-4 µs of the kernel's time here (stat 4.2 µs,
 * oom_score_adj 2.9 µs a process, measured over 10,000 sleeping processes),
 * so oom_score_adj is read only for a process the filter did not rule out
 * on what stat says. Each file is opened relative to the open /proc and
 * read with one read(2) (bench/README.md: 10-15 % of the scan). */
static int scan_each_pid(pid_t pid, void *userdata) {
        ScanEach *s = userdata;
        Candidate c;

        if (read_candidate_stat(s->proc_fd, s->proc_root, pid, s->page_size, &c) < 0)
                return 0;       /* exited meanwhile */
        if (s->filter && !s->filter(&c, s->userdata))
                return 0;
        if (read_oom_score_adj(s->proc_fd, s->proc_root, pid, &c.oom_score_adj) < 0)
                return 0;
        return s->handler(&c, s->userdata);
}

int proc_scan_cgroup_foreach_filtered(const char *proc_root, const char *cgroup_dir, uint64_t page_size,
                                      proc_candidate_filter_t filter, proc_candidate_handler_t handler,
                                      void *userdata) {
        _cleanup_(closep) int proc_fd = -EBADF;
        ScanEach s = {
                .proc_root = proc_root ?: "/proc",
                .page_size = page_size,
                .filter = filter,
                .handler = handler,
                .userdata = userdata,
        };

        /* Where it cannot be opened (no fd left), each file by path. */
        proc_fd = open(s.proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        s.proc_fd = proc_fd;
        return cgroup_walk_pids(cgroup_dir, scan_each_pid, &s);
}

int proc_scan_cgroup_foreach(const char *proc_root, const char *cgroup_dir, uint64_t page_size,
                             proc_candidate_handler_t handler, void *userdata) {
        return proc_scan_cgroup_foreach_filtered(proc_root, cgroup_dir, page_size, NULL, handler, userdata);
}

typedef struct Scan {
        const char *proc_root;
        int proc_fd;
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
                return 0;       /* counted by the walk, not read */
        c = &s->cands[*s->n];
        if (read_candidate(s->proc_fd, s->proc_root, pid, s->page_size, c) < 0)
                return 0;       /* exited meanwhile */
        c->unit = s->unit;
        c->unit_marked_killable = s->marked;
        (*s->n)++;
        return 0;
}

int proc_scan_cgroup(const char *proc_root, const char *cgroup_dir, const char *unit, bool marked,
                     uint64_t page_size, Candidate *cands, size_t max, size_t *n) {
        _cleanup_(closep) int proc_fd = -EBADF;
        Scan s = {
                .proc_root = proc_root ?: "/proc",
                .unit = unit,
                .marked = marked,
                .page_size = page_size,
                .cands = cands,
                .max = max,
                .n = n,
        };

        proc_fd = open(s.proc_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        s.proc_fd = proc_fd;
        return cgroup_walk_pids(cgroup_dir, scan_pid, &s);
}
