/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <syslog.h>

#include "conf.h"
#include "ini.h"

/* A value quoted in a message is cut here: a diag line is 256 bytes in all. */
#define CONF_QUOTE_MAX 48

/* Bounds that keep the arithmetic of the level engine and the timers far
 * from overflow, and the PSI window where the kernel accepts it
 * (kernel/sched/psi.c: 500 ms … 10 s, threshold > 0 and ≤ window). */
#define LEVELS_DURATION_MAX (3600 * USEC_PER_SEC)
#define PSI_WINDOW_MIN      (500 * USEC_PER_MSEC)
#define PSI_WINDOW_MAX      (10 * USEC_PER_SEC)
#define POLL_MIN            (10 * USEC_PER_MSEC)
#define POLL_MAX            (3600 * USEC_PER_SEC)
#define WINDOW_PAGES_MAX    1048576u
#define SYSCALL_NR_MAX      65535u

void config_init(Config *c) {
        *c = (Config) {
                .source = _SOURCE_TYPE_INVALID,
                .params = {
                        .syscall_nr = -1,
                        .system_pressure = SYSTEM_PRESSURE_MACHINE,
                        .psi = {
                                .window_usec = USEC_PER_SEC,
                                .stall_usec = {
                                        [LEVEL_LOW] = 100 * USEC_PER_MSEC,      /* "some" */
                                        [LEVEL_MEDIUM] = 300 * USEC_PER_MSEC,   /* "some" */
                                        [LEVEL_OOM] = 500 * USEC_PER_MSEC,      /* "full" */
                                },
                        },
                        .poll = {
                                .idle_usec = 2 * USEC_PER_SEC,
                                .busy_usec = 100 * USEC_PER_MSEC,
                                .fault_wake = true,
                        },
                },
                .log_level = LOG_INFO,
                .dry_run = false,
                .low_memory_monitor = LOW_MEMORY_MONITOR_AUTO,
                .max_subscribers = 0,           /* SUBSCRIBERS_MAX_DEFAULT, if RLIMIT_NOFILE allows */
                .max_subscribers_per_user = 0,  /* MaxSubscribers / 4 */
                .n_watch = 0,
        };
        level_config_init(&c->level);
}

/* ---- log levels ---- */

static const char *const log_level_table[] = {
        [LOG_EMERG] = "emerg",
        [LOG_ALERT] = "alert",
        [LOG_CRIT] = "crit",
        [LOG_ERR] = "err",
        [LOG_WARNING] = "warning",
        [LOG_NOTICE] = "notice",
        [LOG_INFO] = "info",
        [LOG_DEBUG] = "debug",
};

int log_level_from_string(const char *s) {
        if (s && s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
                return s[0] - '0';
        return string_table_lookup(log_level_table, ELEMENTSOF(log_level_table), s);
}

const char *log_level_to_string(int level) {
        if (level < 0 || (size_t) level >= ELEMENTSOF(log_level_table))
                return NULL;
        return log_level_table[level];
}

/* ---- LowMemoryMonitor= ---- */

static const char *const low_memory_monitor_table[_LOW_MEMORY_MONITOR_MAX] = {
        [LOW_MEMORY_MONITOR_NO] = "no",
        [LOW_MEMORY_MONITOR_YES] = "yes",
        [LOW_MEMORY_MONITOR_AUTO] = "auto",
};

const char *low_memory_monitor_mode_to_string(LowMemoryMonitorMode m) {
        if (m < 0 || m >= _LOW_MEMORY_MONITOR_MAX)
                return NULL;
        return low_memory_monitor_table[m];
}

LowMemoryMonitorMode low_memory_monitor_mode_from_string(const char *s) {
        bool b;

        if (s && streq(s, "auto"))
                return LOW_MEMORY_MONITOR_AUTO;
        if (parse_boolean(s ?: "", &b) < 0)
                return _LOW_MEMORY_MONITOR_INVALID;
        return b ? LOW_MEMORY_MONITOR_YES : LOW_MEMORY_MONITOR_NO;
}

/* ---- watches ---- */

static bool component_ok(const char *p, size_t n) {
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) p[i] < 0x20 || p[i] == 0x7f)
                        return false;
        return true;
}

