/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmp-bus-client: an sd-bus client of vmpressured for the integration tests
 * and bench/bus-latency. One line on stdout per thing received, with the
 * CLOCK_MONOTONIC time of receipt (the clock of the daemon's t_usec):
 *
 *   ready connections=N subscribers=N
 *   signal conn=I member=Low scope=-.slice index=0 recv_usec=T
 *   signal conn=I member=Normal scope=-.slice recv_usec=T
 *   lmm conn=I level=50 recv_usec=T              (LowMemoryWarning)
 *   record sub=I threshold=1024 pressure=1024 recv_usec=T [queued_usec=Q]
 *   eof sub=I                                    (the daemon closed it)
 *   error what=… name=… message=…                (a Subscribe() that failed)
 *
 *   vmp-bus-client [--connections=N] [--subscribe=low|medium|oom|NUMBER[:COUNT]]...
 *                  [--stall] [--quiet-signals] [--no-signals] [--lmm] [--buffer]
 *                  [--timestamps]
 *
 * --connections=N opens N bus connections, each with a match for the
 * Manager's signals. --subscribe calls Subscribe() COUNT times with that
 * threshold (the value is passed as is, so bad ones can be tried). --stall
 * never reads the subscriber descriptors (a client that hangs). --lmm also
 * matches org.freedesktop.LowMemoryMonitor's LowMemoryWarning. --buffer keeps
 * every line after "ready" in a 64 MiB buffer until exit, so that with many
 * subscribers writing to a slow reader never delays a receipt. --timestamps
 * asks the kernel for each record's time stamp (SO_TIMESTAMPNS: taken in
 * the daemon's send(), as the record is queued to this descriptor) and
 * prints it as queued_usec, on CLOCK_MONOTONIC (the kernel's stamp is
 * CLOCK_REALTIME: moved by the offset between the two clocks read at
 * receipt); what comes after the daemon's write, its subscriber's
 * wake-up and turn, is then not in it. Runs until
 * SIGTERM/SIGINT; exit status 0, 1 on errors, 2 on bad usage.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>
#include <vmpressure.h>

#define SUBSCRIBE_SPECS_MAX 8
#define ELEMENTS(x) (sizeof(x) / sizeof((x)[0]))

typedef struct Conn {
        unsigned idx;
        sd_bus *bus;
        int fd;                 /* as registered with epoll */
} Conn;

typedef struct Sub {
        unsigned idx;
        uint32_t threshold;
        int fd;
} Sub;

static bool arg_stall, arg_lmm, arg_quiet_signals, arg_no_signals, arg_buffer, arg_timestamps;
static unsigned arg_connections = 1;
static struct {
        uint32_t threshold;
        unsigned count;
} arg_subscribe[SUBSCRIBE_SPECS_MAX];
static size_t arg_n_subscribe;

static uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static int parse_threshold(const char *s, uint32_t *ret) {
        char *end;
        unsigned long v;

        if (strcmp(s, "low") == 0)
                *ret = VMPRESSURE_LOW;
        else if (strcmp(s, "medium") == 0)
                *ret = VMPRESSURE_MEDIUM;
        else if (strcmp(s, "oom") == 0)
                *ret = VMPRESSURE_OOM;
        else {
                errno = 0;
                v = strtoul(s, &end, 0);
                if (errno || end == s || *end || v > UINT32_MAX)
                        return -EINVAL;
                *ret = (uint32_t) v;
        }
        return 0;
}

static int parse_subscribe(const char *arg) {
        char buf[64], *colon;
        unsigned long count = 1;

        if (arg_n_subscribe >= SUBSCRIBE_SPECS_MAX || strlen(arg) >= sizeof(buf))
                return -EINVAL;
        strcpy(buf, arg);
        colon = strchr(buf, ':');
        if (colon) {
                *colon = '\0';
                count = strtoul(colon + 1, NULL, 10);
                if (count == 0 || count > 100000)
                        return -EINVAL;
        }
        if (parse_threshold(buf, &arg_subscribe[arg_n_subscribe].threshold) < 0)
                return -EINVAL;
        arg_subscribe[arg_n_subscribe++].count = (unsigned) count;
        return 0;
}

static int parse_argv(int argc, char *argv[]) {
        static const struct option options[] = {
                { "connections",   required_argument, NULL, 'c' },
                { "subscribe",     required_argument, NULL, 's' },
                { "stall",         no_argument,       NULL, 'S' },
                { "lmm",           no_argument,       NULL, 'l' },
                { "quiet-signals", no_argument,       NULL, 'q' },
                { "no-signals",    no_argument,       NULL, 'n' },
                { "buffer",        no_argument,       NULL, 'b' },
                { "timestamps",    no_argument,       NULL, 't' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        arg_connections = (unsigned) strtoul(optarg, NULL, 10);
                        if (arg_connections > 100000)
                                return -EINVAL;
                        break;
                case 's':
                        if (parse_subscribe(optarg) < 0) {
                                fprintf(stderr, "Bad --subscribe=%s\n", optarg);
                                return -EINVAL;
                        }
                        break;
                case 'S':
                        arg_stall = true;
                        break;
                case 'l':
                        arg_lmm = true;
                        break;
                case 'q':
                        arg_quiet_signals = true;
                        break;
                case 'n':
                        arg_no_signals = true;
                        break;
                case 'b':
                        arg_buffer = true;
                        break;
                case 't':
                        arg_timestamps = true;
                        break;
                default:
                        return -EINVAL;
                }
        return optind < argc ? -EINVAL : 0;
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Conn *c = userdata;
        uint64_t t = now_usec();
        const char *member = sd_bus_message_get_member(m), *scope = NULL;
        uint32_t index = 0;
        uint8_t level;

        if (sd_bus_message_is_signal(m, "org.freedesktop.LowMemoryMonitor", "LowMemoryWarning")) {
                if (sd_bus_message_read(m, "y", &level) >= 0)
                        printf("lmm conn=%u level=%u recv_usec=%" PRIu64 "\n", c->idx, level, t);
                return 0;
        }
        if (arg_quiet_signals && c->idx > 0)
                return 0;
        if (strcmp(member, "Normal") == 0) {
                if (sd_bus_message_read(m, "s", &scope) >= 0)
                        printf("signal conn=%u member=Normal scope=%s recv_usec=%" PRIu64 "\n", c->idx, scope, t);
        } else if (strcmp(member, "Killed") == 0)
                printf("signal conn=%u member=Killed recv_usec=%" PRIu64 "\n", c->idx, t);
        else if (sd_bus_message_read(m, "su", &scope, &index) >= 0)
                printf("signal conn=%u member=%s scope=%s index=%" PRIu32 " recv_usec=%" PRIu64 "\n",
                       c->idx, member, scope, index, t);
        return 0;
}

/* The kernel's time stamp of the record msg received (CLOCK_REALTIME),
 * on CLOCK_MONOTONIC; 0 when it has none. */
static uint64_t queued_usec(struct msghdr *msg) {
        struct timespec real, mono, ts;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
                        continue;
                memcpy(&ts, CMSG_DATA(c), sizeof(ts));
                clock_gettime(CLOCK_REALTIME, &real);
                clock_gettime(CLOCK_MONOTONIC, &mono);
                int64_t ago = ((int64_t) real.tv_sec - ts.tv_sec) * 1000000000 + (real.tv_nsec - ts.tv_nsec);
                int64_t q = (int64_t) mono.tv_sec * 1000000000 + mono.tv_nsec - ago;

                return q > 0 ? (uint64_t) q / 1000 : 0;
        }
        return 0;
}

/* One record; false when the subscriber is finished (EOF or error). */
static bool read_record(Sub *s) {
        struct vmpressure_event ev;
        union {
                struct cmsghdr align;
                char buf[CMSG_SPACE(sizeof(struct timespec))];
        } control;
        struct iovec iov = { .iov_base = &ev, .iov_len = sizeof(ev) };
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
                              .msg_control = arg_timestamps ? control.buf : NULL,
                              .msg_controllen = arg_timestamps ? sizeof(control.buf) : 0 };
        ssize_t n;

        n = recvmsg(s->fd, &msg, 0);
        if (n == (ssize_t) sizeof(ev)) {
                uint64_t t = now_usec(), q = arg_timestamps ? queued_usec(&msg) : 0;

                if (q > 0)
                        printf("record sub=%u threshold=%" PRIu32 " pressure=%" PRIu32 " recv_usec=%" PRIu64
                               " queued_usec=%" PRIu64 "\n", s->idx, s->threshold, ev.pressure, t, q);
                else
                        printf("record sub=%u threshold=%" PRIu32 " pressure=%" PRIu32 " recv_usec=%" PRIu64 "\n",
                               s->idx, s->threshold, ev.pressure, t);
                return true;
        }
        if (n < 0 && errno == EINTR)
                return true;
        if (n == 0)
                printf("eof sub=%u\n", s->idx);
        else
                fprintf(stderr, "read on subscriber %u: %s\n", s->idx, n < 0 ? strerror(errno) : "short read");
        return false;
}

