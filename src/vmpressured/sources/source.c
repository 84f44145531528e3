/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <time.h>

#include "log.h"
#include "memory.h"
#include "source.h"

static const char *const source_type_table[_SOURCE_TYPE_MAX] = {
        [SOURCE_SYSCALL] = "syscall",
        [SOURCE_MEMCG]   = "memcg",
        [SOURCE_RECLAIM] = "reclaim",
        [SOURCE_PSI]     = "psi",
        [SOURCE_VMSTAT]  = "vmstat",
};

static const SourceOps *const source_ops_table[_SOURCE_TYPE_MAX] = {
        [SOURCE_SYSCALL] = &source_syscall_ops,
        [SOURCE_MEMCG]   = &source_memcg_ops,
        [SOURCE_RECLAIM] = &source_reclaim_ops,
        [SOURCE_PSI]     = &source_psi_ops,
        [SOURCE_VMSTAT]  = &source_vmstat_ops,
};

const char *source_type_to_string(SourceType t) {
        if (t < 0 || t >= _SOURCE_TYPE_MAX)
                return NULL;
        return source_type_table[t];
}

SourceType source_type_from_string(const char *s) {
        return (SourceType) string_table_lookup(source_type_table, ELEMENTSOF(source_type_table), s);
}

static const char *const system_pressure_table[_SYSTEM_PRESSURE_MAX] = {
        [SYSTEM_PRESSURE_MACHINE]    = "machine",
        [SYSTEM_PRESSURE_ANY_CGROUP] = "any-cgroup",
};

const char *system_pressure_to_string(SystemPressure p) {
        if (p < 0 || p >= _SYSTEM_PRESSURE_MAX)
                return NULL;
        return system_pressure_table[p];
}

SystemPressure system_pressure_from_string(const char *s) {
        return (SystemPressure) string_table_lookup(system_pressure_table, ELEMENTSOF(system_pressure_table), s);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo (octal). */
static int mountinfo_unescape(const char *s, char *ret, size_t ret_size) {
        size_t n = 0;

        for (; *s; s++) {
                char c = *s;

                if (c == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        c = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
                        s += 3;
                }
                if (n + 1 >= ret_size)
                        return -ENAMETOOLONG;
                ret[n++] = c;
        }
        ret[n] = '\0';
        return 0;
}

/* True when the comma-separated list opts contains the option word. */
static bool options_contain(const char *opts, const char *word) {
        size_t l = strlen(word);

        for (const char *p = opts; p; p = strchr(p, ',')) {
                if (*p == ',')
                        p++;
                if (strncmp(p, word, l) == 0 && (p[l] == ',' || p[l] == '\0'))
                        return true;
        }
        return false;
}

/* One mountinfo line:
 *   36 35 98:0 /root /mnt rw,noatime master:1 - ext3 /dev/root rw,errors=continue
 * fields 5 (mount point) and, after the " - " separator, fstype and super options.
 * The first mount of each kind wins. */
static void mountinfo_line(char *line, SourceEnv *env) {
        char *save = NULL, *mountpoint = NULL, *fstype, *superopts, *tok;
        char *target;
        size_t i = 0;

        for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), i++) {
                if (i == 4)
                        mountpoint = tok;
                else if (i >= 6 && streq(tok, "-"))
                        break;
        }
        if (!tok || !mountpoint)
                return;
        fstype = strtok_r(NULL, " \n", &save);
        (void) strtok_r(NULL, " \n", &save);    /* mount source */
        superopts = strtok_r(NULL, " \n", &save);
        if (!fstype || !superopts)
                return;

        if (streq(fstype, "cgroup") && options_contain(superopts, "memory"))
                target = env->memcg_v1_root;
        else if (streq(fstype, "cgroup2"))
                target = env->cgroup2_root;
        else
                return;
        if (target[0])
                return;
        if (mountinfo_unescape(mountpoint, target, PATH_MAX) < 0)
                target[0] = '\0';
}

int source_env_detect(SourceEnv *ret) {
        _cleanup_(fclosep) FILE *f = NULL;
        _cleanup_(freep) char *line = NULL;
        size_t allocated = 0;

        if (!ret)
                return -EINVAL;
        *ret = (SourceEnv) { .proc_root = "/proc" };

        f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return log_debug_errno(errno, "Cannot open /proc/self/mountinfo: %m");
        while (getline(&line, &allocated, f) >= 0)
                mountinfo_line(line, ret);
        if (ferror(f))
                return log_debug_errno(EIO, "Reading /proc/self/mountinfo failed: %m");

        log_debug("Memory cgroup v1 at '%s', cgroup2 at '%s'.",
                  ret->memcg_v1_root[0] ? ret->memcg_v1_root : "(none)",
                  ret->cgroup2_root[0] ? ret->cgroup2_root : "(none)");
        return 0;
}