/* Stored normalized: no leading or trailing '/', single '/' between
 * components, so "/system.slice//foo.service/" and "system.slice/foo.service"
 * are the same watch. */
int config_add_watch(Config *c, const char *cgroup) {
        char norm[sizeof(c->watch[0])];
        size_t n = 0;

        if (!cgroup)
                return -EINVAL;
        for (const char *p = cgroup;;) {
                size_t l;

                while (*p == '/')
                        p++;
                if (*p == '\0')
                        break;
                l = strcspn(p, "/");
                if (!component_ok(p, l))
                        return -EINVAL;
                if (n + (n > 0) + l >= sizeof(norm))
                        return -EINVAL;         /* too long */
                if (n > 0)
                        norm[n++] = '/';
                memcpy(norm + n, p, l);
                n += l;
                p += l;
        }
        if (n == 0)
                return -EINVAL;                 /* the root: that is the system scope */
        norm[n] = '\0';

        for (size_t i = 0; i < c->n_watch; i++)
                if (streq(c->watch[i], norm))
                        return 0;
        if (c->n_watch >= CONFIG_WATCH_MAX)
                return -E2BIG;
        memcpy(c->watch[c->n_watch++], norm, n + 1);
        return 0;
}

/* ---- the parser ---- */

typedef struct ConfParse ConfParse;
typedef struct ConfKey ConfKey;

/* 0, or -EINVAL after the parser itself reported what is wrong. */
typedef int (*conf_parser_t)(ConfParse *p, const ConfKey *k, const char *value, unsigned line);

struct ConfKey {
        const char *section;
        const char *key;
        conf_parser_t parse;
        size_t offset;          /* into Config, for the generic parsers */
        uint64_t min, max;      /* unsigned: the value; durations: µs */
        usec_t unit;            /* durations: the unit of a bare number */
        bool repeatable;        /* may appear several times in one file */
};

struct ConfParse {
        Config *config;
        const char *filename;
        Diagnostics *diag;
        unsigned n_errors;
        bool section_known;
        unsigned set_line[32];  /* per ConfKey: where this file set it, 0 = not yet */
};

#define conf_error(p, line, ...) diag_error((p)->diag, &(p)->n_errors, (p)->filename, (line), __VA_ARGS__)

#define QUOTE(v) DIAG_QUOTE(v, CONF_QUOTE_MAX)

static int invalid_value(ConfParse *p, const ConfKey *k, const char *value, unsigned line,
                         const char *must) {
        conf_error(p, line, "Invalid value '%.*s%s' for %s=: %s", QUOTE(value), k->key, must);
        return -EINVAL;
}

/* "1h", "1min", "2s", "500ms", "250us": the largest unit that is exact. */
static const char *format_usec(char *buf, size_t size, usec_t u) {
        static const struct {
                const char *name;
                usec_t usec;
        } units[] = {
                { "h", 3600 * USEC_PER_SEC },
                { "min", 60 * USEC_PER_SEC },
                { "s", USEC_PER_SEC },
                { "ms", USEC_PER_MSEC },
        };

        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (u > 0 && u % units[i].usec == 0) {
                        (void) snprintf(buf, size, "%" PRIu64 "%s", u / units[i].usec, units[i].name);
                        return buf;
                }
        (void) snprintf(buf, size, "%" PRIu64 "%s", u, u > 0 ? "us" : "");
        return buf;
}

static void *field(ConfParse *p, const ConfKey *k) {
        return (uint8_t *) p->config + k->offset;
}

static int parse_field_bool(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        if (parse_boolean(value, field(p, k)) < 0)
                return invalid_value(p, k, value, line,
                                     "must be a boolean (yes/no, true/false, on/off, 1/0)");
        return 0;
}

