/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/syscall.h>
#include <systemd/sd-daemon.h>

#include "event-value.h"
#include "guard.h"
#include "log.h"
#include "memory.h"
#include "policy-load.h"
#include "proc-pid.h"
#include "proc-scan.h"
#include "read-file.h"
#include "responder-plan.h"
#include "responder.h"
#include "task-iter.h"
#include "unit-name.h"

struct Responder {
        Manager *manager;
        PolicySet *policies;
        const char *const *policy_dirs;
        size_t n_policy_dirs;
        const ActionOps *ops;
        ActionContext *ctx;
        /* The pause after a kill: plan_build() reads it, plan_victim_decide()
         * starts it when a victim is chosen. */
        KillPacer pacer;
        char cgroup_root[PATH_MAX];     /* where units' processes are: cgroup2, else memcg v1 */
        /* PID 1's bus when PID 1 is systemd: signals then go through KillUnit. */
        bool systemd;
        struct sd_bus *(*get_bus)(void *userdata);
        void *get_bus_userdata;
        responder_killed_handler_t on_killed;
        void *on_killed_userdata;
        uint64_t n_signals;
        uint64_t n_kills;
        /* Under systemd: unit → cgroup from systemd (ControlGroup), kept
         * fresh off the OOM path; NULL without systemd. */
        SystemdUnits *systemd_units;
        /* SignalIntervalSec=: when each unit last got each level's signal
         * (plan_build() records it); signal_limit.suppressed counts what was
         * held back. */
        SignalLimit signal_limit;
        /* Preallocated for the OOM path: nothing is allocated from the OOM
         * announcement to the kill. */
        char unit_names[RESPONDER_UNITS_MAX][UNIT_NAME_MAX];
        /* The plan's input for this pass: units[i] is unit_names[i], its
         * policy, and its cgroup (below cgroup_root) borrowed from
         * systemd_units' cache, or NULL for the system.slice layout. */
        PlanUnit units[RESPONDER_UNITS_MAX];
        Plan plan;                      /* this pass's actions, in order */
        Candidate batch[RESPONDER_KILL_BATCH];  /* KillTarget=unit: the plan's batch table */
        size_t picked[RESPONDER_KILL_BATCH];
        char dirent_buf[32 * 1024];
        GuardTable guards;              /* Guard= of the unit-scope policies */
        size_t n_loaded;                /* policy_set_count_loaded(policies) */
        /* The scope of an OOM that found no unit with a policy running:
         * said in the log after the announcement (on_level_record()). */
        const Scope *oom_unheard;
};

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

/* ---- gathering the data: the units with a policy in force ---- */

static const Policy *responder_wanted_policy(const Responder *r, const char *unit) {
        const Policy *p = policy_set_find(r->policies, unit);

        return plan_policy_has_actions(p) ? p : NULL;
}

/* units[n] is unit with policy p and cgroup (borrowed; NULL: the
 * system.slice layout). */
static void responder_add_unit(Responder *r, size_t n, const char *unit, const char *cgroup, const Policy *p) {
        (void) snprintf(r->unit_names[n], UNIT_NAME_MAX, "%s", unit);
        r->units[n] = (PlanUnit) {
                .name = r->unit_names[n],
                .cgroup = cgroup,
                .policy = p,
        };
}

/* Under systemd: the units systemd runs that have a policy in force, from
 * the cache systemd_units keeps (any slice, templates' instances). Copies
 * names and borrows cgroup paths; nothing is allocated, nothing asked. */
static int responder_list_cached_units(Responder *r, const UnitCgroupCache *c) {
        size_t n = 0;

        for (size_t i = 0; i < c->n && n < PLAN_UNITS_MAX; i++) {
                const Policy *p = responder_wanted_policy(r, c->entries[i].unit);

                if (!p)
                        continue;       /* its policy went with a reload; the next refresh drops it */
                responder_add_unit(r, n++, c->entries[i].unit, c->entries[i].cgroup, p);
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
                        p = responder_wanted_policy(r, d->d_name);
                        if (!p)
                                continue;
                        if (n >= PLAN_UNITS_MAX) {
                                log_warning("More than %d units with policies, ignoring %s.",
                                            PLAN_UNITS_MAX, d->d_name);
                                continue;
                        }
                        responder_add_unit(r, n++, d->d_name, NULL, p);
                }
        }
        return (int) n;
}

