/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Subscribe() bookkeeping: the pure part with a fake writer (who gets
 * which record, drops, the pending record, capacity, removal while
 * delivering), then the real socketpairs on a real sd-event loop (queue
 * depth, the writable wake-up, hang-up). */

#include <poll.h>
#include <sys/socket.h>
#include <vmpressure.h>

#include "subscribers.h"
#include "tests.h"

#define FAKE_MAX 16

/* The fake writer: per subscriber (by threshold slot in a table) what it
 * got, and what the next write returns. Subscribers are told apart by
 * their fd, which the tests set to distinct negative numbers (closing a
 * negative fd is a no-op). */
typedef struct Fake {
        int result[FAKE_MAX];           /* 0, -EAGAIN, -EPIPE */
        uint32_t last[FAKE_MAX];
        unsigned writes[FAKE_MAX];
} Fake;

static unsigned slot(const Subscriber *s) {
        return (unsigned) (-s->fd) % FAKE_MAX;
}

static int fake_write(Subscriber *s, uint32_t pressure, void *userdata) {
        Fake *f = userdata;
        unsigned i = slot(s);

        if (f->result[i] < 0)
                return f->result[i];
        f->last[i] = pressure;
        f->writes[i]++;
        return 0;
}

static void test_add_remove_capacity(void) {
        SubscriberSet *set = NULL;
        Subscriber *a, *b, *c;
        Fake f = {};

        CHECK_EQ_INT(subscriber_set_new(3, fake_write, &f, &set), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -1, LEVEL_NONE, 0, NULL), -EINVAL);     /* no level is not a threshold */
        CHECK_EQ_INT(subscriber_set_add(set, -1, _LEVEL_MAX, 0, NULL), -EINVAL);
        CHECK_EQ_INT(subscriber_set_add(set, -1, LEVEL_LOW, 0, &a), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -2, LEVEL_MEDIUM, 0, &b), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -3, LEVEL_OOM, 0, &c), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -4, LEVEL_LOW, 0, NULL), -EUSERS);       /* full */
        CHECK_EQ_INT(subscriber_set_size(set), 3);

        subscriber_set_remove(set, a);                  /* the first: the last moves into its place */
        CHECK_EQ_INT(subscriber_set_size(set), 2);
        CHECK(set->items[0] == c && c->idx == 0);
        CHECK(set->items[1] == b && b->idx == 1);
        CHECK_EQ_INT(subscriber_set_add(set, -4, LEVEL_LOW, 0, NULL), 0);             /* room again */
        subscriber_set_free(set);

        /* 0 is the default maximum. */
        CHECK_EQ_INT(subscriber_set_new(0, fake_write, &f, &set), 0);
        CHECK_EQ_INT(set->max, SUBSCRIBERS_MAX_DEFAULT);
        subscriber_set_free(set);
}

/* The seed's threshold semantics: a record when level >= threshold, with
 * the seed's values; nothing at all for "no pressure". */
static void test_thresholds(void) {
        SubscriberSet *set = NULL;
        Fake f = {};

        CHECK_EQ_INT(subscriber_set_new(0, fake_write, &f, &set), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -1, LEVEL_LOW, 0, NULL), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -2, LEVEL_MEDIUM, 0, NULL), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -3, LEVEL_OOM, 0, NULL), 0);

        CHECK_EQ_INT(subscriber_set_deliver(set, LEVEL_LOW), 1);
        CHECK_EQ_U64(f.last[1], VMPRESSURE_LOW);
        CHECK_EQ_INT(f.writes[2] + f.writes[3], 0);

        CHECK_EQ_INT(subscriber_set_deliver(set, LEVEL_MEDIUM), 2);
        CHECK_EQ_U64(f.last[1], VMPRESSURE_MEDIUM);
        CHECK_EQ_U64(f.last[2], VMPRESSURE_MEDIUM);
        CHECK_EQ_INT(f.writes[3], 0);

        CHECK_EQ_INT(subscriber_set_deliver(set, LEVEL_OOM), 3);
        CHECK_EQ_U64(f.last[1], VMPRESSURE_OOM);
        CHECK_EQ_U64(f.last[2], VMPRESSURE_OOM);
        CHECK_EQ_U64(f.last[3], VMPRESSURE_OOM);

        CHECK_EQ_INT(subscriber_set_deliver(set, LEVEL_NONE), 0);
        CHECK_EQ_INT(f.writes[1], 3);
        CHECK_EQ_INT(f.writes[2], 2);
        CHECK_EQ_INT(f.writes[3], 1);
        CHECK_EQ_U64(set->delivered, 6);
        CHECK_EQ_U64(set->dropped, 0);
        subscriber_set_free(set);
}

