/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup_walk_pids() over a directory tree that looks like a cgroup tree
 * (directories with a cgroup.procs file each), in a temporary directory: it
 * only opens, lists and reads, so no cgroup and no root is needed. The
 * integration tests walk real cgroups (kill-match: 40 levels).
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proc-scan.h"
#include "tests.h"

#define PIDS_MAX 8192

typedef struct Seen {
        unsigned count[PIDS_MAX];
        size_t n;
        /* Optionally, at the first pid of stop_at, run on_pid once. */
        pid_t stop_at;
        int (*on_pid)(struct Seen *s);
        const char *root;
} Seen;

static int note(pid_t pid, void *userdata) {
        Seen *s = userdata;

        if (pid <= 0 || pid >= PIDS_MAX)
                return -ERANGE;
        s->count[pid]++;
        s->n++;
        if (s->on_pid && pid == s->stop_at) {
                int (*f)(Seen *) = s->on_pid;

                s->on_pid = NULL;
                return f(s);
        }
        return 0;
}

/* dir/cgroup.procs holding pid (0: an empty file). */
static int make_cgroup(const char *dir, pid_t pid) {
        char path[PATH_MAX];
        FILE *f;

        if (mkdir(dir, 0755) < 0)
                return -errno;
        (void) snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        if (pid > 0)
                fprintf(f, "%d\n", (int) pid);
        return fclose(f) == 0 ? 0 : -errno;
}

/* rm -r through fds: the deep tree is longer than PATH_MAX. */
static void remove_tree_at(int parent, const char *name) {
        int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

        if (fd >= 0) {
                char buf[4096];
                bool removed = true;

                /* Listed again from the start until nothing is left to remove. */
                while (removed) {
                        ssize_t k;

                        removed = false;
                        (void) lseek(fd, 0, SEEK_SET);
                        while ((k = getdents64(fd, buf, sizeof(buf))) > 0)
                                for (ssize_t off = 0; off < k;) {
                                        struct dirent64 *de = (struct dirent64 *) (buf + off);

                                        off += de->d_reclen;
                                        if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                                                continue;
                                        if (de->d_type == DT_DIR)
                                                remove_tree_at(fd, de->d_name);
                                        else
                                                (void) unlinkat(fd, de->d_name, 0);
                                        removed = true;
                                }
                }
                (void) close(fd);
        }
        (void) unlinkat(parent, name, AT_REMOVEDIR);
}

/* 60 children of the root, each with 3 children, and a chain 100 deep:
 * 1 + 60 + 180 + 100 cgroups, one pid each, every one seen once. */
static void test_wide_and_deep(const char *tmp) {
        char root[PATH_MAX], path[PATH_MAX + 64];
        Seen *s = calloc(1, sizeof(Seen));
        pid_t next = 1, expected;
        size_t len;

        CHECK(s != NULL);
        (void) snprintf(root, sizeof(root), "%s/wide", tmp);
        CHECK_EQ_INT(make_cgroup(root, next++), 0);
        for (int i = 0; i < 60; i++) {
                (void) snprintf(path, sizeof(path), "%s/c%02d", root, i);
                CHECK_EQ_INT(make_cgroup(path, next++), 0);
                for (int j = 0; j < 3; j++) {
                        (void) snprintf(path, sizeof(path), "%s/c%02d/g%d", root, i, j);
                        CHECK_EQ_INT(make_cgroup(path, next++), 0);
                }
        }
        len = (size_t) snprintf(path, sizeof(path), "%s/chain", root);
        CHECK_EQ_INT(make_cgroup(path, next++), 0);
        for (int i = 0; i < 99; i++) {
                len += (size_t) snprintf(path + len, sizeof(path) - len, "/l%02d", i);
                CHECK_EQ_INT(make_cgroup(path, next++), 0);
        }
        expected = next - 1;

        CHECK_EQ_INT(cgroup_walk_pids(root, note, s), expected);
        CHECK_EQ_INT(s->n, (size_t) expected);
        for (pid_t p = 1; p <= expected; p++)
                if (s->count[p] != 1) {
                        fprintf(stderr, "pid %d seen %u times\n", (int) p, s->count[p]);
                        CHECK(s->count[p] == 1);
                }
        /* a trailing slash is the same cgroup */
        memset(s, 0, sizeof(*s));
        (void) snprintf(path, sizeof(path), "%s/", root);
        CHECK_EQ_INT(cgroup_walk_pids(path, note, s), expected);
        free(s);
}

static int stop_walk(Seen *s) {
        return -ECANCELED;
}

/* Removes every child of the root not walked yet: the walk must go on
 * (nothing seen twice, nothing looped). */
