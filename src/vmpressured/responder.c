/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/syscall.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "policy-load.h"
#include "proc-scan.h"
#include "responder.h"
#include "unit-name.h"

struct linux_dirent64 {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

/* Without systemd to ask, units are looked for below this slice, where
 * systemd puts system services by default; user sessions' units are not
 * acted on. Under systemd, systemd_units says where each unit is. */
#define UNITS_SLICE "system.slice"

static bool policy_has_actions(const Policy *p) {
        if (p->state != POLICY_LOADED)
                return false;
        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++)
                if (p->actions[l].signal != 0 || p->actions[l].kill)
                        return true;
        return false;
}

/* Under systemd: the units systemd runs that have a policy in force, from
 * the cache systemd_units keeps (any slice, templates' instances). Copies
 * names and borrows cgroup paths; nothing is allocated, nothing asked. */
static int responder_list_cached_units(Responder *r, const UnitCgroupCache *c) {
        size_t n = 0;

        for (size_t i = 0; i < c->n && n < RESPONDER_UNITS_MAX; i++) {
                const Policy *p = policy_set_find(r->policies, c->entries[i].unit);

                if (!p || !policy_has_actions(p))
                        continue;       /* its policy went with a reload; the next refresh drops it */
                memcpy(r->units[n], c->entries[i].unit, UNIT_NAME_MAX);
                r->unit_cgroups[n++] = c->entries[i].cgroup;
        }
        return (int) n;
}

/* Fills r->units with the units that have a policy in force: systemd's
 * cache when there is one, else the units below system.slice.
 * getdents64 into a buffer of our own: opendir() would allocate.
 * Returns how many, or negative errno. */
static int responder_list_units(Responder *r) {
        const UnitCgroupCache *cache = systemd_units_cache(r->systemd_units);
        char path[PATH_MAX + 32];
        _cleanup_(closep) int fd = -EBADF;
        size_t n = 0;

        if (cache)
                return responder_list_cached_units(r, cache);
        (void) snprintf(path, sizeof(path), "%s/" UNITS_SLICE, r->cgroup_root);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;

        for (;;) {
                long k = syscall(SYS_getdents64, fd, r->dirent_buf, sizeof(r->dirent_buf));
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                for (long off = 0; off < k;) {
                        struct linux_dirent64 *d = (struct linux_dirent64 *) (r->dirent_buf + off);
                        const Policy *p;

                        off += d->d_reclen;
                        if (d->d_type != DT_DIR || !unit_name_is_valid(d->d_name, UNIT_NAME_PLAIN | UNIT_NAME_INSTANCE))
                                continue;
                        p = policy_set_find(r->policies, d->d_name);
                        if (!p || !policy_has_actions(p))
                                continue;
                        if (n >= RESPONDER_UNITS_MAX) {
                                log_warning("More than %d units with policies, ignoring %s.",
                                            RESPONDER_UNITS_MAX, d->d_name);
                                continue;
                        }
                        r->unit_cgroups[n] = NULL;
                        (void) snprintf(r->units[n++], UNIT_NAME_MAX, "%s", d->d_name);
                }
        }
        return (int) n;
}

