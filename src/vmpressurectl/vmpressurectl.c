/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmpressurectl(1): the daemon from the shell, over its D-Bus API
 * (org.freedesktop.vmpressure1(5)), and policy files checked with the
 * daemon's own parser (policy.c, linked in).
 *
 * Exit status: 0 ok, 1 failure or problems found, 2 usage, 3 the daemon is
 * not reachable (no system bus, or nobody owns org.freedesktop.vmpressure1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "vmpressure-bus.h"
#include "config.h"
#include "policy.h"
#include "read-file.h"

enum {
        EXIT_OK = 0,
        EXIT_FAIL = 1,
        EXIT_USAGE = 2,
        EXIT_UNREACHABLE = 3,
};

static bool arg_json;
static const char *arg_threshold;
static const char *arg_scope;

/* ---- output helpers ---- */

static void json_string(FILE *f, const char *s) {
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) (s ?: ""); *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if (*p < 0x20)
                        fprintf(f, "\\u%04x", *p);
                else
                        fputc(*p, f);
        }
        fputc('"', f);
}

/* Prometheus label values: backslash, quote and newline escaped. */
static void prom_label(FILE *f, const char *s) {
        for (const char *p = s ?: ""; *p; p++) {
                if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p == '\n')
                        fputs("\\n", f);
                else
                        fputc(*p, f);
        }
}

/* Microseconds as exact decimal seconds, for Prometheus: 50 → "0.00005". */
static const char *format_seconds(char *buf, size_t size, uint64_t usec) {
        size_t n;

        if (usec % USEC_PER_SEC == 0) {
                (void) snprintf(buf, size, "%" PRIu64, usec / USEC_PER_SEC);
                return buf;
        }
        (void) snprintf(buf, size, "%" PRIu64 ".%06" PRIu64, usec / USEC_PER_SEC, usec % USEC_PER_SEC);
        n = strlen(buf);
        while (n > 0 && buf[n - 1] == '0')
                buf[--n] = '\0';
        return buf;
}

/* A short human duration: 840us, 12.5ms, 2.31s. */
static const char *format_timespan(char *buf, size_t size, uint64_t usec) {
        if (usec < USEC_PER_MSEC)
                (void) snprintf(buf, size, "%" PRIu64 "us", usec);
        else if (usec < USEC_PER_SEC)
                (void) snprintf(buf, size, "%.1fms", (double) usec / USEC_PER_MSEC);
        else
                (void) snprintf(buf, size, "%.2fs", (double) usec / USEC_PER_SEC);
        return buf;
}

/* CLOCK_REALTIME µs as local time, like systemd's tools: "Thu 2026-12-03 13:50:01 UTC". */
static const char *format_timestamp(char *buf, size_t size, uint64_t usec) {
        time_t t = (time_t) (usec / USEC_PER_SEC);
        struct tm tm;

        if (usec == 0 || !localtime_r(&t, &tm) || strftime(buf, size, "%a %Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                (void) snprintf(buf, size, "n/a");
        return buf;
}

/* ---- the bus ---- */

static bool error_is_unreachable(const sd_bus_error *e, int r) {
        if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                   SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT, SD_BUS_ERROR_DISCONNECTED))
                return true;
        return r == -ENOENT || r == -ECONNREFUSED || r == -ETIMEDOUT || r == -ENOTCONN || r == -ECONNRESET;
}

/* Reports a failed call; the exit status for it. */
static int report(const char *what, const sd_bus_error *e, int r) {
        if (e && sd_bus_error_is_set(e))
                fprintf(stderr, "vmpressurectl: %s: %s (%s)\n", what, e->message ?: e->name, e->name);
        else
                fprintf(stderr, "vmpressurectl: %s: %s\n", what, strerror(r < 0 ? -r : EIO));
        if (error_is_unreachable(e, r)) {
                fprintf(stderr, "vmpressurectl: vmpressured is not reachable on the system bus.\n");
                return EXIT_UNREACHABLE;
        }
        return EXIT_FAIL;
}

static int connect_bus(sd_bus **ret) {
        int r = sd_bus_open_system(ret);
        if (r < 0) {
                fprintf(stderr, "vmpressurectl: cannot connect to the system bus: %s\n", strerror(-r));
                return EXIT_UNREACHABLE;
        }
        return EXIT_OK;
}

static int get_string(sd_bus *bus, const char *prop, char **ret, sd_bus_error *e) {
        return sd_bus_get_property_string(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE, prop, e, ret);
}

static int get_trivial(sd_bus *bus, const char *prop, char type, void *ret, sd_bus_error *e) {
        return sd_bus_get_property_trivial(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE, prop, e, type, ret);
}

typedef struct ScopeInfo {
        char *name, *cgroup, *level, *source;
        const char *source_detail;              /* "" when the daemon gives none */
        uint64_t count[_LEVEL_MAX];
        int simulated;                          /* in a simulation now */
        uint64_t simulated_count[_LEVEL_MAX];   /* the part of count made by Simulate() */
} ScopeInfo;

#define HISTOGRAM_BUCKETS_MAX 32
#define HISTOGRAMS_MAX 16
#define ACTIONS_MAX 64

/* One entry of the Latencies property: cumulative bucket counts. */
typedef struct HistogramInfo {
        const char *stage;
        int simulated;
        uint64_t le_usec[HISTOGRAM_BUCKETS_MAX];        /* UINT64_MAX: +Inf */
        uint64_t cumulative[HISTOGRAM_BUCKETS_MAX];
        size_t n_buckets;
        uint64_t count, sum_usec;
} HistogramInfo;

/* One entry of the RecentActions property. */
typedef struct ActionInfo {
        uint64_t realtime_usec, latency_usec;
        const char *unit, *level, *action, *signal, *result;
        uint32_t pid;
        int simulated;
} ActionInfo;

/* One entry of the UnwatchedCgroups property. */
typedef struct UnwatchedInfo {
        const char *cgroup, *reason;
} UnwatchedInfo;

/* One entry of the Guards property. */
typedef struct GuardInfo {
        const char *unit, *state, *detail;
        uint64_t guard, limit, mark;
} GuardInfo;

/* Unwatched cgroups status lists one by one; the rest are counted. */
#define UNWATCHED_SHOWN_MAX 10

typedef struct Status {
        char *level, *source, *version;
        uint32_t index, subscribers;
        uint64_t last_change_usec, count[_LEVEL_MAX], kills, signals, signals_suppressed, simulations;
        uint64_t subscriber_drops, signal_drops, log_lines_dropped;
        int dry_run, simulated;
        char **policies;
        ScopeInfo scopes[VMP_BUS_SCOPES_MAX];
        size_t n_scopes;
        HistogramInfo histograms[HISTOGRAMS_MAX];
        size_t n_histograms;
        ActionInfo actions[ACTIONS_MAX];
        size_t n_actions;
        UnwatchedInfo unwatched[VMP_BUS_UNWATCHED_MAX];
        size_t n_unwatched;
        GuardInfo guards[VMP_BUS_GUARDS_MAX];
        size_t n_guards;
        /* The replies own the strings above. */
        sd_bus_message *scopes_reply, *simulations_reply, *details_reply, *latencies_reply, *actions_reply, *unwatched_reply;
        sd_bus_message *guards_reply;
} Status;

