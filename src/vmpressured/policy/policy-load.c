/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "log.h"
#include "memory.h"
#include "policy-load.h"
#include "read-file.h"

const char *const policy_dirs_default[3] = {
        POLICY_DIR_ETC,
        POLICY_DIR_RUN,
        POLICY_DIR_LIB,
};

typedef struct NameList {
        char **names;
        size_t n;
        size_t n_allocated;
} NameList;

static void name_list_done(NameList *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->names[i]);
        free(l->names);
        *l = (NameList) {};
}

static int name_list_add(NameList *l, const char *name) {
        char *copy;

        if (l->n >= l->n_allocated) {
                size_t m = l->n_allocated ? l->n_allocated * 2 : 32;
                char **q = realloc(l->names, m * sizeof(*q));

                if (!q)
                        return -ENOMEM;
                l->names = q;
                l->n_allocated = m;
        }
        copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        l->names[l->n++] = copy;
        return 0;
}

static int name_compare(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static bool is_policy_name(const char *name) {
        size_t n = strlen(name), l = strlen(POLICY_SUFFIX);

        /* Hidden files are editors' and package managers' leftovers. */
        return name[0] != '.' && n > l && streq(name + n - l, POLICY_SUFFIX);
}

/* The "*.policy" names in dir, sorted. -ENOENT for a missing directory. */
static int list_policy_names(int dfd, NameList *ret) {
        _cleanup_(closep) int fd = -EBADF;
        struct dirent *de;
        DIR *d;
        int r = 0;

        fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);    /* closedir() closes its own fd */
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        TAKE_FD(fd);
        while ((errno = 0, de = readdir(d))) {
                if (!is_policy_name(de->d_name))
                        continue;
                r = name_list_add(ret, de->d_name);
                if (r < 0)
                        break;
        }
        if (r == 0 && errno != 0)
                r = -errno;
        (void) closedir(d);
        if (r < 0)
                return r;
        if (ret->n > 0)
                qsort(ret->names, ret->n, sizeof(ret->names[0]), name_compare);
        return 0;
}

/* A policy decides which processes get signals and which may be killed, so
 * only root may be able to change one, as sudo and systemd demand of their
 * files: the file (a symlink's target) must be owned by root, or by the
 * user the daemon runs as (an unprivileged test run), and writable by
 * nobody else; a directory likewise, except that a group- or
 * world-writable one with the sticky bit (like /tmp) is fine: others may
 * add files there, which this check refuses, but cannot rename or remove
 * root's. 0 when trusted; -EPERM with why filled in otherwise. */
static int check_trusted(const struct stat *st, const char *what, char *why, size_t size) {
        bool dir = S_ISDIR(st->st_mode);

        if (st->st_uid != 0 && st->st_uid != geteuid()) {
                (void) snprintf(why, size, "%s is owned by uid %u, not root: that user could change the policy",
                                what, (unsigned) st->st_uid);
                return -EPERM;
        }
        if (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (dir && (st->st_mode & S_ISVTX)))
                return 0;
        if (st->st_mode & S_IWOTH)
                (void) snprintf(why, size, "%s is writable by everyone (mode %04o%s): only root may change a policy",
                                what, (unsigned) (st->st_mode & 07777), dir ? ", no sticky bit" : "");
        else
                (void) snprintf(why, size, "%s is writable by its group, gid %u (mode %04o%s): only root may "
                                "change a policy", what, (unsigned) st->st_gid, (unsigned) (st->st_mode & 07777),
                                dir ? ", no sticky bit" : "");
        return -EPERM;
}

/* Where a symlink in a policy directory points: its target and the
 * directory that holds the target must be trusted too, or whoever owns
 * them can change the policy. */
static int check_symlink_target(int fd, char *why, size_t size) {
        char proc[64], target[PATH_MAX], what[PATH_MAX + 32], *slash;
        struct stat st;
        ssize_t n;

        (void) snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, target, sizeof(target) - 1);
        if (n < 0 || n >= (ssize_t) sizeof(target) - 1) {
                (void) snprintf(why, size, "Cannot tell where the symlink points (%s), so whether only root "
                                "may change it", n < 0 ? strerror(errno) : "path too long");
                return -EPERM;
        }
        target[n] = '\0';
        if (fstat(fd, &st) < 0)
                return -errno;
        (void) snprintf(what, sizeof(what), "Symlink target %s", target);
        if (check_trusted(&st, what, why, size) < 0)
                return -EPERM;
        slash = strrchr(target, '/');
        if (!slash)
                return 0;
        if (slash == target)
                slash[1] = '\0';        /* "/x.policy": the root directory */
        else
                *slash = '\0';
        if (stat(target, &st) < 0)
                return -errno;
        (void) snprintf(what, sizeof(what), "Symlink target's directory %s", target);
        return check_trusted(&st, what, why, size);
}

