/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>

#include "unit-name.h"

/* The unit types whose units hold processes: a policy or an action on any
 * other type (target, timer, path, device, automount) could never act. */
static const char *const unit_suffixes[] = {
        ".service", ".scope", ".slice", ".socket", ".mount", ".swap",
};

/* Controller names as systemd's cg_escape() knows them: a cgroup called
 * "<controller>.<something>" would clash with the controller's files. */
static const char *const cgroup_controllers[] = {
        "cpu", "cpuacct", "cpuset", "io", "blkio", "memory", "devices", "pids",
        "bpf-firewall", "bpf-devices", "bpf-foreign", "bpf-socket-bind",
        "bpf-restrict-network-interfaces",
};

static bool unit_char_ok(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == ':' || c == '-' || c == '_' || c == '.' || c == '\\';
}

/* The suffix (".service", …) of name, or NULL when the type is not one we accept. */
static const char *unit_suffix(const char *name) {
        const char *dot = strrchr(name, '.');

        if (!dot)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(unit_suffixes); i++)
                if (streq(dot, unit_suffixes[i]))
                        return dot;
        return NULL;
}

bool unit_name_is_valid(const char *name, UnitNameFlags flags) {
        const char *suffix, *at = NULL;
        size_t n;

        if (!name)
                return false;
        n = strlen(name);
        if (n == 0 || n >= UNIT_NAME_MAX)
                return false;
        suffix = unit_suffix(name);
        if (!suffix || suffix == name)
                return false;           /* ".service" alone has no prefix */
        for (const char *c = name; c < suffix; c++) {
                if (*c == '@') {
                        if (at)
                                return false;
                        at = c;
                } else if (!unit_char_ok(*c))
                        return false;
        }
        if (!at)
                return flags & UNIT_NAME_PLAIN;
        if (at == name)
                return false;           /* "@foo.service": no prefix */
        if (at + 1 == suffix)
                return flags & UNIT_NAME_TEMPLATE;
        return flags & UNIT_NAME_INSTANCE;
}

const char *unit_name_dbus_interface(const char *name) {
        static const struct {
                const char *suffix;
                const char *interface;
        } table[] = {
                { ".service", "org.freedesktop.systemd1.Service" },
                { ".scope",   "org.freedesktop.systemd1.Scope" },
                { ".slice",   "org.freedesktop.systemd1.Slice" },
                { ".socket",  "org.freedesktop.systemd1.Socket" },
                { ".mount",   "org.freedesktop.systemd1.Mount" },
                { ".swap",    "org.freedesktop.systemd1.Swap" },
        };
        const char *dot;

        if (!unit_name_is_valid(name, UNIT_NAME_ANY))
                return NULL;
        dot = unit_suffix(name);
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(dot, table[i].suffix))
                        return table[i].interface;
        return NULL;
}

int unit_name_template(const char *name, char *buf, size_t size) {
        const char *at, *suffix;
        size_t prefix_len, suffix_len;

        if (!unit_name_is_valid(name, UNIT_NAME_INSTANCE))
                return -EINVAL;
        at = strchr(name, '@');
        suffix = unit_suffix(name);
        prefix_len = (size_t) (at - name) + 1;  /* with the '@' */
        suffix_len = strlen(suffix);
        if (prefix_len + suffix_len + 1 > size)
                return -ENOBUFS;
        memcpy(buf, name, prefix_len);
        memcpy(buf + prefix_len, suffix, suffix_len + 1);
        return 0;
}

static bool cgroup_name_needs_escape(const char *p, size_t n) {
        if (p[0] == '_' || p[0] == '.')
                return true;
        if ((n == 5 && memcmp(p, "tasks", 5) == 0) ||
            (n == 13 && memcmp(p, "release_agent", 13) == 0) ||
            (n == 17 && memcmp(p, "notify_on_release", 17) == 0) ||
            (n >= 7 && memcmp(p, "cgroup.", 7) == 0))
                return true;
        for (size_t i = 0; i < ELEMENTSOF(cgroup_controllers); i++) {
                size_t l = strlen(cgroup_controllers[i]);

                if (n > l && memcmp(p, cgroup_controllers[i], l) == 0 && p[l] == '.')
                        return true;
        }
        return false;
}

