/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Keeps the path from an OOM event to the D-Bus signal off the page
 * allocator. The level engine, the subscriber writes and the journal
 * logging allocate nothing; sd-bus does call malloc() for every message it
 * builds (a signal is ~1 KiB with its header). So the heap is made to
 * serve those from pages the daemon already owns and has locked:
 *  - M_TRIM_THRESHOLD -1: free() never gives heap pages back to the kernel;
 *  - M_MMAP_THRESHOLD fixed at MEMORY_MMAP_THRESHOLD_BYTES: what sd-bus
 *    builds on the OOM path (a signal is ~1 KiB) comes from the heap, while
 *    a large message from a client (up to the bus's 32 MiB) is read into a
 *    buffer of its own mmap(), which goes back to the kernel the moment the
 *    message is freed: with trimming off, a heap that grew for it would stay
 *    resident and locked for good (20 calls of 3 MiB left the daemon 2 MiB
 *    larger at a 4 MiB threshold, nothing at 128 KiB);
 *  - M_ARENA_MAX 1: one heap, the one that holds the reserve;
 *  - a reserve of MEMORY_HEAP_RESERVE_BYTES is malloc()ed (in pieces below
 *    the mmap threshold), touched and freed: it stays at the top of the
 *    heap, and the mlockall() that follows locks it;
 *  - the stack is touched MEMORY_STACK_PREFAULT_BYTES deep, for the same
 *    reason.
 * Subscribers and reconnections allocate from the same heap; after them
 * memory_reserve_refill() tops the free heap up again, off the OOM path.
 * This is not a guarantee: a burst larger than the reserve grows the heap
 * (brk), and the kernel has to find those pages then.
 */

#include "macro.h"

/* 256 KiB: a signal sd-bus builds is about 1 KiB, so an OOM event's
 * signals (a level per scope crossed, Action, Killed) and a queue of about
 * 200 more fit; at 1 MiB the reserve alone was a third of the daemon's
 * resident memory. */
#define MEMORY_HEAP_RESERVE_BYTES   (256u * 1024u)
#define MEMORY_MMAP_THRESHOLD_BYTES (128u * 1024u)
#define MEMORY_RESERVE_PIECE_BYTES  (64u * 1024u)
/* The deepest path, the cgroup walk of a kill (about 23 KiB) under the
 * event loop and a journal record (about 5 KiB), with room to spare. */
#define MEMORY_STACK_PREFAULT_BYTES (64u * 1024u)

/* Call before mlockall(). 0, or -ENOMEM when the reserve cannot be had. */
int memory_reserve(void);
/* When less than half the reserve is free in the heap, grows it back (a
 * touched malloc() that is freed again). Not for the OOM path. 1 refilled,
 * 0 nothing to do, -ENOMEM. */
int memory_reserve_refill(void);

/* Drops the page table entries of the read-only file mappings (code and
 * read-only data of the binary and its libraries): what only start-up used
 * (configuration, policies, the dynamic linker's relocations) stays out of
 * the resident set, and what runs afterwards is faulted back from the page
 * cache, 64 KiB at a time (the kernel's fault-around). A mapping with a
 * private copy of a page (RELRO, written before it was made read-only:
 * /proc/self/pagemap tells) is left alone, so nothing is lost. Call before
 * mlockall(): locked pages cannot be dropped. Returns how many mappings
 * were dropped, or negative errno. */
int memory_drop_code_pages(void);

/* Writes a zero into every page of [p, p + bytes), which must hold zeros
 * (calloc()ed): a zeroed page fresh from the kernel is its shared zero page
 * until written, and the write that faults it in would otherwise come on
 * the OOM path. After mlockall(MCL_ONFAULT) the page stays locked. */
void memory_prefault(void *p, size_t bytes);

/* A zeroed table of its own mmap(), never in the heap: its pages are
 * faulted in (and, after mlockall(MCL_ONFAULT), locked) only where it is
 * used. From the heap, calloc() clears, so touches, every page: the
 * 120 KiB main-process table came out just under the 128 KiB mmap
 * threshold once and cost 80 KiB resident on every daemon. NULL on
 * failure; memory_table_free() takes the same size. */
void *memory_table_new(size_t bytes);
void memory_table_free(void *p, size_t bytes);

/* The machine's RAM, what /proc/meminfo calls MemTotal (sysinfo(2):
 * totalram × mem_unit, the same counter); 0 when unknown. */
uint64_t memory_total_bytes(void);
