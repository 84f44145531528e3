/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Headroom: how much memory is still available, for SAMPLE_HEADROOM. The
 * kernel sends nothing while an anonymous-only hog eats the last free
 * memory without swap, so this is read on a timer. Everything lands in the
 * caller's buffer: nothing is allocated.
 */
#include <fcntl.h>
#include <stdio.h>

#include "proc-parse.h"
#include "read-file.h"
#include "source.h"

/* memory.limit_in_bytes of an unlimited v1 memcg is PAGE_COUNTER_MAX pages,
 * 0x7ffffffffffff000 with 4 KiB pages: anything this big means "no limit". */
#define MEMCG_V1_UNLIMITED (UINT64_C(1) << 62)

/* <dir>/<file>: one number ("max" → UINT64_MAX), or with a key the value
 * of its "key value" line. */
static int read_u64_file(const char *dir, const char *file, const char *key, char *buf, size_t size,
                         uint64_t *ret) {
        char path[PATH_MAX];
        ssize_t n;

        if ((size_t) snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path))
                return -ENAMETOOLONG;
        n = read_small_file(AT_FDCWD, path, buf, size, 0);
        if (n < 0)
                return (int) n;
        return key ? keyed_u64_parse(buf, (size_t) n, key, ret) : single_u64_parse(buf, (size_t) n, ret);
}

/* The system's two files of an OOM's decision stay open once read (the
 * start-up's rehearsal reads them first, manager_rehearse()): each later
 * read is a pread() at 0, with no path walk and no file or seq_file buffer
 * allocated in the kernel at OOM. bench/bus-latency timed the open, read
 * and close of /proc/meminfo at 44-61 µs for the first OOM of a load on
 * the development VM, the pread() of an open one 10-17 µs. Only the real
 * /proc: a file of a test's tree may be replaced between reads. Both are
 * seq_file texts printed whole into the kernel's buffer, so one pread()
 * returns all of a text that fits (READ_FILE_ONE_READ), without a second
 * one to see the end of the file. */
static int meminfo_fd = -EBADF, stall_fd = -EBADF;

static ssize_t read_system_file(int *fd, const char *proc_root, const char *name, char *buf, size_t size,
                                ReadFileFlags flags) {
        char path[PATH_MAX];

        if ((size_t) snprintf(path, sizeof(path), "%s/%s", proc_root, name) >= sizeof(path))
                return -ENAMETOOLONG;
        if (!streq(proc_root, "/proc"))
                return read_small_file(AT_FDCWD, path, buf, size, flags);
        if (*fd < 0) {
                *fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (*fd < 0)
                        return -errno;
        }
        return read_small_fd(*fd, buf, size, flags | READ_FILE_ONE_READ);
}

static int headroom_system(const SourceEnv *env, char *buf, size_t size,
                           uint64_t *ret_available, uint64_t *ret_total) {
        Meminfo mi;
        ssize_t n;
        int r;

        n = read_system_file(&meminfo_fd, env->proc_root, "meminfo", buf, size, 0);
        if (n < 0)
                return (int) n;
        r = meminfo_parse(buf, (size_t) n, &mi);
        if (r < 0)
                return r;
        *ret_available = mi.mem_available_bytes + mi.swap_free_bytes;
        *ret_total = mi.mem_total_bytes + mi.swap_total_bytes;
        return 0;
}

/* Usage minus the inactive page cache, which reclaim drops cheaply. */
static void headroom_finish(uint64_t limit, uint64_t usage, uint64_t inactive_file,
                            uint64_t *ret_available, uint64_t *ret_total) {
        uint64_t used = usage > inactive_file ? usage - inactive_file : 0;

        *ret_available = limit > used ? limit - used : 0;
        *ret_total = limit;
}

/* The files that give a memory cgroup's limit, usage and inactive page
 * cache: the same three numbers under v1 and v2 names. */
typedef struct MemcgFiles {
        const char *limit;
        uint64_t unlimited;             /* a limit at or above this is "no limit" */
        const char *usage;
        const char *inactive_file;      /* key in memory.stat */
} MemcgFiles;

