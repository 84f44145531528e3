/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/syscall.h>
#include <systemd/sd-daemon.h>

#include "event-value.h"
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

/* The cgroup of r->units[i] below the hierarchies' root, without a
 * leading '/': systemd's word, else system.slice/<unit>. */
static int unit_rel_cgroup(const Responder *r, int i, char *buf, size_t size) {
        int n;

        if (!r->unit_cgroups[i])
                return unit_name_to_cgroup_path(r->units[i], buf, size);
        n = snprintf(buf, size, "%s", r->unit_cgroups[i] + (r->unit_cgroups[i][0] == '/'));
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

/* The cgroup directory of r->units[i]. */
static int unit_dir(const Responder *r, int i, char *buf, size_t size) {
        char rel[PATH_MAX];
        int k, n;

        k = unit_rel_cgroup(r, i, rel, sizeof(rel));
        if (k < 0)
                return k;
        n = snprintf(buf, size, "%s%s%s", r->cgroup_root, rel[0] ? "/" : "", rel);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

static void responder_signal(Responder *r, int i, const PolicyAction *a, Level level) {
        const char *unit = r->units[i];
        char dir[PATH_MAX], unit_text[EVENT_VALUE_SIZE(UNIT_NAME_MAX)];
        int k;

        if (unit_dir(r, i, dir, sizeof(dir)) < 0)
                return;
        /* Under systemd the signal goes through KillUnit, so systemd knows the
         * unit's main process and logs it; the connection may have changed. */
        r->ctx->systemd_bus = r->systemd && r->get_bus ? r->get_bus(r->get_bus_userdata) : NULL;
        k = r->ops->signal_unit(r->ctx, unit, dir, a->signal, a->signal_target);
        manager_record_action(r->manager, unit, level, false, a->signal, 0, k);
        (void) event_value_escape(unit, unit_text, sizeof(unit_text));
        if (k < 0)
                manager_print(r->manager, "action unit=%s level=%s signal=%s target=%s result=%s", unit_text,
                              level_to_string(level), signal_to_string(a->signal),
                              signal_target_to_string(a->signal_target), strerrorname_np(-k) ?: "error");
        else
                manager_print(r->manager, "action unit=%s level=%s signal=%s target=%s result=%d", unit_text,
                              level_to_string(level), signal_to_string(a->signal),
                              signal_target_to_string(a->signal_target), k);
        if (k < 0 && k != -ESRCH)
                log_warning_errno(k, "%s: cannot send %s at %s, ignoring: %m", unit,
                                  signal_to_string(a->signal), level_to_string(level));
        else if (k >= 0)
                r->n_signals++;
}

/* a and b name the same cgroup: slashes at either end do not count. */
static bool cgroup_path_equal(const char *a, const char *b) {
        size_t la, lb;

        a += strspn(a, "/");
        b += strspn(b, "/");
        la = strlen(a);
        lb = strlen(b);
        while (la > 0 && a[la - 1] == '/')
                la--;
        while (lb > 0 && b[lb - 1] == '/')
                lb--;
        return la == lb && memcmp(a, b, la) == 0;
}

/* Whether scope s is the own cgroup of r->units[i]: by path, never by
 * name. A scope is named after its cgroup's last component, which does not
 * tell whose it is: "other.slice/db.service" (watched with --watch=) is not
 * db.service's, and systemd escapes some names in paths ("_cpu.service"). */
static bool scope_is_unit(const Responder *r, const Scope *s, int i) {
        char rel[PATH_MAX];

        if (unit_rel_cgroup(r, i, rel, sizeof(rel)) < 0)
                return false;
        return cgroup_path_equal(s->cgroup, rel);
}

/* SignalIntervalSec=: one signal per unit and level per interval. What is
 * held back is shown (--print-events, the log at info) and counted. */
static bool responder_may_signal(Responder *r, const char *unit, const Policy *p, Level level, usec_t now_usec) {
        char unit_text[EVENT_VALUE_SIZE(UNIT_NAME_MAX)];
        usec_t next;

        if (signal_limit_check(&r->signal_limit, unit, level, now_usec, p->signal_interval_usec, &next))
                return true;
        manager_print(r->manager, "suppressed unit=%s level=%s signal=%s interval_usec=%" PRIu64
                      " next_usec=%" PRIu64 " suppressed=%" PRIu64,
                      event_value_escape(unit, unit_text, sizeof(unit_text)), level_to_string(level),
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

/* Whether r->units[i]'s processes may be killed at an OOM of scope s: its
 * policy marks it killable, and the OOM is the system's (Scope=system) or
 * of the unit's own cgroup (Scope=unit). */
static bool unit_killable_at(const Responder *r, const Scope *s, int i) {
        const Policy *p = policy_set_find(r->policies, r->units[i]);

        if (!p->actions[LEVEL_OOM].kill)
                return false;
        return p->scope == POLICY_SCOPE_SYSTEM ? s == s->manager->scopes[0] : scope_is_unit(r, s, i);
}

typedef struct FindVictim {
        VictimBest best;
        pid_t self_pid;
        int unit;               /* the index in r->units of the unit being read */
        const char *unit_name;
        int best_unit;          /* the unit of best.best */
} FindVictim;

static int offer_candidate(Candidate *c, void *userdata) {
        FindVictim *f = userdata;

        c->unit = f->unit_name;
        c->unit_marked_killable = true;
        if (victim_best_offer(&f->best, c, f->self_pid))
                f->best_unit = f->unit;
        return 0;
}

/* The victim among every process of every unit killable at this OOM, read
 * one at a time: nothing is stored but the best so far, so no unit and no
 * process is left out. false when none may be killed. */
static bool responder_find_victim(Responder *r, const Scope *s, int n_units, FindVictim *f) {
        char dir[PATH_MAX];

        victim_best_init(&f->best);
        f->self_pid = r->ctx->self_pid;
        f->best_unit = -1;
        for (int i = 0; i < n_units; i++) {
                int k;

                if (!unit_killable_at(r, s, i) || unit_dir(r, i, dir, sizeof(dir)) < 0)
                        continue;
                f->unit = i;
                f->unit_name = r->units[i];
                k = proc_scan_cgroup_foreach(r->ctx->proc_root, dir, r->ctx->page_size, offer_candidate, f);
                if (k < 0 && k != -ENOENT)
                        log_debug_errno(k, "%s: cannot list the processes of %s, ignoring: %m", r->units[i], dir);
        }
        return f->best.found;
}

/* unit=, pid=, comm=… of a killed/would-kill line; comm is the process's
 * own choice and is escaped (event-value.h), and so is the unit name. */
static void responder_print_kill(Responder *r, bool dry_run, const Candidate *c, const char *reason) {
        char unit[EVENT_VALUE_SIZE(UNIT_NAME_MAX)], comm[EVENT_VALUE_SIZE(PROC_COMM_MAX)];

        manager_print(r->manager, "%s unit=%s pid=%i comm=%s rss_bytes=%" PRIu64 " reason=%s",
                      dry_run ? "would-kill" : "killed", event_value_escape(c->unit, unit, sizeof(unit)),
                      (int) c->pid, event_value_escape(c->comm, comm, sizeof(comm)), c->rss_bytes, reason);
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
        if (k >= 0)
                responder_print_kill(r, k == 0, c, reason);
        if (k > 0) {
                r->n_kills++;
                if (r->on_killed)
                        r->on_killed(r, c->unit, c->pid, c->comm, c->rss_bytes, reason, r->on_killed_userdata);
        } else if (k < 0)
                log_notice_errno(k, "%s: not killing %s[%i]: %m", c->unit, c->comm, (int) c->pid);
        return k;
}

/* KillTarget=unit: the unit's processes that may be killed, gathered into
 * r->batch and killed a batch at a time. */
typedef struct UnitKill {
        Responder *r;
        const char *unit;
        const char *reason;
        size_t n;               /* in r->batch */
        size_t n_killed;        /* dry run: would be */
        size_t n_failed;
        size_t n_batches;
} UnitKill;

static void unit_kill_flush(UnitKill *u) {
        Responder *r = u->r;
        size_t k;

        if (u->n == 0)
                return;
        k = victim_select_unit(r->batch, u->n, u->unit, r->ctx->self_pid, r->picked, ELEMENTSOF(r->picked), NULL);
        for (size_t j = 0; j < k; j++) {
                if (responder_kill_one(r, &r->batch[r->picked[j]], u->reason) >= 0)
                        u->n_killed++;
                else
                        u->n_failed++;
        }
        u->n = 0;
        u->n_batches++;
}

static int unit_kill_collect(Candidate *c, void *userdata) {
        UnitKill *u = userdata;

        c->unit = u->unit;
        c->unit_marked_killable = true;
        if (victim_check(c, u->r->ctx->self_pid) != VICTIM_OK)
                return 0;
        u->r->batch[u->n++] = *c;
        /* Full: kill these now, while the walk goes on to the rest. */
        if (u->n == ELEMENTSOF(u->r->batch))
                unit_kill_flush(u);
        return 0;
}

/* Every process of r->units[i] that may be killed, however many: the
 * cgroups are walked again, so processes started since the victim was
 * chosen are not left behind. */
static void responder_kill_unit(Responder *r, int i, const char *reason) {
        UnitKill u = {
                .r = r,
                .unit = r->units[i],
                .reason = reason,
        };
        char dir[PATH_MAX];
        int k;

        if (unit_dir(r, i, dir, sizeof(dir)) < 0)
                return;
        k = proc_scan_cgroup_foreach(r->ctx->proc_root, dir, r->ctx->page_size, unit_kill_collect, &u);
        unit_kill_flush(&u);
        if (k < 0 && k != -ENOENT)
                log_warning_errno(k, "%s: cannot list all the processes of %s: %m", u.unit, dir);
        log_notice("%s: KillTarget=unit: %s %zu of its processes in %zu batch%s%s (%s).", u.unit,
                   r->ops == &action_ops_dry_run ? "would kill" : "killed", u.n_killed, u.n_batches,
                   u.n_batches == 1 ? "" : "es", u.n_failed > 0 ? ", some could not be killed" : "", reason);
}

static void responder_kill(Responder *r, const Scope *s, const LevelEvent *ev, int n_units) {
        FindVictim f;
        char reason[300];
        const Policy *p;

        if (!kill_pacer_may_kill(&r->pacer, ev->timestamp_usec)) {
                log_debug("%s: OOM, but a kill happened less than the pause ago; waiting.", s->name);
                return;
        }
        if (!responder_find_victim(r, s, n_units, &f)) {
                log_notice("%s: OOM, but no process of a unit marked Kill=yes can be killed.", s->name);
                return;
        }
        log_debug("%s: OOM: %" PRIu64 " processes looked at, %" PRIu64 " may be killed.", s->name,
                  f.best.n_seen, f.best.n_eligible);

        (void) snprintf(reason, sizeof(reason), "OOM on %s", s->name);
        p = policy_set_find(r->policies, r->units[f.best_unit]);
        if (p && p->actions[LEVEL_OOM].kill_target == KILL_TARGET_UNIT)
                responder_kill_unit(r, f.best_unit, reason);
        else
                (void) responder_kill_one(r, &f.best.best, reason);

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
