/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <limits.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <vmpressure.h>

#include "bus.h"
#include "config.h"
#include "log.h"
#include "memory.h"

struct Bus {
        Manager *manager;
        sd_bus *bus;                    /* NULL while there is no connection */
        sd_event_source *retry_timer;
        /* Without a bus: inotify on the directory of the bus's socket, so
         * that nothing polls while there is none. NULL when not waiting,
         * or when the address is not a socket path (then the timer). */
        sd_event_source *socket_watch;
        char socket_dir[PATH_MAX];
        char socket_name[NAME_MAX + 1];
        unsigned quick_retries;         /* left after the socket appeared */
        SubscriberSet *subscribers;
        unsigned attempts;              /* failed connection attempts since the last success */
        bool outage_logged;             /* one warning per outage */
        bool connected;                 /* the bus answered our first request */
        bool owns_name;
        bool owns_lmm;
        bool lmm_queued;                /* LowMemoryMonitor=yes and someone else had it */
        usec_t lmm_last_usec[_LEVEL_MAX];       /* when LowMemoryWarning last said each level; 0: never */
        Level lmm_last_level;           /* the last level it said; kept across Normal */
        uint64_t signal_drops;
        unsigned n_subscribe_pending;   /* Subscribe() calls waiting for the caller's uid */
        bool actions_hooked;            /* on_actions is the manager's actions hook */
        uint64_t actions_sent;          /* recent actions' total already sent */
        Responder *responder;           /* policies; NULL in tests of the bus alone */
};

/* The system scope's status; all zero (level NONE, source none) before
 * the manager has one. */
static void system_status(const Bus *b, ScopeStatus *ret) {
        const Scope *s = manager_system_scope(b->manager);

        if (s)
                scope_status(s, ret);
        else
                *ret = (ScopeStatus) { .level = LEVEL_NONE, .source_type = _SOURCE_TYPE_INVALID };
}

uint8_t bus_lmm_level(Level l) {
        switch (l) {
        case LEVEL_LOW:
                return 50;
        case LEVEL_MEDIUM:
                return 100;
        case LEVEL_OOM:
                return 255;
        default:
                return 0;
        }
}

/* ---- properties ----------------------------------------------------------- */

static int property_get_level(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        ScopeStatus st;

        system_status(userdata, &st);
        return sd_bus_message_append(reply, "s", level_to_string(st.level));
}

static int property_get_index(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        ScopeStatus st;

        system_status(userdata, &st);
        return sd_bus_message_append(reply, "u", st.index);
}

static int property_get_source(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        ScopeStatus st;

        system_status(userdata, &st);
        return sd_bus_message_append(reply, "s", st.source ?: "none");
}

static int property_get_last_change(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        ScopeStatus st;

        system_status(userdata, &st);
        return sd_bus_message_append(reply, "t", (uint64_t) st.last_change_usec);
}

static Level count_property_level(const char *property) {
        if (streq(property, "LowCount"))
                return LEVEL_LOW;
        if (streq(property, "MediumCount"))
                return LEVEL_MEDIUM;
        if (streq(property, "OOMCount"))
                return LEVEL_OOM;
        return LEVEL_NONE;      /* NormalCount */
}

static int property_get_count(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        ScopeStatus st;

        system_status(userdata, &st);
        return sd_bus_message_append(reply, "t", st.announced[count_property_level(property)]);
}