/* Appends "/"(when *len > 0) + the escaped name p[0..n) to buf. */
static int append_component(char *buf, size_t size, size_t *len, const char *p, size_t n) {
        bool esc = cgroup_name_needs_escape(p, n);
        size_t need = (*len > 0) + esc + n;

        if (*len + need + 1 > size)
                return -ENOBUFS;
        if (*len > 0)
                buf[(*len)++] = '/';
        if (esc)
                buf[(*len)++] = '_';
        memcpy(buf + *len, p, n);
        *len += n;
        buf[*len] = '\0';
        return 0;
}

/* "a-b-c.slice" → "a.slice/a-b.slice/a-b-c.slice", as systemd nests slices. */
static int slice_to_path(const char *name, char *buf, size_t size, size_t *len) {
        size_t prefix_len = strlen(name) - strlen(".slice");
        char part[UNIT_NAME_MAX];

        if (streq(name, "-.slice"))
                return 0;               /* the root slice is the root cgroup */
        if (name[0] == '-' || name[prefix_len - 1] == '-' || strstr(name, "--"))
                return -EINVAL;         /* systemd refuses these slice names */
        for (size_t i = 0; i <= prefix_len; i++) {
                int r;

                if (i < prefix_len && name[i] != '-')
                        continue;
                memcpy(part, name, i);
                memcpy(part + i, ".slice", sizeof(".slice"));
                r = append_component(buf, size, len, part, strlen(part));
                if (r < 0)
                        return r;
        }
        return 0;
}

int unit_name_to_cgroup_path(const char *name, char *buf, size_t size) {
        const char *suffix;
        size_t len = 0;
        int r;

        if (!buf || size == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        if (!unit_name_is_valid(name, UNIT_NAME_PLAIN | UNIT_NAME_INSTANCE))
                return -EINVAL;
        suffix = unit_suffix(name);
        if (streq(suffix, ".slice"))
                return slice_to_path(name, buf, size, &len);
        r = append_component(buf, size, &len, "system.slice", strlen("system.slice"));
        if (r < 0)
                return r;
        return append_component(buf, size, &len, name, strlen(name));
}

int unit_cgroup_dir(const char *root, const char *name, char *buf, size_t size) {
        char rel[PATH_MAX];
        int r, n;

        if (!root)
                return -EINVAL;
        r = unit_name_to_cgroup_path(name, rel, sizeof(rel));
        if (r < 0)
                return r;
        n = snprintf(buf, size, "%s%s%s", root, rel[0] ? "/" : "", rel);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return 0;
}

static int copy_unit(const char *p, size_t n, char *buf, size_t size) {
        if (n > 0 && p[0] == '_')
                p++, n--;               /* cg_unescape() */
        if (n + 1 > size)
                return -ENOBUFS;
        memcpy(buf, p, n);
        buf[n] = '\0';
        return unit_name_is_valid(buf, UNIT_NAME_PLAIN | UNIT_NAME_INSTANCE) ? 0 : -ENXIO;
}

int cgroup_path_get_unit(const char *path, char *buf, size_t size) {
        const char *last_slice = NULL;
        size_t last_slice_len = 0;

        if (!path || !buf || size == 0)
                return -EINVAL;
        for (const char *p = path;;) {
                size_t n;

                p += strspn(p, "/");
                n = strcspn(p, "/");
                if (n == 0)
                        break;
                if (n > 6 && memcmp(p + n - 6, ".slice", 6) == 0) {
                        last_slice = p;
                        last_slice_len = n;
                        p += n;
                        continue;
                }
                return copy_unit(p, n, buf, size);
        }
        if (last_slice)
                return copy_unit(last_slice, last_slice_len, buf, size);
        if (size < sizeof("-.slice"))
                return -ENOBUFS;
        strcpy(buf, "-.slice");
        return 0;
}
