/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "action.h"
#include "guard.h"
#include "ini.h"
#include "log.h"

/* What a call to systemd at exit may take: the daemon is stopping. */
#define GUARD_RELEASE_TIMEOUT_USEC (2 * USEC_PER_SEC)

static const char *const guard_state_table[_GUARD_STATE_MAX] = {
        [GUARD_HIGH]         = "memory.high",
        [GUARD_HIGH_PENDING] = "pending",
        [GUARD_HIGH_KEPT]    = "unit-memory-high",
        [GUARD_THRESHOLD]    = "usage-threshold",
        [GUARD_FLOOR_ONLY]   = "floor-only",
        [GUARD_DRY_RUN]      = "dry-run",
        [GUARD_NO_LIMIT]     = "no-limit",
        [GUARD_FAILED]       = "failed",
};

const char *guard_state_to_string(GuardState s) {
        return s >= 0 && s < _GUARD_STATE_MAX ? guard_state_table[s] : NULL;
}

void guard_table_init(GuardTable *t, bool systemd, const SourceEnv *env) {
        t->entries = NULL;
        t->generation = 0;
        t->systemd = systemd;
        t->env = env;
}

void guard_table_done(GuardTable *t) {
        free(t->entries);
        t->entries = NULL;
}

static Guard *guard_lookup(GuardTable *t, const char *unit) {
        if (!t->entries)
                return NULL;
        for (size_t i = 0; i < GUARDS_MAX; i++)
                if (t->entries[i].unit[0] && streq(t->entries[i].unit, unit))
                        return &t->entries[i];
        return NULL;
}

const Guard *guard_find(const GuardTable *t, const char *unit) {
        return guard_lookup((GuardTable *) t, unit);
}

static Guard *guard_slot(GuardTable *t, const char *unit) {
        Guard *e = guard_lookup(t, unit);

        if (e)
                return e;
        if (!t->entries) {
                t->entries = calloc(GUARDS_MAX, sizeof(Guard));
                if (!t->entries)
                        return NULL;
        }
        for (size_t i = 0; i < GUARDS_MAX; i++)
                if (!t->entries[i].unit[0]) {
                        e = &t->entries[i];
                        *e = (Guard) { .state = GUARD_FAILED };
                        (void) snprintf(e->unit, sizeof(e->unit), "%s", unit);
                        return e;
                }
        return NULL;
}

/* e's state, and the detail line status shows for it. */
_printf_(3, 4) static void guard_set_state(Guard *e, GuardState state, const char *fmt, ...) {
        va_list ap;

        e->state = state;
        va_start(ap, fmt);
        (void) vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
        va_end(ap);
}

typedef struct GuardRequest {
        GuardTable *table;
        size_t index;
        uint64_t generation;
} GuardRequest;

static int guard_on_set_high(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        GuardRequest *q = userdata;
        Guard *e = &q->table->entries[q->index];
        const sd_bus_error *err = sd_bus_message_get_error(reply);
        char a[32], b[32];

        if (e->unit[0] && e->generation == q->generation && e->state == GUARD_HIGH_PENDING) {
                if (err) {
                        guard_set_state(e, GUARD_FAILED, "SetUnitProperties(MemoryHigh=) failed: %s",
                                        err->message ?: err->name);
                        log_warning("%s: cannot set MemoryHigh= for its guard: %s; the kernel's OOM killer may "
                                    "act before the daemon.", e->unit, err->message ?: err->name);
                } else {
                        e->ours = true;
                        e->g.high_bytes = e->g.mark_bytes;
                        guard_set_state(e, GUARD_HIGH, "MemoryHigh=%s set at runtime through systemd (MemoryMax=%s)",
                                        format_size(a, sizeof(a), e->g.mark_bytes),
                                        format_size(b, sizeof(b), e->g.limit_bytes));
                        log_notice("%s: guard armed: MemoryHigh=%s set at runtime through systemd, %s below its "
                                   "limit; the unit is killed when it grows past it.", e->unit,
                                   format_size(a, sizeof(a), e->g.mark_bytes),
                                   format_size(b, sizeof(b), e->g.guard_bytes));
                }
        }
        return 0;       /* q is freed with the slot (its destroy callback) */
}

