/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PSI triggers (Documentation/accounting/psi.rst): one fd per level, each
 * with one trigger, "some" stall for LOW and MEDIUM and "full" for OOM.
 * The kernel signals POLLPRI at most once per window per trigger.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>

#include "log.h"
#include "proc-parse.h"
#include "psi-trigger.h"
#include "source.h"

typedef struct PsiSource {
        Source source;
        int dir_fd;                             /* cgroup scope: the cgroup2 directory */
        int fd[_LEVEL_MAX];                     /* one trigger each for [LOW], [MEDIUM], [OOM] */
        sd_event_source *event[_LEVEL_MAX];
        bool absorbed[_LEVEL_MAX];              /* pending, but already reported with a higher level */
        bool dead;
        usec_t window_usec;                     /* the window the kernel accepted */
        char path[PATH_MAX];                    /* the pressure file, for messages */
        char buf[512];                          /* its text: ~110 bytes */
} PsiSource;

static const char *const psi_kind[_LEVEL_MAX] = {
        [LEVEL_LOW]    = "some",
        [LEVEL_MEDIUM] = "some",
        [LEVEL_OOM]    = "full",
};

static void psi_disable(PsiSource *p) {
        p->dead = true;
        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++)
                (void) sd_event_source_set_enabled(p->event[l], SD_EVENT_OFF);
}

/* The caller must not touch p afterwards: the owner may free it. */
static void psi_gone(PsiSource *p) {
        /* Removing a cgroup2 directory destroys its triggers: POLLERR. */
        int error = p->source.cgroup[0] ? -ENOENT : -EIO;

        log_debug("%s: %s reported an error, the source is gone.", p->source.scope, p->path);
        psi_disable(p);
        source_gone(&p->source, error);
}

/* Consumes the event: the kernel clears a trigger's event when it is polled. */
static int psi_poll_fd(int fd) {
        struct pollfd pfd = { .fd = fd, .events = POLLPRI };

        if (poll(&pfd, 1, 0) <= 0)
                return 0;
        if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
                return -EIO;
        return !!(pfd.revents & POLLPRI);
}

/* The highest level whose trigger fired now. sd-event dispatches one source
 * per iteration: another trigger already collected by epoll is pending and
 * is marked absorbed, one not yet collected is consumed by poll(). */
static int psi_highest_fired(PsiSource *p, Level self) {
        Level highest = self;

        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++) {
                int r;

                if (l == self || p->fd[l] < 0)
                        continue;
                if (sd_event_source_get_pending(p->event[l]) > 0) {
                        p->absorbed[l] = true;
                        r = 1;
                } else
                        r = psi_poll_fd(p->fd[l]);
                if (r < 0)
                        return r;
                if (r > 0)
                        highest = MAX(highest, l);
        }
        return highest;
}

/* stall for the window the kernel accepted: same share of the window. */
static usec_t psi_scaled_stall(const PsiSource *p, Level l) {
        usec_t stall = p->source.params->psi.stall_usec[l];
        usec_t window = p->source.params->psi.window_usec;

        if (p->window_usec == window)
                return stall;
        return MAX(MIN(stall * p->window_usec / window, p->window_usec), (usec_t) 1);
}

/* The index is "some avg10" in percent. avg10 is updated every 2 s and
 * decays slowly, so at the first trigger of a sudden stall it can still read
 * 0.00 (seen here: "full" 1 s of 2 s fired while avg10 said 0). The trigger
 * that fired proves at least its stall share of the window: that is the floor. */
static unsigned psi_read_index(PsiSource *p, int fd, Level level) {
        unsigned min_pct = (unsigned) (psi_scaled_stall(p, level) * 100 / p->window_usec);
        PsiStats stats;
        ssize_t n;

        n = pread(fd, p->buf, sizeof(p->buf) - 1, 0);
        if (n <= 0 || psi_parse(p->buf, (size_t) n, &stats) < 0)
                return MIN(min_pct, 100u);
        return MIN(MAX(stats.some.avg10_permyriad / 100, min_pct), 100u);
}

static Level psi_level_of(PsiSource *p, sd_event_source *es) {
        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++)
                if (p->event[l] == es)
                        return l;
        return _LEVEL_INVALID;
}

static int psi_on_trigger(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        PsiSource *p = userdata;
        usec_t now = source_now_usec();
        Level self = psi_level_of(p, es);
        Sample sample;
        int highest;

        if (p->dead || self < 0)
                return 0;
        if (revents & (EPOLLERR | EPOLLHUP)) {
                psi_gone(p);
                return 0;
        }
        if (p->absorbed[self]) {
                p->absorbed[self] = false;
                return 0;
        }
        if (!(revents & EPOLLPRI))
                return 0;

        highest = psi_highest_fired(p, self);
        if (highest < 0) {
                psi_gone(p);
                return 0;
        }
        sample = (Sample) {
                .kind = SAMPLE_LEVEL,
                .timestamp_usec = now,
                .level = highest,
                .index = psi_read_index(p, fd, highest),
        };
        source_emit(&p->source, &sample);
        return 0;
}

