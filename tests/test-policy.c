/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "policy-load.h"
#include "policy.h"
#include "tests.h"

/* ---- bad files: the exact messages ---- */

typedef struct BadCase {
        const char *name;
        const char *filename;
        const char *text;
        const char *errors[4];          /* exact diag lines, in order; the rest NULL */
} BadCase;

#define F "foo.service.policy"
#define STALL_MUST "must be a whole percentage from 1% to 100% (like 60%)"
#define GUARD_MUST "must be a size of at least 1M (like 32M) or a whole percentage of the unit's memory limit " \
        "from 1% to 50% (like 10%)"
#define SI_MUST "must be a duration like 30s, 500ms or 5min, at most 24h; 0 for no limit"

static const BadCase bad_cases[] = {
        { "unknown section", F,
          "[Policy]\nScope=system\n[Hgih]\nSignal=SIGUSR1\n[Medium]\nSignal=USR1\n",
          { F ":3: Unknown section [Hgih]: must be [Policy], [Low], [Medium] or [OOM]" } },
        { "section names are case-sensitive", F, "[oom]\nKill=yes\n",
          { F ":1: Unknown section [oom]: must be [Policy], [Low], [Medium] or [OOM]" } },
        { "unknown key", F, "[Low]\nSingal=SIGUSR1\n",
          { F ":2: Unknown key 'Singal' in section [Low]" } },
        { "level key in [Policy]", F, "[Policy]\nSignal=SIGUSR1\n",
          { F ":2: Unknown key 'Signal' in section [Policy]" } },
        { "bad signal name", F, "[Medium]\nSignal=SIGFOO\n",
          { F ":2: Invalid value 'SIGFOO' for Signal=: must be a signal name like SIGUSR1 or USR1, or a number" } },
        { "lower-case signal", F, "[Medium]\nSignal=sigusr1\n",
          { F ":2: Invalid value 'sigusr1' for Signal=: must be a signal name like SIGUSR1 or USR1, or a number" } },
        { "signal 0", F, "[Medium]\nSignal=0\n",
          { F ":2: Invalid value '0' for Signal=: must be a signal name like SIGUSR1 or USR1, or a number" } },
        { "signal out of range", F, "[Medium]\nSignal=65\n",
          { F ":2: Invalid value '65' for Signal=: must be a signal name like SIGUSR1 or USR1, or a number" } },
        { "RTMIN+ too far", F, "[Medium]\nSignal=SIGRTMIN+99\n",
          { F ":2: Invalid value 'SIGRTMIN+99' for Signal=: must be a signal name like SIGUSR1 or USR1, or a number" } },
        { "SIGKILL", F, "[OOM]\nSignal=SIGKILL\n",
          { F ":2: Signal=SIGKILL is not allowed: use Kill=yes in [OOM] to kill" } },
        { "KILL by number", F, "[OOM]\nSignal=9\n",
          { F ":2: Signal=9 is not allowed: use Kill=yes in [OOM] to kill" } },
        { "STOP", F, "[Low]\nSignal=STOP\n",
          { F ":2: Signal=STOP is not allowed: it stops the unit, and a stopped unit frees no memory" } },
        { "SIGTSTP stops too", F, "[Medium]\nSignal=SIGTSTP\n",
          { F ":2: Signal=SIGTSTP is not allowed: it stops the unit, and a stopped unit frees no memory" } },
        { "TTIN without SIG", F, "[Low]\nSignal=TTIN\n",
          { F ":2: Signal=TTIN is not allowed: it stops the unit, and a stopped unit frees no memory" } },
        { "SIGTTOU", F, "[OOM]\nSignal=SIGTTOU\n",
          { F ":2: Signal=SIGTTOU is not allowed: it stops the unit, and a stopped unit frees no memory" } },
        { "SIGTSTP by number", F, "[Low]\nSignal=20\n",
          { F ":2: Signal=20 is not allowed: it stops the unit, and a stopped unit frees no memory" } },
        { "SIGSTOP by number", F, "[Low]\nSignal=19\n",
          { F ":2: Signal=19 is not allowed: it stops the unit, and a stopped unit frees no memory" } },
        { "bad boolean", F, "[OOM]\nKill=maybe\n",
          { F ":2: Invalid value 'maybe' for Kill=: must be a boolean (yes/no, true/false, on/off, 1/0)" } },
        { "Kill= outside [OOM]", F, "[Medium]\nKill=yes\n",
          { F ":2: Kill= is only allowed in [OOM], ignoring" } },
        { "KillTarget= outside [OOM]", F, "[Low]\nKillTarget=unit\n",
          { F ":2: KillTarget= is only allowed in [OOM], ignoring" } },
        { "level section twice", F, "[Medium]\nSignal=SIGUSR1\n\n[Medium]\nSignal=SIGUSR2\n",
          { F ":4: Duplicate section [Medium], first on line 1, ignoring it" } },
        { "[Policy] twice", F, "[Policy]\nScope=unit\n[Policy]\nScope=system\n",
          { F ":3: Duplicate section [Policy], first on line 1, ignoring it" } },
        { "duplicate key", F, "[Low]\nSignal=SIGUSR1\nSignal=SIGUSR2\n",
          { F ":3: Duplicate key Signal= in section [Low], first set on line 2" } },
        { "key before any section", F, "Signal=SIGUSR1\n[Low]\n",
          { F ":1: Assignment before any section header, ignoring" } },
        { "bad scope", F, "[Policy]\nScope=cgroup\n",
          { F ":2: Invalid value 'cgroup' for Scope=: must be system or unit" } },
        { "bad signal target", F, "[Low]\nSignal=USR1\nSignalTarget=everyone\n",
          { F ":3: Invalid value 'everyone' for SignalTarget=: must be main or all" } },
        { "bad kill target", F, "[OOM]\nKill=yes\nKillTarget=smallest\n",
          { F ":3: Invalid value 'smallest' for KillTarget=: must be largest or unit" } },
        { "Guard= outside [OOM]", F, "[Policy]\nScope=unit\n[Medium]\nGuard=32M\n",
          { F ":4: Guard= is only allowed in [OOM], ignoring" } },
        { "Guard= without Scope=unit", F, "[OOM]\nKill=yes\nGuard=32M\n",
          { F ":3: Guard= needs Scope=unit in [Policy] and Kill=yes in [OOM] (it kills the unit before its own "
              "limit), ignoring it" } },
        { "Guard= without Kill=yes", F, "[Policy]\nScope=unit\n[OOM]\nGuard=10%\nSignal=USR1\n",
          { F ":4: Guard= needs Scope=unit in [Policy] and Kill=yes in [OOM] (it kills the unit before its own "
              "limit), ignoring it" } },
        { "Guard= too small", F, "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=512K\n",
          { F ":5: Invalid value '512K' for Guard=: " GUARD_MUST } },
        { "Guard= share too large", F, "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=51%\n",
          { F ":5: Invalid value '51%' for Guard=: " GUARD_MUST } },
        { "Guard= decimal share", F, "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=2.5%\n",
          { F ":5: Invalid value '2.5%' for Guard=: " GUARD_MUST } },
        { "Guard= MB", F, "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=32MB\n",
          { F ":5: Invalid value '32MB' for Guard=: " GUARD_MUST } },
        { "GuardSec= without Guard=", F, "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuardSec=2s\n",
          { F ":5: GuardSec= needs Guard=, ignoring it" } },
        { "GuardSec= too long", F, "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=8M\nGuardSec=2min\n",
          { F ":6: Invalid value '2min' for GuardSec=: must be a duration like 1s or 500ms, at most 1min; 0 to "
              "kill at once" } },
        { "StallLimit= outside [OOM]", F, "[Medium]\nStallLimit=60%\n",
          { F ":2: StallLimit= is only allowed in [OOM], ignoring" } },
        { "StallLimit= without Kill=yes", F, "[OOM]\nSignal=USR1\nStallLimit=60%\n",
          { F ":3: StallLimit= needs Kill=yes in [OOM] (it kills a thrashing unit), ignoring it" } },
        { "StallLimit= without %", F, "[OOM]\nKill=yes\nStallLimit=60\n",
          { F ":3: Invalid value '60' for StallLimit=: " STALL_MUST } },
        { "StallLimit= 0%", F, "[OOM]\nKill=yes\nStallLimit=0%\n",
          { F ":3: Invalid value '0%' for StallLimit=: " STALL_MUST } },
        { "StallLimit= over 100%", F, "[OOM]\nKill=yes\nStallLimit=101%\n",
          { F ":3: Invalid value '101%' for StallLimit=: " STALL_MUST } },
        { "StallSec= not an average the kernel keeps", F, "[OOM]\nKill=yes\nStallLimit=60%\nStallSec=30s\n",
          { F ":4: Invalid value '30s' for StallSec=: must be 10s, 1min or 5min (the averages the kernel keeps "
              "of a stall)" } },
        { "StallSec= without StallLimit=", F, "[OOM]\nKill=yes\nStallSec=1min\n",
          { F ":3: StallSec= needs StallLimit=, ignoring it" } },
        { "line without '='", F, "[Low]\nSignal SIGUSR1\n",
          { F ":2: Missing '=' in line 'Signal SIGUSR1', ignoring" } },
        { "several problems, each on its line", F,
          "[Low]\nSignal=SIGNOPE\n[OOM]\nKill=perhaps\nFoo=bar\n[Medium]\nKill=yes\n",
          { F ":2: Invalid value 'SIGNOPE' for Signal=: must be a signal name like SIGUSR1 or USR1, or a number",
            F ":4: Invalid value 'perhaps' for Kill=: must be a boolean (yes/no, true/false, on/off, 1/0)",
            F ":5: Unknown key 'Foo' in section [OOM]",
            F ":7: Kill= is only allowed in [OOM], ignoring" } },
        { "interval not a duration", F, "[Policy]\nSignalIntervalSec=soon\n",
          { F ":2: Invalid value 'soon' for SignalIntervalSec=: " SI_MUST } },
        { "interval negative", F, "[Policy]\nSignalIntervalSec=-5s\n",
          { F ":2: Invalid value '-5s' for SignalIntervalSec=: " SI_MUST } },
        { "interval above 24h", F, "[Policy]\nSignalIntervalSec=25h\n",
          { F ":2: Invalid value '25h' for SignalIntervalSec=: " SI_MUST } },
        { "interval: unknown unit", F, "[Policy]\nSignalIntervalSec=3 fortnights\n",
          { F ":2: Invalid value '3 fortnights' for SignalIntervalSec=: " SI_MUST } },
        { "interval empty", F, "[Policy]\nSignalIntervalSec=\n",
          { F ":2: Invalid value '' for SignalIntervalSec=: " SI_MUST } },
        { "interval in a level section", F, "[Low]\nSignal=SIGUSR1\nSignalIntervalSec=5s\n",
          { F ":3: Unknown key 'SignalIntervalSec' in section [Low]" } },
        { "interval twice", F, "[Policy]\nSignalIntervalSec=5s\nSignalIntervalSec=10s\n",
          { F ":3: Duplicate key SignalIntervalSec= in section [Policy], first set on line 2" } },
        { "binary garbage", F, "\x7f" "ELF\x02\x01\x01\0\0\0\x03\0>\0",
          { F ": Binary file (NUL byte at offset 7), ignoring file" } },
        { "invalid UTF-8", F, "[Low]\nSignal=\xff\xfe\n",
          { F ":2: Invalid UTF-8 in line, ignoring" } },
        { "quoted values are cut", F,
          "[Low]\nSignal=SIGAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n",
          { F ":2: Invalid value 'SIGAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA…' for Signal=: "
              "must be a signal name like SIGUSR1 or USR1, or a number" } },
};

