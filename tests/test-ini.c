/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The INI tokenizer and the value helpers: literal texts, the odd cases named. */

#include <limits.h>

#include "ini.h"
#include "tests.h"

#define F "test.ini"

/* What the handler saw, one line per call: "2:[Section]" or "3:Section.Key=Value". */
typedef struct Record {
        char out[8192];
        size_t len;
        int fail_at_line;       /* return -ENOBUFS from this line on; 0: never */
} Record;

static int record(const char *section, const char *key, const char *value, unsigned line, void *userdata) {
        Record *r = userdata;
        int n;

        if (r->fail_at_line > 0 && line >= (unsigned) r->fail_at_line)
                return -ENOBUFS;
        if (key)
                n = snprintf(r->out + r->len, sizeof(r->out) - r->len, "%u:%s.%s=%s\n", line, section, key, value);
        else
                n = snprintf(r->out + r->len, sizeof(r->out) - r->len, "%u:[%s]\n", line, section);
        if (n > 0)
                r->len = MIN(r->len + (size_t) n, sizeof(r->out) - 1);
        return 0;
}

typedef struct IniCase {
        const char *name;
        const char *text;
        size_t len;             /* 0: strlen(text) */
        int ret;                /* what ini_parse() returns: the number of errors */
        const char *seen;       /* what the handler saw */
        const char *diag[4];    /* the exact messages, in order */
} IniCase;

static const IniCase cases[] = {
        { "empty file", "", 0, 0, "", {} },
        { "comments only", "# one\n; two\n   # indented\n\t; tab\n\n   \n", 0, 0, "", {} },
        { "section and key", "[A]\nk=v\n", 0, 0, "1:[A]\n2:A.k=v\n", {} },
        { "white space stripped", "  [A]  \n  Key_1  =   some value\t \n", 0, 0,
          "1:[A]\n2:A.Key_1=some value\n", {} },
        { "empty value", "[A]\nk=\nj =  \n", 0, 0, "1:[A]\n2:A.k=\n3:A.j=\n", {} },
        { "value holds '=' and '#'", "[A]\nk=a=b # not a comment\n", 0, 0, "1:[A]\n2:A.k=a=b # not a comment\n", {} },
        { "CRLF line endings", "[A]\r\nk=v\r\n\r\n# c\r\nj=w\r\n", 0, 0, "1:[A]\n2:A.k=v\n5:A.j=w\n", {} },
        { "no trailing newline", "[A]\nk=v", 0, 0, "1:[A]\n2:A.k=v\n", {} },
        { "byte order mark", "\xef\xbb\xbf[A]\nk=v\n", 0, 0, "1:[A]\n2:A.k=v\n", {} },
        { "section repeated", "[A]\nk=1\n[B]\nk=2\n[A]\nk=3\n", 0, 0,
          "1:[A]\n2:A.k=1\n3:[B]\n4:B.k=2\n5:[A]\n6:A.k=3\n", {} },
        { "UTF-8 value", "[A]\nk=caf\xc3\xa9 \xe2\x80\xa6\n", 0, 0, "1:[A]\n2:A.k=caf\xc3\xa9 \xe2\x80\xa6\n", {} },
        { "Latin-1 in a comment", "# Ren\xe9\n[A]\n", 0, 0, "2:[A]\n", {} },
        { "key before section", "k=v\n[A]\nj=w\n", 0, 1, "2:[A]\n3:A.j=w\n",
          { F ":1: Assignment before any section header, ignoring" } },
        { "unterminated section", "[A]\nk=1\n[B\nk=2\n[C]\nk=3\n", 0, 1, "1:[A]\n2:A.k=1\n5:[C]\n6:C.k=3\n",
          { F ":3: Unterminated section header '[B', ignoring" } },
        { "empty section name", "[]\nk=v\n", 0, 1, "", { F ":1: Empty section name, ignoring" } },
        { "garbage after section", "[A] x\nk=v\n", 0, 1, "",
          { F ":1: Garbage after section header [A], ignoring" } },
        { "comment after section", "[A] # c\n", 0, 1, "",
          { F ":1: Garbage after section header [A], ignoring" } },
        { "bad section name", "[A B]\n[A=B]\n", 0, 2, "",
          { F ":1: Invalid section name [A B], ignoring", F ":2: Invalid section name [A=B], ignoring" } },
        { "missing '='", "[A]\njunk\nk=v\n", 0, 1, "1:[A]\n3:A.k=v\n",
          { F ":2: Missing '=' in line 'junk', ignoring" } },
        { "empty key", "[A]\n = v\n", 0, 1, "1:[A]\n", { F ":2: Empty key name, ignoring" } },
        { "bad key", "[A]\nk-y=v\nk y=v\n", 0, 2, "1:[A]\n",
          { F ":2: Invalid key name 'k-y', ignoring", F ":3: Invalid key name 'k y', ignoring" } },
        { "NUL byte", "[A]\nk=v\0x\nj=w\n", 14, 1, "1:[A]\n3:A.j=w\n", { F ":2: NUL byte in line, ignoring" } },
        { "NUL byte in a comment", "[A]\n#\0\nj=w\n", 11, 1, "1:[A]\n3:A.j=w\n", { F ":2: NUL byte in line, ignoring" } },
        { "control character", "[A]\nk=a\rb\nk=\x1b[31m\n", 0, 2, "1:[A]\n",
          { F ":2: Control character in line, ignoring", F ":3: Control character in line, ignoring" } },
        { "invalid UTF-8", "[A]\nk=\xff\nk=\xc0\xaf\nk=\xed\xa0\x80\nk=\xe2\x80\n", 0, 4, "1:[A]\n",
          { F ":2: Invalid UTF-8 in line, ignoring", F ":3: Invalid UTF-8 in line, ignoring",
            F ":4: Invalid UTF-8 in line, ignoring", F ":5: Invalid UTF-8 in line, ignoring" } },
        { "len cuts the text", "[A]\nk=value\n", 7, 0, "1:[A]\n2:A.k=v\n", {} },
        { "only newlines", "\n\n\n", 0, 0, "", {} },
        { "a lone CR", "\r", 0, 0, "", {} },
};

