/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmpressure-notify: a per-user agent that turns vmpressured's Killed,
 * Action and OOM signals on the system bus into desktop notifications
 * (org.freedesktop.Notifications.Notify on the session bus). It never exits
 * because a bus or the notification server is missing: it waits for the
 * system bus to come back and drops notifications while no server runs,
 * saying so once.
 */

#include <getopt.h>
#include <signal.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "config.h"
#include "log.h"
#include "macro.h"
#include "notify-text.h"
#include "vmpressure-bus.h"

#define NOTIFICATIONS_NAME      "org.freedesktop.Notifications"
#define NOTIFICATIONS_PATH      "/org/freedesktop/Notifications"
/* A notification server answers in milliseconds; one that takes longer is
 * stuck, and waiting longer only piles calls up. */
#define NOTIFY_TIMEOUT_USEC     (5 * USEC_PER_SEC)
/* The system bus restarts in well under a second (dbus-daemon is ready in
 * ~15 ms); back off to 30 s while it stays away, so a machine without one
 * costs two wake-ups a minute. */
#define RECONNECT_MIN_USEC      (1 * USEC_PER_SEC)
#define RECONNECT_MAX_USEC      (30 * USEC_PER_SEC)
#define OOM_SCOPES_MAX          16

typedef struct Agent Agent;

typedef struct OomScope {
        Agent *agent;
        char scope[128];
        usec_t last_usec;
        uint32_t id;                    /* the server's id of its notification, to replace it */
} OomScope;

struct Agent {
        sd_event *event;
        sd_bus *system;
        sd_bus *session;
        sd_event_source *reconnect;
        usec_t reconnect_delay_usec;
        NotifyRateLimit ratelimit;
        usec_t oom_interval_usec;
        bool oom_enabled;
        OomScope oom[OOM_SCOPES_MAX];
        bool no_server;                 /* said once; reset by a notification that went through */
        bool no_session_bus;
};

static usec_t now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
}

static int agent_connect_system(Agent *a);

static void agent_drop_session(Agent *a) {
        a->session = sd_bus_flush_close_unref(a->session);
}

/* The server's answer: its id of the notification, or an error. */
static int agent_reply(Agent *a, sd_bus_message *m, uint32_t *ret_id) {
        const sd_bus_error *e = sd_bus_message_get_error(m);
        uint32_t id = 0;

        if (e) {
                /* No server: ServiceUnknown (nothing to activate), NoReply (a
                 * stuck server). Said once, until one answers again. */
                if (!a->no_server)
                        log_notice("No notification server answers on the session bus (%s: %s); "
                                   "notifications are dropped until one does.", e->name, e->message);
                a->no_server = true;
                return 0;
        }
        if (a->no_server)
                log_info("A notification server answers again.");
        a->no_server = false;
        (void) sd_bus_message_read(m, "u", &id);
        log_debug("Notification sent, id %" PRIu32 ".", id);
        if (ret_id)
                *ret_id = id;
        return 0;
}

static int on_notify_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        return agent_reply(userdata, m, NULL);
}

/* An OOM notification keeps its id: the next one of the scope replaces it
 * instead of stacking up. */
static int on_oom_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        OomScope *s = userdata;

        return agent_reply(s->agent, m, &s->id);
}

static int agent_ensure_session(Agent *a) {
        int r;

        if (a->session)
                return 0;
        r = sd_bus_open_user(&a->session);
        if (r >= 0)
                r = sd_bus_attach_event(a->session, a->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0) {
                a->session = sd_bus_unref(a->session);
                if (!a->no_session_bus)
                        log_notice_errno(r, "No session bus (DBUS_SESSION_BUS_ADDRESS or $XDG_RUNTIME_DIR/bus): %m; "
                                         "notifications are dropped until there is one.");
                a->no_session_bus = true;
                return r;
        }
        a->no_session_bus = false;
        return 0;
}

/* Sends t (replacing notification replaces_id when not 0); the reply goes
 * to on_reply(userdata) or, without one, to on_notify_reply(). */