static void check_diag(const char *name, const Diagnostics *d, const char *const *expected, size_t max) {
        size_t n_expected = 0;

        while (n_expected < max && expected[n_expected])
                n_expected++;
        if (diag_count(d) != n_expected) {
                fprintf(stderr, "case '%s': %zu problems, expected %zu:\n", name, diag_count(d), n_expected);
                for (size_t i = 0; i < d->n; i++)
                        fprintf(stderr, "  %s\n", d->msg[i]);
        }
        CHECK_EQ_INT(diag_count(d), n_expected);
        for (size_t i = 0; i < n_expected && i < d->n; i++)
                CHECK_STREQ(d->msg[i], expected[i]);
}

static void test_bad_cases(void) {
        for (size_t i = 0; i < ELEMENTSOF(bad_cases); i++) {
                const BadCase *c = &bad_cases[i];
                size_t len = c->text[0] == '\x7f' ? 14 : strlen(c->text);     /* the binary case holds NULs */
                Diagnostics d;
                Policy p;
                int r;

                diag_clear(&d);
                r = policy_parse(c->filename, c->filename, c->text, len, &p, &d);
                check_diag(c->name, &d, c->errors, ELEMENTSOF(c->errors));
                CHECK_EQ_INT(r, (int) diag_count(&d));
                CHECK_EQ_INT(p.n_errors, diag_count(&d));
        }
}

