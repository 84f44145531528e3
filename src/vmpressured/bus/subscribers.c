/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <vmpressure.h>

#include "log.h"
#include "subscribers.h"

/* ---- pure bookkeeping ---------------------------------------------------- */

static int socket_write(Subscriber *s, uint32_t pressure, void *userdata);

int subscriber_set_new(size_t max, subscriber_write_t write, void *write_userdata, SubscriberSet **ret) {
        SubscriberSet *set;

        set = calloc(1, sizeof(SubscriberSet));
        if (!set)
                return -ENOMEM;
        set->max = max > 0 ? max : SUBSCRIBERS_MAX_DEFAULT;
        set->write = write ?: socket_write;
        set->write_userdata = write_userdata;
        *ret = set;
        return 0;
}

static Subscriber *subscriber_free(Subscriber *s) {
        if (!s)
                return NULL;
        sd_event_source_disable_unref(s->io);
        safe_close(s->fd);
        free(s);
        return NULL;
}

SubscriberSet *subscriber_set_free(SubscriberSet *set) {
        if (!set)
                return NULL;
        for (size_t i = 0; i < set->n; i++)
                subscriber_free(set->items[i]);
        free(set->items);
        sd_event_unref(set->event);
        free(set);
        return NULL;
}

size_t subscriber_set_size(const SubscriberSet *set) {
        return set ? set->n : 0;
}

void subscriber_set_set_limits(SubscriberSet *set, size_t max, size_t max_per_user) {
        set->max = max > 0 ? max : SUBSCRIBERS_MAX_DEFAULT;
        set->max_per_user = max_per_user;
}

size_t subscriber_set_root_reserve(const SubscriberSet *set) {
        return set->max / SUBSCRIBERS_ROOT_RESERVE_DIVISOR;
}

size_t subscriber_set_user_max(const SubscriberSet *set) {
        size_t share = set->max_per_user ?: MAX(set->max / SUBSCRIBERS_PER_USER_DIVISOR, (size_t) 1);

        return MIN(share, set->max - subscriber_set_root_reserve(set));
}

/* A walk over every subscriber: Subscribe() time only, never while delivering. */
size_t subscriber_set_count_uid(const SubscriberSet *set, uid_t uid) {
        size_t n = 0;

        for (size_t i = 0; i < set->n; i++)
                n += set->items[i]->uid == uid;
        return n;
}

int subscriber_set_admit(const SubscriberSet *set, uid_t uid) {
        if (set->n >= set->max)
                return -EUSERS;
        if (uid == 0)
                return 0;
        if (set->n >= set->max - subscriber_set_root_reserve(set))
                return -EUSERS;
        if (subscriber_set_count_uid(set, uid) >= subscriber_set_user_max(set))
                return -EDQUOT;
        return 0;
}

static int subscriber_watch(Subscriber *s);

int subscriber_set_add(SubscriberSet *set, int fd, Level threshold, uid_t uid, Subscriber **ret) {
        _cleanup_(closep) int fd_owned = fd;
        Subscriber *s;
        int r;

        if (threshold <= LEVEL_NONE || threshold >= _LEVEL_MAX)
                return -EINVAL;
        r = subscriber_set_admit(set, uid);
        if (r < 0)
                return r;
        if (set->n >= set->n_allocated) {
                /* Grows by doubling at Subscribe() time, never while delivering. */
                size_t want = MIN(MAX(set->n_allocated * 2, (size_t) 16), set->max);
                Subscriber **items = reallocarray(set->items, want, sizeof(Subscriber *));
                if (!items)
                        return -ENOMEM;
                set->items = items;
                set->n_allocated = want;
        }

        s = calloc(1, sizeof(Subscriber));
        if (!s)
                return -ENOMEM;
        *s = (Subscriber) {
                .set = set,
                .idx = set->n,
                .fd = TAKE_FD(fd_owned),
                .threshold = threshold,
                .pending = LEVEL_NONE,
                .uid = uid,
        };
        if (set->event) {
                r = subscriber_watch(s);
                if (r < 0) {
                        subscriber_free(s);
                        return r;
                }
        }
        set->items[set->n++] = s;
        if (ret)
                *ret = s;
        return 0;
}