static int agent_notify(Agent *a, const NotifyText *t, uint32_t replaces_id,
                        sd_bus_message_handler_t on_reply, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = agent_ensure_session(a);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_call(a->session, &m, NOTIFICATIONS_NAME, NOTIFICATIONS_PATH,
                                           NOTIFICATIONS_NAME, "Notify");
        if (r >= 0)
                r = sd_bus_message_append(m, "susssas", "vmpressured", replaces_id, "dialog-warning",
                                          t->summary, t->body, 0);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}i", 2,
                                          "urgency", "y", t->urgency,
                                          "category", "s", "device",
                                          (int32_t) -1);
        if (r < 0)
                return log_error_errno(r, "Cannot build the Notify call: %m");
        r = sd_bus_call_async(a->session, NULL, m, on_reply ? on_reply : on_notify_reply, on_reply ? userdata : a,
                              NOTIFY_TIMEOUT_USEC);
        if (r < 0) {
                /* The session bus went away (the session ended): reopened for the next one. */
                log_debug_errno(r, "Cannot call Notify, reopening the session bus next time: %m");
                agent_drop_session(a);
        }
        return r;
}

/* Through the rate limit: what it holds back is counted and named in the
 * next notification that passes. */
static void agent_post(Agent *a, NotifyText *t, uint32_t replaces_id, sd_bus_message_handler_t on_reply,
                       void *userdata) {
        if (!notify_ratelimit_take(&a->ratelimit, now_usec())) {
                log_debug("Rate limit: \"%s\" not shown.", t->summary);
                return;
        }
        notify_text_add_suppressed(t, notify_ratelimit_pop_suppressed(&a->ratelimit));
        (void) agent_notify(a, t, replaces_id, on_reply, userdata);
}

static int on_killed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Agent *a = userdata;
        const char *unit, *comm, *reason;
        uint32_t pid;
        uint64_t rss;
        NotifyText t;
        int r;

        r = sd_bus_message_read(m, VMP_BUS_KILLED_SIG, &unit, &pid, &comm, &rss, &reason);
        if (r < 0) {
                log_warning_errno(r, "Malformed Killed signal, ignoring: %m");
                return 0;
        }
        log_debug("Killed: unit=%s pid=%" PRIu32 " comm=%s rss=%" PRIu64 " reason=%s", unit, pid, comm, rss, reason);
        notify_text_killed(&t, unit, pid, comm, rss, reason);
        agent_post(a, &t, 0, NULL, NULL);
        return 0;
}

static int on_action(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Agent *a = userdata;
        const char *unit, *level, *action, *sig, *result;
        uint64_t realtime, latency;
        uint32_t pid;
        int simulated;
        NotifyText t;
        int r;

        r = sd_bus_message_read(m, VMP_BUS_ACTION_SIG, &realtime, &unit, &level, &action, &sig, &pid,
                                &result, &simulated, &latency);
        if (r < 0) {
                log_warning_errno(r, "Malformed Action signal, ignoring: %m");
                return 0;
        }
        log_debug("Action: unit=%s level=%s action=%s signal=%s pid=%" PRIu32 " result=%s",
                  unit, level, action, sig, pid, result);
        if (notify_text_action(&t, unit, level, action, sig, pid, result, simulated))
                agent_post(a, &t, 0, NULL, NULL);
        return 0;
}

static OomScope *agent_oom_scope(Agent *a, const char *scope) {
        OomScope *oldest = &a->oom[0];

        for (size_t i = 0; i < ELEMENTSOF(a->oom); i++) {
                if (streq(a->oom[i].scope, scope))
                        return &a->oom[i];
                if (a->oom[i].last_usec < oldest->last_usec)
                        oldest = &a->oom[i];
        }
        /* A new scope takes the least recently announced slot. */
        *oldest = (OomScope) { .agent = a };
        snprintf(oldest->scope, sizeof oldest->scope, "%s", scope);
        return oldest;
}

