/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vmpressured.conf: every key good and bad, exact messages, cross-field checks. */

#include <syslog.h>

#include "conf.h"
#include "tests.h"

#define F "test.conf"
#define S USEC_PER_SEC
#define MS USEC_PER_MSEC

typedef enum Field {
        F_SOURCE,
        F_SYSCALL_NR,
        F_SYSTEM_PRESSURE,
        F_N_WATCH,
        F_LOG_LEVEL,
        F_DRY_RUN,
        F_WINDOW,
        F_MEDIUM,
        F_OOM,
        F_HOLD,
        F_QUIET,
        F_REPEAT,
        F_FLOOR_BYTES,
        F_FLOOR_PERMYRIAD,
        F_KILL_HORIZON,
        F_WARN_HORIZON,
        F_PSI_WINDOW,
        F_PSI_LOW,
        F_PSI_MEDIUM,
        F_PSI_OOM,
        F_POLL_IDLE,
        F_POLL_BUSY,
        F_POLL_HEADROOM,
        _F_MAX,
} Field;

static int64_t get(const Config *c, Field f) {
        switch (f) {
        case F_SOURCE:          return c->source;
        case F_SYSCALL_NR:      return c->params.syscall_nr;
        case F_SYSTEM_PRESSURE: return c->params.system_pressure;
        case F_N_WATCH:         return (int64_t) c->n_watch;
        case F_LOG_LEVEL:       return c->log_level;
        case F_DRY_RUN:         return c->dry_run;
        case F_WINDOW:          return c->level.window_pages;
        case F_MEDIUM:          return c->level.level_medium;
        case F_OOM:             return c->level.level_oom;
        case F_HOLD:            return (int64_t) c->level.hold_usec;
        case F_QUIET:           return (int64_t) c->level.quiet_usec;
        case F_REPEAT:          return (int64_t) c->level.repeat_usec;
        case F_FLOOR_BYTES:     return (int64_t) c->level.headroom_floor_bytes;
        case F_FLOOR_PERMYRIAD: return c->level.headroom_floor_permyriad;
        case F_KILL_HORIZON:    return (int64_t) c->level.kill_horizon_usec;
        case F_WARN_HORIZON:    return (int64_t) c->level.warn_horizon_usec;
        case F_PSI_WINDOW:      return (int64_t) c->params.psi.window_usec;
        case F_PSI_LOW:         return (int64_t) c->params.psi.stall_usec[LEVEL_LOW];
        case F_PSI_MEDIUM:      return (int64_t) c->params.psi.stall_usec[LEVEL_MEDIUM];
        case F_PSI_OOM:         return (int64_t) c->params.psi.stall_usec[LEVEL_OOM];
        case F_POLL_IDLE:       return (int64_t) c->params.poll.idle_usec;
        case F_POLL_BUSY:       return (int64_t) c->params.poll.busy_usec;
        case F_POLL_HEADROOM:   return (int64_t) c->params.poll.headroom_usec;
        default:                return -1;
        }
}

/* Every field but `except` equals the defaults. */
static bool same_but(const Config *c, Field except) {
        Config def;

        config_init(&def);
        for (Field f = 0; f < _F_MAX; f++)
                if (f != except && get(c, f) != get(&def, f)) {
                        fprintf(stderr, "  field %d changed: %lld != %lld\n", f,
                                (long long) get(c, f), (long long) get(&def, f));
                        return false;
                }
        return true;
}

static int parse(Config *c, const char *text, Diagnostics *d) {
        size_t len = strlen(text);
        char *copy = malloc(len ?: 1);  /* exact size, no terminator: valgrind sees over-reads */
        int r;

        memcpy(copy, text, len);
        diag_clear(d);
        r = config_parse(c, F, copy, len, d);
        free(copy);
        return r;
}

static void test_defaults(void) {
        Config c;

        config_init(&c);
        CHECK_EQ_INT(c.source, _SOURCE_TYPE_INVALID);
        CHECK_EQ_INT(c.params.syscall_nr, -1);
        CHECK_EQ_INT(c.params.system_pressure, SYSTEM_PRESSURE_MACHINE);
        CHECK_EQ_U64(c.params.psi.window_usec, 1 * S);
        CHECK_EQ_U64(c.params.psi.stall_usec[LEVEL_LOW], 100 * MS);
        CHECK_EQ_U64(c.params.psi.stall_usec[LEVEL_MEDIUM], 300 * MS);
        CHECK_EQ_U64(c.params.psi.stall_usec[LEVEL_OOM], 500 * MS);
        CHECK_EQ_U64(c.params.poll.idle_usec, 2 * S);
        CHECK_EQ_U64(c.params.poll.busy_usec, 100 * MS);
        CHECK_EQ_INT(c.log_level, LOG_INFO);
        CHECK_EQ_INT(c.dry_run, false);
        CHECK_EQ_INT(c.n_watch, 0);
        /* The defaults vmpressured.conf(5) and conf/vmpressured.conf document. */
        CHECK_EQ_INT(c.level.window_pages, 256);
        CHECK_EQ_INT(c.level.level_medium, 60);
        CHECK_EQ_INT(c.level.level_oom, 99);
        CHECK_EQ_U64(c.level.hold_usec, 2 * S);
        CHECK_EQ_U64(c.level.quiet_usec, 10 * S);
        CHECK_EQ_U64(c.level.kill_horizon_usec, 2 * S);
        CHECK_EQ_U64(c.level.repeat_usec, 1 * S);
        CHECK_EQ_U64(c.level.headroom_floor_bytes, 0);
        CHECK_EQ_INT(c.level.headroom_floor_permyriad, 200);
        CHECK_EQ_INT(level_config_validate(&c.level), 0);
}

