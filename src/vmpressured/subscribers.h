/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Subscribe() descriptors: what vmpressure_fd(2) would have returned.
 *
 * Each subscriber is one AF_UNIX SOCK_SEQPACKET socketpair. The client's
 * end (blocking, read-only: its write side is shut down) delivers one
 * struct vmpressure_event per read(2), with the seed's level values, and
 * only for levels at or above the subscriber's threshold. The daemon's end
 * is non-blocking with a small send buffer, so a client that never reads
 * costs at most that buffer in kernel memory and never blocks the daemon:
 * a record that does not fit is dropped and counted, and the latest such
 * level is kept (one per subscriber) and written as soon as the client has
 * drained the queue. Closing the client's end (every copy of it) hangs up
 * the daemon's end and unsubscribes.
 *
 * Two layers:
 *  - the bookkeeping (add, remove, capacity, who gets which record, drops,
 *    the pending record) is pure: the writer comes in as a function, the
 *    tests pass a fake one;
 *  - subscriber_set_subscribe() and subscriber_set_attach_event() add the
 *    I/O: sockets, the peer's hang-up, the writable wake-up.
 * Nothing here allocates while delivering: the OOM path calls it.
 */

#include <systemd/sd-event.h>

#include "level.h"

#define SUBSCRIBERS_MAX_DEFAULT 4096u

/* SO_SNDBUF asked for on the daemon's end. The kernel doubles it and
 * clamps it to its minimum (~4.6 KiB); one 4-byte record costs ~770 bytes
 * of skb truesize, so about 6 records fit before a send returns EAGAIN
 * (measured by test-subscribers). */
#define SUBSCRIBER_SNDBUF_BYTES 2048

typedef struct SubscriberSet SubscriberSet;
typedef struct Subscriber Subscriber;

struct Subscriber {
        SubscriberSet *set;
        size_t idx;                     /* position in set->items */
        int fd;                         /* the daemon's end */
        Level threshold;
        Level pending;                  /* latest level that did not fit; LEVEL_NONE: nothing */
        uint64_t delivered;
        uint64_t dropped;
        sd_event_source *io;            /* NULL in pure use */
};

/* Writes one record to s. 0 when it was queued, -EAGAIN when the queue is
 * full (dropped and counted), any other negative errno when the subscriber
 * is gone (it is removed). */
typedef int (*subscriber_write_t)(Subscriber *s, uint32_t pressure, void *userdata);

struct SubscriberSet {
        Subscriber **items;
        size_t n;
        size_t n_allocated;
        size_t max;
        uint64_t delivered;             /* totals over every subscriber, past and present */
        uint64_t dropped;
        sd_event *event;                /* NULL in pure use */
        subscriber_write_t write;
        void *write_userdata;
};

/* max 0 means SUBSCRIBERS_MAX_DEFAULT. write NULL is the real socket writer. */
int subscriber_set_new(size_t max, subscriber_write_t write, void *write_userdata, SubscriberSet **ret);
SubscriberSet *subscriber_set_free(SubscriberSet *set);
DEFINE_TRIVIAL_CLEANUP_FUNC(SubscriberSet *, subscriber_set_free);

/* Pure bookkeeping. add takes ownership of fd (closed on failure too).
 * -EUSERS when max subscribers are already there, -EINVAL for a threshold
 * that is not LOW, MEDIUM or OOM, -ENOMEM. */
int subscriber_set_add(SubscriberSet *set, int fd, Level threshold, Subscriber **ret);
/* Closes the subscriber's fd and frees it. */
void subscriber_set_remove(SubscriberSet *set, Subscriber *s);
size_t subscriber_set_size(const SubscriberSet *set);

/* Offers one announced level to every subscriber: written where it passes
 * the threshold (the seed's level_passes_threshold()); for the others any
 * pending record is forgotten, since the pressure is now below their
 * threshold. Returns the number of records written. */
size_t subscriber_set_deliver(SubscriberSet *set, Level level);
/* Offers one level to one subscriber (also used right after Subscribe()). */
int subscriber_offer(Subscriber *s, Level level);
/* Writes the pending record, if any. 1 written, 0 nothing pending, -EAGAIN
 * still full, other negative errno: the subscriber is gone (not removed). */
int subscriber_flush(Subscriber *s);

/* I/O. Watches every subscriber's end on this loop from now on. */
int subscriber_set_attach_event(SubscriberSet *set, sd_event *event);

/* Makes a new subscriber for a threshold given as the seed's value
 * (VMPRESSURE_LOW, _MEDIUM or _OOM, exactly one) and offers it the current
 * level at once, so the descriptor is readable right away when the pressure
 * is already at or above the threshold. Returns the client's end in
 * *ret_client_fd (O_CLOEXEC, blocking), which the caller owns.
 * -EINVAL bad threshold, -EUSERS full, other negative errno from the kernel. */
int subscriber_set_subscribe(SubscriberSet *set, uint32_t threshold, Level current, int *ret_client_fd);

/* Raises RLIMIT_NOFILE's soft limit towards the hard one so that max
 * subscribers (two fds each while a reply is in flight) fit. Returns the new
 * soft limit, or negative errno. */
int subscribers_bump_nofile(size_t max);