/* "The rest still loads": good lines around bad ones take effect. */
static void test_rest_still_loads(void) {
        const char *text =
                "[Policy]\nScope=unit\nColour=blue\n"
                "[Hgih]\nSignal=SIGUSR2\n"
                "[Medium]\nSignal=SIGNOPE\nSignalTarget=all\n"
                "[Medium]\nSignal=SIGHUP\n"
                "[OOM]\nKill=perhaps\nKillTarget=unit\nSignal=SIGUSR1\n";
        Diagnostics d;
        Policy p;

        diag_clear(&d);
        CHECK_EQ_INT(policy_parse(F, F, text, strlen(text), &p, &d), 5);
        CHECK_EQ_INT(p.state, POLICY_LOADED);
        CHECK_EQ_INT(p.scope, POLICY_SCOPE_UNIT);
        CHECK_EQ_INT(p.actions[LEVEL_LOW].line, 0);
        CHECK_EQ_INT(p.actions[LEVEL_LOW].signal, 0);           /* [Hgih] did not count as [Low] */
        CHECK_EQ_INT(p.actions[LEVEL_MEDIUM].line, 6);
        CHECK_EQ_INT(p.actions[LEVEL_MEDIUM].signal, 0);        /* bad, and the repeated section ignored */
        CHECK_EQ_INT(p.actions[LEVEL_MEDIUM].signal_target, SIGNAL_TARGET_ALL);
        CHECK_EQ_INT(p.actions[LEVEL_OOM].kill, false);
        CHECK_EQ_INT(p.actions[LEVEL_OOM].kill_target, KILL_TARGET_UNIT);
        CHECK_EQ_INT(p.actions[LEVEL_OOM].signal, SIGUSR1);
        CHECK(!policy_kill_enabled(&p));
}

static void test_good_file(void) {
        const char *text =
                "\xef\xbb\xbf# postgres drops its caches on SIGUSR1\r\n"
                "[Policy]\r\n"
                "Description=Postgres: flush at medium, killable at OOM\n"
                "Scope = system\n"
                "\n"
                "; low: nothing\n"
                "[Low]\n"
                "[Medium]\n"
                "Signal=USR1\n"
                "SignalTarget=main\n"
                "[OOM]\n"
                "Signal=SIGRTMIN+2\n"
                "SignalTarget=all\n"
                "Kill=yes\n"
                "KillTarget=largest\n";
        char buf[128];
        Diagnostics d;
        Policy p;

        diag_clear(&d);
        CHECK_EQ_INT(policy_parse("/etc/vmpressured/policies/postgresql.service.policy",
                                  "postgresql.service.policy", text, strlen(text), &p, &d), 0);
        CHECK_EQ_INT(diag_count(&d), 0);
        CHECK_STREQ(p.unit, "postgresql.service");
        CHECK_STREQ(p.path, "/etc/vmpressured/policies/postgresql.service.policy");
        CHECK_STREQ(p.description, "Postgres: flush at medium, killable at OOM");
        CHECK_EQ_INT(p.state, POLICY_LOADED);
        CHECK(!p.is_template);
        CHECK_EQ_INT(p.scope, POLICY_SCOPE_SYSTEM);
        CHECK_EQ_INT(p.actions[LEVEL_LOW].line, 7);
        CHECK_EQ_INT(p.actions[LEVEL_LOW].signal, 0);
        CHECK_EQ_INT(p.actions[LEVEL_MEDIUM].signal, SIGUSR1);
        CHECK_EQ_INT(p.actions[LEVEL_MEDIUM].signal_target, SIGNAL_TARGET_MAIN);
        CHECK_EQ_INT(p.actions[LEVEL_OOM].signal, SIGRTMIN + 2);
        CHECK_EQ_INT(p.actions[LEVEL_OOM].signal_target, SIGNAL_TARGET_ALL);
        CHECK(p.actions[LEVEL_OOM].kill);
        CHECK_EQ_INT(p.actions[LEVEL_OOM].kill_target, KILL_TARGET_LARGEST);
        CHECK(policy_kill_enabled(&p));
        CHECK_STREQ(policy_action_describe(&p.actions[LEVEL_LOW], buf, sizeof(buf)), "nothing");
        CHECK_STREQ(policy_action_describe(&p.actions[LEVEL_MEDIUM], buf, sizeof(buf)), "signal SIGUSR1 to main");
        CHECK_STREQ(policy_action_describe(&p.actions[LEVEL_OOM], buf, sizeof(buf)),
                    "signal SIGRTMIN+2 to all, kill largest");

        /* Defaults, an empty assignment resetting, a template. */
        text = "[OOM]\nKill=yes\nSignal=SIGTERM\nSignal=\n[Medium]\nSignal=SIGUSR2\n";
        diag_clear(&d);
        CHECK_EQ_INT(policy_parse(NULL, "worker@.service.policy", text, strlen(text), &p, &d), 1);
        CHECK_STREQ(d.msg[0], "worker@.service.policy:4: Duplicate key Signal= in section [OOM], first set on line 3");
        CHECK_STREQ(p.unit, "worker@.service");
        CHECK(p.is_template);
        CHECK_EQ_INT(p.actions[LEVEL_OOM].signal, 0);
        CHECK_EQ_INT(p.actions[LEVEL_OOM].kill_target, KILL_TARGET_LARGEST);
        CHECK_STREQ(policy_action_describe(&p.actions[LEVEL_OOM], buf, sizeof(buf)), "kill largest");
        CHECK_STREQ(policy_action_describe(&p.actions[LEVEL_MEDIUM], buf, sizeof(buf)), "signal SIGUSR2 to main");
}

/* SignalIntervalSec=: the default, 0, units, a bare number in seconds, the
 * largest value; a bad value leaves the default. */