/* Copies a cgroup path without leading or trailing slashes; ".." components
 * would escape the hierarchy and are refused. */
static int cgroup_path_normalize(const char *in, char *ret, size_t ret_size) {
        size_t l;

        in = in ?: "";
        in += strspn(in, "/");
        l = strlen(in);
        while (l > 0 && in[l - 1] == '/')
                l--;
        if (l >= ret_size)
                return -ENAMETOOLONG;
        memcpy(ret, in, l);
        ret[l] = '\0';

        for (const char *p = ret; *p; p += strcspn(p, "/"), p += strspn(p, "/"))
                if (strncmp(p, "..", 2) == 0 && (p[2] == '/' || p[2] == '\0'))
                        return -EINVAL;
        return 0;
}

static int source_init_target(Source *s, const SourceTarget *target, char *reason, size_t reason_size) {
        const char *cgroup = target ? target->cgroup : NULL;
        const char *scope = target ? target->scope : NULL;
        int r;

        r = cgroup_path_normalize(cgroup, s->cgroup, sizeof(s->cgroup));
        if (r < 0) {
                (void) snprintf(reason, reason_size, "The cgroup path '%s' is not usable (%s).",
                                cgroup, strerror(-r));
                return r;
        }
        if (!scope || !scope[0])
                scope = s->cgroup[0] ? s->cgroup : "-.slice";
        if ((size_t) snprintf(s->scope, sizeof(s->scope), "%s", scope) >= sizeof(s->scope)) {
                (void) snprintf(reason, reason_size, "The scope name '%s' is too long.", scope);
                return -ENAMETOOLONG;
        }
        return 0;
}

int source_new(SourceType type,
               sd_event *event,
               const SourceEnv *env,
               const SourceParams *params,
               const LevelConfig *level,
               const SourceTarget *target,
               source_sample_handler_t on_sample,
               source_gone_handler_t on_gone,
               void *userdata,
               Source **ret,
               char *reason,
               size_t reason_size) {
        char dummy[256];
        const SourceOps *ops;
        Source *s;
        int r;

        if (!reason || reason_size == 0) {
                reason = dummy;
                reason_size = sizeof(dummy);
        }
        reason[0] = '\0';

        if (type < 0 || type >= _SOURCE_TYPE_MAX || !event || !env || !params || !level || !ret) {
                (void) snprintf(reason, reason_size, "Invalid arguments.");
                return -EINVAL;
        }
        ops = source_ops_table[type];

        s = calloc(1, ops->size);
        if (!s)
                return -ENOMEM;
        memory_prefault(s, ops->size);  /* its buffers are first written at an event (memory.h) */
        *s = (Source) {
                .ops = ops,
                .event = event,
                .env = env,
                .params = params,
                .level = level,
                .on_sample = on_sample,
                .on_gone = on_gone,
                .userdata = userdata,
        };

        r = source_init_target(s, target, reason, reason_size);
        if (r < 0) {
                free(s);
                return r;
        }
        r = ops->open(s, reason, reason_size);
        if (r < 0) {
                ops->close(s);
                free(s);
                if (!reason[0])
                        (void) snprintf(reason, reason_size, "%s", strerror(-r));
                return r;
        }

        *ret = s;
        return 0;
}

Source *source_free(Source *s) {
        if (!s)
                return NULL;
        s->ops->close(s);
        free(s);
        return NULL;
}

int source_set_mark(Source *s, SourceMark which, uint64_t usage_bytes) {
        if (which < 0 || which >= _SOURCE_MARK_MAX)
                return -EINVAL;
        if (!s || !s->ops->set_mark)
                return -EOPNOTSUPP;
        return s->ops->set_mark(s, which, usage_bytes);
}

void source_describe(const Source *s, char *buf, size_t size) {
        if (size == 0)
                return;
        buf[0] = '\0';
        if (s && s->ops->describe)
                s->ops->describe(s, buf, size);
}

void source_set_busy(Source *s, bool busy) {
        if (s && s->ops->set_busy)
                s->ops->set_busy(s, busy);
}

usec_t source_now_usec(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (usec_t) ts.tv_sec * USEC_PER_SEC + (usec_t) ts.tv_nsec / NSEC_PER_USEC;
}

void source_emit(Source *s, const Sample *sample) {
        if (s->on_sample)
                s->on_sample(s, sample, s->userdata);
}

void source_gone(Source *s, int error) {
        if (s->on_gone)
                s->on_gone(s, error, s->userdata);
}
