/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>

#include "memory.h"

/* Not inlined, so the array really is on a deeper stack frame. */
static __attribute__((noinline)) void prefault_stack(void) {
        volatile char stack[MEMORY_STACK_PREFAULT_BYTES];

        for (size_t i = 0; i < sizeof(stack); i += 4096)
                stack[i] = 0;
}

/* Freed right away: with trimming off, the blocks stay in the heap, free
 * and resident (and locked, once mlockall() has run). In pieces below the
 * mmap threshold, so that they come from the heap and not from an mmap()
 * of their own; adjacent, they merge into one free block again. */
static int heap_touch(size_t bytes) {
        void *pieces[MEMORY_HEAP_RESERVE_BYTES / MEMORY_RESERVE_PIECE_BYTES] = {};
        size_t n = MIN(bytes / MEMORY_RESERVE_PIECE_BYTES, ELEMENTSOF(pieces));
        int r = 0;

        for (size_t i = 0; i < n; i++) {
                pieces[i] = malloc(MEMORY_RESERVE_PIECE_BYTES);
                if (!pieces[i]) {
                        r = -ENOMEM;
                        break;
                }
                /* Every page; volatile so the compiler keeps the stores. */
                for (size_t k = 0; k < MEMORY_RESERVE_PIECE_BYTES; k += 4096)
                        ((volatile char *) pieces[i])[k] = 1;
        }
        for (size_t i = n; i > 0; i--)
                free(pieces[i - 1]);
        return r;
}

int memory_reserve(void) {
        int r;

        (void) mallopt(M_TRIM_THRESHOLD, -1);
        (void) mallopt(M_MMAP_THRESHOLD, (int) MEMORY_MMAP_THRESHOLD_BYTES);
        (void) mallopt(M_ARENA_MAX, 1);

        r = heap_touch(MEMORY_HEAP_RESERVE_BYTES);
        if (r < 0)
                return r;
        prefault_stack();
        return 0;
}

int memory_reserve_refill(void) {
        int r;

        /* mallinfo2() walks the bins: a few µs, fine at Subscribe() time. */
        if (mallinfo2().fordblks >= MEMORY_HEAP_RESERVE_BYTES / 2)
                return 0;
        r = heap_touch(MEMORY_HEAP_RESERVE_BYTES);
        return r < 0 ? r : 1;
}

/* One line of /proc/self/maps: "start-end perms offset dev inode path".
 * Read-only private mappings of files: code (r-x) and read-only data (r--). */
static bool maps_line_is_file_ro(const char *line, uintptr_t *ret_start, uintptr_t *ret_end) {
        unsigned long long start, end, ino;
        char perms[8];

        if (sscanf(line, "%llx-%llx %7s %*s %*s %llu", &start, &end, perms, &ino) != 4)
                return false;
        /* inode 0: [vdso], [stack], anonymous mappings. */
        if ((!streq(perms, "r-xp") && !streq(perms, "r--p")) || ino == 0)
                return false;
        *ret_start = (uintptr_t) start;
        *ret_end = (uintptr_t) end;
        return true;
}

#define PAGEMAP_PRESENT (UINT64_C(1) << 63)
#define PAGEMAP_FILE    (UINT64_C(1) << 61)     /* file page or shared anonymous */

/* Whether every present page of [start, end) is still the file's own page:
 * a read-only mapping can hold private copies (RELRO: relocated, then made
 * read-only), and dropping those would lose what was written there. */
static bool range_is_clean(int pagemap_fd, uintptr_t start, uintptr_t end) {
        uint64_t e[512];

        for (uintptr_t a = start; a < end;) {
                size_t n = MIN((size_t) ((end - a) / 4096), ELEMENTSOF(e));
                ssize_t k = pread(pagemap_fd, e, n * sizeof(e[0]), (off_t) (a / 4096 * sizeof(e[0])));

                if (k <= 0)
                        return false;
                for (size_t i = 0; i < (size_t) k / sizeof(e[0]); i++)
                        if ((e[i] & PAGEMAP_PRESENT) && !(e[i] & PAGEMAP_FILE))
                                return false;
                a += (uintptr_t) k / sizeof(e[0]) * 4096;
        }
        return true;
}

int memory_drop_code_pages(void) {
        _cleanup_(closep) int fd = -EBADF, pagemap_fd = -EBADF;
        char buf[16384];
        size_t have = 0;
        int n = 0;

        fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
        if (pagemap_fd < 0)
                return -errno;
        for (;;) {
                ssize_t k = read(fd, buf + have, sizeof(buf) - 1 - have);
                char *line, *nl;

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                have += (size_t) k;
                buf[have] = '\0';
                for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
                        uintptr_t start, end;

                        *nl = '\0';
                        if (maps_line_is_file_ro(line, &start, &end) && range_is_clean(pagemap_fd, start, end) &&
                            madvise((void *) start, end - start, MADV_DONTNEED) == 0)
                                n++;
                }
                /* The partial last line moves to the front for the next read. */
                have = strlen(line);
                memmove(buf, line, have);
                if (k == 0 || have == sizeof(buf) - 1)
                        return n;
        }
}

void memory_prefault(void *p, size_t bytes) {
        for (size_t i = 0; i < bytes; i += 4096)
                ((volatile char *) p)[i] = 0;
        if (bytes > 0)
                ((volatile char *) p)[bytes - 1] = 0;
}

void *memory_table_new(size_t bytes) {
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        return p == MAP_FAILED ? NULL : p;
}

void memory_table_free(void *p, size_t bytes) {
        if (p)
                (void) munmap(p, bytes);
}

uint64_t memory_total_bytes(void) {
        struct sysinfo si;

        if (sysinfo(&si) < 0)
                return 0;
        return (uint64_t) si.totalram * (si.mem_unit ?: 1);
}