static void status_done(Status *s) {
        free(s->level);
        free(s->source);
        free(s->version);
        for (char **p = s->policies; p && *p; p++)
                free(*p);
        free(s->policies);
        sd_bus_message_unref(s->scopes_reply);
        sd_bus_message_unref(s->simulations_reply);
        sd_bus_message_unref(s->details_reply);
        sd_bus_message_unref(s->latencies_reply);
        sd_bus_message_unref(s->actions_reply);
        sd_bus_message_unref(s->unwatched_reply);
        sd_bus_message_unref(s->guards_reply);
}

static int read_scopes(sd_bus *bus, Status *s, sd_bus_error *e) {
        sd_bus_message *m;
        int r;

        r = sd_bus_get_property(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_PROPERTY_SCOPES, e,
                                &s->scopes_reply, "a" VMP_BUS_SCOPE_STRUCT);
        if (r < 0)
                return r;
        m = s->scopes_reply;
        r = sd_bus_message_enter_container(m, 'a', VMP_BUS_SCOPE_STRUCT);
        while (r >= 0 && s->n_scopes < ELEMENTSOF(s->scopes)) {
                ScopeInfo *i = &s->scopes[s->n_scopes];
                r = sd_bus_message_read(m, VMP_BUS_SCOPE_STRUCT, &i->name, &i->cgroup, &i->level, &i->source,
                                        &i->count[LEVEL_NONE], &i->count[LEVEL_LOW], &i->count[LEVEL_MEDIUM],
                                        &i->count[LEVEL_OOM]);
                if (r <= 0)
                        break;
                s->n_scopes++;
        }
        return r < 0 ? r : 0;
}

/* A property this daemon does not have (an older version): left at zero. */
static int tolerate_unknown(int r, sd_bus_error *e) {
        if (r < 0 && sd_bus_error_has_name(e, SD_BUS_ERROR_UNKNOWN_PROPERTY)) {
                sd_bus_error_free(e);
                return 0;
        }
        return r;
}

static int read_scope_simulations(sd_bus *bus, Status *s, sd_bus_error *e) {
        const char *name;
        int r, simulated;
        uint64_t c[_LEVEL_MAX];

        r = sd_bus_get_property(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE,
                                VMP_BUS_PROPERTY_SCOPE_SIMULATIONS, e,
                                &s->simulations_reply, "a" VMP_BUS_SCOPE_SIMULATION_STRUCT);
        if (r < 0)
                return tolerate_unknown(r, e);
        r = sd_bus_message_enter_container(s->simulations_reply, 'a', VMP_BUS_SCOPE_SIMULATION_STRUCT);
        while (r >= 0) {
                r = sd_bus_message_read(s->simulations_reply, VMP_BUS_SCOPE_SIMULATION_STRUCT, &name, &simulated,
                                        &c[LEVEL_NONE], &c[LEVEL_LOW], &c[LEVEL_MEDIUM], &c[LEVEL_OOM]);
                if (r <= 0)
                        break;
                for (size_t i = 0; i < s->n_scopes; i++)
                        if (streq(s->scopes[i].name, name)) {
                                s->scopes[i].simulated = simulated;
                                memcpy(s->scopes[i].simulated_count, c, sizeof(c));
                        }
        }
        return r < 0 ? r : 0;
}

static int read_source_details(sd_bus *bus, Status *s, sd_bus_error *e) {
        const char *name, *detail;
        int r;

        for (size_t i = 0; i < s->n_scopes; i++)
                s->scopes[i].source_detail = "";
        r = sd_bus_get_property(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE,
                                VMP_BUS_PROPERTY_SOURCE_DETAILS, e, &s->details_reply,
                                "a" VMP_BUS_SOURCE_DETAIL_STRUCT);
        if (r < 0)
                return tolerate_unknown(r, e);
        r = sd_bus_message_enter_container(s->details_reply, 'a', VMP_BUS_SOURCE_DETAIL_STRUCT);
        while (r >= 0) {
                r = sd_bus_message_read(s->details_reply, VMP_BUS_SOURCE_DETAIL_STRUCT, &name, &detail);
                if (r <= 0)
                        break;
                for (size_t i = 0; i < s->n_scopes; i++)
                        if (streq(s->scopes[i].name, name))
                                s->scopes[i].source_detail = detail;
        }
        return r < 0 ? r : 0;
}

static int read_histogram(sd_bus_message *m, HistogramInfo *h) {
        uint64_t le, cum;
        int r;

        r = sd_bus_message_enter_container(m, 'r', VMP_BUS_LATENCY_SIG);
        if (r <= 0)
                return r;
        r = sd_bus_message_read(m, VMP_BUS_LATENCY_HEAD_SIG, &h->stage, &h->simulated);
        if (r >= 0)
                r = sd_bus_message_enter_container(m, 'a', VMP_BUS_LATENCY_BUCKET_STRUCT);
        while (r >= 0) {
                r = sd_bus_message_read(m, VMP_BUS_LATENCY_BUCKET_STRUCT, &le, &cum);
                if (r <= 0)
                        break;
                if (h->n_buckets < HISTOGRAM_BUCKETS_MAX) {
                        h->le_usec[h->n_buckets] = le;
                        h->cumulative[h->n_buckets++] = cum;
                }
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r >= 0)
                r = sd_bus_message_read(m, VMP_BUS_LATENCY_TAIL_SIG, &h->count, &h->sum_usec);
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 1;
}

static int read_latencies(sd_bus *bus, Status *s, sd_bus_error *e) {
        int r;

        r = sd_bus_get_property(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_PROPERTY_LATENCIES, e,
                                &s->latencies_reply, "a" VMP_BUS_LATENCY_STRUCT);
        if (r < 0)
                return tolerate_unknown(r, e);
        r = sd_bus_message_enter_container(s->latencies_reply, 'a', VMP_BUS_LATENCY_STRUCT);
        while (r >= 0 && s->n_histograms < HISTOGRAMS_MAX) {
                r = read_histogram(s->latencies_reply, &s->histograms[s->n_histograms]);
                if (r <= 0)
                        break;
                s->n_histograms++;
        }
        return r < 0 ? r : 0;
}

static int read_actions(sd_bus *bus, Status *s, sd_bus_error *e) {
        sd_bus_message *m;
        int r;

        r = sd_bus_get_property(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_PROPERTY_RECENT_ACTIONS,
                                e, &s->actions_reply,
                                "a" VMP_BUS_ACTION_STRUCT);
        if (r < 0)
                return tolerate_unknown(r, e);
        m = s->actions_reply;
        r = sd_bus_message_enter_container(m, 'a', VMP_BUS_ACTION_STRUCT);
        while (r >= 0 && s->n_actions < ACTIONS_MAX) {
                ActionInfo *a = &s->actions[s->n_actions];
                r = sd_bus_message_read(m, VMP_BUS_ACTION_STRUCT, &a->realtime_usec, &a->unit, &a->level, &a->action,
                                        &a->signal, &a->pid, &a->result, &a->simulated, &a->latency_usec);
                if (r <= 0)
                        break;
                s->n_actions++;
        }
        return r < 0 ? r : 0;
}

