/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

#include "ini.h"

/* How much of an offending line a message quotes: diag lines are DIAG_LEN
 * (256) bytes including "file:line: ", so quoting more only gets truncated. */
#define INI_QUOTE_MAX 64

typedef struct IniState {
        const char *filename;
        ini_handler_t handler;
        void *userdata;
        Diagnostics *diag;
        unsigned n_errors;
        bool have_section;      /* a valid [Section] was seen */
        bool section_bad;       /* the latest header was broken: its keys are skipped */
        char section[INI_LINE_MAX + 1];
} IniState;

#define ini_error(st, line, ...) diag_error((st)->diag, &(st)->n_errors, (st)->filename, (line), __VA_ARGS__)

static bool is_blank(char c) {
        return c == ' ' || c == '\t';
}

static bool is_key_char(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Section names are identifiers like [Daemon] or [OOM]; '.', '-', '@' and ':'
 * leave room for names that carry a unit name. */
static bool is_section_char(char c) {
        return is_key_char(c) || c == '.' || c == '-' || c == '@' || c == ':';
}

/* Length of the valid UTF-8 sequence at s (n bytes available), 0 if invalid:
 * overlong forms, surrogates and code points above U+10FFFF are invalid. */
static size_t utf8_sequence_len(const unsigned char *s, size_t n) {
        uint32_t cp;
        size_t len;

        if (s[0] < 0x80)
                return 1;
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2, cp = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                len = 3, cp = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                len = 4, cp = s[0] & 0x07;
        else
                return 0;
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

/* NULL when the n bytes are clean text, else what is wrong with them. Tabs
 * are the only control characters allowed. */
static const char *ini_check_text(const char *p, size_t n) {
        for (size_t i = 0; i < n;) {
                unsigned char c = (unsigned char) p[i];
                size_t l;

                if ((c < 0x20 && c != '\t') || c == 0x7f)
                        return "Control character in line, ignoring";
                l = utf8_sequence_len((const unsigned char *) p + i, n - i);
                if (l == 0)
                        return "Invalid UTF-8 in line, ignoring";
                i += l;
        }
        return NULL;
}

#define QUOTE(v) DIAG_QUOTE(v, INI_QUOTE_MAX)

static int ini_section(IniState *st, char *s, unsigned line) {
        char *close = strchr(s, ']');
        const char *name = s + 1;

        st->section_bad = true;
        if (!close) {
                ini_error(st, line, "Unterminated section header '%.*s%s', ignoring", QUOTE(s));
                return 0;
        }
        *close = '\0';
        if (close[1] != '\0') {
                ini_error(st, line, "Garbage after section header [%.*s%s], ignoring", QUOTE(name));
                return 0;
        }
        if (name[0] == '\0') {
                ini_error(st, line, "Empty section name, ignoring");
                return 0;
        }
        for (const char *c = name; *c; c++)
                if (!is_section_char(*c)) {
                        ini_error(st, line, "Invalid section name [%.*s%s], ignoring", QUOTE(name));
                        return 0;
                }

        st->section_bad = false;
        st->have_section = true;
        strcpy(st->section, name);     /* both INI_LINE_MAX + 1 */
        return st->handler(st->section, NULL, NULL, line, st->userdata);
}

static int ini_assignment(IniState *st, char *s, unsigned line) {
        char *eq = strchr(s, '='), *key_end, *value;

        if (!eq) {
                ini_error(st, line, "Missing '=' in line '%.*s%s', ignoring", QUOTE(s));
                return 0;
        }
        if (st->section_bad)
                return 0;       /* the broken header was reported already */
        if (!st->have_section) {
                ini_error(st, line, "Assignment before any section header, ignoring");
                return 0;
        }

        key_end = eq;
        while (key_end > s && is_blank(key_end[-1]))
                key_end--;
        *key_end = '\0';
        if (s[0] == '\0') {
                ini_error(st, line, "Empty key name, ignoring");
                return 0;
        }
        for (const char *c = s; *c; c++)
                if (!is_key_char(*c)) {
                        ini_error(st, line, "Invalid key name '%.*s%s', ignoring", QUOTE(s));
                        return 0;
                }

        value = eq + 1;
        while (is_blank(*value))
                value++;
        return st->handler(st->section, s, value, line, st->userdata);
}

static int ini_line(IniState *st, const char *p, size_t n, unsigned line) {
        char buf[INI_LINE_MAX + 1];
        const char *why;
        char *s;

        if (n > 0 && p[n - 1] == '\r')
                n--;            /* CRLF */
        if (line == 1 && n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
                p += 3, n -= 3; /* UTF-8 byte order mark */

        if (n > INI_LINE_MAX) {
                ini_error(st, line, "Line too long (%zu bytes, at most %d), ignoring", n, INI_LINE_MAX);
                return 0;
        }
        if (memchr(p, '\0', n)) {
                ini_error(st, line, "NUL byte in line, ignoring");
                return 0;
        }

        memcpy(buf, p, n);
        buf[n] = '\0';
        s = buf;
        while (is_blank(*s))
                s++;
        if (*s == '\0' || *s == '#' || *s == ';')
                return 0;       /* blank or comment */

        /* Only now: comments may hold anything but NUL (a Latin-1 name, say). */
        why = ini_check_text(s, strlen(s));
        if (why) {
                ini_error(st, line, "%s", why);
                return 0;
        }
        while (n > 0 && is_blank(buf[n - 1]))
                buf[--n] = '\0';

        if (s[0] == '[')
                return ini_section(st, s, line);
        return ini_assignment(st, s, line);
}

int ini_parse(const char *text, size_t len, const char *filename,
              ini_handler_t handler, void *userdata, Diagnostics *diag) {
        IniState st = {
                .filename = filename,
                .handler = handler,
                .userdata = userdata,
                .diag = diag,
        };
        unsigned line = 0;
        size_t pos = 0;

        if (!text && len > 0)
                return -EINVAL;

        while (pos < len) {
                const char *p = text + pos, *nl = memchr(p, '\n', len - pos);
                size_t n = nl ? (size_t) (nl - p) : len - pos;
                int r;

                if (line < UINT_MAX)
                        line++;
                r = ini_line(&st, p, n, line);
                if (r < 0)
                        return r;
                pos += n + (nl ? 1 : 0);
        }
        return (int) st.n_errors;
}

int parse_boolean(const char *v, bool *ret) {
        static const char *const yes[] = { "yes", "true", "on", "1" };
        static const char *const no[] = { "no", "false", "off", "0" };

        if (!v)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(v, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(v, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        return -EINVAL;
}

/* Decimal digits at *p (at least one) into *ret; advances *p. No sign, no
 * white space, no base prefix: "0x10" and "-1" are junk here. */
static int parse_digits(const char **p, uint64_t *ret) {
        const char *s = *p;
        uint64_t x = 0;

        if (!(*s >= '0' && *s <= '9'))
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
                unsigned d = (unsigned) (*s - '0');
                if (x > (UINT64_MAX - d) / 10)
                        return -EINVAL;
                x = x * 10 + d;
        }
        *p = s;
        *ret = x;
        return 0;
}

int parse_unsigned(const char *v, unsigned min, unsigned max, unsigned *ret) {
        uint64_t x;

        if (!v || parse_digits(&v, &x) < 0 || *v != '\0')
                return -EINVAL;
        if (x < min || x > max)
                return -EINVAL;
        *ret = (unsigned) x;
        return 0;
}

static int mul_add_u64(uint64_t *acc, uint64_t x, uint64_t unit) {
        if (unit != 0 && x > UINT64_MAX / unit)
                return -EINVAL;
        if (x * unit > UINT64_MAX - *acc)
                return -EINVAL;
        *acc += x * unit;
        return 0;
}

static const struct {
        const char *name;
        usec_t usec;
} duration_units[] = {
        { "us",   1 },
        { "usec", 1 },
        { "ms",   USEC_PER_MSEC },
        { "msec", USEC_PER_MSEC },
        { "s",    USEC_PER_SEC },
        { "sec",  USEC_PER_SEC },
        { "m",    60 * USEC_PER_SEC },
        { "min",  60 * USEC_PER_SEC },
        { "h",    3600 * USEC_PER_SEC },
        { "hr",   3600 * USEC_PER_SEC },
};

static int duration_unit(const char *s, size_t n, usec_t *ret) {
        for (size_t i = 0; i < ELEMENTSOF(duration_units); i++)
                if (strlen(duration_units[i].name) == n && memcmp(duration_units[i].name, s, n) == 0) {
                        *ret = duration_units[i].usec;
                        return 0;
                }
        return -EINVAL;
}

/* One or more "<integer><unit>" parts, summed ("1s500ms", "1min 30s"); or a
 * single bare integer in default_unit_usec. Blanks between parts are allowed. */
int parse_duration(const char *v, usec_t default_unit_usec, usec_t *ret) {
        usec_t total = 0;
        unsigned parts = 0;
        bool bare = false;

        if (!v)
                return -EINVAL;
        for (;;) {
                uint64_t x;
                usec_t unit;
                size_t n = 0;

                while (is_blank(*v))
                        v++;
                if (*v == '\0')
                        break;
                if (bare || parse_digits(&v, &x) < 0)
                        return -EINVAL; /* "1 2", "1s500", "-1s", "s" */
                while (is_blank(*v))
                        v++;
                while ((v[n] >= 'a' && v[n] <= 'z') || (v[n] >= 'A' && v[n] <= 'Z'))
                        n++;
                if (n == 0) {
                        if (parts > 0)
                                return -EINVAL;
                        bare = true;
                        unit = default_unit_usec;
                } else if (duration_unit(v, n, &unit) < 0)
                        return -EINVAL;
                v += n;
                if (mul_add_u64(&total, x, unit) < 0)
                        return -EINVAL;
                parts++;
        }
        if (parts == 0 || total == USEC_INFINITY)
                return -EINVAL;
        *ret = total;
        return 0;
}

/* Suffixes are base 1024, as in systemd. "MB" and "KB" are refused: whether
 * they mean 1000 or 1024 is exactly what a reader cannot tell. */
int parse_size(const char *v, uint64_t *ret) {
        static const struct {
                const char *suffix;
                uint64_t factor;
        } table[] = {
                { "",    1 },
                { "B",   1 },
                { "K",   UINT64_C(1) << 10 },
                { "KiB", UINT64_C(1) << 10 },
                { "M",   UINT64_C(1) << 20 },
                { "MiB", UINT64_C(1) << 20 },
                { "G",   UINT64_C(1) << 30 },
                { "GiB", UINT64_C(1) << 30 },
                { "T",   UINT64_C(1) << 40 },
                { "TiB", UINT64_C(1) << 40 },
        };
        uint64_t x, total = 0;

        if (!v || parse_digits(&v, &x) < 0)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(v, table[i].suffix)) {
                        if (mul_add_u64(&total, x, table[i].factor) < 0)
                                return -EINVAL;
                        *ret = total;
                        return 0;
                }
        return -EINVAL;
}

/* "12.3G", "640M", "512K" or bytes: one decimal, base 1024. */
const char *format_size(char *buf, size_t size, uint64_t bytes) {
        static const char suffix[] = "BKMGT";
        uint64_t tenths = bytes * 10;
        size_t i = 0;

        if (bytes > UINT64_MAX / 10)
                tenths = UINT64_MAX;
        while (i + 1 < sizeof(suffix) - 1 && tenths >= 1024 * 10) {
                tenths /= 1024;
                i++;
        }
        if (i == 0)
                (void) snprintf(buf, size, "%" PRIu64, bytes);
        else
                (void) snprintf(buf, size, "%" PRIu64 ".%" PRIu64 "%c", tenths / 10, tenths % 10, suffix[i]);
        return buf;
}