static void test_empty_and_comments(void) {
        static const char *const texts[] = {
                "",
                "\n\n",
                "# nothing but comments\n; and these\n   #indented\n",
                "[Daemon]\n[Levels]\n[PSI]\n[Poll]\n",
                "[Daemon]\r\n#Source=auto\r\n",
        };
        Diagnostics d;
        Config c;

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                config_init(&c);
                CHECK_EQ_INT(parse(&c, texts[i], &d), 0);
                CHECK_EQ_INT(diag_count(&d), 0);
                CHECK(same_but(&c, _F_MAX));
        }
}

typedef struct GoodCase {
        const char *text;
        Field field;
        int64_t value;
} GoodCase;

static void test_good_values(void) {
        static const GoodCase t[] = {
                { "[Daemon]\nSource=auto\n", F_SOURCE, _SOURCE_TYPE_INVALID },
                { "[Daemon]\nSource=syscall\n", F_SOURCE, SOURCE_SYSCALL },
                { "[Daemon]\nSource=memcg\n", F_SOURCE, SOURCE_MEMCG },
                { "[Daemon]\nSource=psi\n", F_SOURCE, SOURCE_PSI },
                { "[Daemon]\nSource = vmstat\n", F_SOURCE, SOURCE_VMSTAT },
                { "[Daemon]\nSyscallNumber=\n", F_SYSCALL_NR, -1 },
                { "[Daemon]\nSystemPressure=machine\n", F_SYSTEM_PRESSURE, SYSTEM_PRESSURE_MACHINE },
                { "[Daemon]\nSystemPressure=any-cgroup\n", F_SYSTEM_PRESSURE, SYSTEM_PRESSURE_ANY_CGROUP },
                { "[Daemon]\nSyscallNumber=0\n", F_SYSCALL_NR, 0 },
                { "[Daemon]\nSyscallNumber=451\n", F_SYSCALL_NR, 451 },
                { "[Daemon]\nSyscallNumber=65535\n", F_SYSCALL_NR, 65535 },
                { "[Daemon]\nLogLevel=debug\n", F_LOG_LEVEL, LOG_DEBUG },
                { "[Daemon]\nLogLevel=emerg\n", F_LOG_LEVEL, LOG_EMERG },
                { "[Daemon]\nLogLevel=warning\n", F_LOG_LEVEL, LOG_WARNING },
                { "[Daemon]\nLogLevel=3\n", F_LOG_LEVEL, LOG_ERR },
                { "[Daemon]\nDryRun=yes\n", F_DRY_RUN, true },
                { "[Daemon]\nDryRun=on\n", F_DRY_RUN, true },
                { "[Daemon]\nDryRun=0\n", F_DRY_RUN, false },
                { "[Levels]\nWindow=1\n", F_WINDOW, 1 },
                { "[Levels]\nWindow=512\n", F_WINDOW, 512 },
                { "[Levels]\nWindow=1048576\n", F_WINDOW, 1048576 },
                { "[Levels]\nMedium=1\n", F_MEDIUM, 1 },
                { "[Levels]\nMedium=99\n", F_MEDIUM, 99 },
                { "[Levels]\nOOM=100\n", F_OOM, 100 },
                { "[Levels]\nHoldSec=5\n", F_HOLD, 5 * S },
                { "[Levels]\nHoldSec=0\n", F_HOLD, 0 },
                { "[Levels]\nHoldSec=1500ms\n", F_HOLD, 1500 * MS },
                { "[Levels]\nQuietSec=1min\n", F_QUIET, 60 * S },
                { "[Levels]\nQuietSec=1h\n", F_QUIET, 3600 * S },
                { "[Levels]\nRepeatSec=1s500ms\n", F_REPEAT, 1500 * MS },
                { "[Levels]\nKillHorizonSec=0\n", F_KILL_HORIZON, 0 },
                { "[Levels]\nKillHorizonSec=500ms\n", F_KILL_HORIZON, 500 * MS },
                { "[Levels]\nKillHorizonSec=1min\n", F_KILL_HORIZON, 60 * S },
                { "[Levels]\nWarnHorizonSec=0\n", F_WARN_HORIZON, 0 },
                { "[Levels]\nWarnHorizonSec=30s\n", F_WARN_HORIZON, 30 * S },
                { "[Poll]\nHeadroomSec=0\n", F_POLL_HEADROOM, 0 },
                { "[Poll]\nHeadroomSec=1\n", F_POLL_HEADROOM, 1 * S },
                { "[Poll]\nHeadroomSec=100ms\n", F_POLL_HEADROOM, 100 * MS },
                { "[Poll]\nHeadroomSec=1min\n", F_POLL_HEADROOM, 60 * S },
                { "[Levels]\nHeadroomFloor=64M\n", F_FLOOR_BYTES, 64 << 20 },
                { "[Levels]\nHeadroomFloor=64M\n", F_FLOOR_PERMYRIAD, 0 },
                { "[Levels]\nHeadroomFloor=2%\n", F_FLOOR_PERMYRIAD, 200 },
                { "[Levels]\nHeadroomFloor=2.5%\n", F_FLOOR_PERMYRIAD, 250 },
                { "[Levels]\nHeadroomFloor=0.05%\n", F_FLOOR_PERMYRIAD, 5 },
                { "[Levels]\nHeadroomFloor=49.99%\n", F_FLOOR_PERMYRIAD, 4999 },
                { "[Levels]\nHeadroomFloor=0\n", F_FLOOR_PERMYRIAD, 0 },
                { "[Levels]\nHeadroomFloor=0\n", F_FLOOR_BYTES, 0 },
                { "[Levels]\nHeadroomFloor=4096\n", F_FLOOR_BYTES, 4096 },
                { "[PSI]\nWindowSec=2\n", F_PSI_WINDOW, 2 * S },
                { "[PSI]\nWindowSec=600ms\n", F_PSI_WINDOW, 600 * MS },
                { "[PSI]\nWindowSec=10s\n", F_PSI_WINDOW, 10 * S },
                { "[PSI]\nLowStallMSec=50\n", F_PSI_LOW, 50 * MS },
                { "[PSI]\nMediumStallMSec=250ms\n", F_PSI_MEDIUM, 250 * MS },
                { "[PSI]\nOOMStallMSec=999\n", F_PSI_OOM, 999 * MS },
                { "[PSI]\nLowStallMSec=1us\n", F_PSI_LOW, 1 },
                { "[Poll]\nIdleSec=5\n", F_POLL_IDLE, 5 * S },
                { "[Poll]\nIdleSec=100ms\n", F_POLL_IDLE, 100 * MS },
                { "[Poll]\nBusyMSec=10\n", F_POLL_BUSY, 10 * MS },
                { "[Poll]\nBusyMSec=2s\n", F_POLL_BUSY, 2 * S },
        };
        Diagnostics d;
        Config c;

        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                int r;

                config_init(&c);
                r = parse(&c, t[i].text, &d);
                if (r != 0 || get(&c, t[i].field) != t[i].value)
                        fprintf(stderr, "  good case: %s  %s\n", t[i].text, d.n > 0 ? d.msg[0] : "");
                CHECK_EQ_INT(r, 0);
                CHECK_EQ_INT(diag_count(&d), 0);
                CHECK_EQ_INT(get(&c, t[i].field), t[i].value);
                /* HeadroomFloor sets two fields; the rest stay at their defaults. */
                if (t[i].field != F_FLOOR_BYTES && t[i].field != F_FLOOR_PERMYRIAD)
                        CHECK(same_but(&c, t[i].field));
        }
}