static int read_unwatched(sd_bus *bus, Status *s, sd_bus_error *e) {
        int r;

        r = sd_bus_get_property(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_PROPERTY_UNWATCHED, e,
                                &s->unwatched_reply, "a" VMP_BUS_UNWATCHED_STRUCT);
        if (r < 0)
                return tolerate_unknown(r, e);
        r = sd_bus_message_enter_container(s->unwatched_reply, 'a', VMP_BUS_UNWATCHED_STRUCT);
        while (r >= 0 && s->n_unwatched < ELEMENTSOF(s->unwatched)) {
                UnwatchedInfo *u = &s->unwatched[s->n_unwatched];
                r = sd_bus_message_read(s->unwatched_reply, VMP_BUS_UNWATCHED_STRUCT, &u->cgroup, &u->reason);
                if (r <= 0)
                        break;
                s->n_unwatched++;
        }
        return r < 0 ? r : 0;
}

/* "96.0M", "1.5G": base 1024, one decimal, as the daemon's logs write sizes. */
static const char *format_bytes(char *buf, size_t size, uint64_t bytes) {
        static const char suffix[] = "BKMGT";
        double v = (double) bytes;
        size_t i = 0;

        while (i + 1 < sizeof(suffix) - 1 && v >= 1024) {
                v /= 1024;
                i++;
        }
        if (i == 0)
                (void) snprintf(buf, size, "%" PRIu64, bytes);
        else
                (void) snprintf(buf, size, "%.1f%c", v, suffix[i]);
        return buf;
}

static int read_guards(sd_bus *bus, Status *s, sd_bus_error *e) {
        int r;

        r = sd_bus_get_property(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_PROPERTY_GUARDS, e,
                                &s->guards_reply, "a" VMP_BUS_GUARD_STRUCT);
        if (r < 0)
                return tolerate_unknown(r, e);
        r = sd_bus_message_enter_container(s->guards_reply, 'a', VMP_BUS_GUARD_STRUCT);
        while (r >= 0 && s->n_guards < ELEMENTSOF(s->guards)) {
                GuardInfo *g = &s->guards[s->n_guards];
                r = sd_bus_message_read(s->guards_reply, VMP_BUS_GUARD_STRUCT, &g->unit, &g->state, &g->guard,
                                        &g->limit, &g->mark, &g->detail);
                if (r <= 0)
                        break;
                s->n_guards++;
        }
        return r < 0 ? r : 0;
}

static size_t count_unwatched(const Status *s, const char *reason) {
        size_t n = 0;

        for (size_t i = 0; i < s->n_unwatched; i++)
                n += streq(s->unwatched[i].reason, reason);
        return n;
}

static int status_read(sd_bus *bus, Status *s, sd_bus_error *e) {
        static const char *const counts[_LEVEL_MAX] = { "NormalCount", "LowCount", "MediumCount", "OOMCount" };
        int r;

        r = get_string(bus, "Level", &s->level, e);
        if (r >= 0)
                r = get_string(bus, "Source", &s->source, e);
        if (r >= 0)
                r = get_string(bus, "Version", &s->version, e);
        /* The plain-typed properties, in one table. */
        const struct {
                const char *name;
                char type;
                void *ret;
        } trivial[] = {
                { "Index",             'u', &s->index },
                { "Subscribers",       'u', &s->subscribers },
                { "LastChangeUSec",    't', &s->last_change_usec },
                { counts[LEVEL_NONE],  't', &s->count[LEVEL_NONE] },
                { counts[LEVEL_LOW],   't', &s->count[LEVEL_LOW] },
                { counts[LEVEL_MEDIUM],'t', &s->count[LEVEL_MEDIUM] },
                { counts[LEVEL_OOM],   't', &s->count[LEVEL_OOM] },
                { "Kills",             't', &s->kills },
                { "Signals",           't', &s->signals },
                { "SignalsSuppressed", 't', &s->signals_suppressed },
                { "Simulations",       't', &s->simulations },
                { "SubscriberDrops",   't', &s->subscriber_drops },
                { "SignalDrops",       't', &s->signal_drops },
                { "DryRun",            'b', &s->dry_run },
        };
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(trivial); i++)
                r = get_trivial(bus, trivial[i].name, trivial[i].type, trivial[i].ret, e);
        if (r >= 0)
                r = sd_bus_get_property_strv(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE,
                                             VMP_BUS_PROPERTY_POLICIES, e, &s->policies);
        if (r >= 0)
                r = read_scopes(bus, s, e);
        if (r >= 0)
                r = tolerate_unknown(get_trivial(bus, "Simulated", 'b', &s->simulated, e), e);
        if (r >= 0)
                r = read_scope_simulations(bus, s, e);
        if (r >= 0)
                r = read_source_details(bus, s, e);
        if (r >= 0)
                r = read_latencies(bus, s, e);
        if (r >= 0)
                r = read_actions(bus, s, e);
        if (r >= 0)
                r = tolerate_unknown(get_trivial(bus, "LogLinesDropped", 't', &s->log_lines_dropped, e), e);
        if (r >= 0)
                r = read_unwatched(bus, s, e);
        if (r >= 0)
                r = read_guards(bus, s, e);
        return r;
}

static size_t strv_length(char **l) {
        size_t n = 0;
        while (l && l[n])
                n++;
        return n;
}

static void counts_json(const uint64_t c[static _LEVEL_MAX]) {
        printf("{\"normal\":%" PRIu64 ",\"low\":%" PRIu64 ",\"medium\":%" PRIu64 ",\"oom\":%" PRIu64 "}",
               c[LEVEL_NONE], c[LEVEL_LOW], c[LEVEL_MEDIUM], c[LEVEL_OOM]);
}

static void actions_print_json(const Status *s) {
        printf(",\"recent_actions\":[");
        for (size_t i = 0; i < s->n_actions; i++) {
                const ActionInfo *a = &s->actions[i];
                printf("%s{\"time_usec\":%" PRIu64 ",\"unit\":", i ? "," : "", a->realtime_usec);
                json_string(stdout, a->unit);
                printf(",\"level\":");
                json_string(stdout, a->level);
                printf(",\"action\":");
                json_string(stdout, a->action);
                printf(",\"signal\":");
                json_string(stdout, a->signal);
                printf(",\"pid\":%" PRIu32 ",\"result\":", a->pid);
                json_string(stdout, a->result);
                printf(",\"simulated\":%s,\"latency_usec\":%" PRIu64 "}", a->simulated ? "true" : "false",
                       a->latency_usec);
        }
        printf("]");
}

static void latencies_print_json(const Status *s) {
        printf(",\"latency\":[");
        for (size_t i = 0; i < s->n_histograms; i++) {
                const HistogramInfo *h = &s->histograms[i];
                printf("%s{\"stage\":", i ? "," : "");
                json_string(stdout, h->stage);
                printf(",\"simulated\":%s,\"buckets\":[", h->simulated ? "true" : "false");
                for (size_t b = 0; b < h->n_buckets; b++) {
                        printf("%s{\"le_usec\":", b ? "," : "");
                        if (h->le_usec[b] == UINT64_MAX)
                                printf("null");         /* +Inf */
                        else
                                printf("%" PRIu64, h->le_usec[b]);
                        printf(",\"count\":%" PRIu64 "}", h->cumulative[b]);
                }
                printf("],\"count\":%" PRIu64 ",\"sum_usec\":%" PRIu64 "}", h->count, h->sum_usec);
        }
        printf("]");
}