static int parse_field_unsigned(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        char must[64];

        if (parse_unsigned(value, (unsigned) k->min, (unsigned) k->max, field(p, k)) < 0) {
                (void) snprintf(must, sizeof(must), "must be an integer %" PRIu64 "…%" PRIu64,
                                k->min, k->max);
                return invalid_value(p, k, value, line, must);
        }
        return 0;
}

static int parse_field_duration(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        char must[96], a[32], b[32];
        usec_t u;

        if (parse_duration(value, k->unit, &u) < 0 || u < k->min || u > k->max) {
                (void) snprintf(must, sizeof(must), "must be a duration %s…%s",
                                format_usec(a, sizeof(a), k->min), format_usec(b, sizeof(b), k->max));
                return invalid_value(p, k, value, line, must);
        }
        *(usec_t *) field(p, k) = u;
        return 0;
}

static int parse_source(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        SourceType t;

        if (streq(value, "auto"))
                t = _SOURCE_TYPE_INVALID;
        else {
                t = source_type_from_string(value);
                if (t < 0)
                        return invalid_value(p, k, value, line,
                                             "must be one of auto, syscall, memcg, reclaim, psi, vmstat");
        }
        p->config->source = t;
        return 0;
}

static int parse_system_pressure(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        SystemPressure sp = system_pressure_from_string(value);

        if (sp < 0)
                return invalid_value(p, k, value, line, "must be machine or any-cgroup");
        p->config->params.system_pressure = sp;
        return 0;
}

static int parse_syscall_nr(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        unsigned nr;

        if (value[0] == '\0') {
                p->config->params.syscall_nr = -1;
                return 0;
        }
        if (parse_unsigned(value, 0, SYSCALL_NR_MAX, &nr) < 0)
                return invalid_value(p, k, value, line, "must be empty or an integer 0…65535");
        p->config->params.syscall_nr = (long) nr;
        return 0;
}

static int parse_log_level(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        int l = log_level_from_string(value);

        if (l < 0)
                return invalid_value(p, k, value, line,
                                     "must be one of emerg, alert, crit, err, warning, notice, info, debug or 0…7");
        p->config->log_level = l;
        return 0;
}

/* Space-separated paths; several Watch= lines add up, an empty one resets
 * the list. A bad path is reported and the others on the line still apply. */
static int parse_watch(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        char path[INI_LINE_MAX + 1];
        int ret = 0;

        if (value[0] == '\0') {
                p->config->n_watch = 0;
                return 0;
        }
        for (const char *v = value; *v;) {
                size_t n;
                int r;

                v += strspn(v, " \t");
                n = strcspn(v, " \t");
                if (n == 0)
                        break;
                memcpy(path, v, MIN(n, sizeof(path) - 1));
                path[MIN(n, sizeof(path) - 1)] = '\0';
                v += n;

                r = config_add_watch(p->config, path);
                if (r == -E2BIG) {
                        conf_error(p, line, "Too many cgroups to watch (at most %d), ignoring '%.*s%s'",
                                   CONFIG_WATCH_MAX, QUOTE(path));
                        ret = r;
                } else if (r < 0) {
                        conf_error(p, line, "Invalid cgroup path '%.*s%s' for Watch=: must be a path below "
                                   "the cgroup root without '.' or '..' components, at most %zu bytes",
                                   QUOTE(path), sizeof(p->config->watch[0]) - 1);
                        ret = r;
                }
        }
        return ret;
}

/* A floor is the headroom below which a scope is at OOM. At 50 % or more
 * the daemon calls OOM whenever half the memory is in use, which a busy
 * machine always is: it would kill the Kill=yes units over and over. 100 %
 * (or a size above the RAM) is OOM forever. Percentages must stay below
 * 50 %, and sizes below half of MemTotal when the caller knows it. */
#define HEADROOM_FLOOR_PERMYRIAD_MAX 4999u

