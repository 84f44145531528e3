/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Values of --print-events lines (vmpressured(8), EVENT LINES) that come
 * from outside the daemon, such as a process's name: a process may call
 * itself "x unit=evil" (prctl(PR_SET_NAME), 15 bytes), which printed as it
 * is would read as a second unit= field. Pure, no allocation.
 *
 * A value that is not empty and holds only printable ASCII other than the
 * double quote, the backslash and '=' is printed as it is. Any other is
 * put in double quotes, inside which '"' and '\' are escaped with a
 * backslash, newline and tab as \n and \t, and every other byte below
 * 0x20 or above 0x7e as \xNN (two lowercase hex digits), as in C.
 */

#include <stddef.h>

/* Room for the escaped form of a value of n bytes, with the NUL. */
#define EVENT_VALUE_SIZE(n) (4 * (n) + 3)

/* Writes s as described above into buf (size bytes, at least 3) and
 * returns buf. When it does not fit (see EVENT_VALUE_SIZE()), the value is
 * cut at a whole character and the quotes are still closed. */
const char *event_value_escape(const char *s, char *buf, size_t size);