static void status_print_json(const Status *s) {
        printf("{\"level\":");
        json_string(stdout, s->level);
        printf(",\"simulated\":%s", s->simulated ? "true" : "false");
        printf(",\"index\":%" PRIu32 ",\"source\":", s->index);
        json_string(stdout, s->source);
        printf(",\"last_change_usec\":%" PRIu64 ",\"counts\":{\"normal\":%" PRIu64 ",\"low\":%" PRIu64
               ",\"medium\":%" PRIu64 ",\"oom\":%" PRIu64 "}", s->last_change_usec, s->count[LEVEL_NONE],
               s->count[LEVEL_LOW], s->count[LEVEL_MEDIUM], s->count[LEVEL_OOM]);
        printf(",\"scopes\":[");
        for (size_t i = 0; i < s->n_scopes; i++) {
                const ScopeInfo *c = &s->scopes[i];
                printf("%s{\"name\":", i ? "," : "");
                json_string(stdout, c->name);
                printf(",\"cgroup\":");
                json_string(stdout, c->cgroup);
                printf(",\"level\":");
                json_string(stdout, c->level);
                printf(",\"source\":");
                json_string(stdout, c->source);
                printf(",\"source_detail\":");
                json_string(stdout, c->source_detail ?: "");
                printf(",\"counts\":");
                counts_json(c->count);
                printf(",\"simulated\":%s,\"simulated_counts\":", c->simulated ? "true" : "false");
                counts_json(c->simulated_count);
                printf("}");
        }
        printf("],\"kills\":%" PRIu64 ",\"signals\":%" PRIu64 ",\"signals_suppressed\":%" PRIu64
               ",\"simulations\":%" PRIu64 ",\"subscribers\":%" PRIu32 ",\"subscriber_drops\":%" PRIu64
               ",\"signal_drops\":%" PRIu64 ",\"policies\":[", s->kills, s->signals, s->signals_suppressed,
               s->simulations, s->subscribers, s->subscriber_drops, s->signal_drops);
        for (size_t i = 0; s->policies && s->policies[i]; i++) {
                if (i)
                        putchar(',');
                json_string(stdout, s->policies[i]);
        }
        printf("],\"log_lines_dropped\":%" PRIu64 ",\"unwatched\":[", s->log_lines_dropped);
        for (size_t i = 0; i < s->n_unwatched; i++) {
                printf("%s{\"cgroup\":", i ? "," : "");
                json_string(stdout, s->unwatched[i].cgroup);
                printf(",\"reason\":");
                json_string(stdout, s->unwatched[i].reason);
                printf("}");
        }
        printf("],\"guards\":[");
        for (size_t i = 0; i < s->n_guards; i++) {
                const GuardInfo *g = &s->guards[i];
                printf("%s{\"unit\":", i ? "," : "");
                json_string(stdout, g->unit);
                printf(",\"state\":");
                json_string(stdout, g->state);
                printf(",\"guard_bytes\":%" PRIu64 ",\"limit_bytes\":%" PRIu64 ",\"mark_bytes\":%" PRIu64
                       ",\"detail\":", g->guard, g->limit, g->mark);
                json_string(stdout, g->detail);
                printf("}");
        }
        printf("]");
        actions_print_json(s);
        latencies_print_json(s);
        printf(",\"dry_run\":%s,\"version\":", s->dry_run ? "true" : "false");
        json_string(stdout, s->version);
        printf("}\n");
}

/* "announce 14 (avg 85us), signal 2 (avg 1.2ms), kill 0": real pressure on
 * the first line, Simulate() on the second when there was any. */
static void latency_print_summary(const Status *s) {
        for (int sim = 0; sim < 2; sim++) {
                uint64_t total = 0;
                bool any = false;

                for (size_t i = 0; i < s->n_histograms; i++)
                        if (!!s->histograms[i].simulated == sim)
                                total += s->histograms[i].count;
                if (sim && total == 0)
                        break;
                printf(sim ? "              " : "     Latency: ");
                for (size_t i = 0; i < s->n_histograms; i++) {
                        const HistogramInfo *h = &s->histograms[i];
                        char t[32];

                        if (!!h->simulated != sim)
                                continue;
                        printf("%s%s %" PRIu64, any ? ", " : "", h->stage, h->count);
                        if (h->count > 0)
                                printf(" (avg %s)", format_timespan(t, sizeof(t), h->sum_usec / h->count));
                        any = true;
                }
                printf("%s\n", !any ? "n/a" : sim ? " (simulated)" : "");
        }
}

/* A table like systemd's tools; "-" for what does not apply. */
static void actions_print(const Status *s) {
        if (s->n_actions == 0) {
                printf("\nNo recent actions.\n");
                return;
        }
        printf("\nRecent actions (last %zu, oldest first):\n", s->n_actions);
        printf("%-27s %-28s %-6s %-12s %-8s %7s %-8s %8s  %s\n", "TIME", "UNIT", "LEVEL", "ACTION", "SIGNAL",
               "PID", "RESULT", "LATENCY", "SIMULATED");
        for (size_t i = 0; i < s->n_actions; i++) {
                const ActionInfo *a = &s->actions[i];
                char ts[64], lat[32], pid[16];

                if (a->pid > 0)
                        (void) snprintf(pid, sizeof(pid), "%" PRIu32, a->pid);
                else
                        (void) snprintf(pid, sizeof(pid), "-");
                printf("%-27s %-28s %-6s %-12s %-8s %7s %-8s %8s  %s\n",
                       format_timestamp(ts, sizeof(ts), a->realtime_usec), a->unit, a->level, a->action, a->signal,
                       pid, a->result, a->latency_usec ? format_timespan(lat, sizeof(lat), a->latency_usec) : "-",
                       a->simulated ? "yes" : "no");
        }
}

