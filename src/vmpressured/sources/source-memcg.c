/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v1 memcg notifications: memory.pressure_level (the merged form of
 * the seed's algorithm, per cgroup) and memory.oom_control, each delivered
 * through an eventfd registered with cgroup.event_control.
 *
 * Listener mode. In mm/vmpressure.c an event is raised on the memcg that
 * reclaim targets (the root memcg for reclaim of the whole machine, a cgroup
 * for reclaim at its own limit) and walks up to the root: a "local" listener
 * only hears its own memcg's reclaim, a "default" one also its children's
 * unless a default listener further down fired first.
 *  - System scope, SystemPressure=machine (the default): "local" on the root.
 *    Only reclaim of the whole machine (kswapd, direct reclaim; inside a
 *    container, reclaim at the container's own limit) is system pressure. A
 *    unit at its MemoryMax= is that unit's business: the kernel only reclaims
 *    and OOM-kills inside it, so a Scope=system policy must not kill another
 *    unit for it (measured in bench/compare: with "default" a 256 MiB memcg
 *    at its limit took the whole system to OOM).
 *  - System scope, SystemPressure=any-cgroup: the kernel's "default" mode; a
 *    cgroup at its own limit counts as system pressure (the integration tests
 *    use it: they may only make pressure inside small memcgs).
 *  - A watched cgroup (Watch=, Scope=unit): "default", so its events are
 *    announced on the unit scope, and not again on the system scope in
 *    any-cgroup mode.
 *
 * memory.oom_control notifies the memcg that is out of memory and its
 * descendants, never its ancestors: a root listener only fires when the root
 * memcg itself is under OOM.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/stat.h>

#include "log.h"
#include "source.h"

typedef struct MemcgSource {
        Source source;
        int dir_fd;                             /* the cgroup directory, to see whether it still exists */
        int pressure_fd[_LEVEL_MAX];            /* eventfds for [LOW], [MEDIUM], [OOM] */
        int oom_fd;                             /* eventfd for memory.oom_control */
        sd_event_source *pressure_event[_LEVEL_MAX];
        sd_event_source *oom_event;
        /* eventfds for the usage thresholds of a Guard= (its mark, and the
         * warning mark below it), or -EBADF */
        int mark_fd[_SOURCE_MARK_MAX];
        sd_event_source *mark_event[_SOURCE_MARK_MAX];
        uint64_t mark_bytes[_SOURCE_MARK_MAX];
        /* The levels below the last event's, whose eventfds that event also
         * signalled, drained at the next dispatch (memcg_on_pressure()). */
        Level drain_below;
        bool dead;
} MemcgSource;

/* The suffix for memory.pressure_level's registration: "" is the kernel's
 * default mode. */
static const char *memcg_listen_mode(const MemcgSource *m) {
        bool system = m->source.cgroup[0] == '\0';

        return system && m->source.params->system_pressure == SYSTEM_PRESSURE_MACHINE ? ",local" : "";
}

bool memcg_pressure_level_unreadable(const SourceEnv *env) {
        char path[PATH_MAX + 32];
        struct stat st;

        if (env->memcg_v1_root[0] == '\0')
                return false;
        (void) snprintf(path, sizeof(path), "%s/memory.pressure_level", env->memcg_v1_root);
        return stat(path, &st) >= 0 && (st.st_mode & 0444) == 0;
}

/* The kernel's names in memory.pressure_level. */
static const char *const memcg_level_name[_LEVEL_MAX] = {
        [LEVEL_LOW]    = "low",
        [LEVEL_MEDIUM] = "medium",
        [LEVEL_OOM]    = "critical",
};

/* Writing to cgroup.event_control of a removed cgroup fails, but the
 * removal also fires every registered eventfd once: an event is only real
 * while the directory still has its files. */
static bool memcg_alive(MemcgSource *m) {
        return faccessat(m->dir_fd, "cgroup.procs", F_OK, 0) >= 0;
}

static void memcg_disable(MemcgSource *m) {
        m->dead = true;
        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++)
                (void) sd_event_source_set_enabled(m->pressure_event[l], SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(m->oom_event, SD_EVENT_OFF);
        for (SourceMark k = 0; k < _SOURCE_MARK_MAX; k++)
                (void) sd_event_source_set_enabled(m->mark_event[k], SD_EVENT_OFF);
}

/* Returns true (after handing the source to its owner, which may free it)
 * when the cgroup is gone: the caller must not touch m afterwards. */
static bool memcg_check_gone(MemcgSource *m) {
        /* The root memcg (the system scope's) is never removed: no path
         * lookup before an announcement of system pressure. */
        if (!m->source.cgroup[0] || memcg_alive(m))
                return false;
        log_debug("%s: memory cgroup '%s' was removed.", m->source.scope, m->source.cgroup);
        memcg_disable(m);
        source_gone(&m->source, -ENOENT);
        return true;
}

/* Non-blocking: true when the eventfd had been signalled. */
static bool eventfd_drain(int fd) {
        uint64_t counter;

        return fd >= 0 && read(fd, &counter, sizeof(counter)) == (ssize_t) sizeof(counter) && counter > 0;
}

/* One kernel event of level L signals the listeners of every level up to
 * L, and a burst of reclaim several: the highest signalled is the event.
 * The eventfds are read from the top, so an OOM is known after one read,
 * and those below the event's level (signalled by the same event) are
 * drained at the next dispatch, after the announcement: that is the
 * handler of another of the three, pending from the same wake-up, or of
 * the next event. A lower level signalled in between is lost with them;
 * it adds nothing to the higher one just seen. */
static int memcg_on_pressure(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        MemcgSource *m = userdata;
        usec_t now = source_now_usec();
        Level highest = LEVEL_NONE;
        Sample sample;

        if (m->dead)
                return 0;
        for (Level l = LEVEL_LOW; l < m->drain_below; l++)
                (void) eventfd_drain(m->pressure_fd[l]);
        m->drain_below = LEVEL_LOW;
        for (Level l = _LEVEL_MAX - 1; l >= LEVEL_LOW; l--)
                if (eventfd_drain(m->pressure_fd[l])) {
                        highest = l;
                        break;
                }
        if (highest == LEVEL_NONE)
                return 0;               /* drained already, by the handler of another level */
        m->drain_below = highest;
        if (memcg_check_gone(m))
                return 0;

        sample = (Sample) {
                .kind = SAMPLE_LEVEL,
                .timestamp_usec = now,
                .level = highest,
                .index = level_nominal_index(m->source.level, highest),
        };
        source_emit(&m->source, &sample);
        return 0;
}

static int memcg_on_oom(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        MemcgSource *m = userdata;
        usec_t now = source_now_usec();
        Sample sample;

        if (m->dead || !eventfd_drain(fd))
                return 0;
        if (memcg_check_gone(m))
                return 0;

        sample = (Sample) { .kind = SAMPLE_OOM, .timestamp_usec = now };
        source_emit(&m->source, &sample);
        return 0;
}

/* The usage crossed a mark (either way: the kernel signals both). It
 * names no level: an empty reclaim sample tells the owner to read the
 * headroom now, as the reclaim source's wake-ups do; the headroom says
 * which band the cgroup is in. */
static int memcg_on_mark(sd_event_source *es, int fd, uint32_t revents, void *userdata) {
        MemcgSource *m = userdata;
        Sample sample;

        if (m->dead || !eventfd_drain(fd))
                return 0;
        if (memcg_check_gone(m))
                return 0;
        sample = (Sample) { .kind = SAMPLE_RECLAIM, .timestamp_usec = source_now_usec() };
        source_emit(&m->source, &sample);
        return 0;
}

/* "<event fd> <control file fd> [args]" to cgroup.event_control. */
static int memcg_register(MemcgSource *m, int control_fd, int efd, const char *args) {
        char line[64];
        ssize_t k;
        int fd, n, r = 0;

        n = snprintf(line, sizeof(line), "%d %d%s%s", efd, control_fd, args ? " " : "", args ?: "");
        fd = openat(m->dir_fd, "cgroup.event_control", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        k = write(fd, line, (size_t) n);
        if (k < 0)
                r = -errno;
        else if (k != n)
                r = -EIO;
        safe_close(fd);
        return r;
}

static int memcg_add_eventfd(MemcgSource *m, int control_fd, const char *args,
                             sd_event_io_handler_t handler, int *ret_fd, sd_event_source **ret_event) {
        int r;

        *ret_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (*ret_fd < 0)
                return -errno;
        r = memcg_register(m, control_fd, *ret_fd, args);
        if (r < 0)
                return r;
        return sd_event_add_io(m->source.event, ret_event, *ret_fd, EPOLLIN, handler, m);
}

static int memcg_open_dir(MemcgSource *m, char *reason, size_t reason_size) {
        const SourceEnv *env = m->source.env;
        char path[PATH_MAX];

        if (!env->memcg_v1_root[0]) {
                (void) snprintf(reason, reason_size,
                                "The cgroup v1 memory controller is not mounted "
                                "(no cgroup mount with the memory option in /proc/self/mountinfo).");
                return -EOPNOTSUPP;
        }
        if ((size_t) snprintf(path, sizeof(path), "%s%s%s", env->memcg_v1_root,
                              m->source.cgroup[0] ? "/" : "", m->source.cgroup) >= sizeof(path))
                return -ENAMETOOLONG;

        m->dir_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (m->dir_fd < 0) {
                int r = -errno;
                (void) snprintf(reason, reason_size, "The memory cgroup directory %s %s.", path,
                                r == -ENOENT ? "does not exist" : strerror(-r));
                return r;
        }
        if (faccessat(m->dir_fd, "memory.pressure_level", F_OK, 0) < 0) {
                int r = -errno;
                (void) snprintf(reason, reason_size, "%s/memory.pressure_level %s: the kernel has no "
                                "memcg v1 pressure notifications.", path,
                                r == -ENOENT ? "does not exist" : strerror(-r));
                return r;
        }
        return 0;
}

/* The control file fds only serve the registration: the kernel keeps what
 * it needs, and closing an eventfd unregisters it. */
static int memcg_register_pressure(MemcgSource *m) {
        char args[32];
        int fd, r = 0;

        fd = openat(m->dir_fd, "memory.pressure_level", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (Level l = LEVEL_LOW; l < _LEVEL_MAX && r >= 0; l++) {
                (void) snprintf(args, sizeof(args), "%s%s", memcg_level_name[l], memcg_listen_mode(m));
                r = memcg_add_eventfd(m, fd, args, memcg_on_pressure, &m->pressure_fd[l],
                                      &m->pressure_event[l]);
        }
        safe_close(fd);
        return r;
}

static int memcg_register_oom(MemcgSource *m) {
        int fd, r;

        fd = openat(m->dir_fd, "memory.oom_control", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = memcg_add_eventfd(m, fd, NULL, memcg_on_oom, &m->oom_fd, &m->oom_event);
        safe_close(fd);
        return r;
}

/* A usage threshold on memory.usage_in_bytes: the kernel checks it while
 * charging (every 128 pages charged or freed per CPU, mem_cgroup_threshold())
 * and signals the eventfd in the charging task, so the wake-up comes before
 * the charge that hits the limit. A new mark replaces the old one of its
 * kind (closing an eventfd unregisters it); 0 takes it off. */
static int memcg_set_mark(Source *s, SourceMark which, uint64_t usage_bytes) {
        MemcgSource *m = (MemcgSource *) s;
        sd_event_source *event = NULL;
        char args[32];
        int fd, efd = -EBADF, r;

        if (m->dead || m->dir_fd < 0)
                return -ESTALE;
        if (usage_bytes == 0) {
                m->mark_event[which] = sd_event_source_disable_unref(m->mark_event[which]);
                m->mark_fd[which] = safe_close(m->mark_fd[which]);
                m->mark_bytes[which] = 0;
                return 0;
        }
        if (m->mark_fd[which] >= 0 && m->mark_bytes[which] == usage_bytes)
                return 0;
        fd = openat(m->dir_fd, "memory.usage_in_bytes", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        (void) snprintf(args, sizeof(args), "%" PRIu64, usage_bytes);
        r = memcg_add_eventfd(m, fd, args, memcg_on_mark, &efd, &event);
        safe_close(fd);
        if (r < 0) {
                sd_event_source_disable_unref(event);
                safe_close(efd);
                return r;
        }
        m->mark_event[which] = sd_event_source_disable_unref(m->mark_event[which]);
        m->mark_fd[which] = safe_close(m->mark_fd[which]);
        m->mark_fd[which] = efd;
        m->mark_event[which] = event;
        m->mark_bytes[which] = usage_bytes;
        return 0;
}

static int memcg_open(Source *s, char *reason, size_t reason_size) {
        MemcgSource *m = (MemcgSource *) s;
        const char *file;
        int r;

        for (SourceMark k = 0; k < _SOURCE_MARK_MAX; k++)
                m->mark_fd[k] = -EBADF;
        m->dir_fd = m->oom_fd = -EBADF;
        for (Level l = 0; l < _LEVEL_MAX; l++)
                m->pressure_fd[l] = -EBADF;

        r = memcg_open_dir(m, reason, reason_size);
        if (r < 0)
                return r;

        file = "memory.pressure_level";
        r = memcg_register_pressure(m);
        if (r >= 0) {
                file = "memory.oom_control";
                r = memcg_register_oom(m);
        }
        if (r < 0)
                (void) snprintf(reason, reason_size, "Registering for %s of memory cgroup '%s' through "
                                "cgroup.event_control failed: %s.", file, s->cgroup[0] ? s->cgroup : "/",
                                strerror(-r));
        return r;
}

static void memcg_close(Source *s) {
        MemcgSource *m = (MemcgSource *) s;

        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++) {
                m->pressure_event[l] = sd_event_source_disable_unref(m->pressure_event[l]);
                m->pressure_fd[l] = safe_close(m->pressure_fd[l]);
        }
        m->oom_event = sd_event_source_disable_unref(m->oom_event);
        m->oom_fd = safe_close(m->oom_fd);
        for (SourceMark k = 0; k < _SOURCE_MARK_MAX; k++) {
                m->mark_event[k] = sd_event_source_disable_unref(m->mark_event[k]);
                m->mark_fd[k] = safe_close(m->mark_fd[k]);
        }
        m->dir_fd = safe_close(m->dir_fd);
}

const SourceOps source_memcg_ops = {
        .type = SOURCE_MEMCG,
        .size = sizeof(MemcgSource),
        .open = memcg_open,
        .close = memcg_close,
        .set_busy = NULL,
        .set_mark = memcg_set_mark,
};
