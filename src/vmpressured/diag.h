/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Diagnostics of a parser: "file:line: message", bounded, no allocation. */

#include "macro.h"

#define DIAG_MAX 64
#define DIAG_LEN 256

typedef struct Diagnostics {
        size_t n;               /* stored messages */
        size_t n_dropped;       /* further messages that did not fit */
        char msg[DIAG_MAX][DIAG_LEN];
} Diagnostics;

void diag_clear(Diagnostics *d);
/* Adds "file:line: message" (line 0: "file: message"). */
void diag_add(Diagnostics *d, const char *file, unsigned line, const char *fmt, ...) _printf_(4, 5);
size_t diag_count(const Diagnostics *d);        /* n + n_dropped */