/* Asks systemd (asynchronously) or writes memory.high itself. */
static void guard_set_high(GuardTable *t, Guard *e, sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        sd_bus_slot *slot = NULL;
        char a[32], b[32];
        GuardRequest *q;
        int r;

        if (!t->systemd) {
                r = cgroup_write_memory_high(t->env->cgroup2_root, e->cgroup, e->g.mark_bytes);
                if (r < 0) {
                        guard_set_state(e, GUARD_FAILED, "writing memory.high failed: %s", strerror(-r));
                        log_warning_errno(r, "%s: cannot write memory.high for its guard: %m", e->unit);
                        return;
                }
                e->ours = true;
                e->g.high_bytes = e->g.mark_bytes;
                guard_set_state(e, GUARD_HIGH, "memory.high=%s written (limit %s)",
                                format_size(a, sizeof(a), e->g.mark_bytes), format_size(b, sizeof(b), e->g.limit_bytes));
                log_notice("%s: guard armed: memory.high=%s written, %s below its limit.", e->unit,
                           format_size(a, sizeof(a), e->g.mark_bytes), format_size(b, sizeof(b), e->g.guard_bytes));
                return;
        }
        if (!bus) {
                guard_set_state(e, GUARD_HIGH_PENDING, "MemoryHigh= to be set once the bus is up");
                return;
        }
        q = malloc(sizeof(*q));
        if (!q) {
                guard_set_state(e, GUARD_FAILED, "out of memory");
                return;
        }
        *q = (GuardRequest) { .table = t, .index = (size_t) (e - t->entries), .generation = ++t->generation };
        e->generation = q->generation;
        r = systemd_memory_high_message(bus, e->unit, e->g.mark_bytes, &msg);
        if (r >= 0)
                r = sd_bus_call_async(bus, &slot, msg, guard_on_set_high, q, 0);
        if (r >= 0) {
                /* The slot owns q from here: freed when the reply came or
                 * the call was dropped with the connection. */
                (void) sd_bus_slot_set_destroy_callback(slot, free);
                (void) sd_bus_slot_set_floating(slot, true);
                sd_bus_slot_unref(slot);
        }
        if (r < 0) {
                free(q);
                guard_set_state(e, GUARD_FAILED, "SetUnitProperties(MemoryHigh=) not sent: %s",
                                strerror(-r));
                log_warning_errno(r, "%s: cannot ask systemd to set MemoryHigh= for its guard: %m", e->unit);
                return;
        }
        guard_set_state(e, GUARD_HIGH_PENDING, "MemoryHigh=%s asked of systemd",
                        format_size(a, sizeof(a), e->g.mark_bytes));
}

/* memory.high back to "max" where we set it: synchronous (at exit, or when
 * a reload takes the guard away). */
