/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Polls the reclaim counters: /proc/vmstat for the system, a cgroup2
 * memory.stat (plus memory.events for oom_kill) for a cgroup. Emits the
 * deltas as SAMPLE_RECLAIM; the level engine computes the seed's index.
 * The interval adapts: idle_usec normally, busy_usec while the owner says
 * so (set_busy) or while this source saw reclaim within the last quiet_usec.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>

#include "log.h"
#include "proc-parse.h"
#include "read-file.h"
#include "source.h"

typedef struct VmstatSource {
        Source source;
        int dir_fd;                     /* cgroup scope: the cgroup2 directory */
        int stat_fd;                    /* /proc/vmstat or memory.stat */
        int events_fd;                  /* cgroup scope: memory.events (oom_kill), or -EBADF */
        sd_event_source *timer;
        VmstatCounters last;
        bool busy;                      /* set by the owner */
        bool dead;                      /* the cgroup is gone, the timer off */
        bool have_reclaim;              /* reclaim_usec is valid */
        usec_t reclaim_usec;            /* last poll that saw reclaim */
        char path[PATH_MAX];            /* the stat file, for messages */
        char buf[16384];                /* /proc/vmstat is ~4 KiB on 6.18 */
} VmstatSource;

/* memory.events has no pgscan: read its oom_kill into ret. */
static void vmstat_read_events(VmstatSource *v, VmstatCounters *ret) {
        char buf[512];
        ssize_t n;

        if (v->events_fd < 0)
                return;
        n = read_small_fd(v->events_fd, buf, sizeof(buf), 0);
        if (n > 0 && keyed_u64_parse(buf, (size_t) n, "oom_kill", &ret->oom_kill) >= 0)
                ret->have_oom_kill = true;
}

static int vmstat_read(VmstatSource *v, VmstatCounters *ret) {
        ssize_t n;
        int r;

        n = read_small_fd(v->stat_fd, v->buf, sizeof(v->buf), 0);
        if (n < 0)
                return (int) n;
        r = vmstat_parse(v->buf, (size_t) n, ret);
        if (r < 0)
                return r;
        vmstat_read_events(v, ret);
        return 0;
}

static usec_t vmstat_interval(const VmstatSource *v, usec_t now) {
        const Source *s = &v->source;

        if (v->busy || (v->have_reclaim && now - v->reclaim_usec < s->level->quiet_usec))
                return s->params->poll.busy_usec;
        return s->params->poll.idle_usec;
}

static void vmstat_schedule(VmstatSource *v, usec_t now) {
        (void) sd_event_source_set_time(v->timer, now + vmstat_interval(v, now));
        (void) sd_event_source_set_enabled(v->timer, SD_EVENT_ONESHOT);
}

static uint64_t counter_delta(uint64_t now, uint64_t before) {
        return now >= before ? now - before : 0;        /* a counter never goes back; be safe */
}

/* Emits what changed since the last poll. Owners must not free the source
 * from on_sample (only from on_gone), so emitting twice is fine. */
static void vmstat_emit(VmstatSource *v, const VmstatCounters *c, usec_t now) {
        Sample sample = {
                .kind = SAMPLE_RECLAIM,
                .timestamp_usec = now,
                .scanned = counter_delta(c->pgscan, v->last.pgscan),
                .reclaimed = counter_delta(c->pgsteal, v->last.pgsteal),
        };
        bool oom = c->have_oom_kill && v->last.have_oom_kill && c->oom_kill > v->last.oom_kill;

        v->last = *c;
        if (sample.scanned > 0 || sample.reclaimed > 0) {
                v->have_reclaim = true;
                v->reclaim_usec = now;
                source_emit(&v->source, &sample);
        }
        if (oom) {
                sample = (Sample) { .kind = SAMPLE_OOM, .timestamp_usec = now };
                source_emit(&v->source, &sample);
        }
}

static bool vmstat_cgroup_gone(VmstatSource *v) {
        return v->dir_fd >= 0 && faccessat(v->dir_fd, "cgroup.procs", F_OK, 0) < 0 && errno == ENOENT;
}

static int vmstat_on_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        VmstatSource *v = userdata;
        usec_t now = source_now_usec();
        VmstatCounters c;
        int r;

        r = vmstat_read(v, &c);
        if (r < 0 && vmstat_cgroup_gone(v)) {
                log_debug("%s: cgroup '%s' was removed.", v->source.scope, v->source.cgroup);
                v->dead = true;
                (void) sd_event_source_set_enabled(v->timer, SD_EVENT_OFF);
                source_gone(&v->source, -ENOENT);
                return 0;               /* the owner may have freed v */
        }
        if (r < 0)
                log_debug_errno(r, "%s: reading %s failed, ignoring: %m", v->source.scope, v->path);
        else
                vmstat_emit(v, &c, now);

        vmstat_schedule(v, now);
        return 0;
}