static int psi_arm(PsiSource *p, Level l) {
        static bool logged = false;
        int r;

        r = psi_trigger_write(p->fd[l], psi_kind[l], psi_scaled_stall(p, l), p->window_usec);
        if (r != -EINVAL || p->window_usec == PSI_UNPRIVILEGED_WINDOW_USEC)
                return r;

        if (!logged) {
                log_notice("PSI trigger window of %" PRIu64 " ms refused, using 2 s with the stalls "
                           "scaled to match: without CAP_SYS_RESOURCE the kernel only accepts windows "
                           "that are multiples of 2 s.", p->window_usec / USEC_PER_MSEC);
                logged = true;
        }
        p->window_usec = PSI_UNPRIVILEGED_WINDOW_USEC;
        return psi_trigger_write(p->fd[l], psi_kind[l], psi_scaled_stall(p, l), p->window_usec);
}

static int psi_open_file(PsiSource *p) {
        if (p->dir_fd >= 0)
                return openat(p->dir_fd, "memory.pressure", O_RDWR | O_NONBLOCK | O_CLOEXEC);
        return open(p->path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
}

static int psi_find_file(PsiSource *p, char *reason, size_t reason_size) {
        const Source *s = &p->source;

        if (!s->cgroup[0]) {
                (void) snprintf(p->path, sizeof(p->path), "%s/pressure/memory", s->env->proc_root);
                return 0;
        }
        if (!s->env->cgroup2_root[0]) {
                (void) snprintf(reason, reason_size, "No cgroup2 hierarchy is mounted (no cgroup2 "
                                "mount in /proc/self/mountinfo), so there is no memory.pressure for '%s'.",
                                s->cgroup);
                return -EOPNOTSUPP;
        }
        if ((size_t) snprintf(p->path, sizeof(p->path), "%s/%s", s->env->cgroup2_root, s->cgroup) >=
            sizeof(p->path) - strlen("/memory.pressure"))
                return -ENAMETOOLONG;
        p->dir_fd = open(p->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (p->dir_fd < 0) {
                int r = -errno;
                (void) snprintf(reason, reason_size, "The cgroup2 directory %s %s.", p->path,
                                r == -ENOENT ? "does not exist" : strerror(-r));
                return r;
        }
        strcat(p->path, "/memory.pressure");
        return 0;
}

static int psi_open_level(PsiSource *p, Level l, char *reason, size_t reason_size) {
        int r;

        p->fd[l] = psi_open_file(p);
        if (p->fd[l] < 0) {
                r = -errno;
                if (r == -ENOENT || r == -EOPNOTSUPP)
                        (void) snprintf(reason, reason_size, "%s does not exist: the kernel has no PSI "
                                        "(built without CONFIG_PSI, or booted with psi=0).", p->path);
                else
                        (void) snprintf(reason, reason_size, "Cannot open %s: %s.", p->path, strerror(-r));
                return r;
        }
        r = psi_arm(p, l);
        if (r < 0) {
                (void) snprintf(reason, reason_size, "Writing the trigger \"%s %" PRIu64 " %" PRIu64 "\" "
                                "to %s failed: %s.", psi_kind[l], psi_scaled_stall(p, l), p->window_usec,
                                p->path, strerror(-r));
                return r;
        }
        return sd_event_add_io(p->source.event, &p->event[l], p->fd[l], EPOLLPRI, psi_on_trigger, p);
}

static int psi_open(Source *s, char *reason, size_t reason_size) {
        PsiSource *p = (PsiSource *) s;
        bool any = false;
        int r;

        p->dir_fd = -EBADF;
        for (Level l = 0; l < _LEVEL_MAX; l++)
                p->fd[l] = -EBADF;
        p->window_usec = s->params->psi.window_usec;
        if (p->window_usec == 0) {
                (void) snprintf(reason, reason_size, "The PSI window is 0.");
                return -EINVAL;
        }

        r = psi_find_file(p, reason, reason_size);
        if (r < 0)
                return r;

        /* A stall of 0 disables that level. */
        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++) {
                if (s->params->psi.stall_usec[l] == 0)
                        continue;
                r = psi_open_level(p, l, reason, reason_size);
                if (r < 0)
                        return r;
                any = true;
        }
        if (!any) {
                (void) snprintf(reason, reason_size, "No PSI stall threshold is configured.");
                return -EINVAL;
        }
        log_debug("%s: PSI triggers on %s with a %" PRIu64 " ms window.", s->scope, p->path,
                  p->window_usec / USEC_PER_MSEC);
        return 0;
}

static void psi_close(Source *s) {
        PsiSource *p = (PsiSource *) s;

        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++) {
                p->event[l] = sd_event_source_disable_unref(p->event[l]);
                p->fd[l] = safe_close(p->fd[l]);
        }
        p->dir_fd = safe_close(p->dir_fd);
}

const SourceOps source_psi_ops = {
        .type = SOURCE_PSI,
        .size = sizeof(PsiSource),
        .open = psi_open,
        .close = psi_close,
        .set_busy = NULL,
};