static void test_signal_interval(void) {
        static const struct {
                const char *value;
                usec_t usec;
                int problems;
        } cases[] = {
                { NULL,     POLICY_SIGNAL_INTERVAL_DEFAULT_USEC, 0 },
                { "0",      0, 0 },
                { "10",     10 * USEC_PER_SEC, 0 },
                { "500ms",  500 * USEC_PER_MSEC, 0 },
                { "2min",   120 * USEC_PER_SEC, 0 },
                { "1min 30s", 90 * USEC_PER_SEC, 0 },
                { "24h",    POLICY_SIGNAL_INTERVAL_MAX_USEC, 0 },
                { "24h 1s", POLICY_SIGNAL_INTERVAL_DEFAULT_USEC, 1 },
                { "never",  POLICY_SIGNAL_INTERVAL_DEFAULT_USEC, 1 },
        };

        CHECK_EQ_U64(POLICY_SIGNAL_INTERVAL_DEFAULT_USEC, 30 * USEC_PER_SEC);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char text[128];
                Diagnostics d;
                Policy p;

                if (cases[i].value)
                        (void) snprintf(text, sizeof(text), "[Policy]\nSignalIntervalSec=%s\n[Low]\nSignal=USR1\n",
                                        cases[i].value);
                else
                        (void) snprintf(text, sizeof(text), "[Low]\nSignal=USR1\n");
                diag_clear(&d);
                CHECK_EQ_INT(policy_parse(F, F, text, strlen(text), &p, &d), cases[i].problems);
                CHECK_EQ_U64(p.signal_interval_usec, cases[i].usec);
                CHECK_EQ_INT(p.actions[LEVEL_LOW].signal, SIGUSR1);      /* the rest loads */
        }
}

/* Guard=: a size or a share of the limit, in any order with Scope= and
 * Kill=; what policy_guard_bytes() makes of it for a limit. */
static void test_guard(void) {
        static const struct {
                const char *text;
                uint64_t bytes;
                unsigned percent;
                uint64_t limit, guard;          /* policy_guard_bytes(limit) */
                const char *describe;
        } cases[] = {
                { "[OOM]\nGuard=32M\nKill=yes\n[Policy]\nScope=unit\n", 32 << 20, 0, 128 << 20, 32 << 20, "32.0M" },
                { "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=10%\n", 0, 10, 1000, 100, "10%" },
                { "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=50%\n", 0, 50, 128 << 20, 64 << 20, "50%" },
                { "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=1M\n", 1 << 20, 0, 1 << 20, 0, "1.0M" },
                { "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=32M\nGuard=\n", 0, 0, 128 << 20, 0, "none" },
                { "[Policy]\nScope=unit\n[OOM]\nKill=yes\n", 0, 0, 128 << 20, 0, "none" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Diagnostics d;
                Policy p;
                char buf[32];

                diag_clear(&d);
                (void) policy_parse(F, F, cases[i].text, strlen(cases[i].text), &p, &d);
                CHECK_EQ_U64(p.guard_bytes, cases[i].bytes);
                CHECK_EQ_U64(p.guard_percent, cases[i].percent);
                CHECK_EQ_U64(policy_guard_bytes(&p, cases[i].limit), cases[i].guard);
                CHECK_STREQ(policy_guard_describe(&p, buf, sizeof(buf)), cases[i].describe);
                CHECK(policy_has_guard(&p) == (cases[i].bytes > 0 || cases[i].percent > 0));
        }
        /* GuardSec=: 1 s by default, 0 and other durations taken. */
        {
                static const char *const texts[] = {
                        "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=8M\n",
                        "[Policy]\nScope=unit\n[OOM]\nKill=yes\nGuard=8M\nGuardSec=0\n",
                        "[Policy]\nScope=unit\n[OOM]\nGuardSec=500ms\nKill=yes\nGuard=8M\n",
                };
                static const usec_t want[] = { USEC_PER_SEC, 0, 500 * USEC_PER_MSEC };

                for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                        Diagnostics d;
                        Policy p;

                        diag_clear(&d);
                        CHECK_EQ_INT(policy_parse(F, F, texts[i], strlen(texts[i]), &p, &d), 0);
                        CHECK_EQ_U64(p.guard_grace_usec, want[i]);
                }
        }
        /* The duplicate Guard= is reported, the last one wins (here: reset). */
        {
                Diagnostics d;
                Policy p;

                diag_clear(&d);
                CHECK_EQ_INT(policy_parse(F, F, cases[4].text, strlen(cases[4].text), &p, &d), 1);
        }
}

static void test_file_names(void) {
        static const struct {
                const char *filename;
                bool ok;
        } names[] = {
                { "foo.service.policy", true },
                { "foo@.service.policy", true },
                { "foo@bar.service.policy", true },
                { "user-1000.slice.policy", true },
                { "session-2.scope.policy", true },
                { "foo.policy", false },
                { "foo.target.policy", false },         /* a target has no processes */
                { "foo.service", false },
                { ".service.policy", false },
                { "@.service.policy", false },
                { "a@b@c.service.policy", false },
                { "foo bar.service.policy", false },
                { ".policy", false },
                { "", false },
        };
        static const char msg[] = ": File name is not '<unit>.policy' with a valid unit name "
                                  "(service, scope, slice, socket, mount, swap), ignoring file";

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char expected[DIAG_LEN];
                Diagnostics d;
                Policy p;
                int r;

                diag_clear(&d);
                r = policy_parse(names[i].filename, names[i].filename, "[Low]\n", 6, &p, &d);
                if (names[i].ok) {
                        CHECK_EQ_INT(r, 0);
                        CHECK_EQ_INT(diag_count(&d), 0);
                } else {
                        CHECK_EQ_INT(r, -EINVAL);
                        CHECK_EQ_INT(diag_count(&d), 1);
                        (void) snprintf(expected, sizeof(expected), "%s%s", names[i].filename, msg);
                        CHECK_STREQ(d.msg[0], expected);
                }
        }
}

static void test_huge_and_garbage(void) {
        size_t huge_len = POLICY_FILE_MAX + 1, n_garbage = 30;
        char *huge = malloc(huge_len), garbage[30 * 8];
        Diagnostics d;
        Policy p;

        /* Exactly 64 KiB of comments is fine; one byte more is one error. */
        memset(huge, '#', huge_len);
        for (size_t i = 79; i < huge_len; i += 80)
                huge[i] = '\n';
        diag_clear(&d);
        CHECK_EQ_INT(policy_parse(F, F, huge, POLICY_FILE_MAX, &p, &d), 0);
        CHECK_EQ_INT(p.state, POLICY_LOADED);
        diag_clear(&d);
        CHECK_EQ_INT(policy_parse(F, F, huge, huge_len, &p, &d), 1);
        CHECK_EQ_INT(diag_count(&d), 1);
        CHECK_STREQ(d.msg[0], F ": File too large (more than 64 KiB), ignoring file");
        CHECK_EQ_INT(p.state, POLICY_BROKEN);
        free(huge);

        /* Garbage without a NUL: the first POLICY_FILE_ERRORS_MAX lines and a count. */
        for (size_t i = 0; i < n_garbage; i++)
                memcpy(garbage + i * 8, "\xff\xfe\x80zz\x01q\n", 8);
        diag_clear(&d);
        CHECK_EQ_INT(policy_parse(F, F, garbage, sizeof(garbage), &p, &d), 30);
        CHECK_EQ_INT(d.n, POLICY_FILE_ERRORS_MAX + 1);
        CHECK_STREQ(d.msg[0], F ":1: Invalid UTF-8 in line, ignoring");
        CHECK_STREQ(d.msg[9], F ":10: Invalid UTF-8 in line, ignoring");
        CHECK_STREQ(d.msg[10], F ": 20 more problems in this file not shown");
        CHECK_EQ_INT(p.state, POLICY_LOADED);

        /* An empty file masks. */
        diag_clear(&d);
        CHECK_EQ_INT(policy_parse(F, F, "", 0, &p, &d), 0);
        CHECK_EQ_INT(p.state, POLICY_MASKED);
        CHECK_EQ_INT(diag_count(&d), 0);
}