static int on_oom(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Agent *a = userdata;
        const char *scope;
        uint32_t index;
        usec_t now = now_usec();
        OomScope *s;
        NotifyText t;
        int r;

        if (!a->oom_enabled)
                return 0;
        r = sd_bus_message_read(m, VMP_BUS_LEVEL_SIG, &scope, &index);
        if (r < 0) {
                log_warning_errno(r, "Malformed OOM signal, ignoring: %m");
                return 0;
        }
        /* The daemon repeats OOM every RepeatSec= (1 s) while it lasts: one
         * notification per scope per --oom-interval, and that one through
         * the rate limit like the others. */
        s = agent_oom_scope(a, scope);
        if (s->last_usec != 0 && now - s->last_usec < a->oom_interval_usec)
                return 0;
        s->last_usec = now;
        notify_text_oom(&t, scope, index);
        agent_post(a, &t, s->id, on_oom_reply, s);
        return 0;
}

static int on_reconnect(sd_event_source *es, uint64_t usec, void *userdata) {
        Agent *a = userdata;

        a->system = sd_bus_flush_close_unref(a->system);
        if (agent_connect_system(a) >= 0) {
                log_info("Connected to the system bus.");
                a->reconnect_delay_usec = RECONNECT_MIN_USEC;
                return 0;
        }
        a->reconnect_delay_usec = MIN(a->reconnect_delay_usec * 2, RECONNECT_MAX_USEC);
        (void) sd_event_source_set_time_relative(es, a->reconnect_delay_usec);
        (void) sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
        return 0;
}

static void agent_schedule_reconnect(Agent *a) {
        int r;

        if (!a->reconnect) {
                r = sd_event_add_time_relative(a->event, &a->reconnect, CLOCK_MONOTONIC, a->reconnect_delay_usec,
                                               100 * USEC_PER_MSEC, on_reconnect, a);
                if (r < 0)
                        log_error_errno(r, "Cannot arm the reconnect timer: %m");
                return;
        }
        (void) sd_event_source_set_time_relative(a->reconnect, a->reconnect_delay_usec);
        (void) sd_event_source_set_enabled(a->reconnect, SD_EVENT_ONESHOT);
}

static int on_disconnect(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Agent *a = userdata;

        log_notice("The system bus went away; reconnecting.");
        /* Not unreferenced here, inside its own dispatch: on_reconnect does. */
        agent_schedule_reconnect(a);
        return 0;
}

static int agent_connect_system(Agent *a) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        static const struct {
                const char *member;
                sd_bus_message_handler_t handler;
        } matches[] = {
                { VMP_BUS_SIGNAL_KILLED, on_killed },
                { VMP_BUS_SIGNAL_ACTION, on_action },
                { "OOM", on_oom },
        };
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0)
                return log_debug_errno(r, "Cannot connect to the system bus: %m");
        /* Only what the name's owner (root, by the bus policy) sends matches. */
        for (size_t i = 0; i < ELEMENTSOF(matches); i++) {
                r = sd_bus_match_signal(bus, NULL, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE,
                                        matches[i].member, matches[i].handler, a);
                if (r < 0)
                        return log_debug_errno(r, "Cannot add the match for %s: %m", matches[i].member);
        }
        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                "org.freedesktop.DBus.Local", "Disconnected", on_disconnect, a);
        if (r >= 0)
                r = sd_bus_attach_event(bus, a->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_debug_errno(r, "Cannot set up the system bus connection: %m");
        /* Matches are added asynchronously; wait for them, so that what the
         * caller announces as ready is. */
        r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "GetId", NULL, NULL, NULL);
        if (r < 0)
                return log_debug_errno(r, "The system bus does not answer: %m");
        a->system = TAKE_PTR(bus);
        return 0;
}

