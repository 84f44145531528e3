/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel's price of one record to each of N descriptors, as the daemon
 * pays it for N Subscribe() subscribers (subscriber_set_deliver(): one
 * send() each), by the kind of descriptor pair it could hand out:
 *
 *   bench-fanout [N [ROUNDS]]          (default 1000 and 30)
 *
 * For each kind (seqpacket: what Subscribe() gives; dgram; stream; pipe), N
 * pairs are made and a forked reader waits on the N read ends in one epoll
 * set, as tests/helpers/vmp-bus-client does, reading each record as it
 * comes. The writer sleeps 20 ms, then writes one 4-byte record to each of
 * the N, ROUNDS times: per write, the best and the median round, in µs.
 * Last, the price of one bare system call (getppid()). Needs nothing but
 * 2N + a few descriptors (RLIMIT_NOFILE is raised to what it needs). Not a
 * test: figures for bench/README.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-clock.h"

enum { KIND_SEQPACKET, KIND_DGRAM, KIND_STREAM, KIND_PIPE, _KIND_MAX };
static const char *const kind_name[_KIND_MAX] = { "seqpacket", "dgram", "stream", "pipe" };

/* ends[0] written by us, ends[1] read by the reader. */
static int make_pair(int kind, int ends[2]) {
        static const int type[] = { SOCK_SEQPACKET, SOCK_DGRAM, SOCK_STREAM };
        int p[2];

        if (kind == KIND_PIPE) {
                if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
                        return -errno;
                ends[0] = p[1];
                ends[1] = p[0];
                return 0;
        }
        if (socketpair(AF_UNIX, type[kind] | SOCK_CLOEXEC, 0, p) < 0)
                return -errno;
        ends[0] = p[0];
        ends[1] = p[1];
        return 0;
}

/* Reads records until it has n * rounds of them, then exits. */
static _Noreturn void reader(const int *rd, unsigned n, unsigned rounds) {
        struct epoll_event ev[256];
        uint64_t want = (uint64_t) n * rounds, got = 0;
        int ep = epoll_create1(EPOLL_CLOEXEC);

        if (ep < 0)
                _exit(1);
        for (unsigned i = 0; i < n; i++) {
                struct epoll_event e = { .events = EPOLLIN, .data.u32 = i };

                if (epoll_ctl(ep, EPOLL_CTL_ADD, rd[i], &e) < 0)
                        _exit(1);
        }
        while (got < want) {
                int k = epoll_wait(ep, ev, (int) (sizeof(ev) / sizeof(ev[0])), -1);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        _exit(1);
                for (int i = 0; i < k; i++) {
                        uint32_t rec;

                        if (read(rd[ev[i].data.u32], &rec, sizeof(rec)) == (ssize_t) sizeof(rec))
                                got++;
                }
        }
        _exit(0);
}

static int run_kind(int kind, unsigned n, unsigned rounds) {
        int *wr = calloc(n, sizeof(int)), *rd = calloc(n, sizeof(int));
        uint64_t *per_round = calloc(rounds, sizeof(uint64_t));
        int status, r = 0;
        pid_t pid;

        if (!wr || !rd || !per_round)
                return -ENOMEM;
        for (unsigned i = 0; i < n; i++) {
                int ends[2] = { -EBADF, -EBADF };

                r = make_pair(kind, ends);
                if (r < 0) {
                        fprintf(stderr, "%s pair %u: %s\n", kind_name[kind], i, strerror(-r));
                        return r;
                }
                wr[i] = ends[0];
                rd[i] = ends[1];
        }
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                reader(rd, n, rounds);
        for (unsigned i = 0; i < n; i++)
                (void) close(rd[i]);

        for (unsigned k = 0; k < rounds; k++) {
                uint32_t rec = k;
                uint64_t t0;

                (void) usleep(20000);
                t0 = now_ns();
                for (unsigned i = 0; i < n; i++) {
                        ssize_t w = kind == KIND_PIPE ? write(wr[i], &rec, sizeof(rec))
                                                      : send(wr[i], &rec, sizeof(rec), MSG_DONTWAIT | MSG_NOSIGNAL);
                        if (w != (ssize_t) sizeof(rec))
                                r = -EIO;
                }
                per_round[k] = now_ns() - t0;
        }
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                r = -ECHILD;
        qsort(per_round, rounds, sizeof(uint64_t), cmp_u64);
        printf("kind=%s n=%u rounds=%u best_usec_per_write=%.2f median_usec_per_write=%.2f%s\n", kind_name[kind], n,
               rounds, (double) per_round[0] / 1000.0 / n, (double) per_round[rounds / 2] / 1000.0 / n,
               r < 0 ? " error=1" : "");
        for (unsigned i = 0; i < n; i++)
                (void) close(wr[i]);
        free(wr);
        free(rd);
        free(per_round);
        return r;
}

int main(int argc, char *argv[]) {
        unsigned n = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 1000;
        unsigned rounds = argc > 2 ? (unsigned) strtoul(argv[2], NULL, 10) : 30;
        struct rlimit rl;
        uint64_t t0;
        int r = 0;

        if (n == 0 || rounds == 0 || argc > 3) {
                fprintf(stderr, "usage: bench-fanout [N [ROUNDS]]\n");
                return 2;
        }
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2 * (rlim_t) n + 64) {
                rl.rlim_cur = 2 * (rlim_t) n + 64;
                if (rl.rlim_max < rl.rlim_cur)
                        rl.rlim_max = rl.rlim_cur;      /* root may raise it; others get an error below */
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        for (int kind = 0; kind < _KIND_MAX; kind++)
                if (run_kind(kind, n, rounds) < 0)
                        r = 1;
        t0 = now_ns();
        for (unsigned i = 0; i < 100000; i++)
                (void) syscall(SYS_getppid);
        printf("syscall usec=%.3f\n", (double) (now_ns() - t0) / 1000.0 / 100000);
        return r;
}