/* The cgroup directory of u. */
static int unit_dir(const Responder *r, const PlanUnit *u, char *buf, size_t size) {
        char rel[PATH_MAX];
        int k, n;

        k = plan_unit_cgroup(u, rel, sizeof(rel));
        if (k < 0)
                return k;
        n = snprintf(buf, size, "%s%s%s", r->cgroup_root, rel[0] ? "/" : "", rel);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

/* ---- carrying out the plan: signals ---- */

static void responder_signal(Responder *r, const PlanAction *a) {
        const char *unit = r->units[a->unit].name;
        char dir[PATH_MAX], unit_text[EVENT_VALUE_SIZE(UNIT_NAME_MAX)];
        int k;

        if (unit_dir(r, &r->units[a->unit], dir, sizeof(dir)) < 0)
                return;
        /* Under systemd the signal goes through KillUnit, so systemd knows the
         * unit's main process and logs it; the connection may have changed. */
        r->ctx->systemd_bus = r->systemd && r->get_bus ? r->get_bus(r->get_bus_userdata) : NULL;
        k = r->ops->signal_unit(r->ctx, unit, dir, a->signal, a->target);
        manager_record_action(r->manager, unit, a->level, false, a->signal, 0, k);
        (void) event_value_escape(unit, unit_text, sizeof(unit_text));
        if (k < 0)
                manager_print(r->manager, "action unit=%s level=%s signal=%s target=%s result=%s", unit_text,
                              level_to_string(a->level), signal_to_string(a->signal),
                              signal_target_to_string(a->target), strerrorname_np(-k) ?: "error");
        else
                manager_print(r->manager, "action unit=%s level=%s signal=%s target=%s result=%d", unit_text,
                              level_to_string(a->level), signal_to_string(a->signal),
                              signal_target_to_string(a->target), k);
        if (k < 0 && k != -ESRCH)
                log_warning_errno(k, "%s: cannot send %s at %s, ignoring: %m", unit,
                                  signal_to_string(a->signal), level_to_string(a->level));
        else if (k >= 0)
                r->n_signals++;
}

/* SignalIntervalSec=: what is held back is shown (--print-events, the log
 * at info); signal_limit has counted it. */
static void responder_signal_held(Responder *r, const PlanAction *a) {
        const char *unit = r->units[a->unit].name;
        char unit_text[EVENT_VALUE_SIZE(UNIT_NAME_MAX)];

        manager_print(r->manager, "suppressed unit=%s level=%s signal=%s interval_usec=%" PRIu64
                      " next_usec=%" PRIu64 " suppressed=%" PRIu64,
                      event_value_escape(unit, unit_text, sizeof(unit_text)), level_to_string(a->level),
                      signal_to_string(a->signal), a->interval_usec, a->next_usec, a->suppressed);
        log_info("%s: not sending %s at %s again within SignalIntervalSec=%" PRIu64 ".%03" PRIu64
                 "s (%" PRIu64 " held back so far).", unit, signal_to_string(a->signal),
                 level_to_string(a->level), a->interval_usec / USEC_PER_SEC,
                 a->interval_usec % USEC_PER_SEC / USEC_PER_MSEC, a->suppressed);
}

/* ---- carrying out the plan: kills ---- */

/* The processes of dir and below, one record at a time: read in the kernel
 * by the BPF task iterator where it was loaded at start-up (task-iter.h:
 * one system call and a few reads, whatever their number), else from
 * /proc, one process after the other. The iterator is only asked when the
 * daemon reads the real /proc. */
static int scan_cgroup(Responder *r, const char *dir, proc_candidate_filter_t filter,
                       proc_candidate_handler_t handler, void *userdata) {
        int k;

        if (task_iter_loaded() && streq(r->ctx->proc_root, "/proc")) {
                k = task_iter_scan_cgroup(dir, r->ctx->page_size, filter, handler, userdata);
                if (k != -EOPNOTSUPP)
                        return k;
        }
        return proc_scan_cgroup_foreach_filtered(r->ctx->proc_root, dir, r->ctx->page_size, filter, handler,
                                                 userdata);
}

typedef struct ScanVictim {
        Responder *r;
        PlanVictim *victim;
        size_t unit;            /* index in r->units of the unit being read */
} ScanVictim;

static int offer_candidate(Candidate *c, void *userdata) {
        ScanVictim *f = userdata;

        plan_victim_offer(f->victim, f->r->units, f->unit, c, 1);
        return 0;
}

/* What stat says rules most processes out (smaller than the best so far):
 * their oom_score_adj is not read. */
static bool want_candidate(const Candidate *partial, void *userdata) {
        ScanVictim *f = userdata;

        return !victim_best_skip(&f->victim->best, partial, f->r->ctx->self_pid);
}

/* Every process of every unit of the PLAN_KILL_SCAN, read one at a time
 * and offered to the plan, which keeps only the best so far: no unit and
 * no process is left out. */
static void responder_find_victim(Responder *r, PlanVictim *v) {
        ScanVictim f = { .r = r, .victim = v };
        char dir[PATH_MAX];

        plan_victim_init(v, r->ctx->self_pid);
        for (size_t j = 0; j < r->plan.n_kill_units; j++) {
                const PlanUnit *u = &r->units[r->plan.kill_units[j]];
                int k;

                if (unit_dir(r, u, dir, sizeof(dir)) < 0)
                        continue;
                f.unit = r->plan.kill_units[j];
                k = scan_cgroup(r, dir, want_candidate, offer_candidate, &f);
                if (k < 0 && k != -ENOENT)
                        log_debug_errno(k, "%s: cannot list the processes of %s, ignoring: %m", u->name, dir);
        }
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

/* KillTarget=unit: the unit's processes go into the plan's batch (the
 * table is r->batch) as they are read; each full batch is killed at once. */
typedef struct UnitKill {
        Responder *r;
        PlanBatch batch;
        const char *reason;
        size_t n_killed;        /* dry run: would be */
        size_t n_failed;
} UnitKill;

static void unit_kill_flush(UnitKill *u) {
        size_t k = plan_batch_take(&u->batch);

        for (size_t j = 0; j < k; j++) {
                if (responder_kill_one(u->r, &u->batch.table[u->batch.order[j]], u->reason) >= 0)
                        u->n_killed++;
                else
                        u->n_failed++;
        }
}

static int unit_kill_collect(Candidate *c, void *userdata) {
        UnitKill *u = userdata;

        (void) plan_batch_add(&u->batch, c, 1);
        /* Full: kill these now, while the walk goes on to the rest. */
        if (plan_batch_full(&u->batch))
                unit_kill_flush(u);
        return 0;
}

/* Every process of unit that may be killed, however many: its cgroups are
 * walked again, so processes started since the victim was chosen are not
 * left behind. */
static void responder_kill_unit(Responder *r, const PlanUnit *unit, const char *reason) {
        UnitKill u = {
                .r = r,
                .reason = reason,
        };
        char dir[PATH_MAX];
        int k;

        if (unit_dir(r, unit, dir, sizeof(dir)) < 0)
                return;
        plan_batch_init(&u.batch, unit, r->ctx->self_pid, r->batch, r->picked, ELEMENTSOF(r->batch));
        k = scan_cgroup(r, dir, NULL, unit_kill_collect, &u);
        unit_kill_flush(&u);
        if (k < 0 && k != -ENOENT)
                log_warning_errno(k, "%s: cannot list all the processes of %s: %m", unit->name, dir);
        log_notice("%s: KillTarget=unit: %s %zu of its processes in %" PRIu64 " batch%s%s (%s).", unit->name,
                   r->ops == &action_ops_dry_run ? "would kill" : "killed", u.n_killed, u.batch.n_batches,
                   u.batch.n_batches == 1 ? "" : "es", u.n_failed > 0 ? ", some could not be killed" : "",
                   reason);
}

/* After the kill, never before it: the kernel failed the task iterator
 * during this scan (its buffer could not be had, say), so /proc was read. */
static void responder_note_iter_failures(uint64_t before) {
        int e;
        uint64_t n = task_iter_failures(&e);

        if (n > before)
                log_notice_errno(e, "Victim scan: the BPF task iterator failed %" PRIu64 " time%s at this OOM, "
                                 "/proc was read instead: %m", n - before, n - before == 1 ? "" : "s");
}

/* PLAN_KILL_SCAN: read the processes, let the plan choose, kill. */
static void responder_kill(Responder *r, const Scope *s, const LevelEvent *ev, const PlanAction *a) {
        uint64_t iter_failed = task_iter_failures(NULL);
        PlanVictim v;
        PlanKill kill;
        char reason[300];

        responder_find_victim(r, &v);
        if (plan_victim_decide(&v, r->units, &r->pacer, ev->timestamp_usec, &kill) == PLAN_KILL_NONE) {
                log_notice("%s: OOM, but no process of a unit marked Kill=yes can be killed.", scope_name(s));
                responder_note_iter_failures(iter_failed);
                return;
        }
        log_debug("%s: OOM: %" PRIu64 " processes looked at, %" PRIu64 " read in full may be killed.", scope_name(s),
                  kill.n_seen, kill.n_eligible);

        if (a->for_stall)
                /* A thrash with memory left, past a unit's StallLimit=. */
                (void) snprintf(reason, sizeof(reason), "thrashing on %s: memory stall %u.%02u%%",
                                scope_name(s), a->stall_permyriad / 100, a->stall_permyriad % 100);
        else
                (void) snprintf(reason, sizeof(reason), "OOM on %s", scope_name(s));
        if (kill.kind == PLAN_KILL_UNIT)
                responder_kill_unit(r, &r->units[kill.unit], reason);
        else
                (void) responder_kill_one(r, &kill.victim, reason);
        responder_note_iter_failures(iter_failed);
}

/* Said once per OOM episode (not for each repeat), and on --print-events. */
static void responder_kill_held_memory_left(Responder *r, const Scope *s, const LevelEvent *ev) {
        manager_print(r->manager, "kill-held scope=%s why=memory-left cause=%s index=%u stall_full_avg10=%u.%02u",
                      scope_name(s), sample_kind_to_string(ev->cause), ev->index, ev->stall_full_permyriad[0] / 100,
                      ev->stall_full_permyriad[0] % 100);
        if (ev->repeat)
                return;
        log_info("%s: OOM from %s (index %u) while memory is still available (headroom above the floor): "
                 "thrashing, not running out; nothing is killed (no StallLimit= reached).", scope_name(s),
                 ev->cause == SAMPLE_RECLAIM ? "reclaim inefficiency" : "the kernel's pressure level", ev->index);
}

/* The plan's actions in the plan's order, which is plan_build()'s alone. */
static void responder_execute(Responder *r, const Scope *s, const LevelEvent *ev) {
        for (size_t i = 0; i < r->plan.n_actions; i++) {
                const PlanAction *a = &r->plan.actions[i];

                switch (a->type) {
                case PLAN_SIGNAL:
                        responder_signal(r, a);
                        break;
                case PLAN_SIGNAL_HELD:
                        responder_signal_held(r, a);
                        break;
                case PLAN_KILL_SCAN:
                        responder_kill(r, s, ev, a);
                        break;
                case PLAN_KILL_HELD:
                        if (a->why == PLAN_HELD_MEMORY_LEFT)
                                responder_kill_held_memory_left(r, s, ev);
                        else
                                log_debug("%s: OOM, but a kill happened less than the pause ago; waiting.",
                                          scope_name(s));
                        break;
                default:
                        break;  /* plan_build() makes no other */
                }
        }
}

static void on_level(Manager *m, const Scope *s, const LevelEvent *ev, void *userdata) {
        Responder *r = userdata;
        int n_units;

        /* Without a loaded policy there is nothing to do: no directory
         * read, and no word in the log, before the subscribers are told. */
        if (r->n_loaded == 0 || !plan_event_wants_action(ev))
                return;
        n_units = responder_list_units(r);
        if (n_units <= 0) {
                if (n_units < 0 && n_units != -ENOENT)
                        log_warning_errno(n_units, "Cannot list the units below %s, ignoring: %m", r->cgroup_root);
                else if (ev->level == LEVEL_OOM && !ev->repeat)
                        r->oom_unheard = s;
                return;
        }
        (void) plan_build(&(PlanInput) {
                                  .units = r->units,
                                  .n_units = (size_t) n_units,
                                  .scope = { .system = scope_is_system(s), .cgroup = scope_cgroup(s) },
                                  .event = ev,
                          }, &r->signal_limit, &r->pacer, &r->plan);
        responder_execute(r, s, ev);
}

/* After the subscribers and the bus heard of the level: what the OOM found
 * is said, not silent (a policy whose unit runs where nobody looked would
 * otherwise fail unseen), but a log line waits behind them. */
static void on_level_record(Manager *m, const Scope *s, const LevelEvent *ev, void *userdata) {
        Responder *r = userdata;

        if (r->oom_unheard != s)
                return;
        r->oom_unheard = NULL;
        log_notice("%s: OOM, but no unit with a policy is running (%s).", scope_name(s),
                   systemd_units_cache(r->systemd_units) ? "none among the units systemd reported" :
                   "none in " UNITS_SLICE);
}

static sd_bus *responder_bus(Responder *r) {
        return r->get_bus ? r->get_bus(r->get_bus_userdata) : NULL;
}

/* Whether scope s watches unit's own cgroup: where systemd says the unit is,
 * else system.slice/<unit>. Another cgroup with the unit's name (Watch=) is
 * not the unit's. */
static bool responder_scope_is_unit(Responder *r, const Scope *s, const char *unit) {
        const char *cg = scope_cgroup(s), *known;
        char path[PATH_MAX];

        if (r->systemd_units) {
                known = unit_cgroup_cache_get(&r->systemd_units->cache, unit);
                return known && streq(known + strspn(known, "/"), cg);
        }
        if (unit_name_to_cgroup_path(unit, path, sizeof(path)) < 0)
                return false;
        return streq(path + strspn(path, "/"), cg);
}

/* Guard= of the unit that scope s watches, armed or taken off as its policy
 * says (not for another cgroup that merely has the unit's name). */
static void responder_guard_scope(Responder *r, Scope *s) {
        const char *unit = scope_name(s);
        const Policy *p;

        if (scope_is_system(s) || !unit_name_is_valid(unit, UNIT_NAME_INSTANCE | UNIT_NAME_PLAIN))
                return;
        p = r->policies ? policy_set_find(r->policies, unit) : NULL;
        if (policy_has_guard(p) && !responder_scope_is_unit(r, s, unit))
                return;
        guard_apply(&r->guards, r->manager, s, p, responder_bus(r), manager_config(r->manager)->dry_run);
}

static void responder_guard_all(Responder *r) {
        Manager *m = r->manager;

        for (size_t i = 0; i < manager_n_scopes(m); i++)
                responder_guard_scope(r, manager_scope(m, i));
}

static void on_scope_started(Manager *m, Scope *s, void *userdata) {
        responder_guard_scope(userdata, s);
}

/* A unit-scope policy watches the unit's own cgroup: rel is below the
 * hierarchies' roots, with or without the leading '/'. */
static void responder_watch_unit(Responder *r, const char *unit, const char *rel) {
        const Policy *p = policy_set_find(r->policies, unit);
        Scope *s = NULL;

        if (!p || p->scope != POLICY_SCOPE_UNIT)
                return;
        if (manager_watch(r->manager, rel[0] == '/' ? rel + 1 : rel, &s) > 0)
                log_info("%s: watching its cgroup %s (Scope=unit).", unit, rel);
        /* A new scope had its guard from the hook; one watched before
         * systemd named the unit's cgroup gets it now. */
        if (s)
                responder_guard_scope(r, s);
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

        return responder_wanted_policy(r, unit);
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
        r->ops = manager_config(m)->dry_run ? &action_ops_dry_run : &action_ops_real;
        return responder_reload(r, diag);
}

int responder_new(Manager *m, const char *const *dirs, size_t n_dirs, Responder **ret) {
        _cleanup_(responder_freep) Responder *r = NULL;
        _cleanup_(diag_freep) Diagnostics *diag = NULL;
        int k;

        r = memory_table_new(sizeof(Responder));        /* 550 KiB, mostly untouched */
        diag = diag_new();
        if (!r || !diag)
                return -ENOMEM;
        r->manager = m;
        r->policy_dirs = dirs ?: policy_dirs_default;
        r->n_policy_dirs = dirs ? n_dirs : ELEMENTSOF(policy_dirs_default);
        r->ops = manager_config(m)->dry_run ? &action_ops_dry_run : &action_ops_real;
        kill_pacer_init(&r->pacer, KILL_PAUSE_DEFAULT_USEC);
        k = sd_booted();
        r->systemd = k > 0;
        log_debug("systemd is %sPID 1 (sd_booted(): %d).", r->systemd ? "" : "not ", k);
        (void) snprintf(r->cgroup_root, sizeof(r->cgroup_root), "%s",
                        manager_env(m)->cgroup2_root[0] ? manager_env(m)->cgroup2_root : manager_env(m)->memcg_v1_root);

        k = action_context_new(0, NULL, &r->ctx);
        if (k < 0)
                return k;
        signal_limit_init(&r->signal_limit);
        if (r->systemd) {
                k = systemd_units_new(manager_event(m), &(SystemdUnitsCallbacks) {
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
        r->n_loaded = policy_set_count_loaded(r->policies);
        manager_set_stall_wanted(m, policy_set_any_kill(r->policies));
        if (r->policies)
                log_info("Loaded %zu policies%s.", r->n_loaded,
                         manager_config(m)->dry_run ? " (dry run: nothing will be changed)" : "");

        manager_set_reload_hook(m, on_reload, r);
        k = manager_add_phase_listener(m, MANAGER_LISTENER_ACT, on_level, r);
        if (k < 0)
                return k;
        k = manager_add_phase_listener(m, MANAGER_LISTENER_RECORD, on_level_record, r);
        if (k < 0)
                return k;
        guard_table_init(&r->guards, r->systemd, manager_env(m));
        manager_set_scope_hook(m, on_scope_started, r);
        if (r->policies) {
                responder_watch_units(r);
                responder_guard_all(r);         /* Watch= cgroups watched before the policies */
        }

        *ret = TAKE_PTR(r);
        return 0;
}

void responder_shutdown(Responder *r) {
        if (r)
                guard_release_all(&r->guards, responder_bus(r));
}

Responder *responder_free(Responder *r) {
        if (!r)
                return NULL;
        manager_set_scope_hook(r->manager, NULL, NULL);
        guard_table_done(&r->guards);
        systemd_units_free(r->systemd_units);
        policy_set_free(r->policies);
        action_context_free(r->ctx);
        memory_table_free(r, sizeof(*r));
        return NULL;
}

/* The preallocated tables are sized for the worst case (512 units, a batch
 * of 1,024 processes: about 550 KiB) and mostly never touched, so with
 * mlockall(MCL_ONFAULT) they cost nothing until a pass touches them, and a
 * pass at OOM would then fault pages in. So the part the policies in force
 * can use is touched here, off the OOM path: an entry per policy (all
 * PLAN_UNITS_MAX when a template can stand for any number of instances),
 * the batch only for KillTarget=unit, the main-process table only for
 * SignalTarget=main. */
static void responder_prefault_tables(Responder *r) {
        size_t n = 0;
        bool batch = false, main_procs = false;

        for (size_t i = 0; r->policies && i < r->policies->n; i++) {
                const Policy *p = &r->policies->policies[i];

                if (p->state != POLICY_LOADED)
                        continue;
                n = p->is_template ? PLAN_UNITS_MAX : MIN(n + 1, (size_t) PLAN_UNITS_MAX);
                batch |= p->actions[LEVEL_OOM].kill && p->actions[LEVEL_OOM].kill_target == KILL_TARGET_UNIT;
                for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++)
                        main_procs |= p->actions[l].signal != 0 && p->actions[l].signal_target == SIGNAL_TARGET_MAIN;
        }
        /* What one getdents64() of system.slice fills: 8 KiB hold some 200
         * units' entries (about 40 bytes each); the rest is faulted in only
         * on a machine with more. */
        memory_prefault(r->dirent_buf, MIN(sizeof(r->dirent_buf), (size_t) 8192));
        memory_prefault(r->unit_names, n * sizeof(r->unit_names[0]));
        memory_prefault(r->units, n * sizeof(r->units[0]));
        memory_prefault(r->plan.actions, MIN(n * (_LEVEL_MAX - 1) + 1, (size_t) PLAN_ACTIONS_MAX) * sizeof(PlanAction));
        memory_prefault(r->plan.kill_units, n * sizeof(size_t));
        /* The counts after the tables: n_kill_units is 4 KiB past
         * kill_units[0], on a page of its own that plan_build() first wrote
         * at the first OOM (tests/integration/test-oom-path-tight.py saw it
         * faulted in). */
        memory_prefault(&r->plan.n_actions, sizeof(r->plan.n_actions));
        memory_prefault(&r->plan.n_kill_units, sizeof(r->plan.n_kill_units));
        if (batch) {
                memory_prefault(r->batch, sizeof(r->batch));
                memory_prefault(r->picked, sizeof(r->picked));
        }
        if (main_procs) {
                memory_prefault(r->ctx->procs, sizeof(r->ctx->procs));
                memory_prefault(r->ctx->scratch, sizeof(r->ctx->scratch));
        }
}

/* Which scope covers which unit, as plan_build() asks at every event: the
 * cgroup path helpers, and through them libc's strspn() and neighbours,
 * whose text sits on pages nothing else at start-up runs (after
 * memory_drop_code_pages(), test-oom-path-tight.py saw them faulted in at
 * the first OOM, between the event and the kill). */
static void responder_rehearse_plan_paths(void) {
        static const Policy unit_policy = {
                .unit = "vmpressured.service",
                .state = POLICY_LOADED,
                .scope = POLICY_SCOPE_UNIT,
        };
        const PlanUnit named = { .name = unit_policy.unit, .policy = &unit_policy };
        const PlanUnit placed = { .name = unit_policy.unit, .cgroup = "/system.slice/vmpressured.service/",
                                  .policy = &unit_policy };
        const PlanScope scope = { .cgroup = "system.slice/vmpressured.service" };

        (void) plan_scope_covers(&scope, &named);
        (void) plan_scope_covers(&scope, &placed);
}

static bool rehearse_want(const Candidate *partial, void *userdata) {
        return false;
}

static int rehearse_offer(Candidate *c, void *userdata) {
        return 0;
}

/* The victim scan's walk (getdents64() of libc, cgroup.procs, each
 * process's stat) over the daemon's own cgroup, where it finds itself
 * alone and takes nothing: the walk's code was otherwise first run at an
 * OOM (test-oom-path-tight.py saw libc's getdents64() page faulted in
 * between the event and the kill). Both ways: the task iterator's (its
 * buffer written first), and /proc's, which a unit on a hierarchy the
 * iterator does not match still takes. */
static void responder_rehearse_scan(Responder *r) {
        char text[4096], rel[PATH_MAX], dir[PATH_MAX * 2], path[PATH_MAX];
        const SourceEnv *env = manager_env(r->manager);
        ssize_t n;

        (void) snprintf(path, sizeof(path), "%s/self/cgroup", r->ctx->proc_root);
        n = read_small_file(AT_FDCWD, path, text, sizeof(text), READ_FILE_NUL);
        if (n < 0 || proc_cgroup_parse(text, (size_t) n, env->cgroup2_root[0] ? "" : "memory", rel, sizeof(rel)) < 0)
                return;
        (void) snprintf(dir, sizeof(dir), "%s/%s", r->cgroup_root, rel + strspn(rel, "/"));
        task_iter_prefault();
        (void) scan_cgroup(r, dir, rehearse_want, rehearse_offer, NULL);
        (void) proc_scan_cgroup_foreach_filtered(r->ctx->proc_root, dir, r->ctx->page_size, rehearse_want,
                                                 rehearse_offer, NULL);
}

int responder_rehearse(Responder *r, Candidate *ret) {
        VictimBest best;
        Candidate c;
        int k;

        /* The daemon itself is the live process: read as every candidate
         * is, offered (and refused: it is the daemon), then the kill path
         * up to, not including, the signal. */
        k = proc_read_candidate(r->ctx->proc_root, r->ctx->self_pid, r->ctx->page_size, &c);
        if (k < 0)
                return k;
        c.unit = "vmpressured.service";
        c.unit_marked_killable = true;
        victim_best_init(&best);
        (void) victim_best_skip(&best, &c, r->ctx->self_pid);
        (void) victim_best_offer(&best, &c, r->ctx->self_pid);
        responder_prefault_tables(r);
        k = action_rehearse_kill(r->ctx, &(KillRequest) {
                                         .pid = c.pid,
                                         .starttime_ticks = c.starttime_ticks,
                                         .unit = c.unit,
                                         .comm = c.comm,
                                         .rss_bytes = c.rss_bytes,
                                         .reason = "start-up rehearsal of the OOM path",
                                 });
        if (k < 0)
                return k;
        responder_rehearse_plan_paths();
        responder_rehearse_scan(r);
        if (ret)
                *ret = c;
        return 0;
}

void responder_set_killed_handler(Responder *r, responder_killed_handler_t h, void *userdata) {
        r->on_killed = h;
        r->on_killed_userdata = userdata;
}

/* Guards of units whose policy lost Guard= while their cgroup was not
 * watched (the unit stopped): taken back and forgotten. */
static void responder_guard_forget_unwatched(Responder *r) {
        for (size_t i = 0; r->guards.entries && i < GUARDS_MAX; i++) {
                Guard *e = &r->guards.entries[i];

                if (!e->unit[0] || policy_has_guard(policy_set_find(r->policies, e->unit)))
                        continue;
                if (!manager_find_scope(r->manager, e->unit))
                        guard_forget_entry(&r->guards, e, responder_bus(r));
        }
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
        r->n_loaded = policy_set_count_loaded(set);
        manager_set_stall_wanted(r->manager, policy_set_any_kill(set));
        responder_prefault_tables(r);   /* new policies may use more of them */
        responder_watch_units(r);
        responder_guard_all(r);         /* armed, changed or taken off */
        responder_guard_forget_unwatched(r);
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

void responder_bus_connected(Responder *r) {
        if (!r)
                return;
        responder_guard_all(r);         /* MemoryHigh= waits for the bus */
        log_debug("The bus is up; %s.", r->systemd_units ? "asking systemd for the units" : "no systemd to ask");
        if (r->systemd_units)
                (void) systemd_units_refresh(r->systemd_units);
}

const GuardTable *responder_guards(const Responder *r) {
        return &r->guards;
}

const PolicySet *responder_policies(const Responder *r) {
        return r->policies;
}

void responder_counters(const Responder *r, ResponderCounters *ret) {
        *ret = (ResponderCounters) {
                .n_signals = r->n_signals,
                .n_kills = r->n_kills,
                .n_signals_suppressed = r->signal_limit.suppressed,
        };
}
