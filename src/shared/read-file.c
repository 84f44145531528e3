/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "read-file.h"

ssize_t pread_full(int fd, char *buf, size_t size) {
        size_t n = 0;

        while (n < size) {
                ssize_t k = pread(fd, buf + n, size - n, (off_t) n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        return (ssize_t) n;
}

ssize_t read_small_fd(int fd, char *buf, size_t size, ReadFileFlags flags) {
        /* A full buffer means the file may hold more: too large, or cut
         * one byte short of the buffer, whose last byte the NUL may need. */
        size_t want = flags & READ_FILE_TRUNCATE ? size - 1 : size;
        ssize_t n;

        /* READ_FILE_ONE_READ: what one read returns is taken as the whole
         * file. The kernel's seq_file read fills the buffer with all of a
         * text that fits, so for those texts it is. */
        if (flags & READ_FILE_ONE_READ) {
                do
                        n = pread(fd, buf, want, 0);
                while (n < 0 && errno == EINTR);
                if (n < 0)
                        n = -errno;
        } else
                n = pread_full(fd, buf, want);
        if (n < 0)
                return n;
        if ((size_t) n >= size)
                return -EFBIG;
        if (flags & READ_FILE_NUL)
                buf[n] = '\0';
        return n;
}

ssize_t read_small_file(int dirfd, const char *path, char *buf, size_t size, ReadFileFlags flags) {
        _cleanup_(closep) int fd = -EBADF;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        return read_small_fd(fd, buf, size, flags);
}