/* A full queue: dropped and counted, the latest level kept (one), written
 * by flush() once there is room, and forgotten when the pressure falls
 * below the threshold meanwhile. */
static void test_full_queue(void) {
        SubscriberSet *set = NULL;
        Subscriber *s, *t;
        Fake f = {};

        CHECK_EQ_INT(subscriber_set_new(0, fake_write, &f, &set), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -1, LEVEL_LOW, 0, &s), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -2, LEVEL_MEDIUM, 0, &t), 0);

        f.result[1] = -EAGAIN;
        CHECK_EQ_INT(subscriber_set_deliver(set, LEVEL_MEDIUM), 1);     /* t got it, s did not */
        CHECK_EQ_INT(s->pending, LEVEL_MEDIUM);
        CHECK_EQ_U64(s->dropped, 1);
        CHECK_EQ_INT(subscriber_set_deliver(set, LEVEL_OOM), 1);
        CHECK_EQ_INT(s->pending, LEVEL_OOM);                            /* the latest, not a queue */
        CHECK_EQ_U64(s->dropped, 2);
        CHECK_EQ_U64(set->dropped, 2);
        CHECK_EQ_INT(subscriber_set_size(set), 2);                      /* a full queue is not a dead client */

        CHECK_EQ_INT(subscriber_flush(s), -EAGAIN);                     /* still full */
        CHECK_EQ_INT(s->pending, LEVEL_OOM);
        f.result[1] = 0;
        CHECK_EQ_INT(subscriber_flush(s), 1);
        CHECK_EQ_U64(f.last[1], VMPRESSURE_OOM);
        CHECK_EQ_INT(s->pending, LEVEL_NONE);
        CHECK_EQ_INT(subscriber_flush(s), 0);                           /* nothing left */

        /* Pending MEDIUM for a MEDIUM subscriber, then the pressure falls to
         * LOW: the stale MEDIUM must not be written later. */
        f.result[2] = -EAGAIN;
        CHECK_EQ_INT(subscriber_offer(t, LEVEL_MEDIUM), -EAGAIN);
        CHECK_EQ_INT(t->pending, LEVEL_MEDIUM);
        CHECK_EQ_INT(subscriber_offer(t, LEVEL_LOW), 0);
        CHECK_EQ_INT(t->pending, LEVEL_NONE);
        f.result[2] = 0;
        CHECK_EQ_INT(subscriber_flush(t), 0);

        /* Pending, then room and a newer level: written, pending cleared. */
        f.result[2] = -EAGAIN;
        CHECK_EQ_INT(subscriber_offer(t, LEVEL_MEDIUM), -EAGAIN);
        f.result[2] = 0;
        CHECK_EQ_INT(subscriber_offer(t, LEVEL_OOM), 1);
        CHECK_EQ_INT(t->pending, LEVEL_NONE);
        CHECK_EQ_U64(f.last[2], VMPRESSURE_OOM);
        subscriber_set_free(set);
}

/* Dead subscribers are removed while delivering, and nobody is skipped. */
static void test_gone_during_deliver(void) {
        SubscriberSet *set = NULL;
        Fake f = {};

        CHECK_EQ_INT(subscriber_set_new(0, fake_write, &f, &set), 0);
        for (int i = 1; i <= 6; i++)
                CHECK_EQ_INT(subscriber_set_add(set, -i, LEVEL_LOW, 0, NULL), 0);
        f.result[1] = -EPIPE;
        f.result[3] = -ECONNRESET;
        f.result[6] = -EPIPE;
        CHECK_EQ_INT(subscriber_set_deliver(set, LEVEL_LOW), 3);
        CHECK_EQ_INT(subscriber_set_size(set), 3);
        CHECK_EQ_INT(f.writes[2] + f.writes[4] + f.writes[5], 3);
        for (size_t i = 0; i < set->n; i++)
                CHECK_EQ_INT(set->items[i]->idx, i);
        subscriber_set_free(set);
}

static bool readable(int fd, int timeout_ms) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

static uint32_t read_record(int fd) {
        struct vmpressure_event ev = {};
        char big[64];
        ssize_t n;

        /* A bigger buffer still gets exactly one record: SOCK_SEQPACKET. */
        n = read(fd, big, sizeof(big));
        CHECK_EQ_INT(n, sizeof(ev));
        if (n == (ssize_t) sizeof(ev))
                memcpy(&ev, big, sizeof(ev));
        return ev.pressure;
}

