/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>
#include <stdarg.h>

#include "diag.h"
#include "memory.h"

Diagnostics *diag_new(void) {
        return memory_table_new(sizeof(Diagnostics));
}

Diagnostics *diag_free(Diagnostics *d) {
        memory_table_free(d, sizeof(Diagnostics));
        return NULL;
}

void diag_clear(Diagnostics *d) {
        d->n = 0;
        d->n_dropped = 0;
}

static void diag_addv(Diagnostics *d, const char *file, unsigned line, const char *fmt, va_list ap)
        _printf_(4, 0);
static void diag_addv(Diagnostics *d, const char *file, unsigned line, const char *fmt, va_list ap) {
        int n;

        if (!d)
                return;
        if (d->n >= DIAG_MAX) {
                d->n_dropped++;
                return;
        }

        /* The prefix first, then the message into what is left: a long
         * message is cut at DIAG_LEN, never the file:line that locates it. */
        if (line > 0)
                n = snprintf(d->msg[d->n], DIAG_LEN, "%s:%u: ", file ?: "<input>", line);
        else
                n = snprintf(d->msg[d->n], DIAG_LEN, "%s: ", file ?: "<input>");
        if (n < 0)
                n = 0;
        if (n < DIAG_LEN)
                (void) vsnprintf(d->msg[d->n] + n, DIAG_LEN - (size_t) n, fmt, ap);
        d->n++;
}

void diag_add(Diagnostics *d, const char *file, unsigned line, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        diag_addv(d, file, line, fmt, ap);
        va_end(ap);
}

void diag_error(Diagnostics *d, unsigned *n_errors, const char *file, unsigned line, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        diag_addv(d, file, line, fmt, ap);
        va_end(ap);
        if (*n_errors < INT_MAX)
                (*n_errors)++;
}

int diag_quote_len(const char *v, size_t max) {
        size_t n = strlen(v);

        if (n <= max)
                return (int) n;
        n = max;
        while (n > 0 && ((unsigned char) v[n] & 0xc0) == 0x80)
                n--;
        return (int) n;
}

size_t diag_count(const Diagnostics *d) {
        return d->n + d->n_dropped;
}