static void guard_take_back(GuardTable *t, Guard *e, sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        if (!e->ours)
                return;
        e->ours = false;
        if (!t->systemd)
                r = cgroup_write_memory_high(t->env->cgroup2_root, e->cgroup, UINT64_MAX);
        else if (!bus)
                r = -ENOTCONN;
        else {
                r = systemd_memory_high_message(bus, e->unit, UINT64_MAX, &msg);
                if (r >= 0)
                        r = sd_bus_call(bus, msg, GUARD_RELEASE_TIMEOUT_USEC, &error, &reply);
        }
        if (r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.systemd1.NoSuchUnit"))
                /* A transient unit that ended is gone with its properties. */
                log_debug("%s: gone, and the MemoryHigh= of its guard with it.", e->unit);
        else if (r < 0)
                log_warning_errno(r, "%s: cannot take back the MemoryHigh= of its guard%s%s: %m", e->unit,
                                  error.message ? ": " : "", error.message ?: "");
        else
                log_info("%s: MemoryHigh= of its guard taken back (infinity).", e->unit);
}

void guard_forget_entry(GuardTable *t, Guard *e, sd_bus *bus) {
        guard_take_back(t, e, bus);
        e->unit[0] = '\0';
}

void guard_apply(GuardTable *t, Manager *m, Scope *s, const Policy *p, sd_bus *bus, bool dry_run) {
        const char *unit = scope_name(s);
        char want[32], a[32], b[32];
        Guard *e;
        int r;

        if (!policy_has_guard(p)) {
                e = guard_lookup(t, unit);
                if (e) {
                        (void) manager_guard(m, s, 0, 0, 0, NULL);
                        guard_forget_entry(t, e, bus);
                }
                return;
        }
        e = guard_slot(t, unit);
        if (!e) {
                log_warning("%s: more than %d units with Guard= (or no memory for the table); this one is not "
                            "guarded.", unit, GUARDS_MAX);
                return;
        }
        (void) snprintf(e->cgroup, sizeof(e->cgroup), "%s", scope_cgroup(s));
        (void) policy_guard_describe(p, want, sizeof(want));
        r = manager_guard(m, s, p->guard_bytes, p->guard_percent, p->guard_grace_usec, &e->g);
        if (r == -ENODATA) {
                guard_set_state(e, GUARD_NO_LIMIT, "Guard=%s, but the unit has no memory limit "
                                "(MemoryMax=)", want);
                log_notice("%s: Guard=%s needs a memory limit (MemoryMax=); the unit has none, nothing guarded.",
                           unit, want);
                return;
        }
        if (r < 0) {
                guard_set_state(e, GUARD_FAILED, "Guard=%s: %s", want,
                                r == -ERANGE ? "as large as the unit's limit or larger" : strerror(-r));
                log_warning("%s: Guard=%s not armed: %s.", unit, want,
                            r == -ERANGE ? "it is as large as the unit's memory limit or larger" : strerror(-r));
                return;
        }
        if (e->g.memcg_v1) {
                char w[32], warn[64] = "";

                if (e->g.warn_mark_bytes > 0)
                        (void) snprintf(warn, sizeof(warn), ", MEDIUM from %s",
                                        format_size(w, sizeof(w), e->g.warn_mark_bytes));
                guard_set_state(e, e->g.mark_armed ? GUARD_THRESHOLD : GUARD_FLOOR_ONLY, "%s at %s of the limit %s%s",
                                e->g.mark_armed ? "usage threshold" : "headroom floor only, polled",
                                format_size(a, sizeof(a), e->g.mark_bytes), format_size(b, sizeof(b), e->g.limit_bytes),
                                warn);
                log_info("%s: guard armed: %s %s below its limit of %s (cgroup v1: nothing throttles the unit, "
                         "the daemon kills in the band%s).", unit,
                         e->g.mark_armed ? "a usage threshold" : "the headroom floor",
                         format_size(a, sizeof(a), e->g.guard_bytes), format_size(b, sizeof(b), e->g.limit_bytes),
                         e->g.warn_mark_bytes == 0 ? "" :
                         e->g.warn_armed ? "; MEDIUM first under twice the guard, a second threshold" :
                                           "; MEDIUM first under twice the guard, polled");
                return;
        }
        if (e->g.high_bytes == e->g.mark_bytes) {
                /* Ours from before (a restart of the unit keeps systemd's
                 * runtime property; so does one of the daemon). */
                if (e->state != GUARD_HIGH) {
                        e->ours = true;
                        guard_set_state(e, GUARD_HIGH, "MemoryHigh=%s (limit %s)",
                                        format_size(a, sizeof(a), e->g.mark_bytes),
                                        format_size(b, sizeof(b), e->g.limit_bytes));
                }
                return;
        }
        if (e->g.high_bytes != UINT64_MAX && !e->ours) {
                guard_set_state(e, GUARD_HIGH_KEPT, "the unit's own MemoryHigh=%s kept; headroom floor "
                                "%s", format_size(a, sizeof(a), e->g.high_bytes),
                                format_size(b, sizeof(b), e->g.guard_bytes));
                log_notice("%s: the unit sets MemoryHigh=%s itself; kept (the guard is the headroom floor of %s).",
                           unit, format_size(a, sizeof(a), e->g.high_bytes),
                           format_size(b, sizeof(b), e->g.guard_bytes));
                return;
        }
        if (dry_run) {
                guard_set_state(e, GUARD_DRY_RUN, "dry run: MemoryHigh=%s would be set",
                                format_size(a, sizeof(a), e->g.mark_bytes));
                log_info("%s: dry run: MemoryHigh=%s would be set for its guard.", unit,
                         format_size(a, sizeof(a), e->g.mark_bytes));
                return;
        }
        if (e->state == GUARD_HIGH_PENDING && e->generation > 0 && bus)
                return;         /* asked already; the answer will come */
        guard_set_high(t, e, bus);
}

void guard_release_all(GuardTable *t, sd_bus *bus) {
        for (size_t i = 0; t->entries && i < GUARDS_MAX; i++)
                if (t->entries[i].unit[0])
                        guard_forget_entry(t, &t->entries[i], bus);
}
