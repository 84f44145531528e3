/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <signal.h>
#include <stdarg.h>

#include "ini.h"
#include "log.h"
#include "policy.h"

/* A value quoted in a message is cut here: a diag line is 256 bytes in all. */
#define POLICY_QUOTE_MAX 48

static const char *const policy_scope_table[_POLICY_SCOPE_MAX] = {
        [POLICY_SCOPE_SYSTEM] = "system",
        [POLICY_SCOPE_UNIT] = "unit",
};

static const char *const signal_target_table[_SIGNAL_TARGET_MAX] = {
        [SIGNAL_TARGET_MAIN] = "main",
        [SIGNAL_TARGET_ALL] = "all",
};

static const char *const kill_target_table[_KILL_TARGET_MAX] = {
        [KILL_TARGET_LARGEST] = "largest",
        [KILL_TARGET_UNIT] = "unit",
};

static const char *const policy_state_table[_POLICY_STATE_MAX] = {
        [POLICY_LOADED] = "loaded",
        [POLICY_MASKED] = "masked",
        [POLICY_BROKEN] = "broken",
};

#define TABLE_TO_STRING(table, i) \
        ((i) >= 0 && (size_t) (i) < ELEMENTSOF(table) ? (table)[i] : NULL)

const char *policy_scope_to_string(PolicyScope s) {
        return TABLE_TO_STRING(policy_scope_table, s);
}

PolicyScope policy_scope_from_string(const char *s) {
        return string_table_lookup(policy_scope_table, ELEMENTSOF(policy_scope_table), s);
}

const char *signal_target_to_string(SignalTarget t) {
        return TABLE_TO_STRING(signal_target_table, t);
}

SignalTarget signal_target_from_string(const char *s) {
        return string_table_lookup(signal_target_table, ELEMENTSOF(signal_target_table), s);
}

const char *kill_target_to_string(KillTarget t) {
        return TABLE_TO_STRING(kill_target_table, t);
}

KillTarget kill_target_from_string(const char *s) {
        return string_table_lookup(kill_target_table, ELEMENTSOF(kill_target_table), s);
}

const char *policy_state_to_string(PolicyState s) {
        return TABLE_TO_STRING(policy_state_table, s);
}

/* ---- signals ---- */

