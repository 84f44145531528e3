/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hog: touches anonymous memory 16 MiB at a time until the given number of
 * MiB (0 or no argument: until the kernel kills it), so that a guest without
 * swap runs out of memory. Prints its progress every 128 MiB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK (16UL << 20)

int main(int argc, char **argv) {
        unsigned long limit_mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
        unsigned long total = 0;

        while (limit_mib == 0 || total < (limit_mib << 20)) {
                char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (p == MAP_FAILED) {
                        perror("hog: mmap");
                        return 1;
                }
                memset(p, 0x5a, CHUNK);         /* every page, so it is really allocated */
                total += CHUNK;
                if (total % (128UL << 20) == 0)
                        fprintf(stderr, "hog: %lu MiB\n", total >> 20);
        }
        pause();
        return 0;
}