typedef struct BadCase {
        const char *text;
        Field field;            /* stays at its default */
        const char *diag;
} BadCase;

static void test_bad_values(void) {
        static const BadCase t[] = {
                { "[Daemon]\nSource=fancy\n", F_SOURCE,
                  F ":2: Invalid value 'fancy' for Source=: must be one of auto, syscall, memcg, reclaim, psi, vmstat" },
                { "[Daemon]\nSource=\n", F_SOURCE,
                  F ":2: Invalid value '' for Source=: must be one of auto, syscall, memcg, reclaim, psi, vmstat" },
                { "[Daemon]\nSource=PSI\n", F_SOURCE,
                  F ":2: Invalid value 'PSI' for Source=: must be one of auto, syscall, memcg, reclaim, psi, vmstat" },
                { "[Daemon]\nSystemPressure=any\n", F_SYSTEM_PRESSURE,
                  F ":2: Invalid value 'any' for SystemPressure=: must be machine or any-cgroup" },
                { "[Daemon]\nSystemPressure=\n", F_SYSTEM_PRESSURE,
                  F ":2: Invalid value '' for SystemPressure=: must be machine or any-cgroup" },
                { "[Daemon]\nSyscallNumber=-1\n", F_SYSCALL_NR,
                  F ":2: Invalid value '-1' for SyscallNumber=: must be empty or an integer 0…65535" },
                { "[Daemon]\nSyscallNumber=314x\n", F_SYSCALL_NR,
                  F ":2: Invalid value '314x' for SyscallNumber=: must be empty or an integer 0…65535" },
                { "[Daemon]\nSyscallNumber=65536\n", F_SYSCALL_NR,
                  F ":2: Invalid value '65536' for SyscallNumber=: must be empty or an integer 0…65535" },
                { "[Daemon]\nLogLevel=loud\n", F_LOG_LEVEL,
                  F ":2: Invalid value 'loud' for LogLevel=: must be one of emerg, alert, crit, err, "
                  "warning, notice, info, debug or 0…7" },
                { "[Daemon]\nLogLevel=8\n", F_LOG_LEVEL,
                  F ":2: Invalid value '8' for LogLevel=: must be one of emerg, alert, crit, err, "
                  "warning, notice, info, debug or 0…7" },
                { "[Daemon]\nDryRun=maybe\n", F_DRY_RUN,
                  F ":2: Invalid value 'maybe' for DryRun=: must be a boolean (yes/no, true/false, on/off, 1/0)" },
                { "[Daemon]\nDryRun=\n", F_DRY_RUN,
                  F ":2: Invalid value '' for DryRun=: must be a boolean (yes/no, true/false, on/off, 1/0)" },
                { "[Levels]\nWindow=x\n", F_WINDOW,
                  F ":2: Invalid value 'x' for Window=: must be an integer 1…1048576" },
                { "[Levels]\nWindow=0\n", F_WINDOW,
                  F ":2: Invalid value '0' for Window=: must be an integer 1…1048576" },
                { "[Levels]\nWindow=1048577\n", F_WINDOW,
                  F ":2: Invalid value '1048577' for Window=: must be an integer 1…1048576" },
                { "[Levels]\nWindow=-256\n", F_WINDOW,
                  F ":2: Invalid value '-256' for Window=: must be an integer 1…1048576" },
                { "[Levels]\nMedium=101\n", F_MEDIUM,
                  F ":2: Invalid value '101' for Medium=: must be an integer 1…100" },
                { "[Levels]\nMedium=0\n", F_MEDIUM,
                  F ":2: Invalid value '0' for Medium=: must be an integer 1…100" },
                { "[Levels]\nMedium=60%\n", F_MEDIUM,
                  F ":2: Invalid value '60%' for Medium=: must be an integer 1…100" },
                { "[Levels]\nOOM=4294967296\n", F_OOM,
                  F ":2: Invalid value '4294967296' for OOM=: must be an integer 0…100" },
                { "[Levels]\nHoldSec=soon\n", F_HOLD,
                  F ":2: Invalid value 'soon' for HoldSec=: must be a duration 0…1h" },
                { "[Levels]\nHoldSec=-1\n", F_HOLD,
                  F ":2: Invalid value '-1' for HoldSec=: must be a duration 0…1h" },
                { "[Levels]\nQuietSec=2h\n", F_QUIET,
                  F ":2: Invalid value '2h' for QuietSec=: must be a duration 0…1h" },
                { "[Levels]\nRepeatSec=99999999999999999999\n", F_REPEAT,
                  F ":2: Invalid value '99999999999999999999' for RepeatSec=: must be a duration 0…1h" },
                { "[Levels]\nKillHorizonSec=61s\n", F_KILL_HORIZON,
                  F ":2: Invalid value '61s' for KillHorizonSec=: must be a duration 0…1min" },
                { "[Levels]\nKillHorizonSec=soon\n", F_KILL_HORIZON,
                  F ":2: Invalid value 'soon' for KillHorizonSec=: must be a duration 0…1min" },
                { "[Levels]\nWarnHorizonSec=2min\n", F_WARN_HORIZON,
                  F ":2: Invalid value '2min' for WarnHorizonSec=: must be a duration 0…1min" },
                { "[Poll]\nHeadroomSec=50ms\n", F_POLL_HEADROOM,
                  F ":2: Invalid value '50ms' for HeadroomSec=: must be 0 (off) or a duration 100ms…1min" },
                { "[Poll]\nHeadroomSec=61s\n", F_POLL_HEADROOM,
                  F ":2: Invalid value '61s' for HeadroomSec=: must be 0 (off) or a duration 100ms…1min" },
                { "[Poll]\nHeadroomSec=often\n", F_POLL_HEADROOM,
                  F ":2: Invalid value 'often' for HeadroomSec=: must be 0 (off) or a duration 100ms…1min" },
                { "[Levels]\nHeadroomFloor=lots\n", F_FLOOR_PERMYRIAD,
                  F ":2: Invalid value 'lots' for HeadroomFloor=: must be a size (like 64M), "
                  "a percentage below 50% (like 2.5%) or 0" },
                { "[Levels]\nHeadroomFloor=101%\n", F_FLOOR_PERMYRIAD,
                  F ":2: Invalid value '101%' for HeadroomFloor=: must be a size (like 64M), "
                  "a percentage below 50% (like 2.5%) or 0" },
                /* At 50 % or more the floor is OOM whenever half the memory is used. */
                { "[Levels]\nHeadroomFloor=100%\n", F_FLOOR_PERMYRIAD,
                  F ":2: Invalid value '100%' for HeadroomFloor=: a floor of half the memory or more is OOM "
                  "all the time; must be below 50%" },
                { "[Levels]\nHeadroomFloor=50%\n", F_FLOOR_PERMYRIAD,
                  F ":2: Invalid value '50%' for HeadroomFloor=: a floor of half the memory or more is OOM "
                  "all the time; must be below 50%" },
                { "[Levels]\nHeadroomFloor=50.0%\n", F_FLOOR_PERMYRIAD, NULL },
                { "[Levels]\nHeadroomFloor=99.99%\n", F_FLOOR_PERMYRIAD, NULL },
                { "[Levels]\nHeadroomFloor=2.555%\n", F_FLOOR_PERMYRIAD, NULL },
                { "[Levels]\nHeadroomFloor=100.5%\n", F_FLOOR_PERMYRIAD, NULL },
                { "[Levels]\nHeadroomFloor=-1%\n", F_FLOOR_PERMYRIAD, NULL },
                { "[Levels]\nHeadroomFloor=%\n", F_FLOOR_PERMYRIAD, NULL },
                { "[Levels]\nHeadroomFloor=2.%\n", F_FLOOR_PERMYRIAD, NULL },
                { "[Levels]\nHeadroomFloor=64MB\n", F_FLOOR_BYTES, NULL },
                { "[Levels]\nHeadroomFloor=\n", F_FLOOR_BYTES, NULL },
                { "[Levels]\nHeadroomFloor=99999999999999999999%\n", F_FLOOR_PERMYRIAD, NULL },
                { "[PSI]\nWindowSec=100ms\n", F_PSI_WINDOW,
                  F ":2: Invalid value '100ms' for WindowSec=: must be a duration 500ms…10s" },
                { "[PSI]\nWindowSec=11\n", F_PSI_WINDOW,
                  F ":2: Invalid value '11' for WindowSec=: must be a duration 500ms…10s" },
                { "[PSI]\nLowStallMSec=0\n", F_PSI_LOW,
                  F ":2: Invalid value '0' for LowStallMSec=: must be a duration 1us…10s" },
                { "[PSI]\nMediumStallMSec=x\n", F_PSI_MEDIUM,
                  F ":2: Invalid value 'x' for MediumStallMSec=: must be a duration 1us…10s" },
                { "[PSI]\nOOMStallMSec=1.5\n", F_PSI_OOM,
                  F ":2: Invalid value '1.5' for OOMStallMSec=: must be a duration 1us…10s" },
                { "[Poll]\nIdleSec=0\n", F_POLL_IDLE,
                  F ":2: Invalid value '0' for IdleSec=: must be a duration 10ms…1h" },
                { "[Poll]\nBusyMSec=1\n", F_POLL_BUSY,
                  F ":2: Invalid value '1' for BusyMSec=: must be a duration 10ms…1h" },
        };
        Diagnostics d;
        Config c;

        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                int r;

                config_init(&c);
                r = parse(&c, t[i].text, &d);
                if (diag_count(&d) != 1)
                        fprintf(stderr, "  bad case: %s  %zu messages\n", t[i].text, diag_count(&d));
                CHECK_EQ_INT(r, -EINVAL);
                CHECK_EQ_INT(diag_count(&d), 1);
                if (t[i].diag)
                        CHECK_STREQ(d.n > 0 ? d.msg[0] : "(none)", t[i].diag);
                else
                        CHECK(d.n > 0 && strstr(d.msg[0], F ":2: Invalid value '") == d.msg[0]);
                CHECK(same_but(&c, _F_MAX));
        }
}