static void help(void) {
        printf("vmpressure-notify [OPTIONS]\n\n"
               "Desktop notifications for vmpressured's kills, actions and OOM announcements.\n\n"
               "  -h --help               Show this help\n"
               "     --version            Show the version\n"
               "     --burst=N            Notifications shown at once before the rate limit (default 5)\n"
               "     --interval=SEC       Then one every SEC seconds (default 60)\n"
               "     --oom-interval=SEC   One OOM notification per scope every SEC seconds (default 300)\n"
               "     --no-oom             No notifications for OOM announcements\n"
               "  -v --verbose            Log every signal received (debug level)\n");
}

static int parse_seconds(const char *s, usec_t *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 86400.0 * 365)
                return -EINVAL;
        *ret = (usec_t) (v * USEC_PER_SEC);
        return 0;
}

typedef struct Options {
        unsigned burst;
        usec_t interval_usec;
        usec_t oom_interval_usec;
        bool oom;
} Options;

/* 1: go on; 0: done (help, version); negative errno: bad usage (logged). */
static int parse_argv(int argc, char *argv[], Options *o) {
        enum { ARG_VERSION = 0x100, ARG_BURST, ARG_INTERVAL, ARG_OOM_INTERVAL, ARG_NO_OOM };
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "burst", required_argument, NULL, ARG_BURST },
                { "interval", required_argument, NULL, ARG_INTERVAL },
                { "oom-interval", required_argument, NULL, ARG_OOM_INTERVAL },
                { "no-oom", no_argument, NULL, ARG_NO_OOM },
                { "verbose", no_argument, NULL, 'v' },
                {}
        };
        char *end;
        int c;

        while ((c = getopt_long(argc, argv, "hv", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("vmpressure-notify %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_BURST:
                        errno = 0;
                        o->burst = (unsigned) strtoul(optarg, &end, 10);
                        if (errno != 0 || *end != '\0' || o->burst == 0 || o->burst > 1000) {
                                log_error("--burst=%s: expected a number from 1 to 1000.", optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_INTERVAL:
                case ARG_OOM_INTERVAL:
                        if (parse_seconds(optarg, c == ARG_INTERVAL ? &o->interval_usec : &o->oom_interval_usec) < 0) {
                                log_error("--%s=%s: expected seconds (0 to a year).",
                                          c == ARG_INTERVAL ? "interval" : "oom-interval", optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_NO_OOM:
                        o->oom = false;
                        break;
                case 'v':
                        log_set_max_level(LOG_DEBUG);
                        break;
                default:
                        return -EINVAL;
                }
        if (optind < argc) {
                log_error("Unexpected argument: %s", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

int main(int argc, char *argv[]) {
        Options o = { .burst = 5, .interval_usec = 60 * USEC_PER_SEC, .oom_interval_usec = 300 * USEC_PER_SEC,
                      .oom = true };
        Agent a = { .reconnect_delay_usec = RECONNECT_MIN_USEC };
        sigset_t mask;
        int r;

        log_setup();
        log_set_identifier("vmpressure-notify");
        log_set_max_level(LOG_INFO);
        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? 2 : 0;
        notify_ratelimit_init(&a.ratelimit, o.burst, o.interval_usec, now_usec());
        a.oom_interval_usec = o.oom_interval_usec;
        a.oom_enabled = o.oom;
        for (size_t i = 0; i < ELEMENTSOF(a.oom); i++)
                a.oom[i].agent = &a;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);
        r = sd_event_default(&a.event);
        if (r >= 0)
                r = sd_event_add_signal(a.event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(a.event, NULL, SIGINT, NULL, NULL);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the event loop: %m");
                return 1;
        }
        if (agent_connect_system(&a) < 0) {
                log_notice("No system bus yet; waiting for it.");
                agent_schedule_reconnect(&a);
        } else
                log_info("Listening for vmpressured on the system bus.");

        r = sd_event_loop(a.event);
        a.reconnect = sd_event_source_unref(a.reconnect);
        a.system = sd_bus_flush_close_unref(a.system);
        a.session = sd_bus_flush_close_unref(a.session);
        a.event = sd_event_unref(a.event);
        if (r < 0) {
                log_error_errno(r, "Event loop failed: %m");
                return 1;
        }
        return 0;
}
