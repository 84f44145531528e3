/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small files read whole into a caller's buffer: no allocation, so the
 * sources can use it between the kernel's notification and the
 * announcement. */

#include <sys/types.h>

#include "macro.h"

/* Reads fd from offset 0 (pread(2): the descriptor's own offset is left
 * alone, so a kept descriptor is read again the same way) until end of file
 * or size bytes. The length read (size: the file may hold more), or
 * negative errno. EINTR is retried. For regular files, /proc, sysfs,
 * cgroupfs and /dev/null; not for pipes. */
ssize_t pread_full(int fd, char *buf, size_t size);

typedef enum ReadFileFlags {
        READ_FILE_NUL      = 1 << 0,    /* write a NUL after what was read */
        READ_FILE_TRUNCATE = 1 << 1,    /* what does not fit is left unread instead of -EFBIG */
        /* One pread(2), not a second one to see the end of the file: for
         * the kernel's seq_file texts (/proc/<pid>/stat, oom_score_adj),
         * whose first read returns all of the text that fits. It saves a
         * system call a file where they are read by the thousand. */
        READ_FILE_ONE_READ = 1 << 2,
} ReadFileFlags;

/* Reads fd whole into buf (from offset 0, as pread_full()): at most
 * size - 1 bytes, so that a full buffer says "more" and the NUL has room.
 * The length (without the NUL), or negative errno: -EFBIG for a file of
 * size bytes or more, unless READ_FILE_TRUNCATE. size must be at least 1. */
ssize_t read_small_fd(int fd, char *buf, size_t size, ReadFileFlags flags);
/* The same for path (relative to dirfd, or AT_FDCWD), opened with
 * O_RDONLY, O_CLOEXEC, O_NOCTTY and O_NONBLOCK (a FIFO must not hang the
 * reader). */
ssize_t read_small_file(int dirfd, const char *path, char *buf, size_t size, ReadFileFlags flags);