static void test_structure_errors(void) {
        Diagnostics d;
        Config c;

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Daemon]\nFoo=1\n", &d), -EINVAL);
        CHECK_STREQ(d.msg[0], F ":2: Unknown key 'Foo' in section [Daemon]");

        /* A key of another section is unknown here. */
        CHECK_EQ_INT(parse(&c, "[Daemon]\nWindow=512\n", &d), -EINVAL);
        CHECK_STREQ(d.msg[0], F ":2: Unknown key 'Window' in section [Daemon]");
        CHECK_EQ_INT(c.level.window_pages, 256);

        /* Names are case-sensitive, as in systemd. */
        CHECK_EQ_INT(parse(&c, "[daemon]\nsource=psi\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ":1: Unknown section [daemon]");

        /* An unknown section is reported once, not once per key. */
        CHECK_EQ_INT(parse(&c, "[Extra]\nA=1\nB=2\n[Levels]\nWindow=512\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ":1: Unknown section [Extra]");
        CHECK_EQ_INT(c.level.window_pages, 512);

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "Window=512\n", &d), -EINVAL);
        CHECK_STREQ(d.msg[0], F ":1: Assignment before any section header, ignoring");
        CHECK_EQ_INT(c.level.window_pages, 256);

        CHECK_EQ_INT(parse(&c, "[Levels\nWindow=512\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ":1: Unterminated section header '[Levels', ignoring");
        CHECK_EQ_INT(c.level.window_pages, 256);

        /* Duplicates in one file are a mistake; the last one is what --check-config shows. */
        CHECK_EQ_INT(parse(&c, "[Levels]\nWindow=512\n\n[Levels]\nWindow=1024\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ":5: Duplicate key Window= in section [Levels], first set on line 2");
        CHECK_EQ_INT(c.level.window_pages, 1024);

        /* A second file may override the first: no duplicate across calls. */
        CHECK_EQ_INT(parse(&c, "[Levels]\nWindow=128\n", &d), 0);
        CHECK_EQ_INT(c.level.window_pages, 128);

        /* Long values are quoted in part. */
        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Daemon]\nSource=abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghij\n", &d),
                     -EINVAL);
        CHECK_STREQ(d.msg[0], F ":2: Invalid value 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv…' "
                    "for Source=: must be one of auto, syscall, memcg, reclaim, psi, vmstat");
}

/* Good keys after bad lines still apply; every bad line has its own message. */
static void test_errors_do_not_stop(void) {
        static const char text[] =
                "# vmpressured.conf with mistakes\n"
                "[Daemon]\n"
                "Source=psy\n"
                "DryRun=yes\n"
                "this is not ini\n"
                "LogLevel=debug\n"
                "[Levels]\n"
                "Window=many\n"
                "Medium=70\n"
                "Colour=blue\n"
                "OOM=90\n"
                "[Poll]\n"
                "BusyMSec=50\n";
        Diagnostics d;
        Config c;

        config_init(&c);
        CHECK_EQ_INT(parse(&c, text, &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 4);
        CHECK_STREQ(d.msg[0], F ":3: Invalid value 'psy' for Source=: must be one of auto, syscall, memcg, reclaim, psi, vmstat");
        CHECK_STREQ(d.msg[1], F ":5: Missing '=' in line 'this is not ini', ignoring");
        CHECK_STREQ(d.msg[2], F ":8: Invalid value 'many' for Window=: must be an integer 1…1048576");
        CHECK_STREQ(d.msg[3], F ":10: Unknown key 'Colour' in section [Levels]");
        CHECK_EQ_INT(c.source, _SOURCE_TYPE_INVALID);
        CHECK_EQ_INT(c.dry_run, true);
        CHECK_EQ_INT(c.log_level, LOG_DEBUG);
        CHECK_EQ_INT(c.level.window_pages, 256);
        CHECK_EQ_INT(c.level.level_medium, 70);
        CHECK_EQ_INT(c.level.level_oom, 90);
        CHECK_EQ_U64(c.params.poll.busy_usec, 50 * MS);
}

static void test_full_file(void) {
        static const char text[] =
                "\xef\xbb\xbf# every key\r\n"
                "[Daemon]\r\n"
                "Source=memcg\r\n"
                "SyscallNumber=451\r\n"
                "Watch=system.slice/postgresql.service /user.slice/\r\n"
                "Watch = batch.slice\r\n"
                "LogLevel=notice\r\n"
                "DryRun=true\r\n"
                "\r\n"
                "[Levels]\r\n"
                "Window=512\r\n"
                "Medium=50\r\n"
                "OOM=95\r\n"
                "HoldSec=3\r\n"
                "QuietSec=30s\r\n"
                "RepeatSec=500ms\r\n"
                "HeadroomFloor=256M\r\n"
                "[PSI]\r\n"
                "WindowSec=2\r\n"
                "LowStallMSec=150\r\n"
                "MediumStallMSec=400\r\n"
                "OOMStallMSec=1s\r\n"
                "[Poll]\r\n"
                "IdleSec=1\r\n"
                "BusyMSec=250";
        Diagnostics d;
        Config c;

        config_init(&c);
        CHECK_EQ_INT(parse(&c, text, &d), 0);
        CHECK_EQ_INT(diag_count(&d), 0);
        CHECK_EQ_INT(c.source, SOURCE_MEMCG);
        CHECK_EQ_INT(c.params.syscall_nr, 451);
        CHECK_EQ_INT(c.n_watch, 3);
        CHECK_STREQ(c.watch[0], "system.slice/postgresql.service");
        CHECK_STREQ(c.watch[1], "user.slice");
        CHECK_STREQ(c.watch[2], "batch.slice");
        CHECK_EQ_INT(c.log_level, LOG_NOTICE);
        CHECK_EQ_INT(c.dry_run, true);
        CHECK_EQ_INT(c.level.window_pages, 512);
        CHECK_EQ_INT(c.level.level_medium, 50);
        CHECK_EQ_INT(c.level.level_oom, 95);
        CHECK_EQ_U64(c.level.hold_usec, 3 * S);
        CHECK_EQ_U64(c.level.quiet_usec, 30 * S);
        CHECK_EQ_U64(c.level.repeat_usec, 500 * MS);
        CHECK_EQ_U64(c.level.headroom_floor_bytes, UINT64_C(256) << 20);
        CHECK_EQ_INT(c.level.headroom_floor_permyriad, 0);
        CHECK_EQ_U64(c.params.psi.window_usec, 2 * S);
        CHECK_EQ_U64(c.params.psi.stall_usec[LEVEL_LOW], 150 * MS);
        CHECK_EQ_U64(c.params.psi.stall_usec[LEVEL_MEDIUM], 400 * MS);
        CHECK_EQ_U64(c.params.psi.stall_usec[LEVEL_OOM], 1 * S);
        CHECK_EQ_U64(c.params.poll.idle_usec, 1 * S);
        CHECK_EQ_U64(c.params.poll.busy_usec, 250 * MS);
}

static void test_watch(void) {
        Diagnostics d;
        Config c;
        char text[4096];
        size_t n;

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Daemon]\nWatch=a.slice b.slice\nWatch=\nWatch=c.slice\n", &d), 0);
        CHECK_EQ_INT(c.n_watch, 1);
        CHECK_STREQ(c.watch[0], "c.slice");

        /* An empty Watch= also drops what an earlier file or the caller added. */
        CHECK_EQ_INT(parse(&c, "[Daemon]\nWatch=\n", &d), 0);
        CHECK_EQ_INT(c.n_watch, 0);

        /* Duplicates, also spelt differently, count once. */
        CHECK_EQ_INT(parse(&c, "[Daemon]\nWatch=a.slice /a.slice a.slice/ //a.slice//\n", &d), 0);
        CHECK_EQ_INT(c.n_watch, 1);

        /* A bad path is reported; the good ones around it still apply. */
        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Daemon]\nWatch=x.slice ../etc\ty.slice /\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 2);
        CHECK_STREQ(d.msg[0], F ":2: Invalid cgroup path '../etc' for Watch=: must be a path below the cgroup "
                    "root without '.' or '..' components, at most 255 bytes");
        CHECK_STREQ(d.msg[1], F ":2: Invalid cgroup path '/' for Watch=: must be a path below the cgroup "
                    "root without '.' or '..' components, at most 255 bytes");
        CHECK_EQ_INT(c.n_watch, 2);
        CHECK_STREQ(c.watch[0], "x.slice");
        CHECK_STREQ(c.watch[1], "y.slice");

        /* At most CONFIG_WATCH_MAX. */
        config_init(&c);
        n = (size_t) snprintf(text, sizeof(text), "[Daemon]\nWatch=");
        for (int i = 0; i < CONFIG_WATCH_MAX + 2; i++)
                n += (size_t) snprintf(text + n, sizeof(text) - n, " u%d.slice", i);
        n += (size_t) snprintf(text + n, sizeof(text) - n, "\n");
        CHECK_EQ_INT(parse(&c, text, &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 2);
        CHECK_STREQ(d.msg[0], F ":2: Too many cgroups to watch (at most 32), ignoring 'u32.slice'");
        CHECK_EQ_INT(c.n_watch, CONFIG_WATCH_MAX);
        CHECK_STREQ(c.watch[CONFIG_WATCH_MAX - 1], "u31.slice");
}

static void test_add_watch(void) {
        static const struct {
                const char *path;
                int ret;
                const char *stored;
        } t[] = {
                { "system.slice/foo.service", 0, "system.slice/foo.service" },
                { "/system.slice/bar.service", 0, "system.slice/bar.service" },
                { "a//b///c/", 0, "a/b/c" },
                { "user.slice/user-1000.slice/user@1000.service", 0, "user.slice/user-1000.slice/user@1000.service" },
                { "with space.slice", 0, "with space.slice" },
                { "..a/b..", 0, "..a/b.." },
                { "", -EINVAL },
                { "/", -EINVAL },
                { "///", -EINVAL },
                { "..", -EINVAL },
                { ".", -EINVAL },
                { "a/../b", -EINVAL },
                { "a/./b", -EINVAL },
                { "/..", -EINVAL },
                { "a/..", -EINVAL },
                { "a\nb", -EINVAL },
                { "a\x7f", -EINVAL },
                { NULL, -EINVAL },
        };
        char longest[300];
        Config c;

        config_init(&c);
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                size_t before = c.n_watch;

                CHECK_EQ_INT(config_add_watch(&c, t[i].path), t[i].ret);
                if (t[i].ret == 0) {
                        CHECK_EQ_INT(c.n_watch, before + 1);
                        CHECK_STREQ(c.watch[c.n_watch - 1], t[i].stored);
                } else
                        CHECK_EQ_INT(c.n_watch, before);
        }

        /* Duplicates: 0, nothing added. */
        CHECK_EQ_INT(config_add_watch(&c, "system.slice/foo.service/"), 0);
        CHECK_EQ_INT(c.n_watch, 6);

        /* 255 bytes fit (the array holds 256 with the NUL), 256 do not; a
         * leading '/' does not count. */
        config_init(&c);
        memset(longest, 'x', 256);
        longest[256] = '\0';
        CHECK_EQ_INT(config_add_watch(&c, longest + 1), 0);
        CHECK_EQ_INT(config_add_watch(&c, longest), -EINVAL);
        longest[0] = '/';
        CHECK_EQ_INT(config_add_watch(&c, longest), 0);        /* the same 255 'x': a duplicate */
        CHECK_EQ_INT(c.n_watch, 1);
        CHECK_EQ_INT(strlen(c.watch[0]), 255);

        config_init(&c);
        for (int i = 0; i < CONFIG_WATCH_MAX; i++) {
                char p[32];
                (void) snprintf(p, sizeof(p), "s%d.slice", i);
                CHECK_EQ_INT(config_add_watch(&c, p), 0);
        }
        CHECK_EQ_INT(config_add_watch(&c, "one-more.slice"), -E2BIG);
        CHECK_EQ_INT(config_add_watch(&c, "s0.slice"), 0);     /* a duplicate even when full */
        CHECK_EQ_INT(c.n_watch, CONFIG_WATCH_MAX);
}

static void test_cross_field(void) {
        Diagnostics d;
        Config c;

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Levels]\nMedium=70\nOOM=60\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ": Medium=70 is above OOM=60");

        /* Against a default: OOM=50 alone is below the default Medium=60. */
        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Levels]\nOOM=50\n", &d), -EINVAL);
        CHECK_STREQ(d.msg[0], F ": Medium=60 is above OOM=50");

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Levels]\nMedium=80\nOOM=80\n", &d), 0);

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Levels]\nHoldSec=15\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ": QuietSec=10s is below HoldSec=15s");

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Levels]\nHoldSec=15\nQuietSec=15s\n", &d), 0);

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[PSI]\nLowStallMSec=1s\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ": LowStallMSec=1s is not below WindowSec=1s");

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[PSI]\nWindowSec=500ms\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ": OOMStallMSec=500ms is not below WindowSec=500ms");

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[PSI]\nWindowSec=600ms\nMediumStallMSec=1500\nOOMStallMSec=1s500ms\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 2);
        CHECK_STREQ(d.msg[0], F ": MediumStallMSec=1500ms is not below WindowSec=600ms");
        CHECK_STREQ(d.msg[1], F ": OOMStallMSec=1500ms is not below WindowSec=600ms");

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[PSI]\nWindowSec=10s\nOOMStallMSec=9999\n", &d), 0);

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Poll]\nBusyMSec=3s\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ": BusyMSec=3s is above IdleSec=2s");

        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Poll]\nIdleSec=100ms\n", &d), 0);   /* busy == idle is fine */
        CHECK_EQ_INT(parse(&c, "[Poll]\nIdleSec=50ms\n", &d), -EINVAL);
        CHECK_STREQ(d.msg[0], F ": BusyMSec=100ms is above IdleSec=50ms");

        /* Several at once, after a line error. */
        config_init(&c);
        CHECK_EQ_INT(parse(&c, "[Levels]\nMedium=90\nOOM=80\nbogus\n[Poll]\nIdleSec=10ms\n", &d), -EINVAL);
        CHECK_EQ_INT(diag_count(&d), 3);
        CHECK_STREQ(d.msg[0], F ":4: Missing '=' in line 'bogus', ignoring");
        CHECK_STREQ(d.msg[1], F ": Medium=90 is above OOM=80");
        CHECK_STREQ(d.msg[2], F ": BusyMSec=100ms is above IdleSec=10ms");
}

