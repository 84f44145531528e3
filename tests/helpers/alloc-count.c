/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alloc-count.so: LD_PRELOAD=…/alloc-count.so VMP_ALLOC_LOG=FILE vmpressured …
 *
 * Counts every call into the allocator, and when it was made, so that a
 * test can say how many fell between two instants (test-oom-path-alloc.py:
 * between the kernel's notification and the kill, which must be none).
 * malloc, calloc, realloc, reallocarray, posix_memalign, aligned_alloc,
 * memalign, valloc and pvalloc (and free, as a record apart) are forwarded
 * to the next definition (glibc's, dlsym(RTLD_NEXT)) after a record is
 * written into a ring in a shared file mapping (alloc-count.h); glibc's own
 * strdup(), asprintf(), open_memstream()… call malloc() through its PLT,
 * which is this one. syscall(3) is forwarded too, to mark the daemon's kill:
 * pidfd_send_signal(…, SIGKILL, …) is made through it (action-internal.h).
 *
 * Nothing here allocates: the log is a file mapped once, a record is a
 * clock_gettime() (vDSO), an atomic add and stores, so it is as safe in a
 * signal handler as the allocator it wraps. dlsym() may calloc() (its
 * error state) before the real functions are known: those few calls are
 * served from a static arena, whose blocks free() ignores. */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#include "alloc-count.h"

#define EXPORT __attribute__((visibility("default")))

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);
static void *(*real_valloc)(size_t);
static void *(*real_pvalloc)(size_t);
static long (*real_syscall)(long, ...);

static AllocLogHeader *log_header;      /* NULL: not logging */
static AllocLogEntry *log_entries;
static int log_state;                   /* 0 not tried, 1 opening, 2 done (atomic) */
static bool want_frames;
static int resolving;                   /* dlsym() in progress (atomic) */

/* Set while a record is made, so that what the record itself calls
 * (_Unwind_Backtrace) is not recorded again. Initial-exec: a preloaded
 * library's TLS is static, reaching it allocates nothing. */
static __thread int in_hook __attribute__((tls_model("initial-exec")));

/* ---- the bootstrap arena, for dlsym()'s calls before the real functions ---- */

static _Alignas(16) char arena[16384];
static size_t arena_used;               /* atomic */

typedef struct ArenaBlock {
        size_t size;
        size_t pad;                     /* keeps the block 16-byte aligned */
} ArenaBlock;

static void *arena_alloc(size_t size) {
        size_t need = sizeof(ArenaBlock) + ((size + 15) & ~(size_t) 15);
        size_t at = __atomic_fetch_add(&arena_used, need, __ATOMIC_RELAXED);
        ArenaBlock *b;

        if (at + need > sizeof(arena))
                return NULL;            /* dlsym() copes with ENOMEM for its error text */
        b = (ArenaBlock *) (arena + at);
        b->size = size;
        return b + 1;                   /* zero: the arena is static */
}

static bool in_arena(const void *p) {
        return (const char *) p >= arena && (const char *) p < arena + sizeof(arena);
}

static void resolve(void) {
        if (__atomic_exchange_n(&resolving, 1, __ATOMIC_ACQ_REL))
                return;
        real_calloc = dlsym(RTLD_NEXT, "calloc");
        real_malloc = dlsym(RTLD_NEXT, "malloc");
        real_realloc = dlsym(RTLD_NEXT, "realloc");
        real_free = dlsym(RTLD_NEXT, "free");
        real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
        real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
        real_memalign = dlsym(RTLD_NEXT, "memalign");
        real_valloc = dlsym(RTLD_NEXT, "valloc");
        real_pvalloc = dlsym(RTLD_NEXT, "pvalloc");
        real_syscall = dlsym(RTLD_NEXT, "syscall");
        __atomic_store_n(&resolving, 0, __ATOMIC_RELEASE);
}

static bool ready(void) {
        if (__atomic_load_n(&real_syscall, __ATOMIC_ACQUIRE))
                return true;
        if (!__atomic_load_n(&resolving, __ATOMIC_ACQUIRE))
                resolve();
        return __atomic_load_n(&real_syscall, __ATOMIC_ACQUIRE) != NULL;
}

/* ---- the log ---- */

/* Maps $VMP_ALLOC_LOG (made and sized here when missing). Called from the
 * constructor, and from the first record if an allocation comes before it
 * (another library's constructor): open(), ftruncate() and mmap() are
 * system calls, nothing that allocates. */
static void log_open(void) {
        const char *path, *frames;
        void *p;
        int fd, expected = 0;

        if (!__atomic_compare_exchange_n(&log_state, &expected, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return;
        path = getenv("VMP_ALLOC_LOG");
        if (!path || !*path)
                goto done;
        frames = getenv("VMP_ALLOC_FRAMES");
        want_frames = frames && strcmp(frames, "1") == 0;
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
                goto done;
        if (ftruncate(fd, (off_t) ALLOC_LOG_BYTES) < 0) {
                close(fd);
                goto done;
        }
        p = mmap(NULL, ALLOC_LOG_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED)
                goto done;
        log_entries = (AllocLogEntry *) ((char *) p + sizeof(AllocLogHeader));
        *(AllocLogHeader *) p = (AllocLogHeader) {
                .magic = 0,
                .version = ALLOC_LOG_VERSION,
                .entry_bytes = sizeof(AllocLogEntry),
                .n_entries = ALLOC_LOG_ENTRIES,
                .pid = (uint64_t) getpid(),
        };
        /* The magic last: a reader that sees it sees the rest. */
        __atomic_store_n(&((AllocLogHeader *) p)->magic, ALLOC_LOG_MAGIC, __ATOMIC_RELEASE);
        __atomic_store_n(&log_header, (AllocLogHeader *) p, __ATOMIC_RELEASE);
done:
        __atomic_store_n(&log_state, 2, __ATOMIC_RELEASE);
}

/* The callers above frames[0]: the walk skips this library's frames up to
 * the one that returns to frames[0], and takes the next ones. */
typedef struct Frames {
        uint64_t *frames;
        int n;                          /* 0: frames[0] not passed yet */
} Frames;

static _Unwind_Reason_Code frame_one(struct _Unwind_Context *ctx, void *userdata) {
        Frames *f = userdata;
        uint64_t ip = (uint64_t) _Unwind_GetIP(ctx);

        if (f->n == 0) {
                if (ip == f->frames[0])
                        f->n = 1;
                return _URC_NO_REASON;
        }
        f->frames[f->n++] = ip;
        return f->n < ALLOC_LOG_FRAMES ? _URC_NO_REASON : _URC_END_OF_STACK;
}

static __attribute__((noinline)) void record(uint32_t kind, uint64_t size, void *caller) {
        AllocLogHeader *h;
        AllocLogEntry *e;
        struct timespec ts;
        uint64_t seq;

        if (in_hook)
                return;
        if (__atomic_load_n(&log_state, __ATOMIC_ACQUIRE) == 0)
                log_open();
        h = __atomic_load_n(&log_header, __ATOMIC_ACQUIRE);
        if (!h)
                return;
        in_hook = 1;
        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        seq = __atomic_add_fetch(&h->next, 1, __ATOMIC_ACQ_REL);
        if (kind < 128)
                __atomic_add_fetch(&h->counts[kind], 1, __ATOMIC_RELAXED);
        e = &log_entries[(seq - 1) % ALLOC_LOG_ENTRIES];
        __atomic_store_n(&e->seq, 0, __ATOMIC_RELAXED);
        e->t_nsec = (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
        e->size = size;
        e->kind = kind;
        e->tid = (uint32_t) gettid();
        memset(e->frames, 0, sizeof(e->frames));
        e->frames[0] = (uint64_t) (uintptr_t) caller;
        if (want_frames) {
                Frames f = { .frames = e->frames };

                (void) _Unwind_Backtrace(frame_one, &f);
        }
        __atomic_store_n(&e->seq, seq, __ATOMIC_RELEASE);
        in_hook = 0;
}

static __attribute__((constructor)) void alloc_count_init(void) {
        (void) ready();
        log_open();
}

/* ---- the interposed functions ---- */

EXPORT void *malloc(size_t size) {
        if (!ready())
                return arena_alloc(size);
        record(ALLOC_KIND_MALLOC, size, __builtin_return_address(0));
        return real_malloc(size);
}

EXPORT void *calloc(size_t nmemb, size_t size) {
        size_t bytes;

        if (__builtin_mul_overflow(nmemb, size, &bytes))
                bytes = SIZE_MAX;
        if (!ready())
                return bytes == SIZE_MAX ? NULL : arena_alloc(bytes);
        record(ALLOC_KIND_CALLOC, bytes, __builtin_return_address(0));
        return real_calloc(nmemb, size);
}

static void *realloc_as(uint32_t kind, void *p, size_t size, void *caller) {
        void *q;

        if (!ready() || in_arena(p)) {
                /* Out of the arena (or before the real ones): a copy. */
                size_t old = p ? ((ArenaBlock *) p - 1)->size : 0;

                q = ready() ? (record(kind, size, caller), real_malloc(size)) : arena_alloc(size);
                if (q && p)
                        memcpy(q, p, old < size ? old : size);
                return q;
        }
        record(kind, size, caller);
        return real_realloc(p, size);
}

EXPORT void *realloc(void *p, size_t size) {
        return realloc_as(ALLOC_KIND_REALLOC, p, size, __builtin_return_address(0));
}

/* Not forwarded to glibc's, which calls realloc() through the PLT, that is
 * the one above: it would be counted twice. */
EXPORT void *reallocarray(void *p, size_t nmemb, size_t size) {
        size_t bytes;

        if (__builtin_mul_overflow(nmemb, size, &bytes)) {
                errno = ENOMEM;
                return NULL;
        }
        return realloc_as(ALLOC_KIND_REALLOCARRAY, p, bytes, __builtin_return_address(0));
}

EXPORT void free(void *p) {
        if (!p || in_arena(p))
                return;
        if (!ready())
                return;         /* cannot happen: p came from the real malloc */
        record(ALLOC_KIND_FREE, 0, __builtin_return_address(0));
        real_free(p);
}

EXPORT int posix_memalign(void **ret, size_t alignment, size_t size) {
        if (!ready())
                return ENOMEM;
        record(ALLOC_KIND_POSIX_MEMALIGN, size, __builtin_return_address(0));
        return real_posix_memalign(ret, alignment, size);
}

EXPORT void *aligned_alloc(size_t alignment, size_t size) {
        if (!ready())
                return NULL;
        record(ALLOC_KIND_ALIGNED_ALLOC, size, __builtin_return_address(0));
        return real_aligned_alloc(alignment, size);
}

EXPORT void *memalign(size_t alignment, size_t size) {
        if (!ready())
                return NULL;
        record(ALLOC_KIND_MEMALIGN, size, __builtin_return_address(0));
        return real_memalign(alignment, size);
}

EXPORT void *valloc(size_t size) {
        if (!ready())
                return NULL;
        record(ALLOC_KIND_VALLOC, size, __builtin_return_address(0));
        return real_valloc(size);
}

EXPORT void *pvalloc(size_t size) {
        if (!ready())
                return NULL;
        record(ALLOC_KIND_PVALLOC, size, __builtin_return_address(0));
        return real_pvalloc(size);
}

/* Six arguments are taken whatever the call has: on x86-64 (and every ABI
 * glibc's syscall() supports) the extra ones are registers read, not
 * memory, and the kernel ignores them. */
EXPORT long syscall(long nr, ...) {
        long a[6];
        va_list ap;

        va_start(ap, nr);
        for (size_t i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (!ready()) {
                errno = ENOSYS;
                return -1;
        }
        if (nr == SYS_pidfd_send_signal && a[1] == SIGKILL)
                record(ALLOC_KIND_KILL, (uint64_t) a[0], __builtin_return_address(0));
        return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