static void status_print(const Status *s) {
        printf("       Level: %s (index %" PRIu32 ")%s\n", s->level, s->index,
               s->simulated ? ", simulated" : "");
        printf("      Source: %s\n", s->source);
        printf("      Counts: normal %" PRIu64 ", low %" PRIu64 ", medium %" PRIu64 ", oom %" PRIu64 "\n",
               s->count[LEVEL_NONE], s->count[LEVEL_LOW], s->count[LEVEL_MEDIUM], s->count[LEVEL_OOM]);
        printf("     Actions: %" PRIu64 " signals (%" PRIu64 " held back), %" PRIu64 " kills, %" PRIu64
               " simulations\n", s->signals, s->signals_suppressed, s->kills, s->simulations);
        latency_print_summary(s);
        printf(" Subscribers: %" PRIu32 " (%" PRIu64 " records dropped, %" PRIu64 " signals dropped)\n",
               s->subscribers, s->subscriber_drops, s->signal_drops);
        printf("    Policies: %zu loaded\n", strv_length(s->policies));
        for (size_t i = 0; s->policies && s->policies[i]; i++)
                printf("              %s\n", s->policies[i]);
        printf("      DryRun: %s\n", s->dry_run ? "yes" : "no");
        printf("     Version: %s\n", s->version);
        printf("         Log: %" PRIu64 " lines dropped%s\n", s->log_lines_dropped,
               s->log_lines_dropped ? " (the reader of stdout, stderr or the journal did not keep up)" : "");
        if (s->n_unwatched > 0)
                printf(" Not watched: %zu cgroups (%zu absent, %zu table full, %zu no source)\n", s->n_unwatched,
                       count_unwatched(s, "absent"), count_unwatched(s, "table-full"),
                       count_unwatched(s, "no-source"));
        if (count_unwatched(s, "table-full") > 0)
                printf("     WARNING: the scope table is full (%d scopes): %zu cgroups with a policy are not "
                       "watched and their Scope=unit policies do not act; see the journal.\n",
                       VMP_BUS_SCOPES_MAX, count_unwatched(s, "table-full"));
        printf("\n%-24s %-8s %-10s %8s %8s %8s %8s %-9s  %s\n", "SCOPE", "LEVEL", "SOURCE", "NORMAL", "LOW",
               "MEDIUM", "OOM", "SIMULATED", "CGROUP");
        for (size_t i = 0; i < s->n_scopes; i++) {
                const ScopeInfo *c = &s->scopes[i];
                printf("%-24s %-8s %-10s %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %-9s  %s\n", c->name,
                       c->level, c->source, c->count[LEVEL_NONE], c->count[LEVEL_LOW], c->count[LEVEL_MEDIUM],
                       c->count[LEVEL_OOM], c->simulated ? "yes" : "no", c->cgroup[0] ? c->cgroup : "/");
        }
        for (size_t i = 0, shown = 0; i < s->n_scopes; i++) {
                const ScopeInfo *c = &s->scopes[i];
                if (!c->source_detail || !c->source_detail[0])
                        continue;
                if (shown++ == 0)
                        printf("\n%-24s %s\n", "SCOPE", "SOURCE DETAIL");
                printf("%-24s %s: %s\n", c->name, c->source, c->source_detail);
        }
        if (s->n_unwatched > 0) {
                printf("\n%-11s %s\n", "NOT WATCHED", "CGROUP");
                for (size_t i = 0; i < s->n_unwatched && i < UNWATCHED_SHOWN_MAX; i++)
                        printf("%-11s %s\n", s->unwatched[i].reason, s->unwatched[i].cgroup);
                if (s->n_unwatched > UNWATCHED_SHOWN_MAX)
                        printf("… and %zu more (status --json lists them all)\n",
                               s->n_unwatched - UNWATCHED_SHOWN_MAX);
        }
        if (s->n_guards > 0) {
                printf("\n%-24s %-16s %10s %10s  %s\n", "GUARDED UNIT", "GUARD", "BAND", "LIMIT", "DETAIL");
                for (size_t i = 0; i < s->n_guards; i++) {
                        const GuardInfo *g = &s->guards[i];
                        char a[32], b[32];
                        printf("%-24s %-16s %10s %10s  %s\n", g->unit, g->state,
                               g->guard ? format_bytes(a, sizeof(a), g->guard) : "-",
                               g->limit ? format_bytes(b, sizeof(b), g->limit) : "-", g->detail);
                }
        }
        actions_print(s);
}

/* Connects, reads every property status and metrics show, and hangs up.
 * EXIT_OK with *s filled (the caller frees it with status_done()), else the
 * exit status to return. */
static int status_fetch(Status *s, const char *what) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        int r, ret;

        ret = connect_bus(&bus);
        if (ret != EXIT_OK)
                return ret;
        r = status_read(bus, s, &e);
        if (r < 0)
                ret = report(what, &e, r);
        sd_bus_error_free(&e);
        sd_bus_flush_close_unref(bus);
        return ret;
}

static int verb_status(int argc, char **argv) {
        Status s = {};
        int ret;

        ret = status_fetch(&s, "cannot read the daemon's status");
        if (ret == EXIT_OK) {
                if (arg_json)
                        status_print_json(&s);
                else
                        status_print(&s);
        }
        status_done(&s);
        return ret;
}

static const char *const level_metric[_LEVEL_MAX] = { "normal", "low", "medium", "oom" };