static int parse_headroom_percent(ConfParse *p, const ConfKey *k, const char *value, unsigned line,
                                  const char *must) {
        LevelConfig *lc = &p->config->level;
        size_t n = strlen(value);
        char num[16], *dot;
        unsigned whole = 0, frac = 0;

        if (n - 1 >= sizeof(num))
                return invalid_value(p, k, value, line, must);
        memcpy(num, value, n - 1);
        num[n - 1] = '\0';
        dot = strchr(num, '.');
        if (dot) {
                size_t fl = strlen(dot + 1);

                *dot = '\0';
                if (fl < 1 || fl > 2 || parse_unsigned(dot + 1, 0, 99, &frac) < 0)
                        return invalid_value(p, k, value, line, must);
                if (fl == 1)
                        frac *= 10;
        }
        if (parse_unsigned(num, 0, 100, &whole) < 0 || whole * 100 + frac > 10000)
                return invalid_value(p, k, value, line, must);
        if (whole * 100 + frac > HEADROOM_FLOOR_PERMYRIAD_MAX)
                return invalid_value(p, k, value, line,
                                     "a floor of half the memory or more is OOM all the time; must be below 50%");
        lc->headroom_floor_permyriad = whole * 100 + frac;
        lc->headroom_floor_bytes = 0;
        return 0;
}

/* "0" disables; "64M" is bytes (base 1024); "2%" or "2.5%" is a share of the
 * total, stored as permyriad (200, 250). Either form clears the other. */
static int parse_headroom_floor(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        static const char must[] = "must be a size (like 64M), a percentage below 50% (like 2.5%) or 0";
        LevelConfig *lc = &p->config->level;
        uint64_t mem = p->config->mem_total_bytes, bytes;
        size_t n = strlen(value);
        char why[160], a[32], b[32];

        if (n > 0 && value[n - 1] == '%')
                return parse_headroom_percent(p, k, value, line, must);

        if (parse_size(value, &bytes) < 0)
                return invalid_value(p, k, value, line, must);
        if (mem > 0 && bytes >= mem / 2) {
                (void) snprintf(why, sizeof(why), "%s of this machine's memory (MemTotal %s) is OOM all the "
                                "time; must be below half of it, %s",
                                bytes >= mem ? "more than all" : "half or more", format_size(a, sizeof(a), mem),
                                format_size(b, sizeof(b), mem / 2));
                return invalid_value(p, k, value, line, why);
        }
        lc->headroom_floor_bytes = bytes;
        lc->headroom_floor_permyriad = 0;
        return 0;
}

static int parse_low_memory_monitor(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        LowMemoryMonitorMode m = low_memory_monitor_mode_from_string(value);

        if (m < 0)
                return invalid_value(p, k, value, line, "must be auto, yes or no");
        p->config->low_memory_monitor = m;
        return 0;
}

/* [Poll] HeadroomSec=: 0 (off, the default) or a duration; under 100 ms a
 * read of /proc/meminfo ten times a second is a poll loop, past 1 min it
 * sees nothing a fast fill does in time. */
#define HEADROOM_POLL_MIN (100 * USEC_PER_MSEC)
#define HEADROOM_POLL_MAX (60 * USEC_PER_SEC)

static int parse_headroom_poll(ConfParse *p, const ConfKey *k, const char *value, unsigned line) {
        usec_t u;

        if (parse_duration(value, USEC_PER_SEC, &u) < 0 || (u != 0 && (u < HEADROOM_POLL_MIN || u > HEADROOM_POLL_MAX)))
                return invalid_value(p, k, value, line, "must be 0 (off) or a duration 100ms…1min");
        p->config->params.poll.headroom_usec = u;
        return 0;
}

#define CONF_OFFSET(member) offsetof(Config, member)

