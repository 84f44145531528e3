/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <limits.h>

#include "responder-plan.h"
#include "unit-name.h"

static const char *const plan_action_type_table[_PLAN_ACTION_TYPE_MAX] = {
        [PLAN_SIGNAL] = "signal",
        [PLAN_SIGNAL_HELD] = "signal-held",
        [PLAN_KILL_SCAN] = "kill-scan",
        [PLAN_KILL_HELD] = "kill-held",
};

static const char *const plan_held_table[_PLAN_HELD_MAX] = {
        [PLAN_HELD_NONE] = "none",
        [PLAN_HELD_SIGNAL_INTERVAL] = "signal-interval",
        [PLAN_HELD_KILL_PAUSE] = "kill-pause",
        [PLAN_HELD_MEMORY_LEFT] = "memory-left",
};

static const char *const plan_kill_kind_table[_PLAN_KILL_KIND_MAX] = {
        [PLAN_KILL_NONE] = "none",
        [PLAN_KILL_LARGEST] = "largest",
        [PLAN_KILL_UNIT] = "unit",
};

const char *plan_action_type_to_string(PlanActionType t) {
        return t >= 0 && (size_t) t < ELEMENTSOF(plan_action_type_table) ? plan_action_type_table[t] : NULL;
}

const char *plan_held_to_string(PlanHeld h) {
        return h >= 0 && (size_t) h < ELEMENTSOF(plan_held_table) ? plan_held_table[h] : NULL;
}

const char *plan_kill_kind_to_string(PlanKillKind k) {
        return k >= 0 && (size_t) k < ELEMENTSOF(plan_kill_kind_table) ? plan_kill_kind_table[k] : NULL;
}

bool plan_policy_has_actions(const Policy *p) {
        if (!p || p->state != POLICY_LOADED)
                return false;
        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++)
                if (p->actions[l].signal != 0 || p->actions[l].kill)
                        return true;
        return false;
}

bool plan_event_wants_action(const LevelEvent *ev) {
        if (ev->level == LEVEL_NONE)
                return false;
        /* Signals once per rise; kills again on OOM repeats, paced. */
        return !ev->repeat || ev->level == LEVEL_OOM;
}