static void test_log_level(void) {
        static const char *const names[] = { "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug" };

        for (int i = 0; i < 8; i++) {
                char digit[2] = { (char) ('0' + i), '\0' };
                CHECK_EQ_INT(log_level_from_string(names[i]), i);
                CHECK_EQ_INT(log_level_from_string(digit), i);
                CHECK_STREQ(log_level_to_string(i), names[i]);
        }
        CHECK_EQ_INT(log_level_from_string("8"), -EINVAL);
        CHECK_EQ_INT(log_level_from_string("07"), -EINVAL);
        CHECK_EQ_INT(log_level_from_string("-1"), -EINVAL);
        CHECK_EQ_INT(log_level_from_string(""), -EINVAL);
        CHECK_EQ_INT(log_level_from_string("Debug"), -EINVAL);
        CHECK_EQ_INT(log_level_from_string("error"), -EINVAL);
        CHECK_EQ_INT(log_level_from_string(NULL), -EINVAL);
        CHECK(log_level_to_string(-1) == NULL);
        CHECK(log_level_to_string(8) == NULL);
        CHECK_EQ_INT(LOG_INFO, log_level_from_string(log_level_to_string(LOG_INFO)));
}

static uint64_t xorshift(uint64_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* Normalized: not empty, no leading, trailing or double '/', no "." or ".." component. */
static bool watch_ok(const char *w) {
        size_t n = strlen(w);

        if (n == 0 || w[0] == '/' || w[n - 1] == '/' || strstr(w, "//"))
                return false;
        for (const char *p = w; *p;) {
                size_t l = strcspn(p, "/");
                if ((l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p += l;
                p += *p == '/';
        }
        return true;
}

/* Binary garbage (with NUL bytes) is an error, never a crash, and the
 * config stays within the bounds every parser enforces. */
static void test_garbage(void) {
        static const char *const pieces[] = {
                "[Daemon]\n", "[Levels]\n", "[PSI]\n", "[Poll]\n", "Watch=", "Window=", "Medium=", "OOM=",
                "HeadroomFloor=", "WindowSec=", "BusyMSec=", "IdleSec=", "1", "9", "%", ".", "ms", "/", "..",
                " ", "\n", "\r\n", "\0", "\xff", "#", "=",
        };
        const size_t len = 128 * 1024;
        uint64_t seed = 0x243f6a8885a308d3ULL;
        char *buf = malloc(len);
        Diagnostics d;
        Config c;

        for (int round = 0; round < 6; round++) {
                size_t n = 0;

                while (n < len) {
                        uint64_t x = xorshift(&seed);
                        if (round % 2 == 0)
                                buf[n++] = (char) x;
                        else {
                                const char *p = pieces[x % ELEMENTSOF(pieces)];
                                size_t l = p[0] ? strlen(p) : 1;
                                l = MIN(l, len - n);
                                memcpy(buf + n, p, l);
                                n += l;
                        }
                }
                config_init(&c);
                diag_clear(&d);
                CHECK_EQ_INT(config_parse(&c, "garbage", buf, len, &d), -EINVAL);
                CHECK(diag_count(&d) > 0);
                CHECK(c.n_watch <= CONFIG_WATCH_MAX);
                CHECK(c.level.window_pages >= 1 && c.level.window_pages <= 1048576);
                CHECK(c.level.level_medium <= 100 && c.level.level_oom <= 100);
                CHECK(c.level.headroom_floor_permyriad <= 10000);
                CHECK(c.params.psi.window_usec >= 500 * MS && c.params.psi.window_usec <= 10 * S);
                for (size_t i = 0; i < c.n_watch; i++)
                        CHECK(watch_ok(c.watch[i]));
        }
        free(buf);
}

/* conf/vmpressured.conf, found next to this file: as shipped it must parse
 * clean to the defaults, and so must it with every "#Key=default" line
 * uncommented; and it must list every key. */
static void test_shipped_file(void) {
        static const char *const keys[] = {
                "Source", "SyscallNumber", "Watch", "LogLevel", "DryRun",
                "Window", "Medium", "OOM", "HoldSec", "QuietSec", "RepeatSec", "HeadroomFloor",
                "KillHorizonSec", "WarnHorizonSec",
                "WindowSec", "LowStallMSec", "MediumStallMSec", "OOMStallMSec",
                "IdleSec", "BusyMSec", "HeadroomSec",
        };
        static char text[65536], uncommented[65536];
        char path[4096];
        const char *slash = strrchr(__FILE__, '/');
        size_t len, n = 0;
        Diagnostics d;
        Config c;
        FILE *f;

        (void) snprintf(path, sizeof(path), "%.*s../conf/vmpressured.conf",
                        slash ? (int) (slash - __FILE__ + 1) : 0, __FILE__);
        f = fopen(path, "re");
        if (!f) {
                fprintf(stderr, "  %s: %m; not checking the shipped file\n", path);
                return;
        }
        len = fread(text, 1, sizeof(text), f);
        fclose(f);
        CHECK(len > 0 && len < sizeof(text));

        config_init(&c);
        CHECK_EQ_INT(config_parse(&c, path, text, len, &d), 0);
        CHECK(same_but(&c, _F_MAX));

        /* "#Key=value" → "Key=value"; comments with a space after '#' stay. */
        for (size_t i = 0; i < len; i++) {
                bool line_start = i == 0 || text[i - 1] == '\n';
                if (line_start && text[i] == '#' && i + 1 < len && text[i + 1] >= 'A' && text[i + 1] <= 'Z')
                        continue;
                uncommented[n++] = text[i];
        }
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                char needle[64];
                (void) snprintf(needle, sizeof(needle), "\n%s=", keys[i]);
                if (!memmem(uncommented, n, needle, strlen(needle)))
                        fprintf(stderr, "  %s=: not in the shipped file\n", keys[i]);
                CHECK(memmem(uncommented, n, needle, strlen(needle)));
        }
        config_init(&c);
        diag_clear(&d);
        CHECK_EQ_INT(config_parse(&c, path, uncommented, n, &d), 0);
        for (size_t i = 0; i < d.n; i++)
                fprintf(stderr, "  %s\n", d.msg[i]);
        CHECK(same_but(&c, _F_MAX));
}

/* HeadroomFloor= sizes against the RAM the caller passes in (MemTotal):
 * below half of it is a floor, half or more is OOM all the time. */
static void test_headroom_floor_mem_total(void) {
        static const struct {
                uint64_t mem;
                const char *text;
                const char *diag;       /* NULL: accepted */
                uint64_t bytes;
        } t[] = {
                { UINT64_C(24) << 30, "[Levels]\nHeadroomFloor=64M\n", NULL, UINT64_C(64) << 20 },
                { UINT64_C(24) << 30, "[Levels]\nHeadroomFloor=12287M\n", NULL, UINT64_C(12287) << 20 },
                { UINT64_C(24) << 30, "[Levels]\nHeadroomFloor=12G\n",
                  F ":2: Invalid value '12G' for HeadroomFloor=: half or more of this machine's memory "
                  "(MemTotal 24.0G) is OOM all the time; must be below half of it, 12.0G" },
                { UINT64_C(24) << 30, "[Levels]\nHeadroomFloor=32G\n",
                  F ":2: Invalid value '32G' for HeadroomFloor=: more than all of this machine's memory "
                  "(MemTotal 24.0G) is OOM all the time; must be below half of it, 12.0G" },
                { UINT64_C(1000) << 20, "[Levels]\nHeadroomFloor=1T\n",
                  F ":2: Invalid value '1T' for HeadroomFloor=: more than all of this machine's memory "
                  "(MemTotal 1000.0M) is OOM all the time; must be below half of it, 500.0M" },
                /* 0 is "off", whatever the RAM. */
                { UINT64_C(1) << 30, "[Levels]\nHeadroomFloor=0\n", NULL, 0 },
                /* Unknown RAM: sizes are not bounded (percentages still are). */
                { 0, "[Levels]\nHeadroomFloor=1T\n", NULL, UINT64_C(1) << 40 },
        };

        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                Diagnostics d;
                Config c;
                int r;

                config_init(&c);
                CHECK_EQ_U64(c.mem_total_bytes, 0);
                c.mem_total_bytes = t[i].mem;
                r = parse(&c, t[i].text, &d);
                if (!t[i].diag) {
                        CHECK_EQ_INT(r, 0);
                        CHECK_EQ_INT(diag_count(&d), 0);
                        CHECK_EQ_U64(c.level.headroom_floor_bytes, t[i].bytes);
                        continue;
                }
                CHECK_EQ_INT(r, -EINVAL);
                CHECK_EQ_INT(diag_count(&d), 1);
                CHECK_STREQ(d.n > 0 ? d.msg[0] : "(none)", t[i].diag);
                /* Refused: the default floor (2 %) stays. */
                CHECK_EQ_U64(c.level.headroom_floor_bytes, 0);
                CHECK_EQ_INT(c.level.headroom_floor_permyriad, 200);
        }
}

int main(void) {
        test_defaults();
        test_headroom_floor_mem_total();
        test_empty_and_comments();
        test_good_values();
        test_bad_values();
        test_structure_errors();
        test_errors_do_not_stop();
        test_full_file();
        test_watch();
        test_add_watch();
        test_cross_field();
        test_log_level();
        test_garbage();
        test_shipped_file();
        return test_exit("test-conf");
}