static int property_get_policies(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const PolicySet *set = b->responder ? responder_policies(b->responder) : NULL;
        int r;

        /* Unit names (or templates) that have a policy in force. */
        r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && set && i < set->n; i++)
                if (set->policies[i].state == POLICY_LOADED)
                        r = sd_bus_message_append(reply, "s", set->policies[i].unit);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_dry_run(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        return sd_bus_message_append(reply, "b", (int) manager_config(b->manager)->dry_run);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static int property_get_subscribers(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        return sd_bus_message_append(reply, "u", (uint32_t) subscriber_set_size(b->subscribers));
}

static int property_get_drops(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        uint64_t v = streq(property, "SignalDrops") ? b->signal_drops : b->subscribers->dropped;
        return sd_bus_message_append(reply, "t", v);
}

/* Every scope: (name, cgroup, level, source, normal, low, medium, oom
 * announcements), for vmpressurectl status and metrics. */
static int property_get_scopes(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Manager *m = ((Bus *) userdata)->manager;
        int r;

        r = sd_bus_message_open_container(reply, 'a', VMP_BUS_SCOPE_STRUCT);
        for (size_t i = 0; r >= 0 && i < manager_n_scopes(m); i++) {
                ScopeStatus s;

                scope_status(manager_scope(m, i), &s);
                r = sd_bus_message_append(reply, VMP_BUS_SCOPE_STRUCT, s.name, s.cgroup,
                                          s.gone ? "gone" : level_to_string(s.level), s.source ?: "none",
                                          s.announced[LEVEL_NONE], s.announced[LEVEL_LOW],
                                          s.announced[LEVEL_MEDIUM], s.announced[LEVEL_OOM]);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* Lines of log (and journal entries) dropped because the reader did not take them. */
static int property_get_log_dropped(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "t", log_dropped_count());
}

/* Cgroups wanted but without a scope: (cgroup, absent|table-full|no-source). */
static int property_get_unwatched(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Manager *m = ((Bus *) userdata)->manager;
        int r;

        r = sd_bus_message_open_container(reply, 'a', VMP_BUS_UNWATCHED_STRUCT);
        for (size_t i = 0; r >= 0 && i < manager_n_unwatched(m); i++) {
                const Unwatched *u = manager_unwatched(m, i);
                r = sd_bus_message_append(reply, VMP_BUS_UNWATCHED_STRUCT, u->cgroup,
                                          unwatched_reason_to_string(u->reason));
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* Guard= of the unit-scope policies: (unit, state, guard, limit, mark, detail). */
static int property_get_guards(sd_bus *bus, const char *path, const char *interface, const char *property,
                               sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const Bus *b = userdata;
        const GuardTable *t = b->responder ? responder_guards(b->responder) : NULL;
        int r;

        r = sd_bus_message_open_container(reply, 'a', VMP_BUS_GUARD_STRUCT);
        for (size_t i = 0; r >= 0 && t && t->entries && i < GUARDS_MAX; i++) {
                const Guard *g = &t->entries[i];

                if (!g->unit[0])
                        continue;
                r = sd_bus_message_append(reply, VMP_BUS_GUARD_STRUCT, g->unit, guard_state_to_string(g->state),
                                          g->g.guard_bytes, g->g.limit_bytes, g->g.mark_bytes, g->detail);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_get_actions(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        ResponderCounters c = {};

        if (b->responder)
                responder_counters(b->responder, &c);
        return sd_bus_message_append(reply, "t", streq(property, "Kills") ? c.n_kills :
                                                 streq(property, "SignalsSuppressed") ? c.n_signals_suppressed :
                                                 c.n_signals);
}

static int property_get_simulations(sd_bus *bus, const char *path, const char *interface, const char *property,
                                    sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        uint64_t v = 0;

        for (size_t i = 0; i < manager_n_scopes(b->manager); i++) {
                ScopeStatus s;

                scope_status(manager_scope(b->manager, i), &s);
                v += s.simulated_count;
        }
        return sd_bus_message_append(reply, "t", v);
}

/* The scope's level comes from Simulate(). False from the Normal that ends
 * the simulation on (that Normal's signal is still marked Simulated), so the
 * PropertiesChanged sent with it says false and nothing stays stale. */
static bool simulated_now(const ScopeStatus *s) {
        return s->simulated && s->level != LEVEL_NONE;
}

static int property_get_simulated(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        ScopeStatus st;

        system_status(userdata, &st);
        return sd_bus_message_append(reply, "b", (int) simulated_now(&st));
}

/* Every scope: (name, in a simulation now, its simulated announcements at
 * normal, low, medium, oom): the part of Scopes' counts that Simulate() made. */
static int property_get_scope_simulations(sd_bus *bus, const char *path, const char *interface,
                                          const char *property, sd_bus_message *reply, void *userdata,
                                          sd_bus_error *error) {
        const Manager *m = ((Bus *) userdata)->manager;
        int r;

        r = sd_bus_message_open_container(reply, 'a', VMP_BUS_SCOPE_SIMULATION_STRUCT);
        for (size_t i = 0; r >= 0 && i < manager_n_scopes(m); i++) {
                ScopeStatus s;

                scope_status(manager_scope(m, i), &s);
                r = sd_bus_message_append(reply, VMP_BUS_SCOPE_SIMULATION_STRUCT, s.name,
                                          (int) simulated_now(&s), s.simulated_announced[LEVEL_NONE],
                                          s.simulated_announced[LEVEL_LOW], s.simulated_announced[LEVEL_MEDIUM],
                                          s.simulated_announced[LEVEL_OOM]);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* Every scope: (name, what its source reads and what wakes it; "" when the
 * source's name says it all). */
static int property_get_source_details(sd_bus *bus, const char *path, const char *interface,
                                       const char *property, sd_bus_message *reply, void *userdata,
                                       sd_bus_error *error) {
        const Manager *m = ((Bus *) userdata)->manager;
        int r;

        r = sd_bus_message_open_container(reply, 'a', VMP_BUS_SOURCE_DETAIL_STRUCT);
        for (size_t i = 0; r >= 0 && i < manager_n_scopes(m); i++) {
                ScopeStatus s;

                scope_status(manager_scope(m, i), &s);
                r = sd_bus_message_append(reply, VMP_BUS_SOURCE_DETAIL_STRUCT, s.name, s.source_detail ?: "");
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int append_histogram(sd_bus_message *reply, LatencyStage stage, bool simulated, const LatencyHistogram *h) {
        int r;

        r = sd_bus_message_open_container(reply, 'r', VMP_BUS_LATENCY_SIG);
        if (r >= 0)
                r = sd_bus_message_append(reply, VMP_BUS_LATENCY_HEAD_SIG, latency_stage_to_string(stage),
                                          (int) simulated);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', VMP_BUS_LATENCY_BUCKET_STRUCT);
        for (size_t i = 0; r >= 0 && i < LATENCY_BUCKETS; i++)
                r = sd_bus_message_append(reply, VMP_BUS_LATENCY_BUCKET_STRUCT, (uint64_t) latency_bucket_bound(i),
                                          latency_histogram_cumulative(h, i));
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, VMP_BUS_LATENCY_TAIL_SIG, h->count, h->sum_usec);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* (stage, simulated, [(le_usec, cumulative count)], count, sum_usec) per
 * stage and kind; the last bucket's le is UINT64_MAX, +Inf. */
static int property_get_latencies(sd_bus *bus, const char *path, const char *interface, const char *property,
                                  sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        const LatencyStats *st = manager_latency(((Bus *) userdata)->manager);
        int r;

        r = sd_bus_message_open_container(reply, 'a', VMP_BUS_LATENCY_STRUCT);
        for (LatencyStage stage = 0; r >= 0 && stage < _LATENCY_STAGE_MAX; stage++)
                for (int sim = 0; r >= 0 && sim < 2; sim++)
                        r = append_histogram(reply, stage, sim, &st->h[stage][sim]);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* One recent action's fields, as in RecentActions and the Action signal:
 * realtime_usec, unit, level, action, signal, pid, result, simulated,
 * latency_usec. */
static int append_action(sd_bus_message *m, const RecentAction *a) {
        const char *result = a->result >= 0 ? "ok" : strerrorname_np(-a->result);

        return sd_bus_message_append(m, VMP_BUS_ACTION_SIG, (uint64_t) a->realtime_usec, a->unit,
                                     level_to_string(a->level) ?: "none",
                                     recent_action_kind_to_string(a->kind) ?: "unknown",
                                     signal_to_string(a->signo) ?: "unknown", (uint32_t) a->pid, result ?: "error",
                                     (int) a->simulated, (uint64_t) a->latency_usec);
}

/* The recent actions, oldest first: (realtime_usec, unit, level, action,
 * signal, pid, result, simulated, latency_usec). */
static int property_get_recent_actions(sd_bus *bus, const char *path, const char *interface,
                                       const char *property, sd_bus_message *reply, void *userdata,
                                       sd_bus_error *error) {
        const RecentActions *ra = manager_recent_actions(((Bus *) userdata)->manager);
        int r;

        r = sd_bus_message_open_container(reply, 'a', VMP_BUS_ACTION_STRUCT);
        for (size_t i = 0; r >= 0 && i < recent_actions_size(ra); i++) {
                r = sd_bus_message_open_container(reply, 'r', VMP_BUS_ACTION_SIG);
                if (r >= 0)
                        r = append_action(reply, recent_actions_get(ra, i));
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* ---- methods -------------------------------------------------------------- */

static int method_list_policies(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        Bus *b = userdata;
        const PolicySet *set = b->responder ? responder_policies(b->responder) : NULL;

        /* (unit, policy file, scope "system"|"unit"), masked and broken files included
         * with the scope "masked" / "broken", so an administrator sees what is ignored. */
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', VMP_BUS_POLICY_STRUCT);
        if (r < 0)
                return r;
        for (size_t i = 0; set && i < set->n; i++) {
                const Policy *p = &set->policies[i];
                r = sd_bus_message_append(reply, VMP_BUS_POLICY_STRUCT, p->unit, p->path,
                                          p->state == POLICY_LOADED ? policy_scope_to_string(p->scope)
                                                                    : policy_state_to_string(p->state));
                if (r < 0)
                        return r;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* The bus policy already lets only root call Reload(); this is the second
 * lock. The euid is the sender's, as the bus (SO_PEERCRED) or /proc says. */
static int check_sender_is_root(sd_bus_message *msg, sd_bus_error *error) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t euid;
        int r;

        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &euid);
        if (r < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Cannot tell the caller's effective user; only root may do this.");
        if (euid != 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Only root may do this (caller's euid is %u).", (unsigned) euid);
        return 0;
}

static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        bool dry_run = manager_config(b->manager)->dry_run;
        int r;

        r = check_sender_is_root(msg, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;

        r = manager_reload(b->manager);
        /* Only a daemon without a loader; a configuration file that has gone
         * (-ENOENT) is a configuration error like any other. */
        if (r == -EOPNOTSUPP)
                return sd_bus_error_set(error, SD_BUS_ERROR_NOT_SUPPORTED,
                                        "This daemon has no configuration file to reload from.");
        if (r < 0)
                return sd_bus_error_setf(error, VMP_BUS_ERROR_INVALID_CONFIG,
                                         "Reloading the configuration failed (%s); the previous one stays "
                                         "in effect, see the daemon's log for file:line.", strerror(-r));
        if (dry_run != manager_config(b->manager)->dry_run && b->bus)
                (void) sd_bus_emit_properties_changed(b->bus, VMP_BUS_PATH, VMP_BUS_INTERFACE, "DryRun", NULL);

        if (b->responder) {
                _cleanup_(diag_freep) Diagnostics *diag = diag_new();
                char text[2048];
                size_t n = 0;

                if (!diag)
                        return -ENOMEM;
                r = manager_reload_hooks(b->manager, diag);
                if (r < 0) {
                        /* Returned to the caller as file:line lines, like vmpressurectl check. */
                        for (size_t i = 0; i < diag->n && n < sizeof(text) - 1; i++)
                                n += (size_t) snprintf(text + n, sizeof(text) - n, "%s%s", i ? "\n" : "",
                                                       diag->msg[i]);
                        return sd_bus_error_setf(error, VMP_BUS_ERROR_INVALID_POLICY,
                                                 "Policy reload failed, the previous policies stay:\n%s",
                                                 n ? text : strerror(-r));
                }
                if (b->bus)
                        (void) sd_bus_emit_properties_changed(b->bus, VMP_BUS_PATH, VMP_BUS_INTERFACE,
                                                              VMP_BUS_PROPERTY_POLICIES, NULL);
        }
        return sd_bus_reply_method_return(msg, NULL);
}

/* Simulate(s level, s scope): root only (bus policy and euid), so that
 * application authors can test their reaction without real pressure. */
static int method_simulate(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        Bus *b = userdata;
        const char *level_name, *scope_arg;
        Level level;
        Scope *s;
        int r;

        r = sd_bus_message_read(msg, "ss", &level_name, &scope_arg);
        if (r < 0)
                return r;
        r = check_sender_is_root(msg, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;

        level = level_from_string(level_name);
        if (level <= LEVEL_NONE)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid level '%s': it must be low, medium or oom.", level_name);
        s = manager_find_scope(b->manager, scope_arg[0] ? scope_arg : SCOPE_SYSTEM);
        if (!s)
                return sd_bus_error_setf(error, VMP_BUS_ERROR_NO_SUCH_SCOPE,
                                         "No watched scope '%s' (see the Scopes property).", scope_arg);
        r = manager_simulate(b->manager, s, level);
        if (r == -ESTALE)
                return sd_bus_error_setf(error, VMP_BUS_ERROR_NO_SUCH_SCOPE,
                                         "The cgroup of scope '%s' is gone.", scope_name(s));
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot simulate: %m");
        return sd_bus_reply_method_return(msg, NULL);
}

/* Subscribe() asks dbus-daemon who the caller is (GetConnectionUnixUser,
 * the uid dbus-daemon took from SO_PEERCRED) without waiting for it: a
 * synchronous call would stop the event loop, and with it the pressure
 * sources, for as long as dbus-daemon takes to answer. The call is answered
 * from the reply. */
typedef struct SubscribeCall {
        Bus *bus;
        sd_bus_message *call;
        uint32_t threshold;
} SubscribeCall;

static void subscribe_call_free(void *userdata) {
        SubscribeCall *sc = userdata;

        sc->bus->n_subscribe_pending--;
        sd_bus_message_unref(sc->call);
        free(sc);
}

static int subscribe_error(Bus *b, int r, uint32_t threshold, uid_t uid, sd_bus_error *error) {
        SubscriberSet *set = b->subscribers;

        switch (r) {
        case -EINVAL:
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "Invalid threshold %" PRIu32 ": it must be exactly one of "
                                         "VMPRESSURE_LOW (%u), VMPRESSURE_MEDIUM (%u) or VMPRESSURE_OOM (%u).",
                                         threshold, (unsigned) VMPRESSURE_LOW, (unsigned) VMPRESSURE_MEDIUM,
                                         (unsigned) VMPRESSURE_OOM);
        case -EUSERS:
                if (uid != 0 && set->n < set->max)
                        return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                                 "Too many subscribers: %zu already; the last %zu of "
                                                 "MaxSubscribers=%zu are kept for root.",
                                                 set->n, subscriber_set_root_reserve(set), set->max);
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "Too many subscribers: %zu already (MaxSubscribers=); "
                                         "close an unused descriptor first.", set->n);
        case -EDQUOT:
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "User %u holds %zu subscriptions already (MaxSubscribersPerUser=); "
                                         "close an unused descriptor first.", (unsigned) uid,
                                         subscriber_set_count_uid(set, uid));
        case -EMFILE:
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "Too many subscribers for the daemon's RLIMIT_NOFILE (%zu): the last "
                                         "%u descriptors are kept for the OOM path and the bus.",
                                         set->fd_limit, SUBSCRIBERS_FD_RESERVE);
        default:
                return sd_bus_error_set_errnof(error, r, "Cannot create the subscriber descriptor: %m");
        }
}

/* Makes uid's subscriber and answers the call, either way. */
static int subscribe_reply(Bus *b, sd_bus_message *call, uint32_t threshold, uid_t uid) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(closep) int fd = -EBADF;
        const Config *c = manager_config(b->manager);
        ScopeStatus st;
        struct rlimit rl;
        int r;

        subscriber_set_set_limits(b->subscribers, c->max_subscribers, c->max_subscribers_per_user);
        b->subscribers->fd_limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ?
                                   (size_t) rl.rlim_cur : 0;
        system_status(b, &st);
        r = subscriber_set_subscribe(b->subscribers, threshold, uid, st.level, &fd);
        if (r < 0) {
                if (r == -EMFILE)
                        log_warning("Subscribe() of uid %u refused: only %u descriptors would be left under "
                                    "RLIMIT_NOFILE=%zu, which the OOM path and the bus keep.", (unsigned) uid,
                                    SUBSCRIBERS_FD_RESERVE, b->subscribers->fd_limit);
                (void) subscribe_error(b, r, threshold, uid, &error);
                return sd_bus_reply_method_error(call, &error);
        }

        log_debug("New subscriber of uid %u with threshold %" PRIu32 ", %zu now.", (unsigned) uid, threshold,
                  subscriber_set_size(b->subscribers));
        (void) memory_reserve_refill();         /* what the subscriber took from the OOM path's reserve */
        return sd_bus_reply_method_return(call, "h", fd);  /* the message holds its own dup */
}

static int on_subscribe_uid(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        SubscribeCall *sc = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        uint32_t uid;
        int r;

        if (e || sd_bus_message_read(reply, "u", &uid) < 0) {
                log_debug("Cannot tell who called Subscribe(): %s", e ? e->message ?: e->name : "bad reply");
                r = sd_bus_reply_method_errorf(sc->call, SD_BUS_ERROR_ACCESS_DENIED,
                                               "Cannot tell the caller's user from the bus.");
        } else
                r = subscribe_reply(sc->bus, sc->call, sc->threshold, (uid_t) uid);
        if (r < 0)
                log_debug_errno(r, "Cannot answer Subscribe(), ignoring: %m");
        return 0;
}

static int method_subscribe(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        Bus *b = userdata;
        const char *sender = sd_bus_message_get_sender(msg);
        SubscribeCall *sc;
        uint64_t queued = 0;
        uint32_t threshold;
        Level t;
        int r;

        r = sd_bus_message_read(msg, "u", &threshold);
        if (r < 0)
                return r;
        /* What needs no user is refused before asking the bus. */
        if (level_from_vmpressure(threshold, &t) < 0)
                return subscribe_error(b, -EINVAL, threshold, 0, error);
        subscriber_set_set_limits(b->subscribers, manager_config(b->manager)->max_subscribers,
                                  manager_config(b->manager)->max_subscribers_per_user);
        if (subscriber_set_size(b->subscribers) >= b->subscribers->max)
                return subscribe_error(b, -EUSERS, threshold, 0, error);
        /* Replies carry a descriptor each: a dbus-daemon that does not read
         * must not make them pile up (SUBSCRIBERS_FD_IN_FLIGHT counts these). */
        if (b->n_subscribe_pending >= BUS_SUBSCRIBE_PENDING_MAX ||
            (sd_bus_get_n_queued_write(sd_bus_message_get_bus(msg), &queued) >= 0 && queued >= SUBSCRIBERS_REPLIES_QUEUED_MAX))
                return sd_bus_error_set(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                        "Too many Subscribe() calls at once; try again.");
        if (!sender)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell the caller's user.");

        sc = calloc(1, sizeof(SubscribeCall));
        if (!sc)
                return -ENOMEM;
        *sc = (SubscribeCall) { .bus = b, .call = sd_bus_message_ref(msg), .threshold = threshold };
        b->n_subscribe_pending++;
        r = sd_bus_call_method_async(sd_bus_message_get_bus(msg), &slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "GetConnectionUnixUser", on_subscribe_uid, sc,
                                     "s", sender);
        if (r < 0) {
                subscribe_call_free(sc);
                return r;
        }
        /* The slot frees sc once the answer came, or with the connection. */
        (void) sd_bus_slot_set_destroy_callback(slot, subscribe_call_free);
        (void) sd_bus_slot_set_floating(slot, true);
        return 1;
}

static const sd_bus_vtable manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Level", "s", property_get_level, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Index", "u", property_get_index, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Source", "s", property_get_source, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LastChangeUSec", "t", property_get_last_change, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("NormalCount", "t", property_get_count, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("LowCount", "t", property_get_count, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("MediumCount", "t", property_get_count, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("OOMCount", "t", property_get_count, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(VMP_BUS_PROPERTY_POLICIES, "as", property_get_policies, 0,
                        SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("DryRun", "b", property_get_dry_run, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        /* Counters that move with every client: read them, no PropertiesChanged. */
        SD_BUS_PROPERTY("Subscribers", "u", property_get_subscribers, 0, 0),
        SD_BUS_PROPERTY("SubscriberDrops", "t", property_get_drops, 0, 0),
        SD_BUS_PROPERTY("SignalDrops", "t", property_get_drops, 0, 0),
        SD_BUS_PROPERTY(VMP_BUS_PROPERTY_SCOPES, "a" VMP_BUS_SCOPE_STRUCT, property_get_scopes, 0, 0),
        SD_BUS_PROPERTY("Kills", "t", property_get_actions, 0, 0),
        SD_BUS_PROPERTY("Signals", "t", property_get_actions, 0, 0),
        SD_BUS_PROPERTY("SignalsSuppressed", "t", property_get_actions, 0, 0),
        SD_BUS_PROPERTY("Simulations", "t", property_get_simulations, 0, 0),
        SD_BUS_PROPERTY("Simulated", "b", property_get_simulated, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY(VMP_BUS_PROPERTY_SCOPE_SIMULATIONS, "a" VMP_BUS_SCOPE_SIMULATION_STRUCT,
                        property_get_scope_simulations, 0, 0),
        SD_BUS_PROPERTY(VMP_BUS_PROPERTY_SOURCE_DETAILS, "a" VMP_BUS_SOURCE_DETAIL_STRUCT,
                        property_get_source_details, 0, 0),
        SD_BUS_PROPERTY(VMP_BUS_PROPERTY_LATENCIES, "a" VMP_BUS_LATENCY_STRUCT, property_get_latencies, 0, 0),
        SD_BUS_PROPERTY(VMP_BUS_PROPERTY_RECENT_ACTIONS, "a" VMP_BUS_ACTION_STRUCT, property_get_recent_actions,
                        0, 0),
        SD_BUS_PROPERTY("LogLinesDropped", "t", property_get_log_dropped, 0, 0),
        SD_BUS_PROPERTY(VMP_BUS_PROPERTY_UNWATCHED, "a" VMP_BUS_UNWATCHED_STRUCT, property_get_unwatched, 0, 0),
        SD_BUS_PROPERTY(VMP_BUS_PROPERTY_GUARDS, "a" VMP_BUS_GUARD_STRUCT, property_get_guards, 0, 0),

        SD_BUS_METHOD_WITH_ARGS(VMP_BUS_METHOD_LIST_POLICIES, SD_BUS_NO_ARGS,
                                SD_BUS_RESULT("a" VMP_BUS_POLICY_STRUCT, policies),
                                method_list_policies, SD_BUS_VTABLE_UNPRIVILEGED),
        /* UNPRIVILEGED only switches off sd-bus's own CAP_SYS_ADMIN check:
         * the bus policy and check_sender_is_root() guard it. */
        SD_BUS_METHOD_WITH_ARGS(VMP_BUS_METHOD_RELOAD, SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                                method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(VMP_BUS_METHOD_SUBSCRIBE, SD_BUS_ARGS("u", threshold), SD_BUS_RESULT("h", fd),
                                method_subscribe, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS(VMP_BUS_METHOD_SIMULATE, SD_BUS_ARGS("s", level, "s", scope), SD_BUS_NO_RESULT,
                                method_simulate, SD_BUS_VTABLE_UNPRIVILEGED),

        SD_BUS_SIGNAL_WITH_ARGS("Low", SD_BUS_ARGS("s", scope, "u", index), 0),
        SD_BUS_SIGNAL_WITH_ARGS("Medium", SD_BUS_ARGS("s", scope, "u", index), 0),
        SD_BUS_SIGNAL_WITH_ARGS("OOM", SD_BUS_ARGS("s", scope, "u", index), 0),
        SD_BUS_SIGNAL_WITH_ARGS(VMP_BUS_SIGNAL_NORMAL, SD_BUS_ARGS("s", scope), 0),
        /* Right before a Low, Medium, OOM or Normal signal of a simulated announcement. */
        SD_BUS_SIGNAL_WITH_ARGS(VMP_BUS_SIGNAL_SIMULATED, SD_BUS_ARGS("s", scope, "s", level), 0),
        /* After every action of a policy (signal, kill, or a dry run's would-*):
         * the fields of a RecentActions entry. */
        SD_BUS_SIGNAL_WITH_ARGS(VMP_BUS_SIGNAL_ACTION,
                                SD_BUS_ARGS("t", realtime_usec, "s", unit, "s", level, "s", action,
                                            "s", signal, "u", pid, "s", result, "b", simulated,
                                            "t", latency_usec), 0),
        SD_BUS_SIGNAL_WITH_ARGS(VMP_BUS_SIGNAL_KILLED, SD_BUS_ARGS("s", unit, "u", pid, "s", comm, "t", rss_bytes,
                                                      "s", reason), 0),
        SD_BUS_VTABLE_END
};

static const sd_bus_vtable lmm_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_SIGNAL_WITH_ARGS("LowMemoryWarning", SD_BUS_ARGS("y", level), 0),
        SD_BUS_VTABLE_END
};

/* ---- level events → signals ------------------------------------------------ */

static const char *const level_signal[_LEVEL_MAX] = {
        [LEVEL_NONE] = VMP_BUS_SIGNAL_NORMAL,
        [LEVEL_LOW] = "Low",
        [LEVEL_MEDIUM] = "Medium",
        [LEVEL_OOM] = "OOM",
};

static const char *const level_count_property[_LEVEL_MAX] = {
        [LEVEL_NONE] = "NormalCount",
        [LEVEL_LOW] = "LowCount",
        [LEVEL_MEDIUM] = "MediumCount",
        [LEVEL_OOM] = "OOMCount",
};

/* false (and counted) when dbus-daemon is not reading what we send. */
static bool bus_has_room(Bus *b) {
        uint64_t queued = 0;

        if (!b->bus)
                return false;
        if (sd_bus_get_n_queued_write(b->bus, &queued) >= 0 && queued >= BUS_WQUEUE_MAX) {
                b->signal_drops++;
                return false;
        }
        return true;
}

/* low-memory-monitor's rule, which GLib apps are written against: each
 * level is sent at most once per BUS_LMM_REPEAT_USEC, whether it is a repeat
 * or comes back after Normal (a level that flaps around a threshold would
 * otherwise make every app drop its caches again each time); a rise above
 * the last level sent is always sent. */
bool bus_lmm_wanted(Level last_level, const usec_t last_usec[static _LEVEL_MAX], Level level, usec_t now) {
        if (level <= LEVEL_NONE || level >= _LEVEL_MAX)
                return false;
        if (level > last_level)
                return true;
        return last_usec[level] == 0 || now >= last_usec[level] + BUS_LMM_REPEAT_USEC;
}

static bool lmm_wanted(Bus *b, const LevelEvent *ev) {
        return b->owns_lmm && bus_lmm_wanted(b->lmm_last_level, b->lmm_last_usec, ev->level, ev->timestamp_usec);
}

static void emit_level(Bus *b, const Scope *s, const LevelEvent *ev) {
        int r;

        if (!bus_has_room(b))
                return;
        /* The level signals keep their signature (the contract); a simulated
         * one is announced by this signal just before it, in order on the
         * same connection. */
        if (scope_simulated(s)) {
                r = sd_bus_emit_signal(b->bus, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_SIGNAL_SIMULATED,
                                       VMP_BUS_SIMULATED_SIG, scope_name(s), level_to_string(ev->level));
                if (r < 0)
                        log_debug_errno(r, "Cannot send the Simulated signal, ignoring: %m");
        }
        if (ev->level == LEVEL_NONE)
                r = sd_bus_emit_signal(b->bus, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_SIGNAL_NORMAL,
                                       VMP_BUS_NORMAL_SIG, scope_name(s));
        else
                r = sd_bus_emit_signal(b->bus, VMP_BUS_PATH, VMP_BUS_INTERFACE, level_signal[ev->level],
                                       VMP_BUS_LEVEL_SIG, scope_name(s), (uint32_t) ev->index);
        if (r < 0)
                log_debug_errno(r, "Cannot send the %s signal, ignoring: %m", level_signal[ev->level]);
}

static void emit_system_extras(Bus *b, const LevelEvent *ev) {
        char *changed[] = { (char *) "Level", (char *) "Index", (char *) "LastChangeUSec",
                            (char *) level_count_property[ev->level], (char *) "Simulated", NULL };
        int r;

        if (bus_has_room(b)) {
                r = sd_bus_emit_properties_changed_strv(b->bus, VMP_BUS_PATH, VMP_BUS_INTERFACE, changed);
                if (r < 0)
                        log_debug_errno(r, "Cannot send PropertiesChanged, ignoring: %m");
        }
        if (lmm_wanted(b, ev) && bus_has_room(b)) {
                r = sd_bus_emit_signal(b->bus, VMP_BUS_LMM_PATH, VMP_BUS_LMM_INTERFACE, "LowMemoryWarning", "y",
                                       bus_lmm_level(ev->level));
                if (r < 0)
                        log_debug_errno(r, "Cannot send LowMemoryWarning, ignoring: %m");
                b->lmm_last_usec[ev->level] = ev->timestamp_usec;
                b->lmm_last_level = ev->level;
        }
}

/* The kernel's notification (the event's timestamp) → now, into stage;
 * returns that latency. */
static usec_t record_since_notification(Manager *m, const Scope *s, const LevelEvent *ev, LatencyStage stage) {
        usec_t now = source_now_usec();
        usec_t latency = now > ev->timestamp_usec ? now - ev->timestamp_usec : 0;

        manager_record_latency(m, stage, scope_simulated(s), latency);
        return latency;
}

/* The manager's listener: every level change and rate-limited repeat of
 * every scope. fd subscribers first (a write(2) each, no allocation), then
 * the bus. */
static void on_level(Manager *m, const Scope *s, const LevelEvent *ev, void *userdata) {
        Bus *b = userdata;
        bool is_system = scope_is_system(s);
        bool caused = ev->level != LEVEL_NONE && (ev->level > ev->previous || ev->repeat);
        usec_t start = source_now_usec(), deliver = USEC_INFINITY;
        size_t written = 0;

        /* deliver: the kernel's notification → the last subscriber written,
         * before any bus message is built (the same rule as announce
         * below for what counts). */
        if (is_system)
                written = subscriber_set_deliver(b->subscribers, ev->level);
        if (written > 0 && caused)
                deliver = record_since_notification(m, s, ev, LATENCY_DELIVER);
        if (b->bus) {
                emit_level(b, s, ev);
                if (is_system)
                        emit_system_extras(b, ev);
        }
        /* The kernel's notification → out to subscribers and the bus. A
         * fall (to Normal or to a lower level) comes from the engine's
         * timer, not from the kernel: its timestamp is the deadline and the
         * timer fires up to its accuracy (10 ms) later, so it is not
         * measured (falls from OOM to LOW filled the 10-25 ms bucket, the
         * whole p99 of bench/bus-latency's own part). */
        if (!caused)
                return;
        usec_t announce = record_since_notification(m, s, ev, LATENCY_ANNOUNCE);
        /* The same stages to the µs, for --print-events only (the
         * histograms keep bucket bounds): the notification → this listener
         * ("start": the level decision, the headroom reads of an OOM and
         * the responder's actions), → the last descriptor written, → the
         * signals queued; and → the level decided (the engine and an
         * OOM's reads, before any listener). After every write: a line to
         * stdout costs a system call, and none of the stages waits behind
         * it. */
        manager_print(m, "own scope=%s level=%s t_usec=%" PRIu64 " start_usec=%" PRIu64
                      " deliver_usec=%" PRIi64 " announce_usec=%" PRIu64 " written=%zu decided_usec=%" PRIu64,
                      scope_name(s), level_to_string(ev->level), ev->timestamp_usec,
                      start > ev->timestamp_usec ? start - ev->timestamp_usec : 0,
                      deliver == USEC_INFINITY ? (int64_t) -1 : (int64_t) deliver, announce, written,
                      ev->decided_usec > ev->timestamp_usec ? ev->decided_usec - ev->timestamp_usec : 0);
}

/* The actions recorded since the last run, one Action signal each. Runs
 * from a defer source after the dispatch that acted, so nothing here
 * delays a kill. Entries the ring no longer holds (more than
 * RECENT_ACTIONS_MAX in one dispatch) are counted as dropped signals. */
static void on_actions(Manager *manager, void *userdata) {
        Bus *b = userdata;
        const RecentActions *ra = manager_recent_actions(manager);
        uint64_t first = ra->total - recent_actions_size(ra);   /* the sequence number of entry 0 */

        if (b->actions_sent < first) {
                b->signal_drops += first - b->actions_sent;
                b->actions_sent = first;
        }
        for (; b->actions_sent < ra->total; b->actions_sent++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
                int r;

                if (!bus_has_room(b))
                        continue;
                r = sd_bus_message_new_signal(b->bus, &m, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_SIGNAL_ACTION);
                if (r >= 0)
                        r = append_action(m, recent_actions_get(ra, b->actions_sent - first));
                if (r >= 0)
                        r = sd_bus_send(b->bus, m, NULL);
                if (r < 0)
                        log_debug_errno(r, "Cannot send the Action signal, ignoring: %m");
        }
}

sd_bus *bus_get_connection(Bus *b) {
        return b ? b->bus : NULL;
}

int bus_emit_killed(Bus *b, const char *unit, pid_t pid, const char *comm, uint64_t rss_bytes,
                    const char *reason) {
        if (!b->bus)
                return -ENOTCONN;
        if (!bus_has_room(b))
                return -ENOBUFS;
        return sd_bus_emit_signal(b->bus, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_SIGNAL_KILLED,
                                  VMP_BUS_KILLED_SIG, unit, (uint32_t) pid, comm, rss_bytes, reason);
}

static int rehearse_signal(Bus *b, const char *member, const char *sig, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_signal(b->bus, &m, VMP_BUS_PATH, VMP_BUS_INTERFACE, member);
        if (r < 0)
                return r;
        va_start(ap, sig);
        r = sd_bus_message_appendv(m, sig, ap);
        va_end(ap);
        if (r < 0)
                return r;
        /* Sealed as sending would, then dropped unsent. */
        return sd_bus_message_seal(m, 1, 0);
}

int bus_rehearse_killed(Bus *b, const char *unit, pid_t pid, const char *comm, uint64_t rss_bytes,
                        const char *reason) {
        int r;

        if (!b->bus)
                return -ENOTCONN;
        /* An OOM announcement's level signal, then the kill's. */
        r = rehearse_signal(b, level_signal[LEVEL_OOM], VMP_BUS_LEVEL_SIG, VMP_BUS_SCOPE_SYSTEM,
                            (uint32_t) 100);
        if (r < 0)
                return r;
        return rehearse_signal(b, VMP_BUS_SIGNAL_KILLED, VMP_BUS_KILLED_SIG, unit, (uint32_t) pid, comm, rss_bytes,
                               reason);
}

/* ---- connection, names, reconnection --------------------------------------- */

static int bus_connect(Bus *b);

static void bus_schedule_retry_in(Bus *b, usec_t delay) {
        (void) sd_event_source_set_time_relative(b->retry_timer, delay);
        (void) sd_event_source_set_enabled(b->retry_timer, SD_EVENT_ONESHOT);
}

/* The socket path of the system bus's first address ($DBUS_SYSTEM_BUS_ADDRESS
 * or the default); false for any other kind of address. */
static bool bus_socket_path(Bus *b) {
        const char *a = getenv("DBUS_SYSTEM_BUS_ADDRESS") ?: BUS_SYSTEM_SOCKET_ADDRESS;
        char path[PATH_MAX];
        const char *slash;
        size_t n;

        if (!startswith(a, "unix:path="))
                return false;
        a += strlen("unix:path=");
        n = strcspn(a, ",;");
        if (n == 0 || n >= sizeof(path) || a[0] != '/')
                return false;
        memcpy(path, a, n);
        path[n] = '\0';
        if (strchr(path, '%'))
                return false;   /* escaped: not worth decoding for a wait */
        slash = strrchr(path, '/');
        if (strlen(slash + 1) == 0 || strlen(slash + 1) >= sizeof(b->socket_name))
                return false;
        (void) snprintf(b->socket_name, sizeof(b->socket_name), "%s", slash + 1);
        (void) snprintf(b->socket_dir, sizeof(b->socket_dir), "%.*s", (int) (slash == path ? 1 : slash - path), path);
        return true;
}

static int on_socket_event(sd_event_source *s, const struct inotify_event *ev, void *userdata) {
        Bus *b = userdata;

        if (b->bus || ev->len == 0 || !streq(ev->name, b->socket_name))
                return 0;
        /* dbus-daemon bind()s, then listen()s: a connect() between the two
         * is refused, so a few quick tries follow the socket's appearance. */
        b->quick_retries = BUS_SOCKET_QUICK_RETRIES;
        bus_schedule_retry_in(b, 0);
        return 0;
}

static void bus_stop_waiting(Bus *b) {
        b->socket_watch = sd_event_source_disable_unref(b->socket_watch);
        b->quick_retries = 0;
}

/* After a failed attempt: wait for the socket to be made (inotify), with no
 * timer. The first time, one more attempt right away: the socket may have
 * appeared between the failure and the watch. Where there is nothing to
 * watch (another kind of address, no such directory), the timer. */
static void bus_schedule_retry(Bus *b) {
        int r;

        if (b->socket_watch) {
                if (b->quick_retries > 0) {
                        b->quick_retries--;
                        bus_schedule_retry_in(b, BUS_SOCKET_QUICK_RETRY_USEC);
                }
                return;
        }
        if (bus_socket_path(b)) {
                r = sd_event_add_inotify(manager_event(b->manager), &b->socket_watch, b->socket_dir,
                                         IN_CREATE | IN_MOVED_TO | IN_ATTRIB | IN_ONLYDIR, on_socket_event, b);
                if (r >= 0) {
                        log_debug("Waiting for %s/%s to appear.", b->socket_dir, b->socket_name);
                        bus_schedule_retry_in(b, 0);
                        return;
                }
                log_debug_errno(r, "Cannot watch %s for the bus socket, retrying on a timer: %m", b->socket_dir);
        }
        bus_schedule_retry_in(b, b->attempts < BUS_RETRY_FAST_ATTEMPTS ? BUS_RETRY_USEC : BUS_RETRY_SLOW_USEC);
}

/* One warning per outage, then a reminder every 60 attempts. */
static void bus_connect_failed(Bus *b, int error) {
        b->attempts++;
        if (!b->outage_logged) {
                log_struct_internal(LOG_WARNING, MESSAGE_ID_BUS_DISCONNECTED, NULL,
                                    "No system bus (%s); memory pressure is still watched and fd "
                                    "subscribers served, connecting when the bus's socket appears.",
                                    strerror(-error));
                b->outage_logged = true;
        } else if (b->attempts % 60 == 0)
                log_info("Still no system bus after %u attempts (%s), retrying.", b->attempts, strerror(-error));
        else
                log_debug("Connecting to the system bus failed (%s), retrying.", strerror(-error));
        bus_schedule_retry(b);
}

static void bus_mark_connected(Bus *b) {
        if (b->connected)
                return;
        b->connected = true;
        if (b->attempts > 0)
                log_struct_internal(LOG_NOTICE, MESSAGE_ID_BUS_CONNECTED, NULL,
                                    "Connected to the system bus again after %u attempts.", b->attempts);
        else
                log_struct_internal(LOG_INFO, MESSAGE_ID_BUS_CONNECTED, NULL, "Connected to the system bus.");
        b->attempts = 0;
        b->outage_logged = false;
        bus_stop_waiting(b);
        /* Not left to systemd_units' own timer alone: in the guest some
         * restarts never attached to systemd's JobRemoved, and a unit started
         * later was never in the table, so an OOM killed nothing. The cause
         * is not found yet (tools/restart-attach reproduces it). */
        responder_bus_connected(b->responder);
}

static void bus_drop_connection(Bus *b) {
        /* Safe inside one of this bus's callbacks: sd-bus holds a reference
         * while it dispatches, and frees the connection afterwards. */
        b->bus = sd_bus_close_unref(b->bus);
        b->connected = b->owns_name = b->owns_lmm = b->lmm_queued = false;
}

static int on_disconnected(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Bus *b = userdata;
        bool was_connected = b->connected;

        bus_drop_connection(b);
        if (!was_connected) {
                bus_connect_failed(b, -ECONNRESET);
                return 0;
        }
        log_struct_internal(LOG_WARNING, MESSAGE_ID_BUS_DISCONNECTED, NULL,
                            "Lost the system bus connection; memory pressure is still watched and fd "
                            "subscribers served, reconnecting.");
        b->outage_logged = true;
        bus_schedule_retry(b);
        return 0;
}

static int on_retry(sd_event_source *es, uint64_t usec, void *userdata) {
        Bus *b = userdata;
        int r;

        r = bus_connect(b);
        if (r == -ENOMEM)
                log_oom();
        if (r < 0)
                bus_connect_failed(b, r);
        return 0;
}

/* RequestName's answer: 1 primary owner, 2 queued, 3 owned by someone else
 * (we did not queue), 4 already ours. */
static int name_reply(Bus *b, sd_bus_message *reply, const char *name, uint32_t *ret) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int r;

        /* A bus that died before answering gets this reply from sd-bus itself
         * ("Connection terminated"), while it closes: that is no connection,
         * and must not end the outage (its warning would be given twice). */
        if (!sd_bus_is_open(sd_bus_message_get_bus(reply)))
                return -ECONNRESET;
        bus_mark_connected(b);          /* the bus answered: Hello and auth are done */
        if (e) {
                log_error("Cannot own %s: %s", name, e->message ?: e->name);
                return -EACCES;
        }
        r = sd_bus_message_read(reply, "u", ret);
        if (r < 0)
                return log_error_errno(r, "Bad RequestName reply for %s: %m", name);
        return 0;
}

static int on_name_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Bus *b = userdata;
        uint32_t result;

        if (name_reply(b, reply, VMP_BUS_NAME, &result) < 0)
                return 0;
        if (result == 1 || result == 4) {
                b->owns_name = true;
                log_debug("Acquired %s.", VMP_BUS_NAME);
        } else
                log_warning("%s is owned by another process; queued, taking it over when it leaves.", VMP_BUS_NAME);
        return 0;
}

static int on_lmm_name_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Bus *b = userdata;
        uint32_t result;

        if (name_reply(b, reply, VMP_BUS_LMM_NAME, &result) < 0)
                return 0;
        if (result == 1 || result == 4) {
                b->owns_lmm = true;
                log_info("Acquired %s: GLib's GMemoryMonitor gets LowMemoryWarning from us.", VMP_BUS_LMM_NAME);
        } else if (result == 2) {
                b->lmm_queued = true;
                log_warning("%s is owned by another service (low-memory-monitor?); LowMemoryMonitor=yes: "
                            "queued, taking it over when it leaves.", VMP_BUS_LMM_NAME);
        } else
                log_info("%s is owned by another service (low-memory-monitor?); LowMemoryMonitor=auto: "
                         "leaving it to that one.", VMP_BUS_LMM_NAME);
        return 0;
}

/* A method call whose object path or a top-level string argument is longer
 * than BUS_ARG_MAX: answered here with a short error, before sd-bus
 * dispatches it. sd-bus's own answer to an unknown object, interface or
 * property quotes the name back, so one 30 MB Properties.Get() from anyone
 * cost a 30 MB error text, a 30 MB reply and their growth: the daemon's
 * peak went from 9.6 MB to 132 MB, all of it locked. 1 when refused. */
static int refuse_oversized(sd_bus_message *msg) {
        const char *path = sd_bus_message_get_path(msg), *sig;
        bool refuse = path && strlen(path) > BUS_ARG_MAX;
        int r;

        sig = sd_bus_message_get_signature(msg, true);
        for (const char *t = sig ?: ""; !refuse && *t; t++) {
                const char *v;

                if (*t != SD_BUS_TYPE_STRING && *t != SD_BUS_TYPE_OBJECT_PATH)
                        break;          /* no method of ours takes one after anything else */
                if (sd_bus_message_read_basic(msg, *t, &v) <= 0)
                        break;          /* invalid: sd-bus answers that itself */
                refuse = strlen(v) > BUS_ARG_MAX;
        }
        (void) sd_bus_message_rewind(msg, true);
        if (!refuse)
                return 0;
        r = sd_bus_reply_method_errorf(msg, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                       "An object path or argument longer than %u bytes.", BUS_ARG_MAX);
        if (r < 0)
                log_debug_errno(r, "Cannot refuse an oversized call, ignoring: %m");
        return 1;
}

/* NameAcquired/NameLost are sent to us alone; a filter sees them without a
 * match rule. Keeps owns_* right when a queued request is served later.
 * Method calls are checked for oversized arguments first. */
static int on_bus_filter(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Bus *b = userdata;
        bool acquired;
        const char *name;

        if (sd_bus_message_is_method_call(msg, NULL, NULL))
                return refuse_oversized(msg);
        if (sd_bus_message_is_signal(msg, "org.freedesktop.DBus", "NameAcquired"))
                acquired = true;
        else if (sd_bus_message_is_signal(msg, "org.freedesktop.DBus", "NameLost"))
                acquired = false;
        else
                return 0;
        if (!streq_ptr(sd_bus_message_get_sender(msg), "org.freedesktop.DBus"))
                return 0;
        if (sd_bus_message_read(msg, "s", &name) < 0)
                return 0;
        (void) sd_bus_message_rewind(msg, true);

        if (streq(name, VMP_BUS_NAME))
                b->owns_name = acquired;
        else if (streq(name, VMP_BUS_LMM_NAME)) {
                /* The first acquisition is logged with RequestName's reply. */
                if (acquired && !b->owns_lmm && b->lmm_queued)
                        log_info("Acquired %s, which was queued.", VMP_BUS_LMM_NAME);
                else if (!acquired && b->owns_lmm)
                        log_info("Lost %s.", VMP_BUS_LMM_NAME);
                b->owns_lmm = acquired;
        }
        return 0;
}

static int bus_connect(Bus *b) {
        _cleanup_(sd_bus_close_unrefp) sd_bus *bus = NULL;
        LowMemoryMonitorMode lmm = manager_config(b->manager)->low_memory_monitor;
        int r;

        /* Never a synchronous call from here on: a stuck dbus-daemon must not
         * stop the event loop that watches pressure. */
        r = sd_bus_open_system_with_description(&bus, "vmpressured");
        if (r < 0)
                return r;
        (void) sd_bus_set_exit_on_disconnect(bus, false);
        (void) setsockopt(sd_bus_get_fd(bus), SOL_SOCKET, SO_SNDBUF, &(int) { BUS_SNDBUF_BYTES }, sizeof(int));
        (void) setsockopt(sd_bus_get_fd(bus), SOL_SOCKET, SO_RCVBUF, &(int) { BUS_RCVBUF_BYTES }, sizeof(int));

        /* A match on the local Disconnected signal installs nothing on the bus. */
        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                "org.freedesktop.DBus.Local", "Disconnected", on_disconnected, b);
        if (r < 0)
                return r;
        r = sd_bus_add_filter(bus, NULL, on_bus_filter, b);
        if (r < 0)
                return r;
        r = sd_bus_add_object_vtable(bus, NULL, VMP_BUS_PATH, VMP_BUS_INTERFACE, manager_vtable, b);
        if (r < 0)
                return r;
        r = sd_bus_request_name_async(bus, NULL, VMP_BUS_NAME, SD_BUS_NAME_QUEUE, on_name_reply, b);
        if (r < 0)
                return r;
        if (lmm != LOW_MEMORY_MONITOR_NO) {
                r = sd_bus_add_object_vtable(bus, NULL, VMP_BUS_LMM_PATH, VMP_BUS_LMM_INTERFACE, lmm_vtable, b);
                if (r < 0)
                        return r;
                /* auto: no queueing and no replacing; whoever holds it keeps it. */
                r = sd_bus_request_name_async(bus, NULL, VMP_BUS_LMM_NAME,
                                              lmm == LOW_MEMORY_MONITOR_YES ? SD_BUS_NAME_QUEUE : 0,
                                              on_lmm_name_reply, b);
                if (r < 0)
                        return r;
        }
        /* Below the sources: under a storm of pressure events they go first. */
        r = sd_bus_attach_event(bus, manager_event(b->manager), SD_EVENT_PRIORITY_NORMAL + 10);
        if (r < 0)
                return r;

        b->bus = TAKE_PTR(bus);
        (void) memory_reserve_refill();
        return 0;
}

int bus_new(Manager *m, Bus **ret) {
        _cleanup_(bus_freep) Bus *b = NULL;
        size_t max = manager_config(m)->max_subscribers ?: SUBSCRIBERS_MAX_DEFAULT;
        struct rlimit rl;
        int n, r;

        b = calloc(1, sizeof(Bus));
        if (!b)
                return -ENOMEM;
        b->manager = m;

        r = subscriber_set_new(max, NULL, NULL, &b->subscribers);
        if (r < 0)
                return r;
        r = subscriber_set_attach_event(b->subscribers, manager_event(m));
        if (r < 0)
                return r;
        /* main() raised RLIMIT_NOFILE for MaxSubscribers= and the reserve
         * before start-up; what is open now is the daemon's own share. */
        n = fds_open_count();
        if (n >= 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            subscribers_nofile_needed((size_t) n, max) > rl.rlim_cur)
                log_warning("RLIMIT_NOFILE is %zu and %d descriptors are open: fewer than MaxSubscribers=%zu "
                            "subscribers fit beside the %u kept for the OOM path and the bus.",
                            (size_t) rl.rlim_cur, n, max, SUBSCRIBERS_FD_RESERVE);

        r = sd_event_add_time_relative(manager_event(m), &b->retry_timer, CLOCK_MONOTONIC, BUS_RETRY_USEC,
                                       100 * USEC_PER_MSEC, on_retry, b);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(b->retry_timer, SD_EVENT_OFF);

        b->actions_sent = manager_recent_actions(m)->total;

        r = bus_connect(b);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                bus_connect_failed(b, r);

        /* Last: nothing above can fail any more and leave a dangling
         * listener (bus_free() takes the hook back). The phase puts the
         * announcement after the responder's actions, whatever the order of
         * registration. */
        r = manager_set_actions_hook(m, on_actions, b);
        if (r < 0)
                return r;
        b->actions_hooked = true;
        r = manager_add_phase_listener(m, MANAGER_LISTENER_ANNOUNCE, on_level, b);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(b);
        return 0;
}

Bus *bus_free(Bus *b) {
        if (!b)
                return NULL;
        /* No flush: a stuck dbus-daemon must not hold up the exit. */
        sd_bus_close_unref(b->bus);
        sd_event_source_disable_unref(b->retry_timer);
        sd_event_source_disable_unref(b->socket_watch);
        if (b->actions_hooked)
                (void) manager_set_actions_hook(b->manager, NULL, NULL);
        subscriber_set_free(b->subscribers);
        free(b);
        return NULL;
}

static void on_killed(Responder *r, const char *unit, pid_t pid, const char *comm, uint64_t rss_bytes,
                      const char *reason, void *userdata) {
        int k = bus_emit_killed(userdata, unit, pid, comm, rss_bytes, reason);
        if (k < 0)
                log_debug_errno(k, "Cannot send Killed for %s[%i], ignoring: %m", comm, (int) pid);
}

static sd_bus *get_connection(void *userdata) {
        return bus_get_connection(userdata);
}

void bus_set_responder(Bus *b, Responder *r) {
        b->responder = r;
        if (r) {
                responder_set_killed_handler(r, on_killed, b);
                responder_set_bus_getter(r, get_connection, b);
        }
}