void subscriber_set_remove(SubscriberSet *set, Subscriber *s) {
        size_t i = s->idx;

        /* Swap with the last: O(1), and deliver() walks backwards so a removal
         * during the walk never skips anyone. */
        set->items[i] = set->items[--set->n];
        set->items[i]->idx = i;
        set->items[set->n] = NULL;
        subscriber_free(s);
}

static void subscriber_set_writable_watch(Subscriber *s, bool on) {
        if (s->io)
                (void) sd_event_source_set_io_events(s->io, on ? EPOLLHUP | EPOLLOUT : EPOLLHUP);
}

/* 1 written, 0 below the threshold, -EAGAIN dropped (kept as pending),
 * other negative errno: gone. */
int subscriber_offer(Subscriber *s, Level level) {
        int r;

        if (!level_passes_threshold(level, s->threshold)) {
                /* The pressure is below what this subscriber asked for: a stale
                 * higher record must not wake it up later. */
                if (s->pending != LEVEL_NONE) {
                        s->pending = LEVEL_NONE;
                        subscriber_set_writable_watch(s, false);
                }
                return 0;
        }

        r = s->set->write(s, level_to_vmpressure(level), s->set->write_userdata);
        if (r == -EAGAIN) {
                s->dropped++;
                s->set->dropped++;
                if (s->pending == LEVEL_NONE)
                        subscriber_set_writable_watch(s, true);
                s->pending = level;
                return r;
        }
        if (r < 0)
                return r;
        s->delivered++;
        s->set->delivered++;
        if (s->pending != LEVEL_NONE) {
                /* What we just wrote is newer than what was pending. */
                s->pending = LEVEL_NONE;
                subscriber_set_writable_watch(s, false);
        }
        return 1;
}

size_t subscriber_set_deliver(SubscriberSet *set, Level level) {
        size_t written = 0;

        for (size_t i = set->n; i > 0; i--) {
                Subscriber *s = set->items[i - 1];
                int r = subscriber_offer(s, level);

                if (r > 0)
                        written++;
                else if (r < 0 && r != -EAGAIN) {
                        log_debug_errno(r, "Subscriber fd %d is gone, removing it: %m", s->fd);
                        subscriber_set_remove(set, s);
                }
        }
        return written;
}

int subscriber_flush(Subscriber *s) {
        int r;

        if (s->pending == LEVEL_NONE) {
                subscriber_set_writable_watch(s, false);
                return 0;
        }
        r = s->set->write(s, level_to_vmpressure(s->pending), s->set->write_userdata);
        if (r < 0)
                return r;
        s->pending = LEVEL_NONE;
        s->delivered++;
        s->set->delivered++;
        subscriber_set_writable_watch(s, false);
        return 1;
}

/* ---- I/O ----------------------------------------------------------------- */

static int socket_write(Subscriber *s, uint32_t pressure, void *userdata) {
        struct vmpressure_event ev = { .pressure = pressure };
        ssize_t n;

        n = send(s->fd, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n == (ssize_t) sizeof(ev))
                return 0;
        if (n >= 0)
                return -EIO;            /* SEQPACKET sends all or nothing */
        /* ENOBUFS/ENOMEM: the kernel could not get an skb (we are near OOM):
         * a drop like a full queue, not a dead subscriber. */
        if (errno == EAGAIN || errno == ENOBUFS || errno == ENOMEM)
                return -EAGAIN;
        return -errno;
}

static int on_subscriber_io(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        Subscriber *s = userdata;
        int r;

        if (revents & (EPOLLHUP | EPOLLERR)) {
                log_debug("Subscriber fd %d hung up, unsubscribing.", fd);
                subscriber_set_remove(s->set, s);
                return 0;
        }
        if (revents & EPOLLOUT) {
                r = subscriber_flush(s);
                if (r < 0 && r != -EAGAIN) {
                        log_debug_errno(r, "Subscriber fd %d is gone, removing it: %m", fd);
                        subscriber_set_remove(s->set, s);
                }
        }
        return 0;
}

