/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "log.h"
#include "policy-load.h"

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

/* Reads name into buf (POLICY_FILE_MAX + 1 bytes: one more tells the parser
 * the file is too large). Returns the length, or a negative errno
 * (-EBADFD: not a regular file). /dev/null reads as empty: a mask. */
static ssize_t read_policy(int dfd, const char *name, char *buf) {
        _cleanup_(closep) int fd = -EBADF;
        struct stat st;
        size_t len = 0;

        /* O_NONBLOCK: a FIFO dropped into the directory must not hang us. */
        fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
                return 0;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
        while (len < POLICY_FILE_MAX + 1) {
                ssize_t k = read(fd, buf + len, POLICY_FILE_MAX + 1 - len);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                len += (size_t) k;
        }
        return (ssize_t) len;
}

static int load_dir(PolicySet *s, const char *dir, char *buf, Diagnostics *diag) {
        _cleanup_(closep) int dfd = -EBADF;
        NameList names = {};
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
                ssize_t len = read_policy(dfd, names.names[i], buf);

                if (len == -EMFILE || len == -ENFILE) {
                        r = (int) len;
                        goto finish;
                }
                PolicyFile f = {
                        .dir = dir,
                        .filename = names.names[i],
                        .text = len >= 0 ? buf : NULL,
                        .len = len >= 0 ? (size_t) len : 0,
                        .error = len < 0 ? (int) len : 0,
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

int policy_set_load_dirs(PolicySet *s, const char *const *dirs, size_t n_dirs, Diagnostics *diag) {
        _cleanup_(freep) char *buf = NULL;
        int total = 0;

        buf = malloc(POLICY_FILE_MAX + 1);
        if (!buf)
                return -ENOMEM;
        for (size_t i = 0; i < n_dirs; i++) {
                int r;

                if (!dirs[i])
                        continue;
                r = load_dir(s, dirs[i], buf, diag);
                if (r < 0)
                        return r;
                if (total <= INT_MAX - r)
                        total += r;
        }
        return total;
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