static void run_loop(sd_event *e) {
        for (int i = 0; i < 10; i++)
                (void) sd_event_run(e, 0);
}

static void test_real_sockets(void) {
        SubscriberSet *set = NULL;
        sd_event *e = NULL;
        int low = -1, oom = -1, fd = -1;
        unsigned queued = 0;

        CHECK_EQ_INT(sd_event_new(&e), 0);
        CHECK_EQ_INT(subscriber_set_new(2, NULL, NULL, &set), 0);
        CHECK_EQ_INT(subscriber_set_attach_event(set, e), 0);

        /* Exactly one of the seed's values. */
        CHECK_EQ_INT(subscriber_set_subscribe(set, 0, 0, LEVEL_NONE, &fd), -EINVAL);
        CHECK_EQ_INT(subscriber_set_subscribe(set, 5, 0, LEVEL_NONE, &fd), -EINVAL);
        CHECK_EQ_INT(subscriber_set_subscribe(set, VMPRESSURE_LOW | VMPRESSURE_MEDIUM, 0, LEVEL_NONE, &fd), -EINVAL);
        CHECK_EQ_INT(subscriber_set_size(set), 0);

        /* Subscribing while the pressure is MEDIUM: readable at once for LOW,
         * not for OOM. */
        CHECK_EQ_INT(subscriber_set_subscribe(set, VMPRESSURE_LOW, 0, LEVEL_MEDIUM, &low), 0);
        CHECK_EQ_INT(subscriber_set_subscribe(set, VMPRESSURE_OOM, 0, LEVEL_MEDIUM, &oom), 0);
        CHECK_EQ_INT(subscriber_set_subscribe(set, VMPRESSURE_OOM, 0, LEVEL_NONE, &fd), -EUSERS);
        CHECK(readable(low, 0));
        CHECK_EQ_U64(read_record(low), VMPRESSURE_MEDIUM);
        CHECK(!readable(oom, 0));
        CHECK(!readable(low, 0));

        /* The client's end is read-only. */
        CHECK(send(low, "x", 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EPIPE);

        /* A client that does not read: the queue holds a few records, then
         * drops are counted and the daemon never blocks. */
        for (int i = 0; i < 1000 && set->items[0]->dropped == 0; i++)
                if (subscriber_set_deliver(set, LEVEL_LOW) > 0)
                        queued++;
        fprintf(stderr, "queue depth at SO_SNDBUF=%d: %u records\n", SUBSCRIBER_SNDBUF_BYTES, queued);
        CHECK(queued >= 2 && queued <= 64);
        CHECK_EQ_U64(set->items[0]->dropped, 1);
        CHECK(!readable(oom, 0));                       /* LOW never reaches an OOM subscriber */
        CHECK_EQ_INT(subscriber_set_deliver(set, LEVEL_OOM), 1);       /* the OOM one, the LOW one is full */
        CHECK_EQ_U64(read_record(oom), VMPRESSURE_OOM);

        /* The client drains its queue: the loop sees the end writable and
         * writes the latest level that did not fit (OOM), once. */
        for (unsigned i = 0; i < queued; i++)
                CHECK_EQ_U64(read_record(low), VMPRESSURE_LOW);
        run_loop(e);
        CHECK(readable(low, 100));
        CHECK_EQ_U64(read_record(low), VMPRESSURE_OOM);
        run_loop(e);
        CHECK(!readable(low, 0));

        /* Closing the client's end unsubscribes. */
        CHECK_EQ_INT(subscriber_set_size(set), 2);
        close(low);
        run_loop(e);
        CHECK_EQ_INT(subscriber_set_size(set), 1);
        close(oom);
        run_loop(e);
        CHECK_EQ_INT(subscriber_set_size(set), 0);

        subscriber_set_free(set);
        sd_event_unref(e);
}

/* Who may hold how many: a user other than root its share, never root's
 * reserve; root everything. */
static void test_per_user(void) {
        SubscriberSet *set = NULL;
        Fake f = {};
        int fd = -1;

        CHECK_EQ_INT(subscriber_set_new(32, fake_write, &f, &set), 0);
        /* 32/16 = 2 slots for root alone, a share of 32/4 = 8 each. */
        CHECK_EQ_INT(subscriber_set_root_reserve(set), 2);
        CHECK_EQ_INT(subscriber_set_user_max(set), 8);
        for (int i = 1; i <= 8; i++)
                CHECK_EQ_INT(subscriber_set_add(set, -i, LEVEL_LOW, 65534, NULL), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -9, LEVEL_LOW, 65534, NULL), -EDQUOT);
        CHECK_EQ_INT(subscriber_set_admit(set, 65534), -EDQUOT);
        CHECK_EQ_INT(subscriber_set_count_uid(set, 65534), 8);
        /* Through the socket layer too, before any socket is made. */
        CHECK_EQ_INT(subscriber_set_subscribe(set, VMPRESSURE_LOW, 65534, LEVEL_NONE, &fd), -EDQUOT);
        CHECK_EQ_INT(fd, -1);
        /* Other users fill what is left outside root's reserve: 22 more. */
        for (int i = 0; i < 22; i++)
                CHECK_EQ_INT(subscriber_set_add(set, -10 - i, LEVEL_LOW, 1000 + (uid_t) (i / 8), NULL), 0);
        CHECK_EQ_INT(subscriber_set_size(set), 30);
        CHECK_EQ_INT(subscriber_set_add(set, -40, LEVEL_LOW, 2000, NULL), -EUSERS);     /* only the reserve left */
        CHECK_EQ_INT(subscriber_set_add(set, -41, LEVEL_LOW, 0, NULL), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -42, LEVEL_LOW, 0, NULL), 0);
        CHECK_EQ_INT(subscriber_set_add(set, -43, LEVEL_LOW, 0, NULL), -EUSERS);        /* full for root too */
        /* One of nobody's goes: nobody may take one again, the set is not full. */
        subscriber_set_remove(set, set->items[0]);
        CHECK_EQ_INT(subscriber_set_admit(set, 65534), -EUSERS);                     /* 31: in root's reserve */
        subscriber_set_remove(set, set->items[subscriber_set_size(set) - 1]);         /* one of root's */
        subscriber_set_remove(set, set->items[subscriber_set_size(set) - 1]);
        CHECK_EQ_INT(subscriber_set_admit(set, 65534), 0);

        /* An explicit share, and one larger than what lies outside the reserve. */
        subscriber_set_set_limits(set, 32, 3);
        CHECK_EQ_INT(subscriber_set_user_max(set), 3);
        CHECK_EQ_INT(subscriber_set_admit(set, 65534), -EDQUOT);
        subscriber_set_set_limits(set, 32, 1000);
        CHECK_EQ_INT(subscriber_set_user_max(set), 30);
        /* Small sets: no reserve below 16, a share of at least one. */
        subscriber_set_set_limits(set, 3, 0);
        CHECK_EQ_INT(subscriber_set_root_reserve(set), 0);
        CHECK_EQ_INT(subscriber_set_user_max(set), 1);
        subscriber_set_free(set);
}

