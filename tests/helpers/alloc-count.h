/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The log that alloc-count.so (LD_PRELOAD) writes: a file of
 * ALLOC_LOG_BYTES, mapped shared, named by $VMP_ALLOC_LOG. A header, then a
 * ring of ALLOC_LOG_ENTRIES records, one per call into the allocator (and a
 * mark for each pidfd_send_signal(…, SIGKILL, …) made through syscall(3), the
 * daemon's kill). Read by tests/integration/test-oom-path-alloc.py, which
 * knows this layout: change both together (ALLOC_LOG_VERSION).
 *
 * A record is complete when its seq is its 1-based position in the stream
 * (header next counts every record ever started): a reader takes a slot whose
 * seq is set, and knows from next how many were overwritten. */

#include <stdint.h>

#define ALLOC_LOG_MAGIC UINT64_C(0x31474f4c434f4c41)    /* "ALOCLOG1", little-endian */
#define ALLOC_LOG_VERSION 1
#define ALLOC_LOG_ENTRIES 32768
#define ALLOC_LOG_FRAMES 4

enum {
        ALLOC_KIND_MALLOC = 1,
        ALLOC_KIND_CALLOC,
        ALLOC_KIND_REALLOC,
        ALLOC_KIND_REALLOCARRAY,
        ALLOC_KIND_POSIX_MEMALIGN,
        ALLOC_KIND_ALIGNED_ALLOC,
        ALLOC_KIND_MEMALIGN,
        ALLOC_KIND_VALLOC,
        ALLOC_KIND_PVALLOC,
        ALLOC_KIND_FREE = 32,           /* not an allocation; logged to read the rest */
        ALLOC_KIND_KILL = 64,           /* pidfd_send_signal(fd, SIGKILL, …): size is the pidfd */
};

typedef struct AllocLogHeader {
        uint64_t magic;
        uint32_t version;
        uint32_t entry_bytes;
        uint64_t n_entries;
        uint64_t pid;                   /* the process that mapped it */
        uint64_t next;                  /* records started, ever (atomic) */
        uint64_t counts[128];           /* per kind, ever (atomic): the ring may wrap, these do not */
        uint8_t pad[4096 - 5 * 8 - 128 * 8];
} AllocLogHeader;

typedef struct AllocLogEntry {
        uint64_t seq;                   /* 1-based position in the stream; 0: never written */
        uint64_t t_nsec;                /* CLOCK_MONOTONIC at the call */
        uint64_t size;                  /* bytes asked for (nmemb*size for calloc) */
        uint32_t kind;
        uint32_t tid;
        uint64_t frames[ALLOC_LOG_FRAMES]; /* [0] the caller's return address; more with $VMP_ALLOC_FRAMES=1 */
} AllocLogEntry;

#define ALLOC_LOG_BYTES (sizeof(AllocLogHeader) + ALLOC_LOG_ENTRIES * sizeof(AllocLogEntry))

_Static_assert(sizeof(AllocLogHeader) == 4096, "the header is one page");
_Static_assert(sizeof(AllocLogEntry) == 64, "a record is 64 bytes");
