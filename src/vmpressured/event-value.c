/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdbool.h>
#include <string.h>

#include "event-value.h"

static bool is_plain(unsigned char c) {
        return c > ' ' && c < 0x7f && c != '"' && c != '\\' && c != '=';
}

static bool needs_quotes(const char *s) {
        if (!s[0])
                return true;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (!is_plain(*p))
                        return true;
        return false;
}

/* The escaped form of c into out (at most 4 bytes); returns its length. */
static size_t escape_char(unsigned char c, char out[4]) {
        static const char hex[] = "0123456789abcdef";

        switch (c) {
        case '"':
        case '\\':
                out[0] = '\\', out[1] = (char) c;
                return 2;
        case '\n':
                out[0] = '\\', out[1] = 'n';
                return 2;
        case '\t':
                out[0] = '\\', out[1] = 't';
                return 2;
        }
        if (c < ' ' || c >= 0x7f) {
                out[0] = '\\', out[1] = 'x', out[2] = hex[c >> 4], out[3] = hex[c & 15];
                return 4;
        }
        out[0] = (char) c;
        return 1;
}

const char *event_value_escape(const char *s, char *buf, size_t size) {
        size_t n = 0;

        if (!buf || size < 3)
                return buf && size > 0 ? (buf[0] = '\0', buf) : buf;
        s = s ?: "";
        if (!needs_quotes(s)) {
                size_t l = strlen(s);

                if (l < size) {
                        memcpy(buf, s, l + 1);
                        return buf;
                }
        }
        buf[n++] = '"';
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                char e[4];
                size_t l = escape_char(*p, e);

                if (n + l + 2 > size)   /* the closing quote and the NUL */
                        break;
                memcpy(buf + n, e, l);
                n += l;
        }
        buf[n++] = '"';
        buf[n] = '\0';
        return buf;
}