static void metric_header(const char *name, const char *type, const char *help) {
        printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metric_simple(const char *name, const char *type, const char *help, uint64_t v) {
        metric_header(name, type, help);
        printf("%s %" PRIu64 "\n", name, v);
}

/* A counter family per scope and level, from the per-level array at offset
 * in each scope's status (count, simulated_count). */
static void metric_scope_levels(const Status *s, const char *name, const char *help, size_t offset) {
        metric_header(name, "counter", help);
        for (size_t i = 0; i < s->n_scopes; i++) {
                const uint64_t *v = (const uint64_t *) ((const char *) &s->scopes[i] + offset);

                for (Level l = 0; l < _LEVEL_MAX; l++) {
                        printf("%s{scope=\"", name);
                        prom_label(stdout, s->scopes[i].name);
                        printf("\",level=\"%s\"} %" PRIu64 "\n", level_metric[l], v[l]);
                }
        }
}

/* One histogram family, a series per stage and simulated: announce is the
 * kernel's notification → the announcement out; signal and kill are the
 * announcement → the action done. */
static void metrics_latency(const Status *s) {
        char num[64];

        metric_header("vmpressured_latency_seconds", "histogram",
                      "Latency measured by the daemon: stage=announce from the kernel's notification to the "
                      "level announced, stage=signal|kill from the announcement to the action done.");
        for (size_t i = 0; i < s->n_histograms; i++) {
                const HistogramInfo *h = &s->histograms[i];
                char labels[128];

                (void) snprintf(labels, sizeof(labels), "stage=\"%s\",simulated=\"%d\"", h->stage,
                                h->simulated ? 1 : 0);
                for (size_t b = 0; b < h->n_buckets; b++)
                        printf("vmpressured_latency_seconds_bucket{%s,le=\"%s\"} %" PRIu64 "\n", labels,
                               h->le_usec[b] == UINT64_MAX ? "+Inf" : format_seconds(num, sizeof(num), h->le_usec[b]),
                               h->cumulative[b]);
                printf("vmpressured_latency_seconds_sum{%s} %s\n", labels,
                       format_seconds(num, sizeof(num), h->sum_usec));
                printf("vmpressured_latency_seconds_count{%s} %" PRIu64 "\n", labels, h->count);
        }
}

static const char *const unwatched_reasons[] = { "absent", "table-full", "no-source" };

static int verb_metrics(int argc, char **argv) {
        Status s = {};
        int ret;

        ret = status_fetch(&s, "cannot read the daemon's counters");
        if (ret != EXIT_OK)
                goto finish;
        metric_scope_levels(&s, "vmpressured_level_events_total",
                            "Level announcements (changes and rate-limited repeats) per scope and level.",
                            offsetof(ScopeInfo, count));
        metric_header("vmpressured_level", "gauge",
                      "Current level per scope: 0 normal, 1 low, 2 medium, 3 oom (-1: cgroup gone).");
        for (size_t i = 0; i < s.n_scopes; i++) {
                Level l = level_from_string(s.scopes[i].level);
                printf("vmpressured_level{scope=\"");
                prom_label(stdout, s.scopes[i].name);
                printf("\",source=\"");
                prom_label(stdout, s.scopes[i].source);
                printf("\"} %d\n", l < 0 ? -1 : (int) l);
        }
        metric_scope_levels(&s, "vmpressured_simulated_level_events_total",
                            "The part of vmpressured_level_events_total announced during a Simulate() of the scope.",
                            offsetof(ScopeInfo, simulated_count));
        metric_header("vmpressured_simulated", "gauge",
                      "1 while a scope's announcements come from a Simulate() (until it is back to normal).");
        for (size_t i = 0; i < s.n_scopes; i++) {
                printf("vmpressured_simulated{scope=\"");
                prom_label(stdout, s.scopes[i].name);
                printf("\"} %d\n", s.scopes[i].simulated ? 1 : 0);
        }
        metrics_latency(&s);
        metric_simple("vmpressured_kills_total", "counter", "Processes killed by policies.", s.kills);
        metric_simple("vmpressured_signals_total", "counter", "Signals sent by policies.", s.signals);
        metric_simple("vmpressured_signals_suppressed_total", "counter",
                      "Signals held back by a policy's SignalIntervalSec=.", s.signals_suppressed);
        metric_simple("vmpressured_simulations_total", "counter", "Simulate() calls.", s.simulations);
        metric_simple("vmpressured_subscribers", "gauge", "Subscribe() descriptors open.", s.subscribers);
        metric_simple("vmpressured_subscriber_drops_total", "counter",
                      "Records not written to a subscriber that did not read.", s.subscriber_drops);
        metric_simple("vmpressured_signal_drops_total", "counter",
                      "D-Bus signals dropped because the bus did not read.", s.signal_drops);
        metric_simple("vmpressured_log_lines_dropped_total", "counter",
                      "Log lines and journal entries dropped because their reader did not take them at once.",
                      s.log_lines_dropped);
        metric_header("vmpressured_unwatched_cgroups", "gauge",
                      "Cgroups a policy or Watch= names that have no scope: absent, table-full, no-source.");
        for (size_t i = 0; i < ELEMENTSOF(unwatched_reasons); i++)
                printf("vmpressured_unwatched_cgroups{reason=\"%s\"} %zu\n", unwatched_reasons[i],
                       count_unwatched(&s, unwatched_reasons[i]));
        metric_simple("vmpressured_policies_loaded", "gauge", "Policies in force.", strv_length(s.policies));
        metric_simple("vmpressured_dry_run", "gauge", "1 when DryRun= is on.", (uint64_t) !!s.dry_run);
        metric_header("vmpressured_info", "gauge", "The daemon's version.");
        printf("vmpressured_info{version=\"");
        prom_label(stdout, s.version);
        printf("\"} 1\n");
finish:
        status_done(&s);
        return ret;
}

static int verb_policies(int argc, char **argv) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *unit, *path, *scope;
        sd_bus *bus = NULL;
        size_t n = 0;
        int r, ret;

        ret = connect_bus(&bus);
        if (ret != EXIT_OK)
                return ret;
        r = sd_bus_call_method(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_METHOD_LIST_POLICIES, &e,
                               &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_enter_container(reply, 'a', VMP_BUS_POLICY_STRUCT);
        if (r < 0) {
                ret = report("ListPolicies failed", &e, r);
                goto finish;
        }
        if (arg_json)
                printf("[");
        else
                printf("%-32s %-8s %s\n", "UNIT", "SCOPE", "FILE");
        while ((r = sd_bus_message_read(reply, VMP_BUS_POLICY_STRUCT, &unit, &path, &scope)) > 0) {
                if (arg_json) {
                        printf("%s{\"unit\":", n ? "," : "");
                        json_string(stdout, unit);
                        printf(",\"scope\":");
                        json_string(stdout, scope);
                        printf(",\"file\":");
                        json_string(stdout, path);
                        printf("}");
                } else
                        printf("%-32s %-8s %s\n", unit, scope, path);
                n++;
        }
        if (arg_json)
                printf("]\n");
        else
                printf("\n%zu policies listed.\n", n);
        if (r < 0)
                ret = report("bad ListPolicies reply", NULL, r);
finish:
        sd_bus_message_unref(reply);
        sd_bus_error_free(&e);
        sd_bus_flush_close_unref(bus);
        return ret;
}

static int verb_simulate(int argc, char **argv) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus *bus = NULL;
        Level l;
        int r, ret;

        if (argc != 2) {
                fprintf(stderr, "vmpressurectl: simulate takes one level: low, medium or oom.\n");
                return EXIT_USAGE;
        }
        l = level_from_string(argv[1]);
        if (l <= LEVEL_NONE) {
                fprintf(stderr, "vmpressurectl: invalid level '%s': low, medium or oom.\n", argv[1]);
                return EXIT_USAGE;
        }
        ret = connect_bus(&bus);
        if (ret != EXIT_OK)
                return ret;
        r = sd_bus_call_method(bus, VMP_BUS_NAME, VMP_BUS_PATH, VMP_BUS_INTERFACE, VMP_BUS_METHOD_SIMULATE, &e,
                               NULL, "ss", argv[1],
                               arg_scope ?: VMP_BUS_SCOPE_SYSTEM);
        if (r < 0)
                ret = report("Simulate failed", &e, r);
        else
                printf("Simulated %s on %s.\n", level_to_string(l), arg_scope ?: VMP_BUS_SCOPE_SYSTEM);
        sd_bus_error_free(&e);
        sd_bus_flush_close_unref(bus);
        return ret;
}

/* ---- monitor ---- */

static Level monitor_threshold = LEVEL_NONE;

static Level signal_level(const char *member) {
        if (streq(member, "Low"))
                return LEVEL_LOW;
        if (streq(member, "Medium"))
                return LEVEL_MEDIUM;
        if (streq(member, "OOM"))
                return LEVEL_OOM;
        if (streq(member, VMP_BUS_SIGNAL_NORMAL))
                return LEVEL_NONE;
        return _LEVEL_INVALID;
}

static int print_killed(sd_bus_message *m) {
        const char *unit, *comm, *reason;
        uint32_t pid;
        uint64_t rss;
        int r;

        r = sd_bus_message_read(m, VMP_BUS_KILLED_SIG, &unit, &pid, &comm, &rss, &reason);
        if (r < 0)
                return r;
        if (arg_json) {
                printf("{\"signal\":\"Killed\",\"unit\":");
                json_string(stdout, unit);
                printf(",\"pid\":%" PRIu32 ",\"comm\":", pid);
                json_string(stdout, comm);
                printf(",\"rss_bytes\":%" PRIu64 ",\"reason\":", rss);
                json_string(stdout, reason);
                printf("}\n");
        } else
                printf("Killed unit=%s pid=%" PRIu32 " comm=%s rss_bytes=%" PRIu64 " reason=%s\n", unit, pid,
                       comm, rss, reason);
        return 0;
}