int plan_unit_cgroup(const PlanUnit *u, char *buf, size_t size) {
        int n;

        if (!u->cgroup)
                return unit_name_to_cgroup_path(u->name, buf, size);
        n = snprintf(buf, size, "%s", u->cgroup + (u->cgroup[0] == '/'));
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
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

bool plan_scope_covers(const PlanScope *scope, const PlanUnit *u) {
        char rel[PATH_MAX];

        if (u->policy->scope == POLICY_SCOPE_SYSTEM)
                return scope->system;
        /* systemd escapes some names in paths ("_cpu.service"), so the
         * cgroup's last component does not tell whose it is either. */
        if (plan_unit_cgroup(u, rel, sizeof(rel)) < 0)
                return false;
        return cgroup_path_equal(scope->cgroup ?: "", rel);
}

static PlanAction *plan_append(Plan *p, PlanActionType type, Level level) {
        PlanAction *a;

        assert(p->n_actions < ELEMENTSOF(p->actions));  /* sized for the worst case */
        a = &p->actions[p->n_actions++];
        *a = (PlanAction) { .type = type, .level = level };
        return a;
}

/* SignalIntervalSec=: one signal per unit and level per interval. */
static void plan_signal(const PlanInput *in, size_t i, Level l, SignalLimit *limit, Plan *p) {
        const PlanUnit *u = &in->units[i];
        const PolicyAction *pa = &u->policy->actions[l];
        usec_t next = 0;
        bool may;
        PlanAction *a;

        may = signal_limit_check(limit, u->name, l, in->event->timestamp_usec, u->policy->signal_interval_usec,
                                 &next);
        a = plan_append(p, may ? PLAN_SIGNAL : PLAN_SIGNAL_HELD, l);
        a->unit = i;
        a->signal = pa->signal;
        a->target = pa->signal_target;
        if (may)
                return;
        a->why = PLAN_HELD_SIGNAL_INTERVAL;
        a->next_usec = next;
        a->interval_usec = u->policy->signal_interval_usec;
        a->suppressed = signal_limit_suppressed(limit, u->name);
}

/* The signals of every level the pressure passed on the way up. */
static void plan_signals(const PlanInput *in, SignalLimit *limit, Plan *p) {
        const LevelEvent *ev = in->event;

        /* A fall (OOM → MEDIUM) is relief, not a new level to act on; a
         * repeat of a level already signalled is not a rise. */
        if (ev->repeat || ev->previous >= ev->level)
                return;
        for (Level l = MAX(ev->previous + 1, LEVEL_LOW); l <= ev->level; l++)
                for (size_t i = 0; i < in->n_units; i++) {
                        if (in->units[i].policy->actions[l].signal == 0)
                                continue;
                        if (!plan_scope_covers(&in->scope, &in->units[i]))
                                continue;
                        plan_signal(in, i, l, limit, p);
                }
}

/* At OOM: which units' processes may be killed, or why not now. */
/* The event's stall over u's StallSec=, in hundredths of a percent. */
static unsigned plan_unit_stall(const LevelEvent *ev, const PlanUnit *u) {
        usec_t sec = u->policy->stall_usec;

        return ev->stall_full_permyriad[sec >= 300 * USEC_PER_SEC ? 2 : sec >= 60 * USEC_PER_SEC ? 1 : 0];
}

/* Whether u may be killed for this event: Kill=yes in a scope it is in,
 * and, for a thrash (memory left), a StallLimit= the stall reached. */
static bool plan_unit_killable(const PlanInput *in, const PlanUnit *u) {
        if (!u->policy->actions[LEVEL_OOM].kill || !plan_scope_covers(&in->scope, u))
                return false;
        if (!in->event->memory_left)
                return true;
        return in->event->stall_known && policy_stall_exceeded(u->policy, plan_unit_stall(in->event, u));
}

static void plan_kill(const PlanInput *in, const KillPacer *pacer, Plan *p) {
        bool thrash = in->event->memory_left;
        unsigned stall = 0;
        PlanAction *a;

        /* Thrashing is not running out: nothing is killed while memory is
         * left, but for a unit whose StallLimit= the stall has reached. */
        if (thrash) {
                size_t i;

                for (i = 0; i < in->n_units; i++)
                        if (plan_unit_killable(in, &in->units[i]))
                                break;
                if (i == in->n_units) {
                        a = plan_append(p, PLAN_KILL_HELD, LEVEL_OOM);
                        a->why = PLAN_HELD_MEMORY_LEFT;
                        return;
                }
                stall = plan_unit_stall(in->event, &in->units[i]);
        }
        if (!kill_pacer_may_kill(pacer, in->event->timestamp_usec)) {
                a = plan_append(p, PLAN_KILL_HELD, LEVEL_OOM);
                a->why = PLAN_HELD_KILL_PAUSE;
                a->next_usec = kill_pacer_next_usec(pacer);
                return;
        }
        a = plan_append(p, PLAN_KILL_SCAN, LEVEL_OOM);
        a->for_stall = thrash;
        a->stall_permyriad = stall;
        for (size_t i = 0; i < in->n_units; i++)
                if (plan_unit_killable(in, &in->units[i]))
                        p->kill_units[p->n_kill_units++] = i;
}

size_t plan_build(const PlanInput *in, SignalLimit *limit, const KillPacer *pacer, Plan *ret) {
        size_t n_units = MIN(in->n_units, (size_t) PLAN_UNITS_MAX);
        PlanInput input = *in;

        ret->n_actions = 0;
        ret->n_kill_units = 0;
        input.n_units = n_units;
        if (n_units == 0 || !plan_event_wants_action(in->event))
                return 0;

        /* The order of the actions is decided here and only here: signals
         * first (a unit that flushes its caches may spare a kill), the
         * kill decision last. */
        plan_signals(&input, limit, ret);
        if (in->event->level == LEVEL_OOM)
                plan_kill(&input, pacer, ret);
        return ret->n_actions;
}

/* ---- the victim ---- */

/* c as a process of u, for victim_check(). */
static void candidate_of(Candidate *c, const PlanUnit *u) {
        c->unit = u->name;
        c->unit_marked_killable = u->policy->actions[LEVEL_OOM].kill;
}

void plan_victim_init(PlanVictim *v, pid_t self_pid) {
        *v = (PlanVictim) { .self_pid = self_pid };
        victim_best_init(&v->best);
}

void plan_victim_offer(PlanVictim *v, const PlanUnit *units, size_t unit, const Candidate *c, size_t n) {
        for (size_t i = 0; i < n; i++) {
                Candidate t = c[i];

                candidate_of(&t, &units[unit]);
                if (victim_best_offer(&v->best, &t, v->self_pid))
                        v->best_unit = unit;
        }
}

PlanKillKind plan_victim_decide(const PlanVictim *v, const PlanUnit *units, KillPacer *pacer, usec_t now_usec,
                                PlanKill *ret) {
        *ret = (PlanKill) {
                .kind = PLAN_KILL_NONE,
                .n_seen = v->best.n_seen,
                .n_eligible = v->best.n_eligible,
        };
        if (!v->best.found)
                return ret->kind;
        ret->unit = v->best_unit;
        ret->victim = v->best.best;
        ret->kind = units[v->best_unit].policy->actions[LEVEL_OOM].kill_target == KILL_TARGET_UNIT ?
                            PLAN_KILL_UNIT : PLAN_KILL_LARGEST;
        kill_pacer_record(pacer, now_usec);
        return ret->kind;
}

/* ---- KillTarget=unit ---- */

void plan_batch_init(PlanBatch *b, const PlanUnit *unit, pid_t self_pid, Candidate *table, size_t *order,
                     size_t max) {
        *b = (PlanBatch) {
                .unit = unit,
                .self_pid = self_pid,
                .table = table,
                .order = order,
                .max = max,
        };
}

bool plan_batch_full(const PlanBatch *b) {
        return b->n >= b->max;
}

size_t plan_batch_add(PlanBatch *b, const Candidate *c, size_t n) {
        size_t i;

        for (i = 0; i < n && !plan_batch_full(b); i++) {
                Candidate *t = &b->table[b->n];

                *t = c[i];
                candidate_of(t, b->unit);
                if (victim_check(t, b->self_pid) == VICTIM_OK)
                        b->n++;
        }
        return i;
}

size_t plan_batch_take(PlanBatch *b) {
        if (b->n == 0) {
                b->n_order = 0;
                return 0;
        }
        b->n_order = victim_select_unit(b->table, b->n, b->unit->name, b->self_pid, b->order, b->max, NULL);
        b->n = 0;
        b->n_batches++;
        b->n_picked += b->n_order;
        return b->n_order;
}
