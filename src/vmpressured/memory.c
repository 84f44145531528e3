/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <malloc.h>

#include "memory.h"

/* Not inlined, so the array really is on a deeper stack frame. */
static __attribute__((noinline)) void prefault_stack(void) {
        volatile char stack[MEMORY_STACK_PREFAULT_BYTES];

        for (size_t i = 0; i < sizeof(stack); i += 4096)
                stack[i] = 0;
}

int memory_reserve(void) {
        char *p;

        (void) mallopt(M_TRIM_THRESHOLD, -1);
        (void) mallopt(M_MMAP_THRESHOLD, (int) MEMORY_MMAP_THRESHOLD_BYTES);
        (void) mallopt(M_ARENA_MAX, 1);

        p = malloc(MEMORY_HEAP_RESERVE_BYTES);
        if (!p)
                return -ENOMEM;
        /* Touch every page; volatile so the compiler keeps the stores. */
        for (size_t i = 0; i < MEMORY_HEAP_RESERVE_BYTES; i += 4096)
                ((volatile char *) p)[i] = 1;
        free(p);

        prefault_stack();
        return 0;
}
