/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus methods' arguments and what they drive. Subscribe(u threshold)
 * is the one method that takes an argument from any user: the threshold goes
 * through level_from_vmpressure() (in subscriber_set_subscribe()) into the
 * subscriber bookkeeping, which then meets every level the engine announces,
 * clients that never read (the queue full: -EAGAIN) and clients that are
 * gone. Levels by name (level_from_string(), for a method taking a level as
 * "s") and LowMemoryWarning's byte are fuzzed alongside.
 *
 * The input is a little program, one op per record:
 *   0 T T T T      Subscribe(threshold T, little-endian u32); the op byte's
 *                  value / 6 % 4 is the caller's uid (0 is root, whom the
 *                  per-user share and the root reserve do not limit)
 *   1 L            deliver level L % 4
 *   2 W            the writer from now on: W % 3 = queued, full, gone
 *   3 I            flush subscriber I % n
 *   4 I            remove subscriber I % n (its client closed the fd)
 *   5 N bytes…     level_from_string() of N % 32 bytes
 * Sockets are not involved: the writer is the pure layer's fake, as in
 * test-subscribers, and descriptors are -EBADF.
 */

#include <vmpressure.h>

#include "bus.h"
#include "fuzz.h"
#include "subscribers.h"

#define FUZZ_SUBSCRIBERS_MAX 64

typedef struct Writer {
        int mode;               /* 0 queued, 1 -EAGAIN, 2 -EPIPE */
        uint64_t written;
} Writer;

static int fake_write(Subscriber *s, uint32_t pressure, void *userdata) {
        Writer *w = userdata;
        Level l;

        /* Only whole levels at or above the subscriber's threshold go out. */
        FUZZ_CHECK(level_from_vmpressure(pressure, &l) == 0);
        FUZZ_CHECK(level_passes_threshold(l, s->threshold));
        if (w->mode == 1)
                return -EAGAIN;
        if (w->mode == 2)
                return -EPIPE;
        w->written++;
        return 0;
}

static void check_set(const SubscriberSet *set, const Writer *w) {
        FUZZ_CHECK(set->n <= set->max && set->n <= set->n_allocated);
        for (size_t i = 0; i < set->n; i++) {
                FUZZ_CHECK(set->items[i]->idx == i);
                FUZZ_CHECK(set->items[i]->threshold > LEVEL_NONE && set->items[i]->threshold < _LEVEL_MAX);
        }
        FUZZ_CHECK(set->delivered == w->written);
}

static void op_subscribe(SubscriberSet *set, uint32_t threshold, uid_t uid) {
        size_t before = set->n, held;
        Level l = LEVEL_NONE;
        int v, r;

        v = level_from_vmpressure(threshold, &l);
        /* Exactly one of the three bits. */
        FUZZ_CHECK((v == 0) == (threshold == VMPRESSURE_LOW || threshold == VMPRESSURE_MEDIUM ||
                                threshold == VMPRESSURE_OOM));
        if (v < 0) {
                FUZZ_CHECK(v == -EINVAL);
                /* What a Level the caller got wrong would do. */
                l = (Level) (threshold % 8) - 2;
        } else
                FUZZ_CHECK(level_to_vmpressure(l) == threshold);

        held = subscriber_set_count_uid(set, uid);
        r = subscriber_set_add(set, -EBADF, l, uid, NULL);
        if (l <= LEVEL_NONE || l >= _LEVEL_MAX)
                FUZZ_CHECK(r == -EINVAL);
        else if (before >= set->max || (uid != 0 && before >= set->max - subscriber_set_root_reserve(set)))
                FUZZ_CHECK(r == -EUSERS);
        else if (uid != 0 && held >= subscriber_set_user_max(set))
                FUZZ_CHECK(r == -EDQUOT);
        else
                FUZZ_CHECK(r == 0 || r == -ENOMEM);
        FUZZ_CHECK(set->n == before + (r == 0));
        FUZZ_CHECK(subscriber_set_count_uid(set, uid) == held + (r == 0));
        /* What a user other than root holds never passes its share. */
        FUZZ_CHECK(uid == 0 || subscriber_set_count_uid(set, uid) <= subscriber_set_user_max(set));
}

static void op_level_name(const uint8_t *p, size_t n) {
        char name[32];
        Level l;

        memcpy(name, p, n);
        name[n] = '\0';
        l = level_from_string(name);
        FUZZ_CHECK(l == _LEVEL_INVALID || (l >= 0 && l < _LEVEL_MAX));
        if (l >= 0)
                FUZZ_CHECK(strcmp(level_to_string(l), name) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(subscriber_set_freep) SubscriberSet *set = NULL;
        Writer w = {};
        size_t i = 0;

        fuzz_setup();
        if (subscriber_set_new(FUZZ_SUBSCRIBERS_MAX, fake_write, &w, &set) < 0)
                return 0;

        for (Level l = LEVEL_NONE; l < _LEVEL_MAX; l++)
                FUZZ_CHECK(l == LEVEL_NONE || bus_lmm_level(l) > bus_lmm_level(l - 1));

        while (i < size) {
                uint8_t opb = data[i++], op = opb % 6;

                if (op == 0) {
                        uint32_t t = 0;

                        if (size - i < 4)
                                break;
                        for (int b = 3; b >= 0; b--)
                                t = (t << 8) | data[i + (size_t) b];
                        i += 4;
                        op_subscribe(set, t, (uid_t) (opb / 6 % 4));
                } else if (op == 5) {
                        size_t n;

                        if (i >= size)
                                break;
                        n = data[i++] % 32;
                        n = MIN(n, size - i);
                        op_level_name(data + i, MIN(n, (size_t) 31));
                        i += n;
                } else {
                        uint8_t arg;

                        if (i >= size)
                                break;
                        arg = data[i++];
                        if (op == 1)
                                (void) subscriber_set_deliver(set, (Level) (arg % _LEVEL_MAX));
                        else if (op == 2)
                                w.mode = arg % 3;
                        else if (op == 3 && set->n > 0)
                                (void) subscriber_flush(set->items[arg % set->n]);
                        else if (op == 4 && set->n > 0)
                                subscriber_set_remove(set, set->items[arg % set->n]);
                }
                check_set(set, &w);
        }
        return 0;
}