static void test_case(const IniCase *c) {
        size_t len = c->len ?: strlen(c->text);
        unsigned failed = tests_failed;
        Record rec = {};
        Diagnostics d;
        char *copy;
        int r;

        /* An exact-size copy without a terminator: valgrind sees any read past len. */
        copy = malloc(len ?: 1);
        memcpy(copy, c->text, len);
        diag_clear(&d);
        r = ini_parse(copy, len, F, record, &rec, &d);
        free(copy);

        CHECK_EQ_INT(r, c->ret);
        CHECK_STREQ(rec.out, c->seen);
        CHECK_EQ_INT(diag_count(&d), (size_t) c->ret);
        for (size_t i = 0; i < ELEMENTSOF(c->diag) && c->diag[i]; i++)
                CHECK_STREQ(i < d.n ? d.msg[i] : "(missing)", c->diag[i]);
        if (tests_failed > failed)
                fprintf(stderr, "  in case: %s\n", c->name);
}

static void test_long_lines(void) {
        static char text[8192];
        Record rec = {};
        Diagnostics d;
        size_t n;
        int r;

        /* Exactly INI_LINE_MAX bytes is fine. */
        n = (size_t) snprintf(text, sizeof(text), "[A]\nk=");
        memset(text + n, 'x', INI_LINE_MAX - 2);
        n += INI_LINE_MAX - 2;
        n += (size_t) snprintf(text + n, sizeof(text) - n, "\n");
        diag_clear(&d);
        r = ini_parse(text, n, F, record, &rec, &d);
        CHECK_EQ_INT(r, 0);
        CHECK_EQ_INT(rec.len, strlen("1:[A]\n2:A.k=") + INI_LINE_MAX - 2 + 1);

        /* One more byte is too long; so is a line of 5000; the lines after still count. */
        n = (size_t) snprintf(text, sizeof(text), "[A]\nk=");
        memset(text + n, 'x', INI_LINE_MAX - 1);
        n += INI_LINE_MAX - 1;
        text[n++] = '\n';
        memset(text + n, 'y', 5000);
        n += 5000;
        n += (size_t) snprintf(text + n, sizeof(text) - n, "\r\nj=w");
        rec = (Record) {};
        diag_clear(&d);
        r = ini_parse(text, n, F, record, &rec, &d);
        CHECK_EQ_INT(r, 2);
        CHECK_STREQ(rec.out, "1:[A]\n4:A.j=w\n");
        CHECK_STREQ(d.msg[0], F ":2: Line too long (1025 bytes, at most 1024), ignoring");
        CHECK_STREQ(d.msg[1], F ":3: Line too long (5000 bytes, at most 1024), ignoring");

        /* A long bad line is quoted in part, cut at a character boundary. */
        n = (size_t) snprintf(text, sizeof(text), "[A]\n");
        for (int i = 0; i < 40; i++)
                n += (size_t) snprintf(text + n, sizeof(text) - n, "\xc3\xa9");
        rec = (Record) {};
        diag_clear(&d);
        r = ini_parse(text, n, F, record, &rec, &d);
        CHECK_EQ_INT(r, 1);
        CHECK_STREQ(d.msg[0], F ":2: Missing '=' in line '"
                    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "…', ignoring");
}

