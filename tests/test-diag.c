/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The parsers' shared diagnostics: quoting cuts at a byte bound without
 * splitting a UTF-8 sequence, diag_error() counts, a long message is cut
 * at DIAG_LEN and never its file:line. */

#include <limits.h>
#include <string.h>

#include "diag.h"
#include "tests.h"

static void test_quote(void) {
        char msg[64];

        CHECK_EQ_INT(diag_quote_len("short", 8), 5);
        CHECK_EQ_INT(diag_quote_len("12345678", 8), 8);        /* exactly the bound: whole */
        CHECK_EQ_INT(diag_quote_len("123456789", 8), 8);
        /* "é" is two bytes at 7 and 8: not split, cut before it. */
        CHECK_EQ_INT(diag_quote_len("1234567\xc3\xa9", 8), 7);
        /* A four-byte sequence across the bound. */
        CHECK_EQ_INT(diag_quote_len("123456\xf0\x9f\x98\x80", 8), 6);

        (void) snprintf(msg, sizeof(msg), "'%.*s%s'", DIAG_QUOTE("123456789", 8));
        CHECK_STREQ(msg, "'12345678…'");
        (void) snprintf(msg, sizeof(msg), "'%.*s%s'", DIAG_QUOTE("1234", 8));
        CHECK_STREQ(msg, "'1234'");
}

static void test_error(void) {
        static Diagnostics d;
        char long_text[400];
        unsigned n = 0;

        diag_clear(&d);
        diag_error(&d, &n, "a.conf", 3, "Unknown key '%s'", "Foo");
        diag_error(&d, &n, "a.conf", 0, "Medium=%u is above OOM=%u", 70u, 60u);
        CHECK_EQ_INT(n, 2);
        CHECK_EQ_INT(diag_count(&d), 2);
        CHECK_STREQ(d.msg[0], "a.conf:3: Unknown key 'Foo'");
        CHECK_STREQ(d.msg[1], "a.conf: Medium=70 is above OOM=60");

        memset(long_text, 'x', sizeof(long_text) - 1);
        long_text[sizeof(long_text) - 1] = '\0';
        diag_error(&d, &n, "b.policy", 12, "%s", long_text);
        CHECK_EQ_INT(strlen(d.msg[2]), DIAG_LEN - 1);
        CHECK(strncmp(d.msg[2], "b.policy:12: xxx", 16) == 0);

        /* The count stops where an int return would overflow. */
        n = INT_MAX;
        diag_error(NULL, &n, "c.conf", 1, "ignored");
        CHECK_EQ_INT(n, INT_MAX);
}

int main(void) {
        test_quote();
        test_error();
        return test_exit("test-diag");
}