/* Action(t realtime_usec, s unit, s level, s action, s signal, u pid,
 * s result, b simulated, t latency_usec): every action of a policy. A kill
 * also has its Killed signal (with comm and RSS), printed instead. */
static int print_action(sd_bus_message *m) {
        const char *unit, *level, *action, *sig, *result;
        uint64_t realtime_usec, latency_usec;
        uint32_t pid;
        int simulated, r;

        r = sd_bus_message_read(m, VMP_BUS_ACTION_SIG, &realtime_usec, &unit, &level, &action, &sig, &pid, &result,
                                &simulated, &latency_usec);
        if (r < 0)
                return r;
        if (streq(action, "kill"))
                return 0;
        if (arg_json) {
                printf("{\"signal\":\"Action\",\"unit\":");
                json_string(stdout, unit);
                printf(",\"level\":");
                json_string(stdout, level);
                printf(",\"action\":");
                json_string(stdout, action);
                printf(",\"sent\":");
                json_string(stdout, sig);
                printf(",\"pid\":%" PRIu32 ",\"result\":", pid);
                json_string(stdout, result);
                printf(",\"simulated\":%s,\"latency_usec\":%" PRIu64 ",\"realtime_usec\":%" PRIu64 "}\n",
                       simulated ? "true" : "false", latency_usec, realtime_usec);
        } else {
                printf("Action  unit=%s level=%s action=%s signal=%s", unit, level, action, sig);
                if (pid > 0)
                        printf(" pid=%" PRIu32, pid);
                printf(" result=%s%s\n", result, simulated ? " simulated=yes" : "");
        }
        return 0;
}

/* Simulated(s scope, s level) comes right before the level signal it marks,
 * from the same sender, so one slot is enough: the next level signal of
 * that scope and level is simulated. */
static struct {
        char scope[256];
        Level level;
        bool set;
} pending_simulated;

static void note_simulated(sd_bus_message *m) {
        const char *scope, *level;

        if (sd_bus_message_read(m, VMP_BUS_SIMULATED_SIG, &scope, &level) < 0)
                return;
        (void) snprintf(pending_simulated.scope, sizeof(pending_simulated.scope), "%s", scope);
        pending_simulated.level = level_from_string(level);
        pending_simulated.set = true;
}

static bool take_simulated(const char *scope, Level l) {
        bool match = pending_simulated.set && pending_simulated.level == l && streq(pending_simulated.scope, scope);

        pending_simulated.set = false;
        return match;
}

static int on_signal_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *member = sd_bus_message_get_member(m), *scope;
        uint32_t index = 0;
        bool simulated;
        Level l;
        int r;

        if (!member)
                return 0;
        if (streq(member, VMP_BUS_SIGNAL_SIMULATED)) {
                note_simulated(m);
                return 0;
        }
        if (streq(member, VMP_BUS_SIGNAL_KILLED)) {
                if (print_killed(m) < 0)
                        fprintf(stderr, "vmpressurectl: malformed Killed signal, ignoring.\n");
                return 0;
        }
        if (streq(member, VMP_BUS_SIGNAL_ACTION)) {
                if (print_action(m) < 0)
                        fprintf(stderr, "vmpressurectl: malformed Action signal, ignoring.\n");
                return 0;
        }
        l = signal_level(member);
        if (l < 0)
                return 0;
        r = l == LEVEL_NONE ? sd_bus_message_read(m, VMP_BUS_NORMAL_SIG, &scope)
                            : sd_bus_message_read(m, VMP_BUS_LEVEL_SIG, &scope, &index);
        if (r < 0)
                return 0;
        simulated = take_simulated(scope, l);
        /* The seed's threshold semantics: at or above it; Normal only without one. */
        if (arg_threshold && (l == LEVEL_NONE || l < monitor_threshold))
                return 0;
        if (arg_json) {
                printf("{\"signal\":");
                json_string(stdout, member);
                printf(",\"level\":\"%s\",\"scope\":", level_to_string(l));
                json_string(stdout, scope);
                if (l != LEVEL_NONE)
                        printf(",\"index\":%" PRIu32, index);
                printf(",\"simulated\":%s}\n", simulated ? "true" : "false");
        } else if (l == LEVEL_NONE)
                printf("%-7s scope=%s%s\n", member, scope, simulated ? " simulated=yes" : "");
        else
                printf("%-7s scope=%s index=%" PRIu32 "%s\n", member, scope, index, simulated ? " simulated=yes" : "");
        return 0;
}

static int on_disconnect(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        fprintf(stderr, "vmpressurectl: the system bus went away.\n");
        return sd_event_exit(userdata, EXIT_UNREACHABLE);
}

static int on_name_owner(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        const char *name, *old, *new;

        if (sd_bus_message_read(m, "sss", &name, &old, &new) >= 0 && streq(name, VMP_BUS_NAME))
                fprintf(stderr, "vmpressurectl: %s %s.\n", VMP_BUS_NAME, new[0] ? "is back" : "left the bus");
        return 0;
}

