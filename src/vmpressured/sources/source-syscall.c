/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmpressure_fd(2), the seed's system call, for kernels that carry the
 * patch. Used only when the kernel advertises it (the patch adds
 * /proc/sys/vm/vmpressure_window) and a number is configured: numbers are
 * never guessed (on mainline x86_64, 314 is sched_setattr).
 *
 * The seed's fd: poll() says POLLIN while an event is pending, read()
 * blocks until one is and returns the most recent system level (which may
 * be below the fd's threshold when a later window was calmer). The RFC's
 * read() ignored O_NONBLOCK; the 6.1 port in kernel/ returns EAGAIN. We
 * only read an fd that poll() says is ready, which works with both.
 *
 * The call takes no privilege: EPERM means a seccomp filter refused it.
 * systemd's SystemCallFilter= allow-list (the shipped unit's) names system
 * calls through libseccomp, which has no name for a number mainline never
 * gave out, so such a unit cannot allow it (measured in the guest suite's
 * syscall boot: EPERM with the shipped unit, the syscall source with a
 * drop-in that turns the filter into a deny-list).
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "log.h"
#include "source.h"
#include "vmpressure.h"

typedef struct SyscallSource {
        Source source;
        int fd[_LEVEL_MAX];             /* thresholds [LOW], [MEDIUM], [OOM] */
        sd_event_source *event[_LEVEL_MAX];
} SyscallSource;

/* The level this fd reports now, LEVEL_NONE when it has nothing pending.
 * An fd with threshold T only has events at T or above, so T counts too. */
static Level syscall_read_fd(int fd, Level threshold) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        struct vmpressure_event ev;
        Level l;

        if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & POLLIN))
                return LEVEL_NONE;
        if (read(fd, &ev, sizeof(ev)) != (ssize_t) sizeof(ev))
                return threshold;
        if (level_from_vmpressure(ev.pressure, &l) < 0) {
                log_debug("vmpressure_fd reported unknown level %#x, ignoring.", (unsigned) ev.pressure);
                return threshold;
        }
        return MAX(l, threshold);
}

/* Drains all three fds and reports the highest level once. */
static int syscall_on_event(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        SyscallSource *c = userdata;
        usec_t now = source_now_usec();
        Level highest = LEVEL_NONE;
        Sample sample;

        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++) {
                Level got = syscall_read_fd(c->fd[l], l);       /* not inside MAX(): it reads */
                highest = MAX(highest, got);
        }
        if (highest == LEVEL_NONE)
                return 0;               /* already read by the handler of another fd */

        sample = (Sample) {
                .kind = SAMPLE_LEVEL,
                .timestamp_usec = now,
                .level = highest,
                .index = level_nominal_index(c->source.level, highest),
        };
        source_emit(&c->source, &sample);
        return 0;
}

static int syscall_check_available(const Source *s, char *reason, size_t reason_size) {
        char path[PATH_MAX];

        if (s->cgroup[0]) {
                (void) snprintf(reason, reason_size, "vmpressure_fd only reports the whole system's "
                                "pressure, not that of cgroup '%s'.", s->cgroup);
                return -EOPNOTSUPP;
        }
        (void) snprintf(path, sizeof(path), "%s/sys/vm/vmpressure_window", s->env->proc_root);
        if (access(path, F_OK) < 0) {
                int r = -errno;
                if (r == -ENOENT)
                        (void) snprintf(reason, reason_size, "%s does not exist: the kernel has no "
                                        "vmpressure_fd.", path);
                else
                        (void) snprintf(reason, reason_size, "Cannot check %s: %s.", path, strerror(-r));
                return r == -ENOENT ? -EOPNOTSUPP : r;
        }
        if (s->params->syscall_nr < 0) {
                (void) snprintf(reason, reason_size, "The kernel has vmpressure_fd, but no syscall number "
                                "is configured (SyscallNumber=).");
                return -EOPNOTSUPP;
        }
        return 0;
}

/* The Seccomp: mode of this process (0 none, 1 strict, 2 filter), -1 when
 * /proc/self/status cannot say. */
static int seccomp_mode(const Source *s) {
        char path[PATH_MAX], buf[4096], *p;
        ssize_t n;
        int fd;

        (void) snprintf(path, sizeof(path), "%s/self/status", s->env->proc_root);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        safe_close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        p = strstr(buf, "\nSeccomp:");
        if (!p)
                return -1;
        return (int) strtol(p + strlen("\nSeccomp:"), NULL, 10);
}

static void syscall_open_failed(const Source *s, Level l, int r, char *reason, size_t reason_size) {
        bool filtered = r == -EPERM && seccomp_mode(s) == 2;

        (void) snprintf(reason, reason_size, "vmpressure_fd (syscall %ld) with threshold %s failed: %s%s",
                        s->params->syscall_nr, level_to_string(l), strerror(-r),
                        filtered ? ": a seccomp filter refuses it (a unit's SystemCallFilter= allow-list "
                        "cannot name it; see SyscallNumber= in vmpressured.conf(5))." : ".");
}

/* The seed's syscall takes no flags: its fds are not close-on-exec. */
static int syscall_open_fd(const Source *s, Level l) {
        struct vmpressure_config cfg = {
                .size = sizeof(cfg),
                .threshold = level_to_vmpressure(l),
        };
        long fd;

        fd = syscall(s->params->syscall_nr, &cfg);
        if (fd < 0)
                return -errno;
        if (fcntl((int) fd, F_SETFD, FD_CLOEXEC) < 0) {
                int r = -errno;
                safe_close((int) fd);
                return r;
        }
        return (int) fd;
}

static int syscall_open(Source *s, char *reason, size_t reason_size) {
        SyscallSource *c = (SyscallSource *) s;
        int r;

        for (Level l = 0; l < _LEVEL_MAX; l++)
                c->fd[l] = -EBADF;

        r = syscall_check_available(s, reason, reason_size);
        if (r < 0)
                return r;

        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++) {
                c->fd[l] = syscall_open_fd(s, l);
                if (c->fd[l] < 0) {
                        r = c->fd[l];
                        syscall_open_failed(s, l, r, reason, reason_size);
                        return r;
                }
                r = sd_event_add_io(s->event, &c->event[l], c->fd[l], EPOLLIN, syscall_on_event, c);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void syscall_close(Source *s) {
        SyscallSource *c = (SyscallSource *) s;

        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++) {
                c->event[l] = sd_event_source_disable_unref(c->event[l]);
                c->fd[l] = safe_close(c->fd[l]);
        }
}

const SourceOps source_syscall_ops = {
        .type = SOURCE_SYSCALL,
        .size = sizeof(SyscallSource),
        .open = syscall_open,
        .close = syscall_close,
        .set_busy = NULL,
};