/* The descriptor reserve: a Subscribe() that would leave fewer than
 * SUBSCRIBERS_FD_RESERVE free under fd_limit is refused, and counted from
 * what is really open. */
static void test_fd_reserve(void) {
        SubscriberSet *set = NULL;
        int open_now, a = -1, b = -1, c = -1;

        open_now = fds_open_count();
        CHECK(open_now >= 3);
        a = dup(0);
        CHECK_EQ_INT(fds_open_count(), open_now + 1);
        CHECK_EQ_INT(subscriber_set_new(8, NULL, NULL, &set), 0);
        /* Room for exactly one more under the limit. */
        set->fd_limit = (size_t) open_now + 1 + SUBSCRIBERS_FD_IN_FLIGHT + SUBSCRIBERS_FD_RESERVE;
        CHECK_EQ_INT(subscriber_set_subscribe(set, VMPRESSURE_LOW, 0, LEVEL_NONE, &b), 0);
        CHECK_EQ_INT(subscriber_set_subscribe(set, VMPRESSURE_LOW, 0, LEVEL_NONE, &b), -EMFILE);
        CHECK_EQ_INT(subscriber_set_size(set), 1);
        set->fd_limit = 0;              /* no limit: fine again */
        CHECK_EQ_INT(subscriber_set_subscribe(set, VMPRESSURE_LOW, 0, LEVEL_NONE, &c), 0);
        CHECK_EQ_INT(subscriber_set_size(set), 2);
        close(a);
        close(b);
        close(c);
        CHECK(subscribers_nofile_needed(40, 4096) == 40 + 4096 + SUBSCRIBERS_FD_IN_FLIGHT + SUBSCRIBERS_FD_RESERVE);
        subscriber_set_free(set);
}

int main(void) {
        test_per_user();
        test_fd_reserve();
        test_add_remove_capacity();
        test_thresholds();
        test_full_queue();
        test_gone_during_deliver();
        test_real_sockets();
        CHECK(nofile_raise(16, NULL) >= 16);
        return test_exit("test-subscribers");
}
