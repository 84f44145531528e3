/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Diagnostics of a parser: "file:line: message", bounded, no allocation. */

#include <string.h>

#include "macro.h"

#define DIAG_MAX 64
#define DIAG_LEN 256

typedef struct Diagnostics {
        size_t n;               /* stored messages */
        size_t n_dropped;       /* further messages that did not fit */
        char msg[DIAG_MAX][DIAG_LEN];
} Diagnostics;

/* 16 KiB, in a mapping of its own (memory_table_new()): a parse runs at
 * start-up and at reload, and from the heap the block, mostly unwritten,
 * would be left free and never resident, for the first OOM to fault in
 * when an allocation lands there (test-oom-path-tight.py). NULL when out
 * of memory. */
Diagnostics *diag_new(void);
Diagnostics *diag_free(Diagnostics *d);         /* NULL */
DEFINE_TRIVIAL_CLEANUP_FUNC(Diagnostics *, diag_free);

void diag_clear(Diagnostics *d);
/* Adds "file:line: message" (line 0: "file: message"). */
void diag_add(Diagnostics *d, const char *file, unsigned line, const char *fmt, ...) _printf_(4, 5);
size_t diag_count(const Diagnostics *d);        /* n + n_dropped */

/* A parser's error: diag_add() and one more in *n_errors (which stops at
 * INT_MAX, so that it can be returned as an int). */
void diag_error(Diagnostics *d, unsigned *n_errors, const char *file, unsigned line, const char *fmt, ...)
        _printf_(5, 6);

/* How many bytes of v a message quotes: at most max, never cutting a UTF-8
 * sequence (v is valid UTF-8: ini.c checks every line). */
int diag_quote_len(const char *v, size_t max);
/* The three arguments of "'%.*s%s'": v cut to max bytes and "…" when cut. A
 * diag line is DIAG_LEN (256) bytes with its "file:line: ", so quoting more
 * than a quarter of it only gets the message's end truncated. */
#define DIAG_QUOTE(v, max) diag_quote_len((v), (max)), (v), (strlen(v) > (max) ? "…" : "")