static const ConfKey conf_keys[] = {
        { "Daemon", "Source",        parse_source },
        { "Daemon", "SyscallNumber", parse_syscall_nr },
        { "Daemon", "SystemPressure", parse_system_pressure },
        { "Daemon", "Watch",         parse_watch, .repeatable = true },
        { "Daemon", "LogLevel",      parse_log_level },
        { "Daemon", "DryRun",        parse_field_bool, CONF_OFFSET(dry_run) },
        { "Daemon", "LowMemoryMonitor", parse_low_memory_monitor },
        /* Each costs an fd and ~400 bytes of heap (event source, bookkeeping). */
        { "Daemon", "MaxSubscribers", parse_field_unsigned, CONF_OFFSET(max_subscribers), 1, 65536 },
        { "Daemon", "MaxSubscribersPerUser", parse_field_unsigned, CONF_OFFSET(max_subscribers_per_user),
          1, 65536 },

        { "Levels", "Window",        parse_field_unsigned, CONF_OFFSET(level.window_pages), 1, WINDOW_PAGES_MAX },
        /* Medium=0 would make every reclaim MEDIUM and LOW unreachable (level.c). */
        { "Levels", "Medium",        parse_field_unsigned, CONF_OFFSET(level.level_medium), 1, 100 },
        { "Levels", "OOM",           parse_field_unsigned, CONF_OFFSET(level.level_oom), 0, 100 },
        { "Levels", "HoldSec",       parse_field_duration, CONF_OFFSET(level.hold_usec),
          0, LEVELS_DURATION_MAX, USEC_PER_SEC },
        { "Levels", "QuietSec",      parse_field_duration, CONF_OFFSET(level.quiet_usec),
          0, LEVELS_DURATION_MAX, USEC_PER_SEC },
        { "Levels", "RepeatSec",     parse_field_duration, CONF_OFFSET(level.repeat_usec),
          0, LEVELS_DURATION_MAX, USEC_PER_SEC },
        { "Levels", "HeadroomFloor", parse_headroom_floor },
        /* Past 1 min a trend says little: a thrash drifts by that much too. */
        { "Levels", "KillHorizonSec", parse_field_duration, CONF_OFFSET(level.kill_horizon_usec),
          0, 60 * USEC_PER_SEC, USEC_PER_SEC },
        /* The warning before the floor; past 1 min a trend says little. */
        { "Levels", "WarnHorizonSec", parse_field_duration, CONF_OFFSET(level.warn_horizon_usec),
          0, 60 * USEC_PER_SEC, USEC_PER_SEC },

        { "PSI", "WindowSec",        parse_field_duration, CONF_OFFSET(params.psi.window_usec),
          PSI_WINDOW_MIN, PSI_WINDOW_MAX, USEC_PER_SEC },
        { "PSI", "LowStallMSec",     parse_field_duration, CONF_OFFSET(params.psi.stall_usec[LEVEL_LOW]),
          1, PSI_WINDOW_MAX, USEC_PER_MSEC },
        { "PSI", "MediumStallMSec",  parse_field_duration, CONF_OFFSET(params.psi.stall_usec[LEVEL_MEDIUM]),
          1, PSI_WINDOW_MAX, USEC_PER_MSEC },
        { "PSI", "OOMStallMSec",     parse_field_duration, CONF_OFFSET(params.psi.stall_usec[LEVEL_OOM]),
          1, PSI_WINDOW_MAX, USEC_PER_MSEC },

        { "Poll", "IdleSec",         parse_field_duration, CONF_OFFSET(params.poll.idle_usec),
          POLL_MIN, POLL_MAX, USEC_PER_SEC },
        { "Poll", "BusyMSec",        parse_field_duration, CONF_OFFSET(params.poll.busy_usec),
          POLL_MIN, POLL_MAX, USEC_PER_MSEC },
        { "Poll", "HeadroomSec",     parse_headroom_poll },
        { "Poll", "FaultWake",       parse_field_bool, CONF_OFFSET(params.poll.fault_wake) },
};

_Static_assert(ELEMENTSOF(conf_keys) <= ELEMENTSOF(((ConfParse *) NULL)->set_line),
               "ConfParse.set_line too small");

