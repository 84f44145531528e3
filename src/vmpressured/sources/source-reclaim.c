/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seed's reclaimer-inefficiency index on the unified cgroup v2
 * hierarchy, where no single file carries it. The counters are there (a
 * cgroup2 memory.stat has pgscan/pgsteal per cgroup, /proc/vmstat has them
 * for the machine), but nothing signals a change of a counter, so they are
 * read only while the kernel says reclaim is going on:
 *
 *  - a PSI trigger with the smallest stall (1 ms per window, in the
 *    kernel's smallest window, 500 ms: PSI_WAKE_WINDOW_USEC) on
 *    /proc/pressure/memory or the cgroup's memory.pressure: kswapd counts
 *    as a stalled task while it reclaims (balance_pgdat() runs under
 *    psi_memstall_enter()), so the trigger fires at the first reclaim;
 *  - for a cgroup, memory.events: "max" is counted when a charge hits the
 *    limit, before the first reclaim attempt, "high" when memory.high is
 *    exceeded, "oom" and "oom_kill" for the kernel's OOM; kernfs_notify()
 *    wakes poll() at once (POLLPRI).
 *
 * A wake-up samples the counters at once and then every Poll BusyMSec=
 * while reclaim goes on or the owner says the scope is under pressure;
 * QuietSec= after the last reclaim the sampler stops. An idle machine costs
 * nothing: no timer runs. Every sample is a SAMPLE_RECLAIM (zero deltas
 * too: they tell the owner that the kernel woke us, so it samples the
 * headroom), the level engine turns whole windows into the seed's levels.
 * A sample taken because the PSI trigger fired carries the trigger's 1 ms
 * as Sample.stalled_usec: the stall band counts it at the first headroom
 * read of a fall (level_headroom_stall()).
 *
 * For the system scope with SystemPressure=machine only the reclaim of the
 * machine counts: /proc/vmstat's pgscan_kswapd/pgscan_direct leave out
 * the reclaim of a cgroup at its own limit (vmscan.c counts them only
 * when !cgroup_reclaim()), while pgscan_anon/pgscan_file include it.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>

#include "log.h"
#include "proc-parse.h"
#include "psi-trigger.h"
#include "read-file.h"
#include "source.h"

/* The wake-up trigger: "some" 1 ms per window. The kernel refuses a
 * threshold of 0; 1 ms is its smallest meaningful stall. */
#define RECLAIM_WAKE_STALL_USEC USEC_PER_MSEC

typedef struct MemcgEvents {
        uint64_t high, max, oom, oom_kill;
} MemcgEvents;

typedef struct ReclaimSource {
        Source source;
        int dir_fd;                     /* cgroup scope: the cgroup2 directory */
        int stat_fd;                    /* /proc/vmstat or memory.stat */
        int events_fd;                  /* cgroup scope: memory.events, or -EBADF */
        int psi_fd;                     /* the wake-up trigger, or -EBADF */
        sd_event_source *psi_event;
        sd_event_source *events_event;
        sd_event_source *timer;
        VmstatCounters last;
        MemcgEvents last_events;
        bool machine_only;              /* system scope, SystemPressure=machine */
        bool busy;                      /* set by the owner */
        bool sampling;                  /* the timer is on */
        bool dead;
        usec_t active_usec;             /* last wake-up or sample that saw reclaim */
        usec_t psi_window_usec;         /* the window the kernel accepted, 0 without PSI */
        uint64_t wakeups;               /* kernel events that armed the sampler */
        char stat_path[PATH_MAX + 32];
        char psi_path[PATH_MAX + 32];
        char buf[16384];                /* /proc/vmstat is ~4 KiB on 6.18, memory.stat ~1.5 KiB */
        char events_buf[256];           /* memory.events: ~60 bytes */
} ReclaimSource;

static void reclaim_disable(ReclaimSource *r) {
        r->dead = true;
        r->sampling = false;
        (void) sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(r->psi_event, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(r->events_event, SD_EVENT_OFF);
}

/* The caller must not touch r afterwards: the owner may free it. */
static void reclaim_gone(ReclaimSource *r, int error) {
        log_debug("%s: the reclaim source's files are gone (%s).", r->source.scope, strerror(-error));
        reclaim_disable(r);
        source_gone(&r->source, error);
}

static bool reclaim_cgroup_gone(ReclaimSource *r) {
        return r->dir_fd >= 0 && faccessat(r->dir_fd, "cgroup.procs", F_OK, 0) < 0 && errno == ENOENT;
}

/* A cgroup's memory.stat is one kernfs record, which one pread() returns
 * whole (READ_FILE_ONE_READ: no second call to see the end, each 3-25 µs
 * when the daemon has just woken, build-rel/bench/bench-reads). /proc/vmstat
 * is a seq_file of one record per counter, which the kernel hands out a page
 * at a time: ~4 KiB on 6.18, so it is read to the end. */
static int reclaim_read_counters(ReclaimSource *r, VmstatCounters *ret) {
        ssize_t n;

        n = read_small_fd(r->stat_fd, r->buf, sizeof(r->buf), r->source.cgroup[0] ? READ_FILE_ONE_READ : 0);
        if (n < 0)
                return (int) n;
        if (r->machine_only)
                return vmstat_parse_machine(r->buf, (size_t) n, ret);
        return vmstat_parse(r->buf, (size_t) n, ret);
}

static int reclaim_read_events(ReclaimSource *r, MemcgEvents *ret) {
        static const struct {
                const char *key;
                size_t offset;
        } keys[] = {
                { "high",     offsetof(MemcgEvents, high) },
                { "max",      offsetof(MemcgEvents, max) },
                { "oom",      offsetof(MemcgEvents, oom) },
                { "oom_kill", offsetof(MemcgEvents, oom_kill) },
        };
        ssize_t n;

        /* Reading is also what re-arms kernfs's poll for the next change;
         * one kernfs record, so one pread() returns it whole. */
        n = read_small_fd(r->events_fd, r->events_buf, sizeof(r->events_buf),
                          READ_FILE_TRUNCATE | READ_FILE_ONE_READ);
        if (n < 0)
                return (int) n;
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                uint64_t *v = (uint64_t *) ((char *) ret + keys[i].offset);
                if (keyed_u64_parse(r->events_buf, (size_t) n, keys[i].key, v) < 0)
                        *v = 0;
        }
        return 0;
}

static uint64_t counter_delta(uint64_t now, uint64_t before) {
        return now - before;    /* a counter never goes back; modulo 2^64 stays right */
}

/* Reads the counters and emits their deltas; STALLED: the PSI trigger woke
 * us (the sample carries the stall it guarantees). 0, or negative errno when
 * the cgroup is gone (then the owner may have freed r). */
static int reclaim_sample(ReclaimSource *r, usec_t now, bool stalled) {
        VmstatCounters c;
        Sample sample;
        int k;

        k = reclaim_read_counters(r, &c);
        if (k < 0) {
                if (reclaim_cgroup_gone(r)) {
                        reclaim_gone(r, -ENOENT);
                        return -ENOENT;
                }
                log_debug_errno(k, "%s: reading %s failed, ignoring: %m", r->source.scope, r->stat_path);
                return 0;
        }
        sample = (Sample) {
                .kind = SAMPLE_RECLAIM,
                .timestamp_usec = now,
                .scanned = counter_delta(c.pgscan, r->last.pgscan),
                .reclaimed = counter_delta(c.pgsteal, r->last.pgsteal),
                .stalled_usec = stalled ? RECLAIM_WAKE_STALL_USEC : 0,
        };
        r->last = c;
        if (sample.scanned > 0)
                r->active_usec = now;
        source_emit(&r->source, &sample);
        return 0;
}

static void reclaim_schedule(ReclaimSource *r, usec_t now) {
        (void) sd_event_source_set_time(r->timer, now + r->source.params->poll.busy_usec);
        (void) sd_event_source_set_enabled(r->timer, SD_EVENT_ONESHOT);
        r->sampling = true;
}

static bool reclaim_keep_sampling(const ReclaimSource *r, usec_t now) {
        return r->busy || r->active_usec + r->source.level->quiet_usec > now;
}

static int reclaim_on_timer(sd_event_source *es, uint64_t usec, void *userdata) {
        ReclaimSource *r = userdata;
        usec_t now = source_now_usec();

        if (r->dead)
                return 0;
        if (reclaim_sample(r, now, false) < 0)
                return 0;
        if (reclaim_keep_sampling(r, now))
                reclaim_schedule(r, now);
        else {
                r->sampling = false;
                log_debug("%s: reclaim quiet, sampler off.", r->source.scope);
        }
        return 0;
}

/* The kernel says something happened: sample now, then keep sampling. */
static void reclaim_wake(ReclaimSource *r, usec_t now, bool stalled) {
        r->wakeups++;
        r->active_usec = now;
        if (reclaim_sample(r, now, stalled) < 0)
                return;
        if (!r->sampling)
                reclaim_schedule(r, now);
}

static int reclaim_on_psi(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        ReclaimSource *r = userdata;

        if (r->dead)
                return 0;
        if (revents & (EPOLLERR | EPOLLHUP)) {
                /* Removing a cgroup2 directory destroys its triggers. */
                reclaim_gone(r, r->source.cgroup[0] ? -ENOENT : -EIO);
                return 0;
        }
        if (revents & EPOLLPRI) {
                bool was_sampling = r->sampling;

                reclaim_wake(r, source_now_usec(), true);
                /* After the sample and what it set off (a kill comes first). */
                log_debug("%s: the PSI trigger woke the reclaim source (%s).", r->source.scope,
                          was_sampling ? "already sampling" : "it was idle");
        }
        return 0;
}

static int reclaim_on_events(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        ReclaimSource *r = userdata;
        usec_t now = source_now_usec();
        MemcgEvents e;
        bool oom;

        if (r->dead)
                return 0;
        /* kernfs raises POLLERR|POLLPRI together on a change: only a failed
         * read says the file is gone. */
        if (reclaim_read_events(r, &e) < 0) {
                if (reclaim_cgroup_gone(r))
                        reclaim_gone(r, -ENOENT);
                else
                        (void) sd_event_source_set_enabled(es, SD_EVENT_OFF);
                return 0;
        }
        oom = e.oom > r->last_events.oom || e.oom_kill > r->last_events.oom_kill;
        r->last_events = e;
        if (oom) {
                Sample sample = { .kind = SAMPLE_OOM, .timestamp_usec = now };
                source_emit(&r->source, &sample);
        }
        reclaim_wake(r, now, false);
        return 0;
}

static int reclaim_open_psi(ReclaimSource *r, char *reason, size_t reason_size) {
        const Source *s = &r->source;
        usec_t window = PSI_WAKE_WINDOW_USEC;
        int k;

        if (s->cgroup[0])
                r->psi_fd = openat(r->dir_fd, "memory.pressure", O_RDWR | O_NONBLOCK | O_CLOEXEC);
        else
                r->psi_fd = open(r->psi_path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (r->psi_fd < 0) {
                k = -errno;
                (void) snprintf(reason, reason_size, "%s %s: the kernel has no PSI (built without "
                                "CONFIG_PSI, or booted with psi=0).", r->psi_path,
                                k == -ENOENT || k == -EOPNOTSUPP ? "does not exist" : strerror(-k));
                return k;
        }
        k = psi_trigger_write_or_2s(r->psi_fd, "some", RECLAIM_WAKE_STALL_USEC, &window);
        if (k < 0) {
                (void) snprintf(reason, reason_size, "Writing a PSI trigger to %s failed: %s.", r->psi_path,
                                strerror(-k));
                return k;
        }
        r->psi_window_usec = window;
        return sd_event_add_io(s->event, &r->psi_event, r->psi_fd, EPOLLPRI, reclaim_on_psi, r);
}

static int reclaim_open_cgroup(ReclaimSource *r, char *reason, size_t reason_size) {
        const Source *s = &r->source;
        char dir[PATH_MAX];
        int k;

        if (!s->env->cgroup2_root[0]) {
                (void) snprintf(reason, reason_size, "No cgroup2 hierarchy is mounted.");
                return -EOPNOTSUPP;
        }
        if ((size_t) snprintf(dir, sizeof(dir), "%s/%s", s->env->cgroup2_root, s->cgroup) >=
            sizeof(dir) - strlen("/memory.pressure"))
                return -ENAMETOOLONG;
        r->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (r->dir_fd < 0) {
                k = -errno;
                (void) snprintf(reason, reason_size, "The cgroup2 directory %s %s.", dir,
                                k == -ENOENT ? "does not exist" : strerror(-k));
                return k;
        }
        (void) snprintf(r->stat_path, sizeof(r->stat_path), "%s/memory.stat", dir);
        (void) snprintf(r->psi_path, sizeof(r->psi_path), "%s/memory.pressure", dir);
        r->stat_fd = openat(r->dir_fd, "memory.stat", O_RDONLY | O_CLOEXEC);
        if (r->stat_fd < 0) {
                k = -errno;
                (void) snprintf(reason, reason_size, "%s %s: the memory controller is not enabled for "
                                "this cgroup on cgroup2%s.", r->stat_path,
                                k == -ENOENT ? "does not exist" : strerror(-k),
                                s->env->memcg_v1_root[0] ? " (it is on cgroup v1)" : "");
                return k;
        }
        r->events_fd = openat(r->dir_fd, "memory.events", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (r->events_fd < 0) {
                k = -errno;
                (void) snprintf(reason, reason_size, "Cannot open memory.events of %s: %s.", dir, strerror(-k));
                return k;
        }
        k = reclaim_read_events(r, &r->last_events);
        if (k < 0) {
                (void) snprintf(reason, reason_size, "Reading memory.events of %s failed: %s.", dir,
                                strerror(-k));
                return k;
        }
        return sd_event_add_io(s->event, &r->events_event, r->events_fd, EPOLLPRI, reclaim_on_events, r);
}

static int reclaim_open_files(ReclaimSource *r, char *reason, size_t reason_size) {
        const Source *s = &r->source;
        int k;

        if (s->cgroup[0])
                return reclaim_open_cgroup(r, reason, reason_size);

        r->machine_only = s->params->system_pressure == SYSTEM_PRESSURE_MACHINE;
        (void) snprintf(r->stat_path, sizeof(r->stat_path), "%s/vmstat", s->env->proc_root);
        (void) snprintf(r->psi_path, sizeof(r->psi_path), "%s/pressure/memory", s->env->proc_root);
        r->stat_fd = open(r->stat_path, O_RDONLY | O_CLOEXEC);
        if (r->stat_fd < 0) {
                k = -errno;
                (void) snprintf(reason, reason_size, "Cannot open %s: %s.", r->stat_path, strerror(-k));
                return k;
        }
        return 0;
}

static int reclaim_open(Source *s, char *reason, size_t reason_size) {
        ReclaimSource *r = (ReclaimSource *) s;
        int k;

        r->dir_fd = r->stat_fd = r->events_fd = r->psi_fd = -EBADF;
        if (s->params->poll.busy_usec == 0) {
                (void) snprintf(reason, reason_size, "The busy poll interval must not be 0.");
                return -EINVAL;
        }
        k = reclaim_open_files(r, reason, reason_size);
        if (k < 0)
                return k;
        /* The baseline, and the proof that the counters are there. */
        k = reclaim_read_counters(r, &r->last);
        if (k < 0) {
                if (k == -EBADMSG)
                        (void) snprintf(reason, reason_size, "%s has no pgscan/pgsteal counters%s.", r->stat_path,
                                        r->machine_only ? " (pgscan_kswapd/pgscan_direct)" : "");
                else
                        (void) snprintf(reason, reason_size, "Reading %s failed: %s.", r->stat_path, strerror(-k));
                return k;
        }

        /* The system needs PSI to be woken; a cgroup has memory.events too,
         * which covers its own limit, but not reclaim of the whole machine. */
        k = reclaim_open_psi(r, reason, reason_size);
        if (k < 0 && !s->cgroup[0])
                return k;
        if (k < 0) {
                log_info("%s: %s The reclaim source wakes on memory.events only.", s->scope, reason);
                reason[0] = '\0';
                r->psi_fd = safe_close(r->psi_fd);
        }

        k = sd_event_add_time(s->event, &r->timer, CLOCK_MONOTONIC, USEC_INFINITY,
                              MIN(s->params->poll.busy_usec / 10, 10 * USEC_PER_MSEC), reclaim_on_timer, r);
        if (k < 0)
                return k;
        (void) sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
        return 0;
}

static void reclaim_close(Source *s) {
        ReclaimSource *r = (ReclaimSource *) s;

        r->timer = sd_event_source_disable_unref(r->timer);
        r->psi_event = sd_event_source_disable_unref(r->psi_event);
        r->events_event = sd_event_source_disable_unref(r->events_event);
        r->psi_fd = safe_close(r->psi_fd);
        r->events_fd = safe_close(r->events_fd);
        r->stat_fd = safe_close(r->stat_fd);
        r->dir_fd = safe_close(r->dir_fd);
}

/* Under pressure the sampler stays on until the owner says it is over. */
static void reclaim_set_busy(Source *s, bool busy) {
        ReclaimSource *r = (ReclaimSource *) s;

        r->busy = busy;
        if (busy && !r->dead && !r->sampling && r->timer)
                reclaim_schedule(r, source_now_usec());
}

static void reclaim_describe(const Source *s, char *buf, size_t size) {
        const ReclaimSource *r = (const ReclaimSource *) s;
        bool unprivileged = r->psi_window_usec != PSI_WAKE_WINDOW_USEC;
        char wake[160] = "no PSI";

        if (r->psi_window_usec > 0)
                (void) snprintf(wake, sizeof(wake), "PSI some 1 ms/%" PRIu64 " ms on %s%s",
                                r->psi_window_usec / USEC_PER_MSEC,
                                s->cgroup[0] ? "memory.pressure" : "/proc/pressure/memory",
                                unprivileged ? PSI_UNPRIVILEGED_NOTE : "");
        (void) snprintf(buf, size, "seed index from %s %s, woken by %s%s; sampled every %" PRIu64 " ms "
                        "while reclaiming",
                        s->cgroup[0] ? "memory.stat" : "/proc/vmstat",
                        s->cgroup[0] ? "pgscan/pgsteal" : r->machine_only ?
                        "pgscan/pgsteal_kswapd+direct (the machine's reclaim only)" :
                        "pgscan/pgsteal_anon+file (any cgroup's reclaim too)",
                        wake, r->events_fd >= 0 ? " and memory.events (max, high, oom)" : "",
                        s->params->poll.busy_usec / USEC_PER_MSEC);
}

const SourceOps source_reclaim_ops = {
        .type = SOURCE_RECLAIM,
        .size = sizeof(ReclaimSource),
        .open = reclaim_open,
        .close = reclaim_close,
        .set_busy = reclaim_set_busy,
        .describe = reclaim_describe,
};