/* The cgroup directory of r->units[i]: systemd's word, else system.slice/<unit>. */
static int unit_dir(Responder *r, int i, char *buf, size_t size) {
        int n;

        if (!r->unit_cgroups[i])
                return unit_cgroup_dir(r->cgroup_root, r->units[i], buf, size);
        n = snprintf(buf, size, "%s%s", r->cgroup_root, r->unit_cgroups[i]);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

static void responder_signal(Responder *r, int i, const PolicyAction *a, Level level) {
        const char *unit = r->units[i];
        char dir[PATH_MAX];
        int k;

        if (unit_dir(r, i, dir, sizeof(dir)) < 0)
                return;
        /* Under systemd the signal goes through KillUnit, so systemd knows the
         * unit's main process and logs it; the connection may have changed. */
        r->ctx->systemd_bus = r->systemd && r->get_bus ? r->get_bus(r->get_bus_userdata) : NULL;
        k = r->ops->signal_unit(r->ctx, unit, dir, a->signal, a->signal_target);
        manager_record_action(r->manager, unit, level, false, a->signal, 0, k);
        if (k < 0)
                manager_print(r->manager, "action unit=%s level=%s signal=%s target=%s result=%s", unit,
                              level_to_string(level), signal_to_string(a->signal),
                              signal_target_to_string(a->signal_target), strerrorname_np(-k) ?: "error");
        else
                manager_print(r->manager, "action unit=%s level=%s signal=%s target=%s result=%d", unit,
                              level_to_string(level), signal_to_string(a->signal),
                              signal_target_to_string(a->signal_target), k);
        if (k < 0 && k != -ESRCH)
                log_warning_errno(k, "%s: cannot send %s at %s, ignoring: %m", unit,
                                  signal_to_string(a->signal), level_to_string(level));
        else if (k >= 0)
                r->n_signals++;
}

/* Whether scope s is the own cgroup of r->units[i]: by path when systemd
 * said where the unit is (a scope is named after its last component, which
 * systemd escapes for some unit names), else by name. */
static bool scope_is_unit(const Responder *r, const Scope *s, int i) {
        if (r->unit_cgroups[i])
                return streq(s->cgroup + (s->cgroup[0] == '/'), r->unit_cgroups[i] + 1);
        return streq(s->name, r->units[i]);
}

/* SignalIntervalSec=: one signal per unit and level per interval. What is
 * held back is shown (--print-events, the log at info) and counted. */
static bool responder_may_signal(Responder *r, const char *unit, const Policy *p, Level level, usec_t now_usec) {
        usec_t next;

        if (signal_limit_check(&r->signal_limit, unit, level, now_usec, p->signal_interval_usec, &next))
                return true;
        manager_print(r->manager, "suppressed unit=%s level=%s signal=%s interval_usec=%" PRIu64
                      " next_usec=%" PRIu64 " suppressed=%" PRIu64, unit, level_to_string(level),
                      signal_to_string(p->actions[level].signal), p->signal_interval_usec, next,
                      signal_limit_suppressed(&r->signal_limit, unit));
        log_info("%s: not sending %s at %s again within SignalIntervalSec=%" PRIu64 ".%03" PRIu64
                 "s (%" PRIu64 " held back so far).", unit, signal_to_string(p->actions[level].signal),
                 level_to_string(level), p->signal_interval_usec / USEC_PER_SEC,
                 p->signal_interval_usec % USEC_PER_SEC / USEC_PER_MSEC,
                 signal_limit_suppressed(&r->signal_limit, unit));
        return false;
}

/* Signals of every level the pressure passed on the way up: a jump from
 * NONE to OOM still gives the unit its chance to flush caches first. */
static void responder_signals(Responder *r, const Scope *s, const LevelEvent *ev, int n_units) {
        Level from = ev->previous + 1;

        /* A fall (OOM → MEDIUM) is relief, not a new level to act on. */
        if (ev->previous >= ev->level)
                return;
        for (Level l = MAX(from, LEVEL_LOW); l <= ev->level; l++)
                for (int i = 0; i < n_units; i++) {
                        const Policy *p = policy_set_find(r->policies, r->units[i]);
                        bool system = p->scope == POLICY_SCOPE_SYSTEM;

                        if (p->actions[l].signal == 0)
                                continue;
                        if (system ? s != s->manager->scopes[0] : !scope_is_unit(r, s, i))
                                continue;
                        if (!responder_may_signal(r, r->units[i], p, l, ev->timestamp_usec))
                                continue;
                        responder_signal(r, i, &p->actions[l], l);
                }
}

/* Candidates from the units whose policy marks them killable and whose
 * level this is: all of them for the system, the unit itself for its own
 * scope. */
static size_t responder_candidates(Responder *r, const Scope *s, int n_units) {
        size_t n = 0;
        char dir[PATH_MAX];

        for (int i = 0; i < n_units; i++) {
                const Policy *p = policy_set_find(r->policies, r->units[i]);

                if (!p->actions[LEVEL_OOM].kill)
                        continue;
                if (p->scope == POLICY_SCOPE_SYSTEM ? s != s->manager->scopes[0] : !scope_is_unit(r, s, i))
                        continue;
                if (unit_dir(r, i, dir, sizeof(dir)) < 0)
                        continue;
                (void) proc_scan_cgroup(r->ctx->proc_root, dir, r->units[i], true, r->ctx->page_size,
                                        r->candidates, RESPONDER_CANDIDATES_MAX, &n);
        }
        return n;
}

static int responder_kill_one(Responder *r, const Candidate *c, const char *reason) {
        KillRequest req = {
                .pid = c->pid,
                .starttime_ticks = c->starttime_ticks,
                .unit = c->unit,
                .comm = c->comm,
                .rss_bytes = c->rss_bytes,
                .reason = reason,
        };
        KillResult res = {};
        int k;

        k = r->ops->kill_process(r->ctx, &req, &res);
        manager_record_action(r->manager, c->unit, LEVEL_OOM, true, SIGKILL, c->pid, k);
        if (k == 0)
                manager_print(r->manager, "would-kill unit=%s pid=%i comm=%s rss_bytes=%" PRIu64 " reason=%s",
                              c->unit, (int) c->pid, c->comm, c->rss_bytes, reason);
        if (k > 0) {
                manager_print(r->manager, "killed unit=%s pid=%i comm=%s rss_bytes=%" PRIu64 " reason=%s",
                              c->unit, (int) c->pid, c->comm, c->rss_bytes, reason);
                r->n_kills++;
                if (r->on_killed)
                        r->on_killed(r, c->unit, c->pid, c->comm, c->rss_bytes, reason, r->on_killed_userdata);
        } else if (k < 0)
                log_notice_errno(k, "%s: not killing %s[%i]: %m", c->unit, c->comm, (int) c->pid);
        return k;
}

static void responder_kill(Responder *r, const Scope *s, const LevelEvent *ev, int n_units) {
        char reason[300];
        const Policy *p;
        size_t n;
        int v;

        if (!kill_pacer_may_kill(&r->pacer, ev->timestamp_usec)) {
                log_debug("%s: OOM, but a kill happened less than the pause ago; waiting.", s->name);
                return;
        }
        n = responder_candidates(r, s, n_units);
        v = victim_select(r->candidates, MIN(n, (size_t) RESPONDER_CANDIDATES_MAX), r->ctx->self_pid);
        if (v < 0) {
                log_notice("%s: OOM, but no process of a unit marked Kill=yes can be killed.", s->name);
                return;
        }

        (void) snprintf(reason, sizeof(reason), "OOM on %s", s->name);
        p = policy_set_find(r->policies, r->candidates[v].unit);
        if (p && p->actions[LEVEL_OOM].kill_target == KILL_TARGET_UNIT) {
                size_t k = victim_select_unit(r->candidates, MIN(n, (size_t) RESPONDER_CANDIDATES_MAX),
                                              r->candidates[v].unit, r->ctx->self_pid, r->picked,
                                              ELEMENTSOF(r->picked));
                for (size_t i = 0; i < k; i++)
                        (void) responder_kill_one(r, &r->candidates[r->picked[i]], reason);
        } else
                (void) responder_kill_one(r, &r->candidates[v], reason);

        kill_pacer_record(&r->pacer, ev->timestamp_usec);
}

static void on_level(Manager *m, const Scope *s, const LevelEvent *ev, void *userdata) {
        Responder *r = userdata;
        int n_units;

        if (ev->level == LEVEL_NONE || !r->policies)
                return;
        /* Signals once per rise; kills again on OOM repeats, paced. */
        if (ev->repeat && ev->level != LEVEL_OOM)
                return;

        n_units = responder_list_units(r);
        if (n_units <= 0) {
                if (n_units < 0 && n_units != -ENOENT)
                        log_warning_errno(n_units, "Cannot list the units below %s, ignoring: %m", r->cgroup_root);
                return;
        }
        if (!ev->repeat)
                responder_signals(r, s, ev, n_units);
        if (ev->level == LEVEL_OOM)
                responder_kill(r, s, ev, n_units);
}

/* A unit-scope policy watches the unit's own cgroup: rel is below the
 * hierarchies' roots, with or without the leading '/'. */
static void responder_watch_unit(Responder *r, const char *unit, const char *rel) {
        const Policy *p = policy_set_find(r->policies, unit);

        if (!p || p->scope != POLICY_SCOPE_UNIT)
                return;
        if (manager_watch(r->manager, rel[0] == '/' ? rel + 1 : rel, NULL) > 0)
                log_info("%s: watching its cgroup %s (Scope=unit).", unit, rel);
}

/* Unit-scope policies watch the unit's own cgroup: where systemd says it is
 * (for the units already known; the others when systemd_units learns of
 * them, units_started()), else as systemd lays it out by default. */
static void responder_watch_units(Responder *r) {
        if (r->systemd_units) {
                const UnitCgroupCache *c = &r->systemd_units->cache;

                for (size_t i = 0; i < c->n; i++)
                        responder_watch_unit(r, c->entries[i].unit, c->entries[i].cgroup);
                return;
        }
        for (size_t i = 0; i < r->policies->n; i++) {
                const Policy *p = &r->policies->policies[i];
                char cg[PATH_MAX];

                if (p->state != POLICY_LOADED || p->scope != POLICY_SCOPE_UNIT || p->is_template)
                        continue;
                if (unit_name_to_cgroup_path(p->unit, cg, sizeof(cg)) < 0)
                        continue;
                (void) manager_watch(r->manager, cg[0] == '/' ? cg + 1 : cg, NULL);
        }
}

/* ---- systemd_units' callbacks: off the OOM path ---- */

static sd_bus *units_get_bus(void *userdata) {
        Responder *r = userdata;

        return r->get_bus ? r->get_bus(r->get_bus_userdata) : NULL;
}

static bool units_wanted(const char *unit, void *userdata) {
        Responder *r = userdata;
        const Policy *p = policy_set_find(r->policies, unit);

        return p && policy_has_actions(p);
}

/* A unit entered the cache, or a job of systemd's on it (a start, a
 * restart) ended: new processes, which have had no signal yet. */
static void units_started(const char *unit, const char *cgroup, void *userdata) {
        Responder *r = userdata;

        signal_limit_reset(&r->signal_limit, unit);
        responder_watch_unit(r, unit, cgroup);
}

static void log_diagnostics(const Diagnostics *d) {
        for (size_t i = 0; i < d->n; i++)
                log_warning("%s", d->msg[i]);
        if (d->n_dropped > 0)
                log_warning("… and %zu more problems in policy files.", d->n_dropped);
}

static int on_reload(Manager *m, Diagnostics *diag, void *userdata) {
        Responder *r = userdata;

        /* DryRun= may have changed with the configuration. */
        r->ops = m->config.dry_run ? &action_ops_dry_run : &action_ops_real;
        return responder_reload(r, diag);
}

int responder_new(Manager *m, const char *const *dirs, size_t n_dirs, Responder **ret) {
        _cleanup_(responder_freep) Responder *r = NULL;
        _cleanup_(freep) Diagnostics *diag = NULL;
        int k;

        r = calloc(1, sizeof(Responder));
        diag = calloc(1, sizeof(Diagnostics));
        if (!r || !diag)
                return -ENOMEM;
        r->manager = m;
        r->policy_dirs = dirs ?: policy_dirs_default;
        r->n_policy_dirs = dirs ? n_dirs : ELEMENTSOF(policy_dirs_default);
        r->ops = m->config.dry_run ? &action_ops_dry_run : &action_ops_real;
        kill_pacer_init(&r->pacer, KILL_PAUSE_DEFAULT_USEC);
        r->systemd = sd_booted() > 0;
        (void) snprintf(r->cgroup_root, sizeof(r->cgroup_root), "%s",
                        m->env.cgroup2_root[0] ? m->env.cgroup2_root : m->env.memcg_v1_root);

        k = action_context_new(0, NULL, &r->ctx);
        if (k < 0)
                return k;
        signal_limit_init(&r->signal_limit);
        if (r->systemd) {
                k = systemd_units_new(m->event, &(SystemdUnitsCallbacks) {
                                              .get_bus = units_get_bus,
                                              .wanted = units_wanted,
                                              .started = units_started,
                                      }, r, &r->systemd_units);
                if (k < 0)
                        return k;
        }

        k = policy_set_load(r->policy_dirs, r->n_policy_dirs, &r->policies, diag);
        if (k < 0)              /* -ENOMEM, -EMFILE: never start with policies missing */
                return k;
        log_diagnostics(diag);
        if (r->policies)
                log_info("Loaded %zu policies%s.", policy_set_count_loaded(r->policies),
                         m->config.dry_run ? " (dry run: nothing will be changed)" : "");

        manager_set_reload_hook(m, on_reload, r);
        k = manager_add_listener(m, on_level, r);
        if (k < 0)
                return k;
        if (r->policies)
                responder_watch_units(r);

        *ret = TAKE_PTR(r);
        return 0;
}

Responder *responder_free(Responder *r) {
        if (!r)
                return NULL;
        systemd_units_free(r->systemd_units);
        policy_set_free(r->policies);
        action_context_free(r->ctx);
        free(r);
        return NULL;
}

void responder_set_killed_handler(Responder *r, responder_killed_handler_t h, void *userdata) {
        r->on_killed = h;
        r->on_killed_userdata = userdata;
}

int responder_reload(Responder *r, Diagnostics *diag) {
        PolicySet *set = NULL;
        int k;

        diag_clear(diag);
        k = policy_set_load(r->policy_dirs, r->n_policy_dirs, &set, diag);
        if (k < 0) {
                policy_set_free(set);
                return k;
        }
        if (diag_count(diag) > 0) {
                log_diagnostics(diag);
                log_warning("Policy reload had problems; keeping the %zu policies in force.",
                            r->policies ? policy_set_count_loaded(r->policies) : 0);
                policy_set_free(set);
                return -EINVAL;
        }
        policy_set_free(r->policies);
        r->policies = set;
        responder_watch_units(r);
        /* Which units have a policy changed: ask systemd where they are. */
        if (r->systemd_units)
                (void) systemd_units_refresh(r->systemd_units);
        log_info("Reloaded %zu policies.", policy_set_count_loaded(set));
        return 0;
}

void responder_set_bus_getter(Responder *r, struct sd_bus *(*get_bus)(void *userdata), void *userdata) {
        r->get_bus = get_bus;
        r->get_bus_userdata = userdata;
}