static int remove_unseen_siblings(Seen *s) {
        char path[PATH_MAX];

        for (int i = 0; i < 40; i++) {
                if (s->count[100 + i] > 0)
                        continue;
                (void) snprintf(path, sizeof(path), "%s/s%02d", s->root, i);
                remove_tree_at(AT_FDCWD, path);
        }
        return 0;
}

static void test_changes_during_walk(const char *tmp) {
        char root[PATH_MAX], path[PATH_MAX + 16];
        Seen *s = calloc(1, sizeof(Seen));
        int r;

        CHECK(s != NULL);
        (void) snprintf(root, sizeof(root), "%s/changing", tmp);
        CHECK_EQ_INT(make_cgroup(root, 1), 0);
        for (int i = 0; i < 40; i++) {
                (void) snprintf(path, sizeof(path), "%s/s%02d", root, i);
                CHECK_EQ_INT(make_cgroup(path, 100 + i), 0);
        }

        /* the handler stops the walk: its error comes back */
        s->stop_at = 1;
        s->on_pid = stop_walk;
        CHECK_EQ_INT(cgroup_walk_pids(root, note, s), -ECANCELED);
        CHECK_EQ_INT(s->n, 1);

        /* first, untouched: every child once */
        memset(s, 0, sizeof(*s));
        CHECK_EQ_INT(cgroup_walk_pids(root, note, s), 41);
        for (pid_t p = 100; p < 140; p++)
                CHECK_EQ_INT(s->count[p], 1);

        /* siblings removed while the first child is walked: the walk goes
         * on from where it was, sees none of them, nothing twice */
        memset(s, 0, sizeof(*s));
        s->root = root;
        s->on_pid = remove_unseen_siblings;
        {
                /* the first child in the directory's own order (the walk's) */
                DIR *d = opendir(root);
                struct dirent *de;

                CHECK(d != NULL);
                while (d && (de = readdir(d)))
                        if (de->d_type == DT_DIR && de->d_name[0] == 's') {
                                s->stop_at = 100 + atoi(de->d_name + 1);
                                break;
                        }
                if (d)
                        closedir(d);
        }
        r = cgroup_walk_pids(root, note, s);
        CHECK_EQ_INT(r, 2);
        CHECK_EQ_INT(s->count[1], 1);
        CHECK_EQ_INT(s->count[s->stop_at], 1);
        CHECK_EQ_INT(s->n, 2);
        free(s);

        /* gone before the walk */
        CHECK_EQ_INT(cgroup_walk_pids("/nonexistent-vmp-cgroup", note, &(Seen) {}), -ENOENT);
}

/* A chain deeper than PATH_MAX can name: everything above the limit is
 * seen, the rest is skipped (with a warning), and the walk ends. */
static void test_beyond_path_max(const char *tmp) {
        char root[PATH_MAX];
        Seen *s = calloc(1, sizeof(Seen));
        int dirfd, levels = 0, r;

        CHECK(s != NULL);
        (void) snprintf(root, sizeof(root), "%s/long", tmp);
        CHECK_EQ_INT(make_cgroup(root, 1), 0);
        dirfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CHECK(dirfd >= 0);
        /* "/dddddddddd" per level (11 bytes): PATH_MAX is passed after ~370 levels */
        for (int i = 0; i < 500 && dirfd >= 0; i++) {
                int fd, child;

                if (mkdirat(dirfd, "dddddddddd", 0755) < 0)
                        break;
                child = openat(dirfd, "dddddddddd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                (void) close(dirfd);
                dirfd = child;
                if (dirfd < 0)
                        break;
                fd = openat(dirfd, "cgroup.procs", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        (void) !write(fd, "2\n", 2);
                        (void) close(fd);
                }
                levels++;
        }
        if (dirfd >= 0)
                (void) close(dirfd);
        CHECK_EQ_INT(levels, 500);

        r = cgroup_walk_pids(root, note, s);
        /* every level whose ".../cgroup.procs" fits in PATH_MAX, and no other */
        {
                size_t fits = (PATH_MAX - 1 - strlen(root) - strlen("/cgroup.procs")) / 11;

                CHECK_EQ_INT(r, 1 + (int) fits);
                CHECK_EQ_INT(s->count[2], fits);
        }
        CHECK_EQ_INT(s->count[1], 1);
        free(s);
}

int main(void) {
        char tmp[] = "/tmp/vmp-test-proc-scan-XXXXXX";

        if (!mkdtemp(tmp)) {
                fprintf(stderr, "mkdtemp: %m\n");
                return 1;
        }
        test_wide_and_deep(tmp);
        test_changes_during_walk(tmp);
        test_beyond_path_max(tmp);
        remove_tree_at(AT_FDCWD, tmp);
        return test_exit("test-proc-scan");
}