static int vmstat_open_cgroup(VmstatSource *v, char *reason, size_t reason_size) {
        const Source *s = &v->source;
        int r;

        if (!s->env->cgroup2_root[0]) {
                (void) snprintf(reason, reason_size, "No cgroup2 hierarchy is mounted, and the cgroup v1 "
                                "memory.stat of '%s' has no pgscan/pgsteal counters.", s->cgroup);
                return -EOPNOTSUPP;
        }
        if ((size_t) snprintf(v->path, sizeof(v->path), "%s/%s", s->env->cgroup2_root, s->cgroup) >=
            sizeof(v->path) - strlen("/memory.stat"))
                return -ENAMETOOLONG;
        v->dir_fd = open(v->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (v->dir_fd < 0) {
                r = -errno;
                (void) snprintf(reason, reason_size, "The cgroup2 directory %s %s.", v->path,
                                r == -ENOENT ? "does not exist" : strerror(-r));
                return r;
        }
        strcat(v->path, "/memory.stat");
        v->stat_fd = openat(v->dir_fd, "memory.stat", O_RDONLY | O_CLOEXEC);
        if (v->stat_fd < 0) {
                r = -errno;
                (void) snprintf(reason, reason_size, "%s %s: the memory controller is not enabled for this "
                                "cgroup on cgroup2%s.", v->path, r == -ENOENT ? "does not exist" : strerror(-r),
                                s->env->memcg_v1_root[0] ? " (it is on cgroup v1, whose memory.stat has "
                                "no pgscan/pgsteal counters)" : "");
                return r;
        }
        v->events_fd = openat(v->dir_fd, "memory.events", O_RDONLY | O_CLOEXEC);
        return 0;
}

static int vmstat_open_files(VmstatSource *v, char *reason, size_t reason_size) {
        const Source *s = &v->source;
        int r;

        if (s->cgroup[0])
                return vmstat_open_cgroup(v, reason, reason_size);

        (void) snprintf(v->path, sizeof(v->path), "%s/vmstat", s->env->proc_root);
        v->stat_fd = open(v->path, O_RDONLY | O_CLOEXEC);
        if (v->stat_fd < 0) {
                r = -errno;
                (void) snprintf(reason, reason_size, "Cannot open %s: %s.", v->path, strerror(-r));
                return r;
        }
        return 0;
}

static int vmstat_open(Source *s, char *reason, size_t reason_size) {
        VmstatSource *v = (VmstatSource *) s;
        usec_t idle = s->params->poll.idle_usec;
        int r;

        v->dir_fd = v->stat_fd = v->events_fd = -EBADF;
        if (idle == 0 || s->params->poll.busy_usec == 0) {
                (void) snprintf(reason, reason_size, "The poll intervals must not be 0.");
                return -EINVAL;
        }

        r = vmstat_open_files(v, reason, reason_size);
        if (r < 0)
                return r;
        /* The first read is the baseline, and proves the counters are there. */
        r = vmstat_read(v, &v->last);
        if (r < 0) {
                if (r == -EBADMSG)
                        (void) snprintf(reason, reason_size, "%s has no pgscan/pgsteal counters.", v->path);
                else
                        (void) snprintf(reason, reason_size, "Reading %s failed: %s.", v->path, strerror(-r));
                return r;
        }

        return sd_event_add_time_relative(s->event, &v->timer, CLOCK_MONOTONIC, idle,
                                          MIN(idle / 10, 10 * USEC_PER_MSEC), vmstat_on_timer, v);
}

static void vmstat_close(Source *s) {
        VmstatSource *v = (VmstatSource *) s;

        v->timer = sd_event_source_disable_unref(v->timer);
        v->events_fd = safe_close(v->events_fd);
        v->stat_fd = safe_close(v->stat_fd);
        v->dir_fd = safe_close(v->dir_fd);
}

/* Going busy takes effect now, not after the current (idle) interval. */
static void vmstat_set_busy(Source *s, bool busy) {
        VmstatSource *v = (VmstatSource *) s;
        usec_t now = source_now_usec(), next;

        v->busy = busy;
        if (!busy || v->dead || !v->timer || sd_event_source_get_time(v->timer, &next) < 0)
                return;
        if (next > now + s->params->poll.busy_usec)
                vmstat_schedule(v, now);
}

const SourceOps source_vmstat_ops = {
        .type = SOURCE_VMSTAT,
        .size = sizeof(VmstatSource),
        .open = vmstat_open,
        .close = vmstat_close,
        .set_busy = vmstat_set_busy,
};