/* Random bytes, random lengths: nothing crashes, every message is file:… */
static void test_random_input(void) {
        static const char alphabet[] = "[]=#;\n\r\t SignalKillOOMLowMediumPolicyTargetyesno0123456789\xff\x80\xc3\xa9";
        unsigned seed = 12345;
        char buf[512];
        unsigned iter, n_loaded = 0, n_with_problems = 0;

        for (iter = 0; iter < 20000; iter++) {
                size_t len = (size_t) (rand_r(&seed) % (int) sizeof(buf));
                Diagnostics d;
                Policy p;
                int r;

                for (size_t i = 0; i < len; i++)
                        buf[i] = iter % 2 ? (char) rand_r(&seed) :
                                 alphabet[rand_r(&seed) % (int) (sizeof(alphabet) - 1)];
                diag_clear(&d);
                r = policy_parse(F, F, buf, len, &p, &d);
                /* r counts every problem; diag holds at most POLICY_FILE_ERRORS_MAX and a summary */
                if (r < 0 || diag_count(&d) != (r <= POLICY_FILE_ERRORS_MAX ? (size_t) r : POLICY_FILE_ERRORS_MAX + 1) ||
                    (len == 0 && p.state != POLICY_MASKED)) {
                        CHECK(false);
                        break;
                }
                for (size_t i = 0; i < d.n; i++)
                        if (strncmp(d.msg[i], F ":", strlen(F ":")) != 0) {
                                CHECK(false);
                                break;
                        }
                n_loaded += p.state == POLICY_LOADED;
                n_with_problems += r > 0;
        }
        /* Every input was checked (no early break), and the inputs reached
         * both the accepting and the reporting paths of the parser. */
        CHECK_EQ_INT(iter, 20000);
        CHECK(n_loaded > 0);
        CHECK(n_with_problems > 0);
}

static void test_signals(void) {
        CHECK_EQ_INT(signal_from_string("SIGUSR1"), SIGUSR1);
        CHECK_EQ_INT(signal_from_string("USR1"), SIGUSR1);
        CHECK_EQ_INT(signal_from_string("10"), 10);
        CHECK_EQ_INT(signal_from_string("HUP"), SIGHUP);
        CHECK_EQ_INT(signal_from_string("SIGRTMIN"), SIGRTMIN);
        CHECK_EQ_INT(signal_from_string("RTMIN+3"), SIGRTMIN + 3);
        CHECK_EQ_INT(signal_from_string("SIGRTMAX-1"), SIGRTMAX - 1);
        CHECK_EQ_INT(signal_from_string("SIGRTMAX"), SIGRTMAX);
        CHECK_EQ_INT(signal_from_string("SIGRTMIN-1"), -EINVAL);
        CHECK_EQ_INT(signal_from_string("SIG"), -EINVAL);
        CHECK_EQ_INT(signal_from_string(""), -EINVAL);
        CHECK_EQ_INT(signal_from_string("+10"), -EINVAL);
        CHECK_EQ_INT(signal_from_string("10 "), -EINVAL);
        CHECK_EQ_INT(signal_from_string("32"), SIGRTMIN > 32 ? -EINVAL : 32);    /* glibc's own */
        CHECK_EQ_INT(signal_from_string("64"), SIGRTMAX == 64 ? 64 : -EINVAL);
        CHECK_STREQ(signal_to_string(SIGUSR1), "SIGUSR1");
        CHECK_STREQ(signal_to_string(SIGRTMIN), "SIGRTMIN");
        CHECK_STREQ(signal_to_string(SIGRTMIN + 5), "SIGRTMIN+5");
        CHECK(signal_to_string(0) == NULL);
        CHECK(signal_to_string(SIGRTMAX + 1) == NULL);
        for (int s = 1; s <= SIGRTMAX; s++) {
                const char *n = signal_to_string(s);

                if (n)          /* round trip for every named signal */
                        CHECK_EQ_INT(signal_from_string(n), s);
        }
}

/* ---- the set ---- */

#define ETC "/etc/vmpressured/policies"
#define RUN "/run/vmpressured/policies"
#define LIB "/usr/lib/vmpressured/policies"

/* Only a loaded policy's [OOM] Kill=yes counts: the daemon then reads the
 * stall of an OOM with memory left (manager_set_stall_wanted()). */
static void test_set_any_kill(void) {
        const PolicyFile files[] = {
                { ETC, "masked.service.policy", "", 0 },
                { ETC, "sig.service.policy", "[Medium]\nSignal=SIGUSR1\n[OOM]\nKill=no\n", 38 },
                { ETC, "broken.service.policy", NULL, 0, -EACCES },
                { LIB, "masked.service.policy", "[OOM]\nKill=yes\n", 15 },
                { LIB, "broken.service.policy", "[OOM]\nKill=yes\n", 15 },
        };
        _cleanup_(policy_set_freep) PolicySet *s = NULL;
        Diagnostics d;

        CHECK(!policy_set_any_kill(NULL));
        CHECK_EQ_INT(policy_set_new(&s), 0);
        CHECK(!policy_set_any_kill(s));
        diag_clear(&d);
        CHECK_EQ_INT(policy_set_add_files(s, files, ELEMENTSOF(files), &d), 1);
        CHECK_EQ_INT(policy_set_count_loaded(s), 1);
        CHECK(!policy_set_any_kill(s));
}