/* Reads name into buf (POLICY_FILE_MAX + 1 bytes: one more tells the parser
 * the file is too large). Returns the length, or a negative errno
 * (-EBADFD: not a regular file; -EPERM: not trusted, why says why).
 * /dev/null reads as empty: a mask. */
static ssize_t read_policy(int dfd, const char *name, char *buf, char *why, size_t why_size) {
        _cleanup_(closep) int fd = -EBADF;
        struct stat st, lst;

        /* O_NONBLOCK: a FIFO dropped into the directory must not hang us. */
        fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        /* The mask first: /dev/null is writable by everyone, and harmless. */
        if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
                return 0;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
        if (fstatat(dfd, name, &lst, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (S_ISLNK(lst.st_mode) ? check_symlink_target(fd, why, why_size) < 0
                                 : check_trusted(&st, "File", why, why_size) < 0)
                return -EPERM;
        return pread_full(fd, buf, POLICY_FILE_MAX + 1);
}

static int load_dir(PolicySet *s, const char *dir, char *buf, Diagnostics *diag) {
        _cleanup_(closep) int dfd = -EBADF;
        NameList names = {};
        char why[PATH_MAX + 160];
        struct stat st;
        int total = 0, r;

        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                if (errno == ENOENT)
                        return 0;
                /* Out of descriptors is the daemon's problem, not the directory's:
                 * never load a set with the policies of this directory missing. */
                if (errno == EMFILE || errno == ENFILE)
                        return -errno;
                diag_add(diag, dir, 0, "Failed to open directory, ignoring: %s", strerror(errno));
                return 1;
        }
        if (fstat(dfd, &st) < 0) {
                diag_add(diag, dir, 0, "Failed to stat directory, ignoring: %s", strerror(errno));
                return 1;
        }
        if (check_trusted(&st, "Directory", why, sizeof(why)) < 0) {
                diag_add(diag, dir, 0, "%s, ignoring every file in it", why);
                return 1;
        }
        r = list_policy_names(dfd, &names);
        if (r == -ENOMEM || r == -EMFILE || r == -ENFILE)
                goto finish;
        if (r < 0) {
                diag_add(diag, dir, 0, "Failed to read directory, ignoring: %s", strerror(-r));
                total = 1;
                r = 0;
                goto finish;
        }

        for (size_t i = 0; i < names.n; i++) {
                ssize_t len;
                PolicyFile f;

                why[0] = '\0';
                len = read_policy(dfd, names.names[i], buf, why, sizeof(why));
                if (len == -EMFILE || len == -ENFILE) {
                        r = (int) len;
                        goto finish;
                }
                f = (PolicyFile) {
                        .dir = dir,
                        .filename = names.names[i],
                        .text = len >= 0 ? buf : NULL,
                        .len = len >= 0 ? (size_t) len : 0,
                        .error = len < 0 ? (int) len : 0,
                        .reason = len == -EPERM && why[0] ? why : NULL,
                };

                r = policy_set_add(s, &f, diag);
                if (r < 0)
                        goto finish;
                if (total <= INT_MAX - r)
                        total += r;
        }
        r = 0;
finish:
        name_list_done(&names);
        return r < 0 ? r : total;
}

/* The buffer a policy file is read into: 64 KiB, of which a policy fills a
 * few hundred bytes. In a mapping of its own: from the heap it would be
 * left as a free block nobody wrote, never resident, for the first OOM to
 * fault in when an allocation lands there (test-oom-path-tight.py). */
int policy_set_load_dirs(PolicySet *s, const char *const *dirs, size_t n_dirs, Diagnostics *diag) {
        char *buf;
        int total = 0, r = 0;

        buf = memory_table_new(POLICY_FILE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        for (size_t i = 0; i < n_dirs; i++) {
                if (!dirs[i])
                        continue;
                r = load_dir(s, dirs[i], buf, diag);
                if (r < 0)
                        break;
                if (total <= INT_MAX - r)
                        total += r;
        }
        memory_table_free(buf, POLICY_FILE_MAX + 1);
        return r < 0 ? r : total;
}

int policy_set_load(const char *const *dirs, size_t n_dirs, PolicySet **ret, Diagnostics *diag) {
        _cleanup_(policy_set_freep) PolicySet *s = NULL;
        int r;

        r = policy_set_new(&s);
        if (r < 0)
                return r;
        r = policy_set_load_dirs(s, dirs, n_dirs, diag);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return r;
}
