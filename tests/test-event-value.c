/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "event-value.h"
#include "macro.h"
#include "tests.h"

typedef struct EscapeCase {
        const char *name;
        const char *in;
        const char *out;
} EscapeCase;

static void test_escape_table(void) {
        static const EscapeCase cases[] = {
                { "plain name", "postgres", "postgres" },
                { "unit name", "batch@3.service", "batch@3.service" },
                { "a second field smuggled in", "x unit=evil", "\"x unit=evil\"" },
                { "'=' alone", "a=b", "\"a=b\"" },
                { "empty", "", "\"\"" },
                { "quote and backslash", "a\"b\\c", "\"a\\\"b\\\\c\"" },
                { "systemd's escaped unit name", "dev-disk-by\\x2duuid.swap", "\"dev-disk-by\\\\x2duuid.swap\"" },
                { "newline and tab", "a\nb\tc", "\"a\\nb\\tc\"" },
                { "other control bytes and DEL", "\x01\x1f\x7f", "\"\\x01\\x1f\\x7f\"" },
                { "not ASCII", "caf\xc3\xa9", "\"caf\\xc3\\xa9\"" },
                { "15 bytes of the worst kind", "\"\"\"\"\"\"\"\"\"\"\"\"\"\"\"",
                  "\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\"" },
        };
        char buf[EVENT_VALUE_SIZE(64)];

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const char *r = event_value_escape(cases[i].in, buf, sizeof(buf));

                if (!streq(r, cases[i].out))
                        fprintf(stderr, "case '%s'\n", cases[i].name);
                CHECK(r == buf);
                CHECK_STREQ(r, cases[i].out);
        }
        CHECK_STREQ(event_value_escape(NULL, buf, sizeof(buf)), "\"\"");
}

/* Every byte, in the worst case 4 bytes each: EVENT_VALUE_SIZE is enough. */
static void test_size(void) {
        char in[16], buf[EVENT_VALUE_SIZE(15)];

        memset(in, 0x01, 15);
        in[15] = '\0';
        CHECK_EQ_INT(strlen(event_value_escape(in, buf, sizeof(buf))), 4 * 15 + 2);
        CHECK_EQ_INT(buf[0], '"');
        CHECK_EQ_INT(buf[4 * 15 + 1], '"');
}

/* Too small: cut at a whole character, quotes closed, never past size. */
static void test_truncation(void) {
        char buf[32];

        memset(buf, 'X', sizeof(buf));
        CHECK_STREQ(event_value_escape("abcdef", buf, 5), "\"ab\"");
        CHECK_EQ_INT(buf[5], 'X');
        CHECK_STREQ(event_value_escape("a\"b", buf, 5), "\"a\"");     /* \" would not fit */
        CHECK_STREQ(event_value_escape("\x01zz", buf, 6), "\"\"");    /* nor \x01 */
        CHECK_STREQ(event_value_escape("abc", buf, 3), "\"\"");
        CHECK_STREQ(event_value_escape("abc", buf, 4), "abc");
        buf[0] = 'X';
        CHECK_STREQ(event_value_escape("abc", buf, 2), "");
        CHECK(event_value_escape("abc", NULL, 0) == NULL);
}

int main(void) {
        test_escape_table();
        test_size();
        test_truncation();
        return test_exit("test-event-value");
}