static void test_set_first_wins(void) {
        const PolicyFile files[] = {
                { ETC, "a.service.policy", "[Medium]\nSignal=SIGUSR1\n", 24 },
                { ETC, "masked.service.policy", "", 0 },
                { ETC, "broken.service.policy", NULL, 0, -EACCES },
                { ETC, "worker@3.service.policy", "", 0 },
                { RUN, "a.service.policy", "[Medium]\nSignal=SIGUSR2\n", 24 },
                { RUN, "worker@.service.policy", "[OOM]\nKill=yes\n", 15 },
                { RUN, "notaunit.policy", "[OOM]\nKill=yes\n", 15 },
                { LIB, "masked.service.policy", "[OOM]\nKill=yes\n", 15 },
                { LIB, "broken.service.policy", "[OOM]\nKill=yes\n", 15 },
                { LIB, "worker@.service.policy", "[Low]\nSignal=SIGHUP\n", 20 },
                { LIB, "z.service.policy", "[Low]\nSignal=SIGHUP\nBogus=1\n", 28 },
                { LIB, "worker@1.service.policy", "[Low]\nSignal=SIGHUP\n", 20 },
        };
        _cleanup_(policy_set_freep) PolicySet *s = NULL;
        const Policy *p;
        Diagnostics d;

        CHECK_EQ_INT(policy_set_new(&s), 0);
        diag_clear(&d);
        CHECK_EQ_INT(policy_set_add_files(s, files, ELEMENTSOF(files), &d), 3);
        CHECK_EQ_INT(diag_count(&d), 3);
        CHECK_STREQ(d.msg[0], ETC "/broken.service.policy: Failed to read file, ignoring: Permission denied");
        CHECK_STREQ(d.msg[1], RUN "/notaunit.policy: File name is not '<unit>.policy' with a valid unit name "
                              "(service, scope, slice, socket, mount, swap), ignoring file");
        CHECK_STREQ(d.msg[2], LIB "/z.service.policy:3: Unknown key 'Bogus' in section [Low]");

        /* one entry per name, sorted */
        CHECK_EQ_INT(s->n, 7);
        for (size_t i = 1; i < s->n; i++)
                CHECK(strcmp(s->policies[i - 1].unit, s->policies[i].unit) < 0);
        CHECK_EQ_INT(policy_set_count_loaded(s), 4);
        CHECK(policy_set_any_kill(s));          /* worker@.service from /run */

        p = policy_set_find(s, "a.service");
        CHECK(p && p->actions[LEVEL_MEDIUM].signal == SIGUSR1);
        CHECK(p && streq(p->path, ETC "/a.service.policy"));

        /* masked in /etc: the /usr/lib file does not apply */
        CHECK(policy_set_find(s, "masked.service") == NULL);
        CHECK(policy_set_get(s, "masked.service") && policy_set_get(s, "masked.service")->state == POLICY_MASKED);
        /* unreadable in /etc: still takes the name */
        CHECK(policy_set_find(s, "broken.service") == NULL);
        CHECK(policy_set_get(s, "broken.service") && policy_set_get(s, "broken.service")->state == POLICY_BROKEN);

        /* templates: /run's template wins over /usr/lib's */
        p = policy_set_find(s, "worker@7.service");
        CHECK(p && streq(p->unit, "worker@.service") && policy_kill_enabled(p));
        CHECK(p && streq(p->path, RUN "/worker@.service.policy"));
        /* an instance's own file wins over the template */
        p = policy_set_find(s, "worker@1.service");
        CHECK(p && streq(p->unit, "worker@1.service") && p->actions[LEVEL_LOW].signal == SIGHUP);
        CHECK(p && !policy_kill_enabled(p));
        /* a masked instance hides the template */
        CHECK(policy_set_find(s, "worker@3.service") == NULL);
        /* the template itself is no unit, and other types do not match */
        CHECK(policy_set_find(s, "worker@.service") != NULL);
        CHECK(policy_set_find(s, "worker@7.socket") == NULL);
        CHECK(policy_set_find(s, "worker.service") == NULL);
        CHECK(policy_set_find(s, "nope.service") == NULL);
        CHECK(policy_set_find(s, "z.service") != NULL);         /* bad line, rest loaded */
        CHECK(policy_set_find(s, NULL) == NULL);
}

/* ---- the loader, on real directories ---- */

static void write_file(const char *dir, const char *name, const char *text, size_t len) {
        char path[PATH_MAX];
        int fd;

        (void) snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        if (fd < 0)
                return;
        CHECK(write(fd, text, len) == (ssize_t) len);
        (void) close(fd);
}