static int connect_one(Conn *c) {
        int r;

        r = sd_bus_open_system(&c->bus);
        if (r < 0)
                return r;
        if (!arg_no_signals) {
                r = sd_bus_match_signal(c->bus, NULL, "org.freedesktop.vmpressure1", "/org/freedesktop/vmpressure1",
                                        "org.freedesktop.vmpressure1.Manager", NULL, on_signal, c);
                if (r < 0)
                        return r;
        }
        if (arg_lmm) {
                r = sd_bus_match_signal(c->bus, NULL, "org.freedesktop.LowMemoryMonitor",
                                        "/org/freedesktop/LowMemoryMonitor", "org.freedesktop.LowMemoryMonitor",
                                        "LowMemoryWarning", on_signal, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int subscribe_one(sd_bus *bus, Sub *s) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int fd, r;

        s->fd = -1;
        r = sd_bus_call_method(bus, "org.freedesktop.vmpressure1", "/org/freedesktop/vmpressure1",
                               "org.freedesktop.vmpressure1.Manager", "Subscribe", &error, &reply, "u",
                               s->threshold);
        if (r < 0) {
                printf("error what=subscribe threshold=%" PRIu32 " name=%s message=%s\n", s->threshold,
                       error.name ?: "-", error.message ?: strerror(-r));
                sd_bus_error_free(&error);
                return 0;
        }
        r = sd_bus_message_read(reply, "h", &fd);
        if (r >= 0) {
                s->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);  /* the reply owns fd */
                if (s->fd < 0)
                        r = -errno;
        }
        if (r >= 0 && arg_timestamps &&
            setsockopt(s->fd, SOL_SOCKET, SO_TIMESTAMPNS, &(int) { 1 }, sizeof(int)) < 0)
                r = -errno;
        sd_bus_message_unref(reply);
        return r < 0 ? r : 0;
}

static void raise_nofile(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
}

/* epoll data: the low bit tells a bus (1) from a subscriber (0), the rest is the index. */
#define TAG_BUS 1u

static int epoll_add(int ep, int fd, uint64_t data) {
        struct epoll_event ev = { .events = EPOLLIN, .data.u64 = data };
        return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/* sd_bus_process() handles one message per call and may have read more
 * than one: loop until it has nothing left. Negative when the connection is
 * gone (the dbus-daemon went away): the caller stops watching it. */
static int drain_bus(Conn *c) {
        int r;

        while ((r = sd_bus_process(c->bus, NULL)) > 0)
                ;
        return r;
}

/* A plain epoll loop: one epoll_wait() hands over every ready descriptor,
 * all handled before the next wait. (sd-event dispatches one source per
 * iteration and polls again: quadratic with 1000 ready descriptors.) */
static int run(Conn *conns, unsigned n_conns, Sub *subs, unsigned n_subs) {
        struct epoll_event events[256];
        sigset_t mask;
        int ep, sfd, r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC);
        ep = epoll_create1(EPOLL_CLOEXEC);
        if (sfd < 0 || ep < 0)
                return -errno;
        r = epoll_add(ep, sfd, UINT64_MAX);
        for (unsigned i = 0; r >= 0 && i < n_conns; i++) {
                (void) drain_bus(&conns[i]);
                conns[i].fd = sd_bus_get_fd(conns[i].bus);
                if (conns[i].fd < 0) {
                        /* The dbus-daemon went away since "ready" (a test kills it
                         * right then): the subscribers are still served. */
                        printf("disconnected conn=%u\n", conns[i].idx);
                        continue;
                }
                r = epoll_add(ep, conns[i].fd, ((uint64_t) i << 1) | TAG_BUS);
        }
        for (unsigned i = 0; r >= 0 && i < n_subs; i++)
                if (subs[i].fd >= 0 && !arg_stall)
                        r = epoll_add(ep, subs[i].fd, (uint64_t) i << 1);
        if (r < 0)
                return r;

        for (;;) {
                int n = epoll_wait(ep, events, (int) ELEMENTS(events), -1);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                for (int i = 0; i < n; i++) {
                        uint64_t d = events[i].data.u64;

                        if (d == UINT64_MAX)
                                return 0;               /* SIGTERM or SIGINT */
                        if (d & TAG_BUS) {
                                if (drain_bus(&conns[d >> 1]) < 0) {
                                        printf("disconnected conn=%u\n", conns[d >> 1].idx);
                                        (void) epoll_ctl(ep, EPOLL_CTL_DEL, conns[d >> 1].fd, NULL);
                                }
                        }
                        else if (!read_record(&subs[d >> 1]))
                                (void) epoll_ctl(ep, EPOLL_CTL_DEL, subs[d >> 1].fd, NULL);
                }
        }
}

int main(int argc, char *argv[]) {
        Conn *conns;
        Sub *subs;
        unsigned n_subs = 0, k = 0;
        sigset_t mask;
        int r;

        if (parse_argv(argc, argv) < 0) {
                fprintf(stderr, "usage: vmp-bus-client [--connections=N] [--subscribe=LEVEL[:N]]... "
                        "[--stall] [--lmm] [--quiet-signals] [--no-signals] [--buffer]\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        raise_nofile();
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        for (size_t i = 0; i < arg_n_subscribe; i++)
                n_subs += arg_subscribe[i].count;
        conns = calloc(arg_connections ?: 1, sizeof(Conn));
        subs = calloc(n_subs ?: 1, sizeof(Sub));
        if (!conns || !subs)
                return 1;

        for (unsigned i = 0; i < arg_connections; i++) {
                conns[i].idx = i;
                r = connect_one(&conns[i]);
                if (r < 0)
                        goto fail;
        }
        if (n_subs > 0 && arg_connections == 0) {
                r = sd_bus_open_system(&conns[0].bus);
                if (r < 0)
                        goto fail;
        }
        for (size_t i = 0; i < arg_n_subscribe; i++)
                for (unsigned j = 0; j < arg_subscribe[i].count; j++, k++) {
                        subs[k].idx = k;
                        subs[k].threshold = arg_subscribe[i].threshold;
                        r = subscribe_one(conns[0].bus, &subs[k]);
                        if (r < 0)
                                goto fail;
                }

        printf("ready connections=%u subscribers=%u\n", arg_connections, n_subs);
        if (arg_buffer) {
                fflush(stdout);
                setvbuf(stdout, NULL, _IOFBF, 64u << 20);
        }
        r = run(conns, arg_connections, subs, n_subs);
        /* Everything it buffered (--buffer) goes out before anything at exit
         * can go wrong; then nothing left for LeakSanitizer to report. */
        fflush(stdout);
        for (unsigned i = 0; i < arg_connections; i++)
                sd_bus_flush_close_unref(conns[i].bus);
        if (n_subs > 0 && arg_connections == 0)
                sd_bus_flush_close_unref(conns[0].bus);
        for (unsigned i = 0; i < n_subs; i++)
                if (subs[i].fd >= 0)
                        close(subs[i].fd);
        free(conns);
        free(subs);
        if (r < 0)
                goto fail;
        return 0;

fail:
        fprintf(stderr, "vmp-bus-client: %s\n", strerror(-r));
        return 1;
}
