/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The vmpressure_fd(2) ABI as proposed in the 2012 RFC (Anton Vorontsov,
 * "mm: Add VM pressure notifications"), kept bit-for-bit so that programs
 * written against the seed's man page compile and run unchanged.
 */
#ifndef _VMPRESSURE_H
#define _VMPRESSURE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The seed spreads the values, reserving room for new levels. Only the
 * order is meaningful: VMPRESSURE_LOW < VMPRESSURE_MEDIUM < VMPRESSURE_OOM. */
enum vmpressure_level {
        VMPRESSURE_LOW    = 1 << 10,
        VMPRESSURE_MEDIUM = 1 << 20,
        VMPRESSURE_OOM    = 1 << 30,
};

/* size must be sizeof(struct vmpressure_config); threshold one of the
 * vmpressure_level values: the minimum level that is delivered. */
struct vmpressure_config {
        uint32_t size;
        uint32_t threshold;
};

/* One record read(2) from the descriptor: the most recent pressure level. */
struct vmpressure_event {
        uint32_t pressure;
};

/* Creates a descriptor that becomes readable when the pressure is at or
 * above config->threshold. Fills in config->size. Uses the kernel's
 * vmpressure_fd syscall where the kernel has it, otherwise subscribes to
 * vmpressured over D-Bus. Returns the fd, or -1 with errno set. */
int vmpressure_fd(struct vmpressure_config *config);

#ifdef __cplusplus
}
#endif

#endif