/* By macro, not by number: the numbers differ between architectures. */
static const struct {
        int sig;
        const char *name;
} signal_names[] = {
        { SIGHUP, "SIGHUP" },   { SIGINT, "SIGINT" },     { SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" },
        { SIGTRAP, "SIGTRAP" }, { SIGABRT, "SIGABRT" },   { SIGBUS, "SIGBUS" },   { SIGFPE, "SIGFPE" },
        { SIGKILL, "SIGKILL" }, { SIGUSR1, "SIGUSR1" },   { SIGSEGV, "SIGSEGV" }, { SIGUSR2, "SIGUSR2" },
        { SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" },   { SIGTERM, "SIGTERM" }, { SIGCHLD, "SIGCHLD" },
        { SIGCONT, "SIGCONT" }, { SIGSTOP, "SIGSTOP" },   { SIGTSTP, "SIGTSTP" }, { SIGTTIN, "SIGTTIN" },
        { SIGTTOU, "SIGTTOU" }, { SIGURG, "SIGURG" },     { SIGXCPU, "SIGXCPU" }, { SIGXFSZ, "SIGXFSZ" },
        { SIGVTALRM, "SIGVTALRM" }, { SIGPROF, "SIGPROF" }, { SIGWINCH, "SIGWINCH" }, { SIGIO, "SIGIO" },
        { SIGPWR, "SIGPWR" },   { SIGSYS, "SIGSYS" },
#ifdef SIGSTKFLT
        { SIGSTKFLT, "SIGSTKFLT" },
#endif
};

/* "RTMIN+n" / "RTMAX-n" (without "SIG"): the number, or -EINVAL. */
static int rt_signal_from_string(const char *s) {
        const char *p;
        unsigned off = 0;
        int base, sign;

        if ((p = startswith(s, "RTMIN")))
                base = SIGRTMIN, sign = 1;
        else if ((p = startswith(s, "RTMAX")))
                base = SIGRTMAX, sign = -1;
        else
                return -EINVAL;
        if (*p != '\0') {
                if (*p != (sign > 0 ? '+' : '-'))
                        return -EINVAL;
                if (parse_unsigned(p + 1, 0, (unsigned) (SIGRTMAX - SIGRTMIN), &off) < 0)
                        return -EINVAL;
        }
        return base + sign * (int) off;
}

int signal_from_string(const char *s) {
        const char *name;
        unsigned nr;

        if (!s || s[0] == '\0')
                return -EINVAL;
        if (s[0] >= '0' && s[0] <= '9') {
                /* Only numbers with a name: 32 and 33 are below glibc's SIGRTMIN
                 * (34), kept for its threads (found by fuzz-policy; the logs and
                 * ListPolicies had no name to print for them). */
                if (parse_unsigned(s, 1, (unsigned) SIGRTMAX, &nr) < 0 || !signal_to_string((int) nr))
                        return -EINVAL;
                return (int) nr;
        }
        name = startswith(s, "SIG") ?: s;
        for (size_t i = 0; i < ELEMENTSOF(signal_names); i++)
                if (streq(signal_names[i].name + 3, name))
                        return signal_names[i].sig;
        return rt_signal_from_string(name);
}

const char *signal_to_string(int sig) {
        static char rt_names[65][16];

        for (size_t i = 0; i < ELEMENTSOF(signal_names); i++)
                if (signal_names[i].sig == sig)
                        return signal_names[i].name;
        if (sig < SIGRTMIN || sig > SIGRTMAX || sig >= (int) ELEMENTSOF(rt_names))
                return NULL;
        if (sig == SIGRTMIN)
                (void) snprintf(rt_names[sig], sizeof(rt_names[sig]), "SIGRTMIN");
        else
                (void) snprintf(rt_names[sig], sizeof(rt_names[sig]), "SIGRTMIN+%d", sig - SIGRTMIN);
        return rt_names[sig];
}

/* ---- one file ---- */

typedef struct PolicyParse PolicyParse;

typedef enum PolicySection {
        SECTION_POLICY,
        SECTION_LOW,
        SECTION_MEDIUM,
        SECTION_OOM,
        _SECTION_MAX,
        _SECTION_INVALID = -EINVAL,
} PolicySection;

static const char *const section_table[_SECTION_MAX] = {
        [SECTION_POLICY] = "Policy",
        [SECTION_LOW] = "Low",
        [SECTION_MEDIUM] = "Medium",
        [SECTION_OOM] = "OOM",
};

static Level section_level(PolicySection s) {
        return s == SECTION_LOW ? LEVEL_LOW : s == SECTION_MEDIUM ? LEVEL_MEDIUM :
               s == SECTION_OOM ? LEVEL_OOM : _LEVEL_INVALID;
}

/* 0, or -EINVAL after the parser reported what is wrong. */
typedef int (*policy_key_parser_t)(PolicyParse *p, const char *key, const char *value, unsigned line);

typedef struct PolicyKey {
        const char *key;
        policy_key_parser_t parse;
        bool oom_only;          /* level keys that only [OOM] takes */
} PolicyKey;

enum { KEY_SLOTS = 8 };         /* ≥ the entries of either key table */

struct PolicyParse {
        Policy *policy;
        const char *path;
        Diagnostics *diag;
        unsigned n_errors;
        PolicySection section;          /* _SECTION_INVALID: unknown or repeated, keys skipped */
        unsigned section_line[_SECTION_MAX];
        unsigned key_line[_SECTION_MAX][KEY_SLOTS];     /* where a key was set, for duplicates */
};

#define policy_error(p, line, ...) diag_error((p)->diag, &(p)->n_errors, (p)->path, (line), __VA_ARGS__)

#define QUOTE(v) DIAG_QUOTE(v, POLICY_QUOTE_MAX)

static int invalid_value(PolicyParse *p, const char *key, const char *value, unsigned line,
                         const char *must) {
        policy_error(p, line, "Invalid value '%.*s%s' for %s=: %s", QUOTE(value), key, must);
        return -EINVAL;
}

static PolicyAction *current_action(PolicyParse *p) {
        return &p->policy->actions[section_level(p->section)];
}

static int parse_scope(PolicyParse *p, const char *key, const char *value, unsigned line) {
        PolicyScope s = policy_scope_from_string(value);

        if (s < 0)
                return invalid_value(p, key, value, line, "must be system or unit");
        p->policy->scope = s;
        return 0;
}

static int parse_description(PolicyParse *p, const char *key, const char *value, unsigned line) {
        size_t n = strlen(value);

        if (n >= sizeof(p->policy->description)) {
                policy_error(p, line, "Description= too long (%zu bytes, at most %zu), ignoring", n,
                             sizeof(p->policy->description) - 1);
                return -EINVAL;
        }
        memcpy(p->policy->description, value, n + 1);
        return 0;
}

/* A duration (a bare number is seconds) of at most max into *ret; else the
 * error says MUST and *ret stays. */
static int parse_duration_key(PolicyParse *p, const char *key, const char *value, unsigned line, usec_t max,
                              const char *must, usec_t *ret) {
        usec_t u;

        if (parse_duration(value, USEC_PER_SEC, &u) < 0 || u > max)
                return invalid_value(p, key, value, line, must);
        *ret = u;
        return 0;
}

static int parse_signal_interval(PolicyParse *p, const char *key, const char *value, unsigned line) {
        return parse_duration_key(p, key, value, line, POLICY_SIGNAL_INTERVAL_MAX_USEC,
                                  "must be a duration like 30s, 500ms or 5min, at most 24h; 0 for no limit",
                                  &p->policy->signal_interval_usec);
}

/* Signal= is for notifications ("drop your caches"). SIGKILL and the
 * stopping signals are refused: killing goes through Kill=, which has the
 * rules (never PID 1, largest first, pidfds, a pause), and a stopped unit
 * frees nothing. SIGTSTP, SIGTTIN and SIGTTOU stop a process that does not
 * handle them just as SIGSTOP does. */
static bool signal_stops(int sig) {
        return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static int parse_signal(PolicyParse *p, const char *key, const char *value, unsigned line) {
        int sig;

        if (value[0] == '\0') {
                current_action(p)->signal = 0;  /* an empty assignment resets, as in systemd */
                return 0;
        }
        sig = signal_from_string(value);
        if (sig < 0)
                return invalid_value(p, key, value, line,
                                     "must be a signal name like SIGUSR1 or USR1, or a number");
        if (sig == SIGKILL) {
                policy_error(p, line, "Signal=%s is not allowed: use Kill=yes in [OOM] to kill", value);
                return -EINVAL;
        }
        if (signal_stops(sig)) {
                policy_error(p, line, "Signal=%s is not allowed: it stops the unit, and a stopped unit frees "
                             "no memory", value);
                return -EINVAL;
        }
        current_action(p)->signal = sig;
        return 0;
}

static int parse_signal_target(PolicyParse *p, const char *key, const char *value, unsigned line) {
        SignalTarget t = signal_target_from_string(value);

        if (t < 0)
                return invalid_value(p, key, value, line, "must be main or all");
        current_action(p)->signal_target = t;
        return 0;
}

static int parse_kill(PolicyParse *p, const char *key, const char *value, unsigned line) {
        if (parse_boolean(value, &current_action(p)->kill) < 0)
                return invalid_value(p, key, value, line,
                                     "must be a boolean (yes/no, true/false, on/off, 1/0)");
        return 0;
}

static int parse_kill_target(PolicyParse *p, const char *key, const char *value, unsigned line) {
        KillTarget t = kill_target_from_string(value);

        if (t < 0)
                return invalid_value(p, key, value, line, "must be largest or unit");
        current_action(p)->kill_target = t;
        return 0;
}

/* "32M" (base 1024, at least 1M) or a whole percentage of the unit's
 * limit, "10%" (1-50). Whether it may be used (Scope=unit, Kill=yes) is
 * checked once the whole file is read. */
static int parse_guard(PolicyParse *p, const char *key, const char *value, unsigned line) {
        static const char must[] = "must be a size of at least 1M (like 32M) or a whole percentage of the "
                                   "unit's memory limit from 1% to 50% (like 10%)";
        size_t n = strlen(value);
        uint64_t bytes;
        unsigned pct;

        if (n == 0) {
                p->policy->guard_bytes = 0;     /* an empty assignment resets */
                p->policy->guard_percent = 0;
                return 0;
        }
        if (value[n - 1] == '%') {
                char num[8];

                if (n - 1 == 0 || n - 1 >= sizeof(num))
                        return invalid_value(p, key, value, line, must);
                memcpy(num, value, n - 1);
                num[n - 1] = '\0';
                if (parse_unsigned(num, 1, POLICY_GUARD_PERCENT_MAX, &pct) < 0)
                        return invalid_value(p, key, value, line, must);
                p->policy->guard_percent = pct;
                p->policy->guard_bytes = 0;
                return 0;
        }
        if (parse_size(value, &bytes) < 0 || bytes < POLICY_GUARD_BYTES_MIN)
                return invalid_value(p, key, value, line, must);
        p->policy->guard_bytes = bytes;
        p->policy->guard_percent = 0;
        return 0;
}

static int parse_guard_sec(PolicyParse *p, const char *key, const char *value, unsigned line) {
        return parse_duration_key(p, key, value, line, POLICY_GUARD_SEC_MAX_USEC,
                                  "must be a duration like 1s or 500ms, at most 1min; 0 to kill at once",
                                  &p->policy->guard_grace_usec);
}

/* A whole percentage, "60%" (1-100). */
static int parse_stall_limit(PolicyParse *p, const char *key, const char *value, unsigned line) {
        static const char must[] = "must be a whole percentage from 1% to 100% (like 60%)";
        size_t n = strlen(value);
        char num[8];
        unsigned pct;

        if (n == 0) {
                p->policy->stall_limit_percent = 0;     /* an empty assignment resets */
                return 0;
        }
        if (value[n - 1] != '%' || n - 1 == 0 || n - 1 >= sizeof(num))
                return invalid_value(p, key, value, line, must);
        memcpy(num, value, n - 1);
        num[n - 1] = '\0';
        if (parse_unsigned(num, 1, 100, &pct) < 0)
                return invalid_value(p, key, value, line, must);
        p->policy->stall_limit_percent = pct;
        return 0;
}

/* The kernel keeps three averages of the stall: 10 s, 60 s and 300 s. */
static int parse_stall_sec(PolicyParse *p, const char *key, const char *value, unsigned line) {
        static const char must[] = "must be 10s, 1min or 5min (the averages the kernel keeps of a stall)";
        usec_t u;

        if (parse_duration(value, USEC_PER_SEC, &u) < 0 ||
            (u != 10 * USEC_PER_SEC && u != 60 * USEC_PER_SEC && u != 300 * USEC_PER_SEC))
                return invalid_value(p, key, value, line, must);
        p->policy->stall_usec = u;
        return 0;
}

static const PolicyKey policy_keys[] = {
        { "Scope",        parse_scope },
        { "Description",  parse_description },
        { "SignalIntervalSec", parse_signal_interval },
};

static const PolicyKey level_keys[] = {
        { "Signal",       parse_signal },
        { "SignalTarget", parse_signal_target },
        { "Kill",         parse_kill,        .oom_only = true },
        { "KillTarget",   parse_kill_target, .oom_only = true },
        { "GuardSec",     parse_guard_sec,   .oom_only = true },
        { "Guard",        parse_guard,       .oom_only = true },
        { "StallSec",     parse_stall_sec,   .oom_only = true },
        { "StallLimit",   parse_stall_limit, .oom_only = true },
};

#define GUARD_KEY (ELEMENTSOF(level_keys) - 3)
#define GUARD_SEC_KEY (ELEMENTSOF(level_keys) - 4)
#define STALL_LIMIT_KEY (ELEMENTSOF(level_keys) - 1)
#define STALL_SEC_KEY (ELEMENTSOF(level_keys) - 2)
_Static_assert(ELEMENTSOF(policy_keys) <= KEY_SLOTS && ELEMENTSOF(level_keys) <= KEY_SLOTS,
               "PolicyParse.key_line too small");

static void policy_section(PolicyParse *p, const char *section, unsigned line) {
        PolicySection s = string_table_lookup(section_table, ELEMENTSOF(section_table), section);

        p->section = _SECTION_INVALID;
        if (s < 0) {
                policy_error(p, line, "Unknown section [%.*s%s]: must be [Policy], [Low], [Medium] or [OOM]",
                             QUOTE(section));
                return;
        }
        if (p->section_line[s] > 0) {
                policy_error(p, line, "Duplicate section [%s], first on line %u, ignoring it",
                             section, p->section_line[s]);
                return;
        }
        p->section_line[s] = line;
        p->section = s;
        if (s != SECTION_POLICY)
                p->policy->actions[section_level(s)].line = line;
}

static int policy_handler(const char *section, const char *key, const char *value, unsigned line,
                          void *userdata) {
        PolicyParse *p = userdata;
        const PolicyKey *keys;
        size_t n_keys;

        if (!key) {
                policy_section(p, section, line);
                return 0;
        }
        if (p->section < 0)
                return 0;       /* reported once, at its header */

        if (p->section == SECTION_POLICY)
                keys = policy_keys, n_keys = ELEMENTSOF(policy_keys);
        else
                keys = level_keys, n_keys = ELEMENTSOF(level_keys);

        for (size_t i = 0; i < n_keys; i++) {
                unsigned *set = &p->key_line[p->section][i];

                if (!streq(keys[i].key, key))
                        continue;
                if (keys[i].oom_only && p->section != SECTION_OOM) {
                        policy_error(p, line, "%s= is only allowed in [OOM], ignoring", key);
                        return 0;
                }
                if (*set > 0)
                        policy_error(p, line, "Duplicate key %s= in section [%s], first set on line %u",
                                     key, section, *set);
                *set = line;
                (void) keys[i].parse(p, key, value, line);
                return 0;
        }
        policy_error(p, line, "Unknown key '%.*s%s' in section [%s]", QUOTE(key), section);
        return 0;
}

/* "foo.service.policy" → "foo.service" in unit, if it is a unit name. */
static int policy_unit_from_filename(const char *filename, char *unit, bool *ret_template) {
        const char *suffix;
        size_t n;

        if (!filename)
                return -EINVAL;
        n = strlen(filename);
        if (n <= strlen(POLICY_SUFFIX))
                return -EINVAL;
        suffix = filename + n - strlen(POLICY_SUFFIX);
        if (!streq(suffix, POLICY_SUFFIX) || (size_t) (suffix - filename) >= UNIT_NAME_MAX)
                return -EINVAL;
        memcpy(unit, filename, (size_t) (suffix - filename));
        unit[suffix - filename] = '\0';
        if (!unit_name_is_valid(unit, UNIT_NAME_ANY))
                return -EINVAL;
        *ret_template = unit_name_is_valid(unit, UNIT_NAME_TEMPLATE);
        return 0;
}

static void policy_init(Policy *p, const char *unit, bool is_template, const char *path) {
        *p = (Policy) {
                .state = POLICY_LOADED,
                .is_template = is_template,
                .scope = POLICY_SCOPE_SYSTEM,
                .signal_interval_usec = POLICY_SIGNAL_INTERVAL_DEFAULT_USEC,
                .guard_grace_usec = POLICY_GUARD_SEC_DEFAULT_USEC,
                .stall_usec = POLICY_STALL_SEC_DEFAULT_USEC,
        };
        (void) snprintf(p->unit, sizeof(p->unit), "%s", unit);
        (void) snprintf(p->path, sizeof(p->path), "%s", path);
        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++)
                p->actions[l] = (PolicyAction) {
                        .signal_target = SIGNAL_TARGET_MAIN,
                        .kill_target = KILL_TARGET_LARGEST,
                };
}

/* Copies at most POLICY_FILE_ERRORS_MAX of the file's problems to diag and
 * says how many more there were. */
static void policy_copy_diag(const Diagnostics *file_diag, const char *path, Diagnostics *diag) {
        size_t total = diag_count(file_diag), shown = MIN(file_diag->n, (size_t) POLICY_FILE_ERRORS_MAX);

        for (size_t i = 0; i < shown; i++) {
                if (diag->n >= DIAG_MAX) {
                        diag->n_dropped++;
                        continue;
                }
                memcpy(diag->msg[diag->n++], file_diag->msg[i], DIAG_LEN);
        }
        if (total > shown)
                diag_add(diag, path, 0, "%zu more problems in this file not shown", total - shown);
}

/* Guard= keeps a band below the unit's own limit and kills when the unit
 * enters it: it needs the unit's own level (Scope=unit) and the right to
 * kill (Kill=yes). Keys may come in any order: checked after the file. */
static void policy_check_guard(PolicyParse *p) {
        Policy *pol = p->policy;
        unsigned line = p->key_line[SECTION_OOM][GUARD_KEY], sec_line = p->key_line[SECTION_OOM][GUARD_SEC_KEY];

        if (!policy_has_guard(pol)) {
                if (sec_line > 0)
                        policy_error(p, sec_line, "GuardSec= needs Guard=, ignoring it");
                pol->guard_grace_usec = POLICY_GUARD_SEC_DEFAULT_USEC;
                return;
        }
        if (pol->scope != POLICY_SCOPE_UNIT || !pol->actions[LEVEL_OOM].kill) {
                policy_error(p, line, "Guard= needs Scope=unit in [Policy] and Kill=yes in [OOM] (it kills the "
                             "unit before its own limit), ignoring it");
                pol->guard_bytes = 0;
                pol->guard_percent = 0;
        }
}

/* StallLimit= kills a thrash of what the policy kills: it needs Kill=yes. */
static void policy_check_stall(PolicyParse *p) {
        Policy *pol = p->policy;
        unsigned line = p->key_line[SECTION_OOM][STALL_LIMIT_KEY], sec_line = p->key_line[SECTION_OOM][STALL_SEC_KEY];

        if (pol->stall_limit_percent == 0) {
                if (sec_line > 0)
                        policy_error(p, sec_line, "StallSec= needs StallLimit=, ignoring it");
                pol->stall_usec = POLICY_STALL_SEC_DEFAULT_USEC;
                return;
        }
        if (!pol->actions[LEVEL_OOM].kill) {
                policy_error(p, line, "StallLimit= needs Kill=yes in [OOM] (it kills a thrashing unit), "
                             "ignoring it");
                pol->stall_limit_percent = 0;
                pol->stall_usec = POLICY_STALL_SEC_DEFAULT_USEC;
        }
}

int policy_parse(const char *path, const char *filename, const char *text, size_t len,
                 Policy *ret, Diagnostics *diag) {
        /* Every problem of the file first lands here, so that a file full of
         * garbage shows its first few and a count (16 KiB: fine on the stack,
         * the daemon's stack is locked and far larger). */
        Diagnostics file_diag;
        char unit[UNIT_NAME_MAX];
        PolicyParse p;
        bool is_template;
        const char *nul;
        int r;

        path = path ?: filename;
        if (policy_unit_from_filename(filename, unit, &is_template) < 0) {
                diag_add(diag, path, 0, "File name is not '<unit>%s' with a valid unit name "
                         "(service, scope, slice, socket, mount, swap), ignoring file", POLICY_SUFFIX);
                return -EINVAL;
        }

        policy_init(ret, unit, is_template, path);
        if (len == 0) {
                ret->state = POLICY_MASKED;
                return 0;
        }
        if (len > POLICY_FILE_MAX) {
                ret->state = POLICY_BROKEN;
                ret->n_errors = 1;
                diag_add(diag, path, 0, "File too large (more than %d KiB), ignoring file",
                         POLICY_FILE_MAX / 1024);
                return 1;
        }
        /* A NUL byte never appears in text: the file is binary, and one
         * message says so instead of one per line of garbage. */
        nul = memchr(text, '\0', len);
        if (nul) {
                ret->state = POLICY_BROKEN;
                ret->n_errors = 1;
                diag_add(diag, path, 0, "Binary file (NUL byte at offset %zu), ignoring file",
                         (size_t) (nul - text));
                return 1;
        }

        diag_clear(&file_diag);
        p = (PolicyParse) {
                .policy = ret,
                .path = path,
                .diag = &file_diag,
                .section = _SECTION_INVALID,
        };
        r = ini_parse(text, len, path, policy_handler, &p, &file_diag);
        if (r < 0)
                return r;       /* policy_handler never stops the parse */
        policy_check_guard(&p);
        policy_check_stall(&p);
        policy_copy_diag(&file_diag, path, diag);
        ret->n_errors = (unsigned) MIN(diag_count(&file_diag), (size_t) UINT_MAX);
        return (int) MIN(diag_count(&file_diag), (size_t) INT_MAX);
}

const char *policy_action_describe(const PolicyAction *a, char *buf, size_t size) {
        int n = 0;

        if (size == 0)
                return buf;
        buf[0] = '\0';
        if (a->signal > 0)
                n = snprintf(buf, size, "signal %s to %s", signal_to_string(a->signal) ?: "?",
                             signal_target_to_string(a->signal_target));
        if (a->kill && n >= 0 && (size_t) n < size)
                (void) snprintf(buf + n, size - (size_t) n, "%skill %s", n > 0 ? ", " : "",
                                kill_target_to_string(a->kill_target));
        if (buf[0] == '\0')
                (void) snprintf(buf, size, "nothing");
        return buf;
}

bool policy_kill_enabled(const Policy *p) {
        return p && p->state == POLICY_LOADED && p->actions[LEVEL_OOM].kill;
}

bool policy_has_guard(const Policy *p) {
        return p && p->state == POLICY_LOADED && (p->guard_bytes > 0 || p->guard_percent > 0);
}

uint64_t policy_guard_bytes(const Policy *p, uint64_t limit_bytes) {
        uint64_t g;

        if (!policy_has_guard(p) || limit_bytes == 0)
                return 0;
        g = p->guard_percent > 0 ? limit_bytes / 100 * p->guard_percent + limit_bytes % 100 * p->guard_percent / 100
                                 : p->guard_bytes;
        return g < limit_bytes ? g : 0;
}

bool policy_has_stall_limit(const Policy *p) {
        return p && p->state == POLICY_LOADED && p->stall_limit_percent > 0 && p->actions[LEVEL_OOM].kill;
}

bool policy_stall_exceeded(const Policy *p, unsigned full_permyriad) {
        return policy_has_stall_limit(p) && full_permyriad >= p->stall_limit_percent * 100u;
}

const char *policy_guard_describe(const Policy *p, char *buf, size_t size) {
        if (!policy_has_guard(p))
                (void) snprintf(buf, size, "none");
        else if (p->guard_percent > 0)
                (void) snprintf(buf, size, "%u%%", p->guard_percent);
        else
                (void) format_size(buf, size, p->guard_bytes);
        return buf;
}

/* ---- the set ---- */

int policy_set_new(PolicySet **ret) {
        PolicySet *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

PolicySet *policy_set_free(PolicySet *s) {
        if (!s)
                return NULL;
        free(s->policies);
        free(s);
        return NULL;
}

/* Index of unit in the sorted set, or where it would go (*found false). */
static size_t policy_set_position(const PolicySet *s, const char *unit, bool *found) {
        size_t lo = 0, hi = s->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strcmp(s->policies[mid].unit, unit);

                if (c == 0) {
                        *found = true;
                        return mid;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = false;
        return lo;
}

static int policy_set_insert(PolicySet *s, size_t pos, const Policy *p) {
        if (s->n >= s->n_allocated) {
                size_t m = s->n_allocated ? s->n_allocated * 2 : 16;
                Policy *q = realloc(s->policies, m * sizeof(*q));

                if (!q)
                        return -ENOMEM;
                s->policies = q;
                s->n_allocated = m;
        }
        memmove(s->policies + pos + 1, s->policies + pos, (s->n - pos) * sizeof(*p));
        s->policies[pos] = *p;
        s->n++;
        return 0;
}

static void policy_path(const PolicyFile *f, char *buf, size_t size) {
        if (f->dir && f->dir[0])
                (void) snprintf(buf, size, "%s/%s", f->dir, f->filename ?: "");
        else
                (void) snprintf(buf, size, "%s", f->filename ?: "");
}

int policy_set_add(PolicySet *s, const PolicyFile *f, Diagnostics *diag) {
        _cleanup_(freep) Policy *p = NULL;
        char path[POLICY_PATH_MAX];
        bool found;
        size_t pos;
        int n_problems, r;

        policy_path(f, path, sizeof(path));
        p = malloc(sizeof(*p));         /* 1.2 KiB: not on the stack next to a Diagnostics */
        if (!p)
                return -ENOMEM;

        if (!f->text) {
                char unit[UNIT_NAME_MAX];
                bool is_template;

                if (policy_unit_from_filename(f->filename, unit, &is_template) < 0) {
                        (void) policy_parse(path, f->filename, "", 0, p, diag); /* reports the name */
                        return 1;
                }
                policy_init(p, unit, is_template, path);
                p->state = POLICY_BROKEN;
                p->n_errors = 1;
                if (f->reason)
                        diag_add(diag, path, 0, "%s, ignoring file", f->reason);
                else if (f->error == -EBADFD)
                        diag_add(diag, path, 0, "Not a regular file, ignoring");
                else
                        diag_add(diag, path, 0, "Failed to read file, ignoring: %s",
                                 strerror(f->error < 0 ? -f->error : EIO));
                n_problems = 1;
        } else {
                n_problems = policy_parse(path, f->filename, f->text, f->len, p, diag);
                if (n_problems == -EINVAL)
                        return 1;       /* not a unit's file name: reported, nothing to add */
                if (n_problems < 0)
                        return n_problems;
        }

        pos = policy_set_position(s, p->unit, &found);
        if (found) {
                /* Shadowed: its problems were reported all the same, so that
                 * "vmpressurectl check" shows every broken file. */
                log_debug("Policy %s is shadowed by %s.", path, s->policies[pos].path);
                return n_problems;
        }
        if (s->n >= POLICY_SET_MAX) {
                diag_add(diag, path, 0, "Too many policy files (at most %d), ignoring file", POLICY_SET_MAX);
                return n_problems + 1;
        }
        r = policy_set_insert(s, pos, p);
        if (r < 0)
                return r;
        return n_problems;
}

int policy_set_add_files(PolicySet *s, const PolicyFile *files, size_t n, Diagnostics *diag) {
        int total = 0;

        for (size_t i = 0; i < n; i++) {
                int r = policy_set_add(s, &files[i], diag);

                if (r < 0)
                        return r;
                if (total <= INT_MAX - r)
                        total += r;
        }
        return total;
}

const Policy *policy_set_get(const PolicySet *s, const char *unit) {
        bool found;
        size_t pos;

        if (!s || !unit)
                return NULL;
        pos = policy_set_position(s, unit, &found);
        return found ? &s->policies[pos] : NULL;
}

const Policy *policy_set_find(const PolicySet *s, const char *unit) {
        char template[UNIT_NAME_MAX];
        const Policy *p;

        p = policy_set_get(s, unit);
        if (p)
                return p->state == POLICY_LOADED ? p : NULL;
        if (unit_name_template(unit, template, sizeof(template)) < 0)
                return NULL;
        p = policy_set_get(s, template);
        return p && p->state == POLICY_LOADED ? p : NULL;
}

size_t policy_set_count_loaded(const PolicySet *s) {
        size_t n = 0;

        for (size_t i = 0; s && i < s->n; i++)
                n += s->policies[i].state == POLICY_LOADED;
        return n;
}

bool policy_set_any_kill(const PolicySet *s) {
        for (size_t i = 0; s && i < s->n; i++)
                if (s->policies[i].state == POLICY_LOADED && s->policies[i].actions[LEVEL_OOM].kill)
                        return true;
        return false;
}
