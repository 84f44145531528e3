/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A pure INI tokenizer shared by vmpressured.conf and the policy files.
 * Syntax like systemd's unit files: [Section], Key=Value, '#' and ';'
 * comments, surrounding white space stripped. */

#include "diag.h"

#define INI_LINE_MAX 1024

/* Called for every "[Section]" (key == NULL, value == NULL) and every
 * Key=Value. Return 0 to go on, a negative errno to stop. */
typedef int (*ini_handler_t)(const char *section, const char *key, const char *value,
                             unsigned line, void *userdata);

/* Parses text of len bytes. Syntax errors (a line that is neither a
 * section, an assignment, a comment nor blank; an unterminated section; a
 * NUL byte; a line over INI_LINE_MAX; a key before any section) are added
 * to diag and the line is skipped. Returns the number of syntax errors, or
 * the handler's negative errno. */
int ini_parse(const char *text, size_t len, const char *filename,
              ini_handler_t handler, void *userdata, Diagnostics *diag);

/* Value helpers: 0 or -EINVAL. */
int parse_boolean(const char *v, bool *ret);            /* yes/no/true/false/on/off/1/0 */
int parse_unsigned(const char *v, unsigned min, unsigned max, unsigned *ret);
/* "500ms", "2s", "1min", "250us"; a bare number is in default_unit_usec. */
int parse_duration(const char *v, usec_t default_unit_usec, usec_t *ret);
/* "64M", "1G", "4096", "512K" (base 1024). */
int parse_size(const char *v, uint64_t *ret);
/* "12.3G", "640M", "512K" or bytes: one decimal, base 1024. */
const char *format_size(char *buf, size_t size, uint64_t bytes);