static void test_load_dirs(void) {
        char tmp[] = "/tmp/test-policy-XXXXXX", etc[64], run[64], lib[64], notdir[64], missing[64],
             path[128], expected[1024], cmd[128];
        _cleanup_(policy_set_freep) PolicySet *s = NULL;
        const char *dirs[5];
        char *huge;
        const Policy *p;
        Diagnostics d;
        int r;

        if (!mkdtemp(tmp)) {
                CHECK(false);
                return;
        }
        (void) snprintf(etc, sizeof(etc), "%s/etc", tmp);
        (void) snprintf(run, sizeof(run), "%s/run", tmp);
        (void) snprintf(lib, sizeof(lib), "%s/lib", tmp);
        (void) snprintf(notdir, sizeof(notdir), "%s/file", tmp);
        (void) snprintf(missing, sizeof(missing), "%s/missing", tmp);
        CHECK(mkdir(etc, 0755) == 0 && mkdir(run, 0755) == 0 && mkdir(lib, 0755) == 0);
        write_file(tmp, "file", "x", 1);

        write_file(etc, "a.service.policy", "[Medium]\nSignal=SIGUSR1\n", 24);
        write_file(lib, "a.service.policy", "[Medium]\nSignal=SIGUSR2\n", 24);
        write_file(run, "b@.service.policy", "[OOM]\nKill=yes\n", 15);
        write_file(lib, "c.service.policy", "[OOM]\nKill=yes\n", 15);
        (void) snprintf(path, sizeof(path), "%s/c.service.policy", etc);
        CHECK(symlink("/dev/null", path) == 0);                 /* masks /usr/lib's */
        huge = malloc(POLICY_FILE_MAX + 100);
        memset(huge, '#', POLICY_FILE_MAX + 100);
        write_file(run, "d.service.policy", huge, POLICY_FILE_MAX + 100);
        free(huge);
        write_file(lib, "d.service.policy", "[OOM]\nKill=yes\n", 15);
        write_file(lib, "e.service.policy", "[Low]\nSignal=SIGHUP\n[Low]\n", 26);
        write_file(etc, "README", "not a policy", 12);
        write_file(etc, ".f.service.policy", "[OOM]\nKill=yes\n", 15);     /* hidden: ignored */
        (void) snprintf(path, sizeof(path), "%s/g.service.policy", lib);
        CHECK(mkdir(path, 0755) == 0);
        (void) snprintf(path, sizeof(path), "%s/h.service.policy", lib);
        CHECK(mkfifo(path, 0644) == 0);

        dirs[0] = etc;
        dirs[1] = run;
        dirs[2] = missing;      /* silent */
        dirs[3] = notdir;
        dirs[4] = lib;
        diag_clear(&d);
        r = policy_set_load(dirs, ELEMENTSOF(dirs), &s, &d);
        CHECK_EQ_INT(r, 5);
        CHECK_EQ_INT(diag_count(&d), 5);
        for (size_t i = 0; i < d.n; i++)
                fprintf(stderr, "  (load) %s\n", d.msg[i]);
        (void) snprintf(expected, sizeof(expected), "%s/d.service.policy: File too large (more than 64 KiB), ignoring file", run);
        CHECK_STREQ(d.msg[0], expected);
        (void) snprintf(expected, sizeof(expected), "%s: Failed to open directory, ignoring: Not a directory", notdir);
        CHECK_STREQ(d.msg[1], expected);
        (void) snprintf(expected, sizeof(expected), "%s/e.service.policy:3: Duplicate section [Low], first on line 1, ignoring it", lib);
        CHECK_STREQ(d.msg[2], expected);
        (void) snprintf(expected, sizeof(expected), "%s/g.service.policy: Failed to read file, ignoring: Is a directory", lib);
        CHECK_STREQ(d.msg[3], expected);
        (void) snprintf(expected, sizeof(expected), "%s/h.service.policy: Not a regular file, ignoring", lib);
        CHECK_STREQ(d.msg[4], expected);

        p = policy_set_find(s, "a.service");
        CHECK(p && p->actions[LEVEL_MEDIUM].signal == SIGUSR1);
        (void) snprintf(path, sizeof(path), "%s/a.service.policy", etc);
        CHECK(p && streq(p->path, path));
        p = policy_set_find(s, "b@x.service");
        CHECK(p && policy_kill_enabled(p));
        CHECK(policy_set_find(s, "c.service") == NULL);
        CHECK(policy_set_get(s, "c.service") && policy_set_get(s, "c.service")->state == POLICY_MASKED);
        CHECK(policy_set_find(s, "d.service") == NULL);         /* too large in /run: /usr/lib's is shadowed */
        CHECK(policy_set_find(s, "e.service") != NULL);
        CHECK(policy_set_find(s, "f.service") == NULL);
        CHECK_EQ_INT(policy_set_count_loaded(s), 3);

        /* the defaults: whatever this machine has, it loads without crashing */
        {
                _cleanup_(policy_set_freep) PolicySet *s2 = NULL;

                diag_clear(&d);
                CHECK(policy_set_load(policy_dirs_default, ELEMENTSOF(policy_dirs_default), &s2, &d) >= 0);
        }

        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        CHECK(system(cmd) == 0);
}

/* ---- the loader refuses what others than root can change ---- */

#define NOBODY_UID 65534

/* path of name in dir, for the messages */
static const char *at(char *buf, size_t size, const char *dir, const char *name) {
        (void) snprintf(buf, size, "%s/%s", dir, name);
        return buf;
}

static bool diag_has(const Diagnostics *d, const char *expected) {
        for (size_t i = 0; i < d->n; i++)
                if (streq(d->msg[i], expected))
                        return true;
        fprintf(stderr, "  missing: %s\n", expected);
        return false;
}