static const MemcgFiles memcg_v1_files = {
        "memory.limit_in_bytes", MEMCG_V1_UNLIMITED, "memory.usage_in_bytes", "total_inactive_file",
};
static const MemcgFiles cgroup2_files = {
        "memory.max", UINT64_MAX, "memory.current", "inactive_file",
};

static int headroom_memcg(const char *dir, const MemcgFiles *f, char *buf, size_t size,
                          uint64_t *ret_available, uint64_t *ret_total) {
        uint64_t limit, usage, inactive_file;
        int r;

        r = read_u64_file(dir, f->limit, NULL, buf, size, &limit);
        if (r < 0)
                return r;
        if (limit >= f->unlimited)
                return -ENODATA;
        r = read_u64_file(dir, f->usage, NULL, buf, size, &usage);
        if (r < 0)
                return r;
        r = read_u64_file(dir, "memory.stat", f->inactive_file, buf, size, &inactive_file);
        if (r < 0)
                return r;
        headroom_finish(limit, usage, inactive_file, ret_available, ret_total);
        return 0;
}

int headroom_read(const SourceEnv *env, const char *cgroup, char *buf, size_t buf_size,
                  uint64_t *ret_available_bytes, uint64_t *ret_total_bytes) {
        char dir[PATH_MAX];
        bool v1;

        if (!env || !buf || buf_size == 0 || !ret_available_bytes || !ret_total_bytes)
                return -EINVAL;

        cgroup = cgroup ? cgroup + strspn(cgroup, "/") : "";
        if (!cgroup[0])
                return headroom_system(env, buf, buf_size, ret_available_bytes, ret_total_bytes);

        /* The memory controller lives in one hierarchy only: v1 when mounted
         * there. With neither there is no limit to measure against. */
        v1 = env->memcg_v1_root[0];
        if (!v1 && !env->cgroup2_root[0])
                return -ENODATA;
        if ((size_t) snprintf(dir, sizeof(dir), "%s/%s", v1 ? env->memcg_v1_root : env->cgroup2_root,
                              cgroup) >= sizeof(dir))
                return -ENAMETOOLONG;
        if (v1)
                return headroom_memcg(dir, &memcg_v1_files, buf, buf_size, ret_available_bytes, ret_total_bytes);
        return headroom_memcg(dir, &cgroup2_files, buf, buf_size, ret_available_bytes, ret_total_bytes);
}

int memory_stall_read(const SourceEnv *env, const char *cgroup, char *buf, size_t buf_size, PsiStats *ret) {
        char path[PATH_MAX];
        ssize_t n;
        int r;

        if (!env || !buf || buf_size == 0 || !ret)
                return -EINVAL;
        cgroup = cgroup ? cgroup + strspn(cgroup, "/") : "";
        if (!cgroup[0])
                n = read_system_file(&stall_fd, env->proc_root, "pressure/memory", buf, buf_size, READ_FILE_NUL);
        else if (env->cgroup2_root[0]) {
                r = snprintf(path, sizeof(path), "%s/%s/memory.pressure", env->cgroup2_root, cgroup);
                if (r < 0 || (size_t) r >= sizeof(path))
                        return -ENAMETOOLONG;
                n = read_small_file(AT_FDCWD, path, buf, buf_size, READ_FILE_NUL);
        } else
                return -ENOENT;
        if (n < 0)
                return (int) n;
        r = psi_parse(buf, (size_t) n, ret);
        if (r < 0)
                return r;
        return ret->have_full ? 0 : -ENODATA;
}

int memory_high_read(const SourceEnv *env, const char *cgroup, char *buf, size_t buf_size, uint64_t *ret) {
        char dir[PATH_MAX];

        if (!env || !cgroup || !buf || buf_size == 0 || !ret)
                return -EINVAL;
        if (!env->cgroup2_root[0])
                return -ENOENT;
        if ((size_t) snprintf(dir, sizeof(dir), "%s/%s", env->cgroup2_root, cgroup + strspn(cgroup, "/")) >=
            sizeof(dir))
                return -ENAMETOOLONG;
        return read_u64_file(dir, "memory.high", NULL, buf, buf_size, ret);
}