static bool section_known(const char *section) {
        for (size_t i = 0; i < ELEMENTSOF(conf_keys); i++)
                if (streq(conf_keys[i].section, section))
                        return true;
        return false;
}

static int conf_handler(const char *section, const char *key, const char *value, unsigned line,
                        void *userdata) {
        ConfParse *p = userdata;

        if (!key) {
                p->section_known = section_known(section);
                if (!p->section_known)
                        conf_error(p, line, "Unknown section [%.*s%s]", QUOTE(section));
                return 0;
        }
        if (!p->section_known)
                return 0;       /* reported once, at its header */

        for (size_t i = 0; i < ELEMENTSOF(conf_keys); i++) {
                const ConfKey *k = &conf_keys[i];

                if (!streq(k->section, section) || !streq(k->key, key))
                        continue;
                if (p->set_line[i] > 0 && !k->repeatable)
                        conf_error(p, line, "Duplicate key %s= in section [%s], first set on line %u",
                                   key, section, p->set_line[i]);
                p->set_line[i] = line;
                (void) k->parse(p, k, value, line);
                return 0;
        }
        conf_error(p, line, "Unknown key '%.*s%s' in section [%s]", QUOTE(key), section);
        return 0;
}

/* Values that are fine alone but not together; reported without a line,
 * since either key may be the one to change (or a default). */
static void conf_validate(ConfParse *p) {
        static const struct {
                Level level;
                const char *key;
        } stalls[] = {
                { LEVEL_LOW, "LowStallMSec" },
                { LEVEL_MEDIUM, "MediumStallMSec" },
                { LEVEL_OOM, "OOMStallMSec" },
        };
        const Config *c = p->config;
        char a[32], b[32];
        bool levels_ok = true;

        if (c->level.level_medium > c->level.level_oom) {
                conf_error(p, 0, "Medium=%u is above OOM=%u", c->level.level_medium, c->level.level_oom);
                levels_ok = false;
        }
        /* LOW lasts QuietSec, higher levels HoldSec: a shorter quiet period would
         * let LOW expire under a MEDIUM that is still held. */
        if (c->level.quiet_usec < c->level.hold_usec) {
                conf_error(p, 0, "QuietSec=%s is below HoldSec=%s",
                           format_usec(a, sizeof(a), c->level.quiet_usec),
                           format_usec(b, sizeof(b), c->level.hold_usec));
                levels_ok = false;
        }
        /* Whatever else the engine refuses (its rules may grow). */
        if (levels_ok && level_config_validate(&c->level) < 0)
                conf_error(p, 0, "The [Levels] settings do not work together (Window=%u Medium=%u OOM=%u)",
                           c->level.window_pages, c->level.level_medium, c->level.level_oom);

        for (size_t i = 0; i < ELEMENTSOF(stalls); i++)
                if (c->params.psi.stall_usec[stalls[i].level] >= c->params.psi.window_usec)
                        conf_error(p, 0, "%s=%s is not below WindowSec=%s", stalls[i].key,
                                   format_usec(a, sizeof(a), c->params.psi.stall_usec[stalls[i].level]),
                                   format_usec(b, sizeof(b), c->params.psi.window_usec));

        if (c->params.poll.busy_usec > c->params.poll.idle_usec)
                conf_error(p, 0, "BusyMSec=%s is above IdleSec=%s",
                           format_usec(a, sizeof(a), c->params.poll.busy_usec),
                           format_usec(b, sizeof(b), c->params.poll.idle_usec));
}

int config_parse(Config *c, const char *filename, const char *text, size_t len, Diagnostics *diag) {
        ConfParse p = {
                .config = c,
                .filename = filename,
                .diag = diag,
        };
        int r;

        r = ini_parse(text, len, filename, conf_handler, &p, diag);
        if (r < 0)
                return r;       /* conf_handler never stops the parse; kept for safety */
        conf_validate(&p);
        return r > 0 || p.n_errors > 0 ? -EINVAL : 0;
}