static void test_load_untrusted(void) {
        char tmp[] = "/tmp/test-policy-own-XXXXXX", pol[64], elsewhere[64], theirs[64], open_dir[64],
             sticky[64], owned_dir[64], path[PATH_MAX], target[PATH_MAX], expected[DIAG_LEN + 64], cmd[128];
        _cleanup_(policy_set_freep) PolicySet *s = NULL;
        const char *dirs[4];
        bool root = geteuid() == 0;
        Diagnostics d;
        int r;

        if (!mkdtemp(tmp)) {
                CHECK(false);
                return;
        }
        (void) snprintf(pol, sizeof(pol), "%s/pol", tmp);
        (void) snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", tmp);    /* root's: trusted */
        (void) snprintf(theirs, sizeof(theirs), "%s/theirs", tmp);             /* nobody's directory */
        (void) snprintf(open_dir, sizeof(open_dir), "%s/open", tmp);           /* 0777, no sticky bit */
        (void) snprintf(sticky, sizeof(sticky), "%s/sticky", tmp);             /* 01777 */
        (void) snprintf(owned_dir, sizeof(owned_dir), "%s/owned", tmp);        /* a policy dir of nobody's */
        CHECK(mkdir(pol, 0755) == 0 && mkdir(elsewhere, 0755) == 0 && mkdir(theirs, 0755) == 0);
        CHECK(mkdir(open_dir, 0755) == 0 && chmod(open_dir, 0777) == 0);
        CHECK(mkdir(sticky, 0755) == 0 && chmod(sticky, 01777) == 0);
        CHECK(mkdir(owned_dir, 0755) == 0);

        write_file(pol, "good.service.policy", "[OOM]\nKill=yes\n", 15);
        (void) snprintf(path, sizeof(path), "%s/masked.service.policy", pol);
        CHECK(symlink("/dev/null", path) == 0);                 /* the mask still works */
        write_file(elsewhere, "ok.policy", "[OOM]\nKill=yes\n", 15);
        (void) snprintf(path, sizeof(path), "%s/goodlink.service.policy", pol);
        CHECK(symlink(at(target, sizeof(target), elsewhere, "ok.policy"), path) == 0);
        write_file(pol, "group.service.policy", "[OOM]\nKill=yes\n", 15);
        CHECK(chmod(at(path, sizeof(path), pol, "group.service.policy"), 0664) == 0);
        write_file(pol, "world.service.policy", "[OOM]\nKill=yes\n", 15);
        CHECK(chmod(at(path, sizeof(path), pol, "world.service.policy"), 0646) == 0);
        write_file(elsewhere, "group.policy", "[OOM]\nKill=yes\n", 15);
        CHECK(chmod(at(path, sizeof(path), elsewhere, "group.policy"), 0620) == 0);
        (void) snprintf(path, sizeof(path), "%s/grouplink.service.policy", pol);
        CHECK(symlink(at(target, sizeof(target), elsewhere, "group.policy"), path) == 0);
        write_file(open_dir, "o.policy", "[OOM]\nKill=yes\n", 15);
        (void) snprintf(path, sizeof(path), "%s/opendirlink.service.policy", pol);
        CHECK(symlink(at(target, sizeof(target), open_dir, "o.policy"), path) == 0);
        write_file(sticky, "st.service.policy", "[OOM]\nKill=yes\n", 15);         /* root's, in /tmp-like */
        write_file(open_dir, "x.service.policy", "[OOM]\nKill=yes\n", 15);

        dirs[0] = pol;
        dirs[1] = open_dir;
        dirs[2] = sticky;
        dirs[3] = owned_dir;
        if (root) {
                /* nobody's file, a symlink to nobody's file, a symlink to
                 * root's file in nobody's directory, a directory of nobody's */
                write_file(pol, "nobody.service.policy", "[OOM]\nKill=yes\n", 15);
                CHECK(chown(at(path, sizeof(path), pol, "nobody.service.policy"), NOBODY_UID, NOBODY_UID) == 0);
                write_file(theirs, "t.policy", "[OOM]\nKill=yes\n", 15);
                write_file(theirs, "u.policy", "[OOM]\nKill=yes\n", 15);
                CHECK(chown(at(path, sizeof(path), theirs, "t.policy"), NOBODY_UID, NOBODY_UID) == 0);
                CHECK(chown(theirs, NOBODY_UID, NOBODY_UID) == 0);
                (void) snprintf(path, sizeof(path), "%s/link.service.policy", pol);
                CHECK(symlink(at(target, sizeof(target), theirs, "t.policy"), path) == 0);
                (void) snprintf(path, sizeof(path), "%s/dirlink.service.policy", pol);
                CHECK(symlink(at(target, sizeof(target), theirs, "u.policy"), path) == 0);
                write_file(owned_dir, "y.service.policy", "[OOM]\nKill=yes\n", 15);
                CHECK(chown(owned_dir, NOBODY_UID, NOBODY_UID) == 0);
        } else
                fprintf(stderr, "  (untrusted) not root: the cases of files owned by nobody are left out\n");

        diag_clear(&d);
        r = policy_set_load(dirs, ELEMENTSOF(dirs), &s, &d);
        for (size_t i = 0; i < d.n; i++)
                fprintf(stderr, "  (untrusted) %s\n", d.msg[i]);
        CHECK_EQ_INT(r, root ? 9 : 5);
        CHECK_EQ_INT(diag_count(&d), root ? 9 : 5);

        (void) snprintf(expected, sizeof(expected), "%s/group.service.policy: File is writable by its group, "
                        "gid %u (mode 0664): only root may change a policy, ignoring file", pol, (unsigned) getegid());
        CHECK(diag_has(&d, expected));
        (void) snprintf(expected, sizeof(expected), "%s/world.service.policy: File is writable by everyone "
                        "(mode 0646): only root may change a policy, ignoring file", pol);
        CHECK(diag_has(&d, expected));
        (void) snprintf(expected, sizeof(expected), "%s/grouplink.service.policy: Symlink target %s/group.policy "
                        "is writable by its group, gid %u (mode 0620): only root may change a policy, ignoring file",
                        pol, elsewhere, (unsigned) getegid());
        CHECK(diag_has(&d, expected));
        (void) snprintf(expected, sizeof(expected), "%s/opendirlink.service.policy: Symlink target's directory %s "
                        "is writable by everyone (mode 0777, no sticky bit): only root may change a policy, "
                        "ignoring file", pol, open_dir);
        CHECK(diag_has(&d, expected));
        (void) snprintf(expected, sizeof(expected), "%s: Directory is writable by everyone (mode 0777, no sticky "
                        "bit): only root may change a policy, ignoring every file in it", open_dir);
        CHECK(diag_has(&d, expected));
        if (root) {
                (void) snprintf(expected, sizeof(expected), "%s/nobody.service.policy: File is owned by uid 65534, "
                                "not root: that user could change the policy, ignoring file", pol);
                CHECK(diag_has(&d, expected));
                (void) snprintf(expected, sizeof(expected), "%s/link.service.policy: Symlink target %s/t.policy is "
                                "owned by uid 65534, not root: that user could change the policy, ignoring file",
                                pol, theirs);
                CHECK(diag_has(&d, expected));
                (void) snprintf(expected, sizeof(expected), "%s/dirlink.service.policy: Symlink target's directory "
                                "%s is owned by uid 65534, not root: that user could change the policy, ignoring "
                                "file", pol, theirs);
                CHECK(diag_has(&d, expected));
                (void) snprintf(expected, sizeof(expected), "%s: Directory is owned by uid 65534, not root: that "
                                "user could change the policy, ignoring every file in it", owned_dir);
                CHECK(diag_has(&d, expected));
        }

        /* The good ones load; the refused ones are broken, not loaded. */
        CHECK(policy_set_find(s, "good.service") != NULL);
        CHECK(policy_set_find(s, "goodlink.service") != NULL);
        CHECK(policy_set_find(s, "st.service") != NULL);        /* root's file in a sticky directory */
        CHECK(policy_set_get(s, "masked.service") && policy_set_get(s, "masked.service")->state == POLICY_MASKED);
        CHECK(policy_set_find(s, "group.service") == NULL);
        CHECK(policy_set_find(s, "world.service") == NULL);
        CHECK(policy_set_find(s, "grouplink.service") == NULL);
        CHECK(policy_set_find(s, "opendirlink.service") == NULL);
        CHECK(policy_set_find(s, "x.service") == NULL);         /* in the open directory */
        CHECK(policy_set_find(s, "nobody.service") == NULL);
        CHECK(policy_set_find(s, "link.service") == NULL);
        CHECK(policy_set_find(s, "dirlink.service") == NULL);
        CHECK(policy_set_find(s, "y.service") == NULL);         /* in nobody's directory */
        CHECK_EQ_INT(policy_set_count_loaded(s), 3);

        (void) snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        CHECK(system(cmd) == 0);
}

int main(void) {
        test_bad_cases();
        test_rest_still_loads();
        test_good_file();
        test_signal_interval();
        test_guard();
        test_file_names();
        test_huge_and_garbage();
        test_random_input();
        test_signals();
        test_set_first_wins();
        test_set_any_kill();
        test_load_dirs();
        test_load_untrusted();
        return test_exit("test-policy");
}
