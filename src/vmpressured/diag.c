/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "diag.h"

void diag_clear(Diagnostics *d) {
        d->n = 0;
        d->n_dropped = 0;
}

void diag_add(Diagnostics *d, const char *file, unsigned line, const char *fmt, ...) {
        char text[DIAG_LEN];
        va_list ap;

        if (!d)
                return;
        if (d->n >= DIAG_MAX) {
                d->n_dropped++;
                return;
        }

        va_start(ap, fmt);
        (void) vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);

        if (line > 0)
                (void) snprintf(d->msg[d->n], DIAG_LEN, "%s:%u: %s", file ?: "<input>", line, text);
        else
                (void) snprintf(d->msg[d->n], DIAG_LEN, "%s: %s", file ?: "<input>", text);
        d->n++;
}

size_t diag_count(const Diagnostics *d) {
        return d->n + d->n_dropped;
}