static int monitor_setup(sd_bus *bus, sd_event *ev) {
        char match[256];
        int r;

        (void) snprintf(match, sizeof(match), "type='signal',sender='%s',path='%s',interface='%s'", VMP_BUS_NAME,
                        VMP_BUS_PATH, VMP_BUS_INTERFACE);
        r = sd_bus_add_match(bus, NULL, match, on_signal_message, NULL);
        if (r < 0)
                return r;
        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                "org.freedesktop.DBus", "NameOwnerChanged", on_name_owner, NULL);
        if (r < 0)
                return r;
        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.DBus.Local", "/org/freedesktop/DBus/Local",
                                "org.freedesktop.DBus.Local", "Disconnected", on_disconnect, ev);
        if (r < 0)
                return r;
        (void) sd_bus_set_exit_on_disconnect(bus, false);
        r = sd_bus_attach_event(bus, ev, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return r;
        r = sd_event_add_signal(ev, NULL, SIGINT, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(ev, NULL, SIGTERM, NULL, NULL);
        return r;
}

static int verb_monitor(int argc, char **argv) {
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_event *ev = NULL;
        sd_bus *bus = NULL;
        char *level = NULL;
        sigset_t mask;
        int r, ret;

        if (arg_threshold) {
                monitor_threshold = level_from_string(arg_threshold);
                if (monitor_threshold <= LEVEL_NONE) {
                        fprintf(stderr, "vmpressurectl: invalid threshold '%s': low, medium or oom.\n",
                                arg_threshold);
                        return EXIT_USAGE;
                }
        }
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        (void) sigprocmask(SIG_BLOCK, &mask, NULL);

        ret = connect_bus(&bus);
        if (ret != EXIT_OK)
                return ret;
        r = sd_event_default(&ev);
        if (r >= 0)
                r = monitor_setup(bus, ev);
        if (r < 0) {
                ret = report("cannot set up the monitor", NULL, r);
                goto finish;
        }
        /* One call first: the matches are in place once it is answered, and
         * a daemon that is not there is said at once. */
        r = get_string(bus, "Level", &level, &e);
        if (r < 0) {
                ret = report("cannot reach the daemon", &e, r);
                goto finish;
        }
        if (!arg_json)
                fprintf(stderr, "Monitoring memory pressure (now %s), Ctrl-C to stop.\n", level);
        r = sd_event_loop(ev);
        ret = r < 0 ? report("event loop failed", NULL, r) : r;
finish:
        free(level);
        sd_bus_error_free(&e);
        sd_bus_flush_close_unref(bus);
        sd_event_unref(ev);
        return ret;
}

/* ---- check ---- */

static const char *file_type_name(mode_t m) {
        return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" :
               S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" : "not a file";
}

/* 0 when the file is fine, 1 when problems were printed. */
static int check_file(const char *path) {
        _cleanup_(freep) Diagnostics *diag = calloc(1, sizeof(Diagnostics));
        _cleanup_(freep) Policy *p = malloc(sizeof(Policy));
        _cleanup_(freep) char *text = NULL, *copy = NULL;
        _cleanup_(closep) int fd = -EBADF;
        struct stat st;
        bool is_null;
        ssize_t n;
        int r;

        if (!diag || !p || !(copy = strdup(path)) || !(text = malloc(POLICY_FILE_MAX + 1))) {
                fprintf(stderr, "vmpressurectl: out of memory\n");
                return 1;
        }
        /* O_NONBLOCK: opening a FIFO blocks until a writer comes; a policy
         * is a regular file (or /dev/null, a mask, as in the directories). */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
                return 1;
        }
        if (fstat(fd, &st) < 0) {
                fprintf(stderr, "%s: cannot stat: %s\n", path, strerror(errno));
                return 1;
        }
        is_null = S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);  /* reads as empty: a mask */
        if (!is_null && !S_ISREG(st.st_mode)) {
                fprintf(stderr, "%s: not a regular file (%s), not a policy\n", path, file_type_name(st.st_mode));
                return 1;
        }
        /* One byte more than the parser accepts, so that it sees "too large". */
        n = pread_full(fd, text, POLICY_FILE_MAX + 1);
        if (n < 0) {
                fprintf(stderr, "%s: cannot read: %s\n", path, strerror((int) -n));
                return 1;
        }
        r = policy_parse(path, basename(copy), text, (size_t) n, p, diag);
        for (size_t i = 0; i < diag->n; i++)
                fprintf(stderr, "%s\n", diag->msg[i]);
        if (diag->n_dropped > 0)
                fprintf(stderr, "%s: %zu more problems not shown\n", path, diag->n_dropped);
        if (r == 0 && p->state == POLICY_MASKED)
                printf("%s: %s: masks %s\n", path, is_null ? "/dev/null" : "empty file", p->unit);
        return r != 0;
}

static int verb_check(int argc, char **argv) {
        int bad = 0;

        if (argc < 2) {
                fprintf(stderr, "vmpressurectl: check needs at least one policy file.\n");
                return EXIT_USAGE;
        }
        for (int i = 1; i < argc; i++)
                bad += check_file(argv[i]);
        return bad ? EXIT_FAIL : EXIT_OK;
}

/* ---- main ---- */

static void help(void) {
        printf("vmpressurectl [OPTIONS...] COMMAND ...\n\n"
               "Show and test vmpressured, the low-memory responder.\n\n"
               "Commands:\n"
               "  status                 Level, source, scopes, counters, recent actions, policies\n"
               "  monitor                Print level changes and actions as they happen\n"
               "  policies               List the policy files in force\n"
               "  check FILE...          Validate policy files (errors as file:line)\n"
               "  simulate LEVEL         Inject a level (low, medium, oom); root only\n"
               "  metrics                Counters and latency histograms (Prometheus text format)\n\n"
               "Options:\n"
               "  -h --help              Show this help\n"
               "     --version           Show the version\n"
               "     --no-pager          Accepted for systemd compatibility; output is never paged\n"
               "     --json              JSON output (status, policies, monitor)\n"
               "     --threshold=LEVEL   monitor: only levels at or above LEVEL\n"
               "     --scope=UNIT        simulate: the scope to inject into (default -.slice)\n\n"
               "Exit status: 0 ok, 1 failure or problems found, 2 usage, 3 daemon not reachable.\n"
               "See vmpressurectl(1).\n");
}

static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
        bool json;
} verbs[] = {
        { "status",   verb_status,   true },
        { "monitor",  verb_monitor,  true },
        { "policies", verb_policies, true },
        { "check",    verb_check,    false },
        { "simulate", verb_simulate, false },
        { "metrics",  verb_metrics,  false },
};

int main(int argc, char **argv) {
        enum { ARG_VERSION = 0x100, ARG_NO_PAGER, ARG_JSON, ARG_THRESHOLD, ARG_SCOPE };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h' },
                { "version",   no_argument,       NULL, ARG_VERSION },
                { "no-pager",  no_argument,       NULL, ARG_NO_PAGER },
                { "json",      no_argument,       NULL, ARG_JSON },
                { "threshold", required_argument, NULL, ARG_THRESHOLD },
                { "scope",     required_argument, NULL, ARG_SCOPE },
                {}
        };
        int c;

        setvbuf(stdout, NULL, _IOLBF, 0);
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return EXIT_OK;
                case ARG_VERSION:
                        printf("vmpressurectl %s\n", PACKAGE_VERSION);
                        return EXIT_OK;
                case ARG_NO_PAGER:
                        break;
                case ARG_JSON:
                        arg_json = true;
                        break;
                case ARG_THRESHOLD:
                        arg_threshold = optarg;
                        break;
                case ARG_SCOPE:
                        arg_scope = optarg;
                        break;
                default:
                        fprintf(stderr, "Try 'vmpressurectl --help'.\n");
                        return EXIT_USAGE;
                }
        if (optind >= argc) {
                fprintf(stderr, "vmpressurectl: no command given; try 'vmpressurectl --help'.\n");
                return EXIT_USAGE;
        }
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++) {
                if (!streq(verbs[i].name, argv[optind]))
                        continue;
                if (arg_json && !verbs[i].json) {
                        fprintf(stderr, "vmpressurectl: --json is not supported by %s.\n", verbs[i].name);
                        return EXIT_USAGE;
                }
                if (arg_threshold && !streq(verbs[i].name, "monitor")) {
                        fprintf(stderr, "vmpressurectl: --threshold is only for monitor.\n");
                        return EXIT_USAGE;
                }
                if (arg_scope && !streq(verbs[i].name, "simulate")) {
                        fprintf(stderr, "vmpressurectl: --scope is only for simulate.\n");
                        return EXIT_USAGE;
                }
                if (!streq(verbs[i].name, "check") && !streq(verbs[i].name, "simulate") && argc - optind > 1) {
                        fprintf(stderr, "vmpressurectl: %s takes no arguments.\n", verbs[i].name);
                        return EXIT_USAGE;
                }
                return verbs[i].run(argc - optind, argv + optind);
        }
        fprintf(stderr, "vmpressurectl: unknown command '%s'; try 'vmpressurectl --help'.\n", argv[optind]);
        return EXIT_USAGE;
}
