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

int proc_read_stat(const char *proc_root, pid_t pid, ProcStat *ret) {
        char path[PATH_MAX], buf[1024];  /* stat is under 400 bytes with a 64-byte name */
        ssize_t len;

        (void) snprintf(path, sizeof(path), "%s/%d/stat", proc_root ?: "/proc", (int) pid);
        len = read_small_file(AT_FDCWD, path, buf, sizeof(buf), READ_FILE_NUL | READ_FILE_TRUNCATE);
        if (len < 0)
                return gone((int) len);
        if (len == 0)
                return -ESRCH;          /* read after the process was reaped */
        return proc_stat_parse(buf, (size_t) len, ret);
}

/* The record from /proc/<pid>/stat alone: oom_score_adj is left 0. */
static int proc_read_candidate_stat(const char *proc_root, pid_t pid, uint64_t page_size, Candidate *ret) {
        ProcStat st;
        int r;

        r = proc_read_stat(proc_root, pid, &st);
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

static int proc_read_oom_score_adj(const char *proc_root, pid_t pid, int *ret) {
        char path[PATH_MAX], buf[64];
        ssize_t len;

        (void) snprintf(path, sizeof(path), "%s/%d/oom_score_adj", proc_root, (int) pid);
        len = read_small_file(AT_FDCWD, path, buf, sizeof(buf), READ_FILE_NUL | READ_FILE_TRUNCATE);
        if (len < 0)
                return gone((int) len);
        return proc_oom_score_adj_parse(buf, (size_t) len, ret);
}

int proc_read_candidate(const char *proc_root, pid_t pid, uint64_t page_size, Candidate *ret) {
        Candidate c;
        int r;

        proc_root = proc_root ?: "/proc";
        r = proc_read_candidate_stat(proc_root, pid, page_size, &c);
        if (r < 0)
                return r;
        r = proc_read_oom_score_adj(proc_root, pid, &c.oom_score_adj);
        if (r < 0)
                return r;
        *ret = c;
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
        uint64_t page_size;
        proc_candidate_filter_t filter;
        proc_candidate_handler_t handler;
        void *userdata;
} ScanEach;

/* Each file read costs 3-4 µs of the kernel's time here (stat 4.2 µs,
 * oom_score_adj 2.9 µs a process, measured over 10,000 sleeping processes),
 * so oom_score_adj is read only for a process the filter did not rule out
 * on what stat says. */
static int scan_each_pid(pid_t pid, void *userdata) {
        ScanEach *s = userdata;
        Candidate c;

        if (proc_read_candidate_stat(s->proc_root, pid, s->page_size, &c) < 0)
                return 0;       /* exited meanwhile */
        if (s->filter && !s->filter(&c, s->userdata))
                return 0;
        if (proc_read_oom_score_adj(s->proc_root, pid, &c.oom_score_adj) < 0)
                return 0;
        return s->handler(&c, s->userdata);
}

int proc_scan_cgroup_foreach_filtered(const char *proc_root, const char *cgroup_dir, uint64_t page_size,
                                      proc_candidate_filter_t filter, proc_candidate_handler_t handler,
                                      void *userdata) {
        ScanEach s = {
                .proc_root = proc_root ?: "/proc",
                .page_size = page_size,
                .filter = filter,
                .handler = handler,
                .userdata = userdata,
        };

        return cgroup_walk_pids(cgroup_dir, scan_each_pid, &s);
}

int proc_scan_cgroup_foreach(const char *proc_root, const char *cgroup_dir, uint64_t page_size,
                             proc_candidate_handler_t handler, void *userdata) {
        return proc_scan_cgroup_foreach_filtered(proc_root, cgroup_dir, page_size, NULL, handler, userdata);
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
                return 0;       /* counted by the walk, not read */
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
