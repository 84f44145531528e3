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

#include <sys/types.h>
#include <systemd/sd-event.h>

#include "level.h"

#define SUBSCRIBERS_MAX_DEFAULT 4096u
/* Who may hold how many, so that one user cannot take every slot: root may
 * use all of MaxSubscribers=; the last max/SUBSCRIBERS_ROOT_RESERVE_DIVISOR
 * slots (256 of 4,096) are root's alone; every other user holds at most
 * MaxSubscribersPerUser=, by default max/SUBSCRIBERS_PER_USER_DIVISOR
 * (1,024 of 4,096), and never more than the slots outside root's reserve. */
#define SUBSCRIBERS_ROOT_RESERVE_DIVISOR 16u
#define SUBSCRIBERS_PER_USER_DIVISOR 4u

/* Descriptors Subscribe() never takes, so that the OOM path and the bus
 * always have some: a kill opens a pidfd, one directory fd per level of the
 * cgroup walk (about 10 deep in systemd's layouts) and cgroup.procs, and
 * reads /proc/<pid>/stat; sd-bus drops its connection when it cannot
 * receive the (up to 16, the system bus's max_message_unix_fds) fds of a
 * message, and a reconnection needs a socket; a cgroup that comes back is
 * watched again with up to 6 (memcg eventfds and control files, PSI).
 * About 40 in all; 64 leaves room. */
#define SUBSCRIBERS_FD_RESERVE 64u
/* While a Subscribe() is answered: the socketpair and the reply's own dup,
 * and up to SUBSCRIBERS_REPLIES_QUEUED_MAX replies (each holding a dup)
 * queued behind a slow dbus-daemon. */
#define SUBSCRIBERS_REPLIES_QUEUED_MAX 16u
#define SUBSCRIBERS_FD_IN_FLIGHT (3u + SUBSCRIBERS_REPLIES_QUEUED_MAX)

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
        uid_t uid;                      /* who asked for it (the bus's word) */
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
        size_t max_per_user;            /* 0: max / SUBSCRIBERS_PER_USER_DIVISOR */
        size_t fd_limit;                /* RLIMIT_NOFILE's soft limit to keep the reserve under; 0: none */
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

/* The limits in force (Reload() may change them); max 0 means
 * SUBSCRIBERS_MAX_DEFAULT, max_per_user 0 the default share. */
void subscriber_set_set_limits(SubscriberSet *set, size_t max, size_t max_per_user);
/* Slots only root may take, and what any other user may hold at most. */
size_t subscriber_set_root_reserve(const SubscriberSet *set);
size_t subscriber_set_user_max(const SubscriberSet *set);
size_t subscriber_set_count_uid(const SubscriberSet *set, uid_t uid);
/* Whether uid may have one more: 0, -EUSERS when the set is full (for a
 * user other than root: when only root's reserve is left), -EDQUOT when uid
 * holds its share already. */
int subscriber_set_admit(const SubscriberSet *set, uid_t uid);

/* Pure bookkeeping. add takes ownership of fd (closed on failure too).
 * -EUSERS or -EDQUOT as subscriber_set_admit() says, -EINVAL for a
 * threshold that is not LOW, MEDIUM or OOM, -ENOMEM. */
int subscriber_set_add(SubscriberSet *set, int fd, Level threshold, uid_t uid, Subscriber **ret);
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

/* Makes a new subscriber of uid for a threshold given as the seed's value
 * (VMPRESSURE_LOW, _MEDIUM or _OOM, exactly one) and offers it the current
 * level at once, so the descriptor is readable right away when the pressure
 * is already at or above the threshold. Returns the client's end in
 * *ret_client_fd (O_CLOEXEC, blocking), which the caller owns.
 * -EINVAL bad threshold, -EUSERS full, -EDQUOT uid's share is used,
 * -EMFILE when it would leave fewer than SUBSCRIBERS_FD_RESERVE descriptors
 * free under fd_limit, other negative errno from the kernel. */
int subscriber_set_subscribe(SubscriberSet *set, uint32_t threshold, uid_t uid, Level current, int *ret_client_fd);

/* Descriptors open in this process now (getdents64 on /proc/self/fd into a
 * stack buffer: nothing allocated; ~0.1 ms per 1,000 fds). Negative errno. */
int fds_open_count(void);

/* RLIMIT_NOFILE that a daemon holding own_fds descriptors of its own needs
 * for max subscribers, their in-flight descriptors and the reserve. */
size_t subscribers_nofile_needed(size_t own_fds, size_t max);
/* Raises RLIMIT_NOFILE's soft limit, up to the hard one, to want. Returns
 * the soft limit now in force (which may be below want when the hard limit
 * is), or negative errno. *ret_hard: the hard limit. */
int nofile_raise(size_t want, size_t *ret_hard);