static int subscriber_watch(Subscriber *s) {
        /* EPOLLHUP only: the client's write side is shut down, so our end is
         * always "readable" (EOF) and EPOLLIN would spin. The peer's close
         * (the last copy of the client's fd) raises EPOLLHUP. */
        return sd_event_add_io(s->set->event, &s->io, s->fd, EPOLLHUP, on_subscriber_io, s);
}

int subscriber_set_attach_event(SubscriberSet *set, sd_event *event) {
        int r;

        if (set->event)
                return -EBUSY;
        set->event = sd_event_ref(event);
        for (size_t i = 0; i < set->n; i++) {
                r = subscriber_watch(set->items[i]);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int make_socketpair(int *ret_ours, int *ret_theirs) {
        _cleanup_(closep) int ours = -EBADF, theirs = -EBADF;
        int pair[2], sndbuf = SUBSCRIBER_SNDBUF_BYTES, rcvbuf = 1;

        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
                return -errno;
        ours = pair[0];
        theirs = pair[1];

        /* Non-blocking on our end only: O_NONBLOCK lives in the open file
         * description, and the client's is a different one. */
        if (fcntl(ours, F_SETFL, O_NONBLOCK) < 0)
                return -errno;
        if (setsockopt(ours, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) < 0)
                return -errno;
        (void) setsockopt(ours, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
        /* The client only reads: nothing it writes can pile up in the daemon's
         * receive queue (its send fails with EPIPE). */
        if (shutdown(theirs, SHUT_WR) < 0)
                return -errno;

        *ret_ours = TAKE_FD(ours);
        *ret_theirs = TAKE_FD(theirs);
        return 0;
}

int fds_open_count(void) {
        _cleanup_(closep) int dfd = -EBADF;
        uint8_t buf[4096] __attribute__((aligned(8)));
        int n = 0;

        dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        for (;;) {
                long k = syscall(SYS_getdents64, dfd, buf, sizeof(buf));

                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                for (long off = 0; off < k;) {
                        const struct dirent64 *de = (const struct dirent64 *) (buf + off);

                        if (de->d_name[0] != '.')
                                n++;
                        off += de->d_reclen;
                }
        }
        return n - 1;           /* not dfd itself */
}

/* Whether one more subscriber leaves the reserve free under fd_limit:
 * counted, not estimated, since sd-bus, the sources and the kill path open
 * and close descriptors of their own. */
static int subscriber_set_check_fds(const SubscriberSet *set) {
        int n;

        if (set->fd_limit == 0)
                return 0;
        n = fds_open_count();
        if (n < 0)
                return n;
        if ((size_t) n + SUBSCRIBERS_FD_IN_FLIGHT + SUBSCRIBERS_FD_RESERVE > set->fd_limit)
                return -EMFILE;
        return 0;
}

int subscriber_set_subscribe(SubscriberSet *set, uint32_t threshold, uid_t uid, Level current, int *ret_client_fd) {
        _cleanup_(closep) int theirs = -EBADF;
        Subscriber *s;
        Level t;
        int ours = -EBADF, r;

        r = level_from_vmpressure(threshold, &t);
        if (r < 0)
                return -EINVAL;
        r = subscriber_set_admit(set, uid);
        if (r < 0)
                return r;
        r = subscriber_set_check_fds(set);
        if (r < 0)
                return r;

        r = make_socketpair(&ours, &theirs);
        if (r < 0)
                return r;
        r = subscriber_set_add(set, ours, t, uid, &s);  /* takes ours, also on failure */
        if (r < 0)
                return r;

        (void) subscriber_offer(s, current);
        *ret_client_fd = TAKE_FD(theirs);
        return 0;
}

size_t subscribers_nofile_needed(size_t own_fds, size_t max) {
        return own_fds + max + SUBSCRIBERS_FD_IN_FLIGHT + SUBSCRIBERS_FD_RESERVE;
}

int nofile_raise(size_t want, size_t *ret_hard) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -errno;
        if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
                want = rl.rlim_max;
        if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
                rl.rlim_cur = want;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return -errno;
        }
        if (ret_hard)
                *ret_hard = (size_t) MIN(rl.rlim_max, (rlim_t) INT32_MAX);
        return (int) MIN(rl.rlim_cur, (rlim_t) INT32_MAX);
}