static void test_handler_stops(void) {
        Record rec = { .fail_at_line = 3 };
        Diagnostics d;
        const char text[] = "[A]\nk=1\nk=2\nk=3\n";

        diag_clear(&d);
        CHECK_EQ_INT(ini_parse(text, strlen(text), F, record, &rec, &d), -ENOBUFS);
        CHECK_STREQ(rec.out, "1:[A]\n2:A.k=1\n");
        CHECK_EQ_INT(ini_parse(NULL, 0, F, record, &rec, &d), 0);
        CHECK_EQ_INT(ini_parse(NULL, 1, F, record, &rec, &d), -EINVAL);
}

static uint64_t xorshift(uint64_t *s) {
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

/* Diagnostics must stay printable text, whatever the input was. */
static bool diag_clean(const Diagnostics *d) {
        for (size_t i = 0; i < d->n; i++)
                for (const char *c = d->msg[i]; *c; c++)
                        if ((unsigned char) *c < 0x20 || *c == 0x7f)
                                return false;
        return true;
}

static void test_garbage(void) {
        /* Mostly the characters the parser cares about, plus any byte. */
        static const char alphabet[] = "[]=#;\n\r\t k_A\0\xc3\xa9\xff";
        const size_t len = 160 * 1024;
        uint64_t seed = 0x9e3779b97f4a7c15ULL;
        Diagnostics d;
        Record rec;
        char *buf = malloc(len);

        for (int round = 0; round < 8; round++) {
                for (size_t i = 0; i < len; i++) {
                        uint64_t x = xorshift(&seed);
                        buf[i] = round % 2 == 0 ? (char) x : alphabet[x % (sizeof(alphabet) - 1)];
                }
                rec = (Record) {};
                diag_clear(&d);
                int r = ini_parse(buf, len, "garbage", record, &rec, &d);
                CHECK(r > 0);
                CHECK_EQ_INT(diag_count(&d), r);
                CHECK(d.n <= DIAG_MAX);
                CHECK(diag_clean(&d));
                CHECK(strncmp(d.msg[0], "garbage:", 8) == 0);
        }
        free(buf);
}

typedef struct { const char *v; int ret; bool b; } BoolCase;
typedef struct { const char *v; unsigned min, max; int ret; unsigned u; } UnsignedCase;
typedef struct { const char *v; usec_t unit; int ret; usec_t u; } DurationCase;
typedef struct { const char *v; int ret; uint64_t bytes; } SizeCase;

static void test_parse_boolean(void) {
        static const BoolCase t[] = {
                { "yes", 0, true }, { "YES", 0, true }, { "true", 0, true }, { "on", 0, true }, { "1", 0, true },
                { "no", 0, false }, { "False", 0, false }, { "off", 0, false }, { "0", 0, false },
                { "", -EINVAL }, { "y", -EINVAL }, { "2", -EINVAL }, { " yes", -EINVAL }, { "yes ", -EINVAL },
                { "enable", -EINVAL }, { NULL, -EINVAL },
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                bool b = !t[i].b;
                CHECK_EQ_INT(parse_boolean(t[i].v, &b), t[i].ret);
                if (t[i].ret == 0)
                        CHECK_EQ_INT(b, t[i].b);
        }
}

static void test_parse_unsigned(void) {
        static const UnsignedCase t[] = {
                { "0", 0, 10, 0, 0 },
                { "007", 0, 10, 0, 7 },
                { "10", 0, 10, 0, 10 },
                { "11", 0, 10, -EINVAL },
                { "0", 1, 10, -EINVAL },
                { "4294967295", 0, UINT_MAX, 0, UINT_MAX },
                { "4294967296", 0, UINT_MAX, -EINVAL },
                { "18446744073709551616", 0, UINT_MAX, -EINVAL },
                { "99999999999999999999999", 0, UINT_MAX, -EINVAL },
                { "-1", 0, UINT_MAX, -EINVAL },
                { "+1", 0, UINT_MAX, -EINVAL },
                { " 1", 0, UINT_MAX, -EINVAL },
                { "1 ", 0, UINT_MAX, -EINVAL },
                { "", 0, UINT_MAX, -EINVAL },
                { "0x10", 0, UINT_MAX, -EINVAL },
                { "1e3", 0, UINT_MAX, -EINVAL },
                { "1.0", 0, UINT_MAX, -EINVAL },
                { NULL, 0, UINT_MAX, -EINVAL },
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                unsigned u = 12345;
                CHECK_EQ_INT(parse_unsigned(t[i].v, t[i].min, t[i].max, &u), t[i].ret);
                CHECK_EQ_INT(u, t[i].ret == 0 ? t[i].u : 12345);
        }
}

static void test_parse_duration(void) {
        const usec_t S = USEC_PER_SEC, MS = USEC_PER_MSEC;
        const DurationCase t[] = {
                { "250us", S, 0, 250 },
                { "250usec", S, 0, 250 },
                { "500ms", S, 0, 500 * MS },
                { "500msec", S, 0, 500 * MS },
                { "2s", MS, 0, 2 * S },
                { "2sec", MS, 0, 2 * S },
                { "1min", S, 0, 60 * S },
                { "1m", S, 0, 60 * S },
                { "1h", S, 0, 3600 * S },
                { "1hr", S, 0, 3600 * S },
                { "1s500ms", S, 0, 1500 * MS },
                { "1min 30s", S, 0, 90 * S },
                { "1 s", S, 0, S },
                { " 2s ", S, 0, 2 * S },
                { "1s1s", S, 0, 2 * S },
                { "5", S, 0, 5 * S },
                { "5", MS, 0, 5 * MS },
                { "0", S, 0, 0 },
                { "0ms", S, 0, 0 },
                { "18446744073709551614us", S, 0, UINT64_MAX - 1 },
                { "18446744073709551615us", S, -EINVAL },       /* USEC_INFINITY */
                { "18446744073709551616us", S, -EINVAL },
                { "5124095577h", S, -EINVAL },
                { "18446744073709551s", S, -EINVAL },
                { "18446744073709551614us1us", S, -EINVAL },
                { "", S, -EINVAL },
                { "   ", S, -EINVAL },
                { "-1s", S, -EINVAL },
                { "+1s", S, -EINVAL },
                { "1s500", S, -EINVAL },
                { "1 2", S, -EINVAL },
                { "1x", S, -EINVAL },
                { "1S", S, -EINVAL },
                { "s", S, -EINVAL },
                { "1.5s", S, -EINVAL },
                { "1s,2s", S, -EINVAL },
                { "infinity", S, -EINVAL },
                { NULL, S, -EINVAL },
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                usec_t u = 4242;
                int r = parse_duration(t[i].v, t[i].unit, &u);
                if (r != t[i].ret)
                        fprintf(stderr, "  parse_duration(\"%s\")\n", t[i].v ?: "(null)");
                CHECK_EQ_INT(r, t[i].ret);
                CHECK_EQ_U64(u, t[i].ret == 0 ? t[i].u : 4242);
        }
}

static void test_parse_size(void) {
        static const SizeCase t[] = {
                { "0", 0, 0 },
                { "4096", 0, 4096 },
                { "4096B", 0, 4096 },
                { "512K", 0, 512 << 10 },
                { "512KiB", 0, 512 << 10 },
                { "64M", 0, UINT64_C(64) << 20 },
                { "64MiB", 0, UINT64_C(64) << 20 },
                { "1G", 0, UINT64_C(1) << 30 },
                { "3GiB", 0, UINT64_C(3) << 30 },
                { "2T", 0, UINT64_C(2) << 40 },
                { "16777215T", 0, UINT64_C(16777215) << 40 },
                { "16777216T", -EINVAL },
                { "18446744073709551615", 0, UINT64_MAX },
                { "18446744073709551616", -EINVAL },
                { "64MB", -EINVAL },
                { "64KB", -EINVAL },
                { "64m", -EINVAL },
                { "64 M", -EINVAL },
                { "1.5G", -EINVAL },
                { "-1", -EINVAL },
                { "M", -EINVAL },
                { "", -EINVAL },
                { "1P", -EINVAL },
                { NULL, -EINVAL },
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                uint64_t b = 4242;
                int r = parse_size(t[i].v, &b);
                if (r != t[i].ret)
                        fprintf(stderr, "  parse_size(\"%s\")\n", t[i].v ?: "(null)");
                CHECK_EQ_INT(r, t[i].ret);
                CHECK_EQ_U64(b, t[i].ret == 0 ? t[i].bytes : 4242);
        }
}

int main(void) {
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                test_case(&cases[i]);
        test_long_lines();
        test_handler_stops();
        test_garbage();
        test_parse_boolean();
        test_parse_unsigned();
        test_parse_duration();
        test_parse_size();
        return test_exit("test-ini");
}
