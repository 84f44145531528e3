/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pure parsers for the kernel's memory text files. The text is (pointer,
 * length): it need not be NUL-terminated and may hold any bytes, NUL
 * included, which are treated as ordinary (wrong) characters. Nothing here
 * reads past len, allocates or logs.
 *
 * Errors, the same for every parser:
 *   -EBADMSG  the text does not have the expected shape (missing key, a
 *             value that is not a number, a line cut in the middle);
 *   -ERANGE   a number is well-formed but does not fit (more than 2^64-1,
 *             kB that overflow as bytes, a PSI average above 100.00);
 *   -ENOENT   keyed_u64_parse() only: the key is not there.
 * *ret is written only on success.
 *
 * Only the lines a parser uses are checked: a future kernel adding a line in
 * a new format must not blind the daemon. Where a key appears twice (no
 * kernel does that) the first one counts.
 */

#include "proc-parse.h"

/* One line, without its '\n'. */
typedef struct Span {
        const char *p;
        size_t n;
} Span;

/* Steps to the next line of text; false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos, Span *ret) {
        const char *start, *nl;
        size_t n;

        if (*pos >= len)
                return false;

        start = text + *pos;
        nl = memchr(start, '\n', len - *pos);
        n = nl ? (size_t) (nl - start) : len - *pos;
        *ret = (Span) { start, n };
        *pos += n + (nl ? 1 : 0);
        return true;
}

static bool span_eq(Span s, const char *str) {
        size_t l = strlen(str);

        return s.n == l && memcmp(s.p, str, l) == 0;
}

static Span span_skip_blanks(Span s) {
        while (s.n > 0 && (*s.p == ' ' || *s.p == '\t')) {
                s.p++;
                s.n--;
        }
        return s;
}

/* Splits at the first sep: key before it, value after it without leading
 * blanks. Without sep the whole line is the key and the value is empty. */
static void span_split(Span line, char sep, Span *ret_key, Span *ret_value) {
        const char *at = memchr(line.p, sep, line.n);

        if (!at) {
                *ret_key = line;
                *ret_value = (Span) { line.p + line.n, 0 };
                return;
        }
        *ret_key = (Span) { line.p, (size_t) (at - line.p) };
        *ret_value = span_skip_blanks((Span) { at + 1, line.n - ret_key->n - 1 });
}

/* Length of the run of decimal digits at the start of s. */
static size_t span_digits(Span s) {
        size_t i = 0;

        while (i < s.n && s.p[i] >= '0' && s.p[i] <= '9')
                i++;
        return i;
}

/* The whole span is one unsigned decimal number: no sign, no blanks. */
static int parse_u64(Span s, uint64_t *ret) {
        uint64_t v = 0;

        if (s.n == 0 || span_digits(s) != s.n)
                return -EBADMSG;

        for (size_t i = 0; i < s.n; i++)
                if (__builtin_mul_overflow(v, 10, &v) ||
                    __builtin_add_overflow(v, (uint64_t) (s.p[i] - '0'), &v))
                        return -ERANGE;

        *ret = v;
        return 0;
}

enum {
        VM_PGSCAN_ANON,
        VM_PGSCAN_FILE,
        VM_PGSTEAL_ANON,
        VM_PGSTEAL_FILE,
        VM_PGSCAN,
        VM_PGSTEAL,
        VM_PGSCAN_KSWAPD,
        VM_PGSCAN_DIRECT,
        VM_PGSCAN_KHUGEPAGED,
        VM_PGSCAN_PROACTIVE,
        VM_PGSTEAL_KSWAPD,
        VM_PGSTEAL_DIRECT,
        VM_PGSTEAL_KHUGEPAGED,
        VM_PGSTEAL_PROACTIVE,
        VM_OOM_KILL,
        _VM_MAX,
};

static const char *const vmstat_keys[_VM_MAX] = {
        [VM_PGSCAN_ANON]        = "pgscan_anon",
        [VM_PGSCAN_FILE]        = "pgscan_file",
        [VM_PGSTEAL_ANON]       = "pgsteal_anon",
        [VM_PGSTEAL_FILE]       = "pgsteal_file",
        [VM_PGSCAN]             = "pgscan",             /* cgroup2 memory.stat */
        [VM_PGSTEAL]            = "pgsteal",
        [VM_PGSCAN_KSWAPD]      = "pgscan_kswapd",
        [VM_PGSCAN_DIRECT]      = "pgscan_direct",
        [VM_PGSCAN_KHUGEPAGED]  = "pgscan_khugepaged",  /* 5.16+ */
        [VM_PGSCAN_PROACTIVE]   = "pgscan_proactive",   /* 6.x, memory.reclaim */
        [VM_PGSTEAL_KSWAPD]     = "pgsteal_kswapd",
        [VM_PGSTEAL_DIRECT]     = "pgsteal_direct",
        [VM_PGSTEAL_KHUGEPAGED] = "pgsteal_khugepaged",
        [VM_PGSTEAL_PROACTIVE]  = "pgsteal_proactive",
        [VM_OOM_KILL]           = "oom_kill",
};

typedef struct VmstatFields {
        uint64_t value[_VM_MAX];
        bool have[_VM_MAX];
} VmstatFields;

static int vmstat_collect(const char *text, size_t len, VmstatFields *f) {
        Span line, key, value;
        size_t pos = 0;
        int r;

        while (next_line(text, len, &pos, &line)) {
                span_split(line, ' ', &key, &value);
                for (size_t i = 0; i < _VM_MAX; i++) {
                        if (f->have[i] || !span_eq(key, vmstat_keys[i]))
                                continue;
                        r = parse_u64(value, &f->value[i]);
                        if (r < 0)
                                return r;
                        f->have[i] = true;
                        break;
                }
        }
        return 0;
}

/* Sums the fields that are there. Wrapping is fine: the caller only takes
 * differences, and those stay right modulo 2^64. */
static uint64_t vmstat_sum(const VmstatFields *f, const unsigned *idx, size_t n) {
        uint64_t sum = 0;

        for (size_t i = 0; i < n; i++)
                if (f->have[idx[i]])
                        sum += f->value[idx[i]];
        return sum;
}

static bool vmstat_have(const VmstatFields *f, const unsigned *idx, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!f->have[idx[i]])
                        return false;
        return true;
}

int vmstat_parse(const char *text, size_t len, VmstatCounters *ret) {
        /* Counter families, best first. anon+file (5.8+) count memcg-limit reclaim,
         * which pgscan_direct misses (docs/kernel.md#vmstat-counters); "pgscan" is cgroup2's total;
         * kswapd+direct (4.8+) is what remains on older kernels. Scan and steal
         * always come from the same family, or the ratio means nothing. */
        static const unsigned anon_file[] = {
                VM_PGSCAN_ANON, VM_PGSCAN_FILE, VM_PGSTEAL_ANON, VM_PGSTEAL_FILE };
        static const unsigned total[] = { VM_PGSCAN, VM_PGSTEAL };
        static const unsigned reclaimer_required[] = {
                VM_PGSCAN_KSWAPD, VM_PGSCAN_DIRECT, VM_PGSTEAL_KSWAPD, VM_PGSTEAL_DIRECT };
        static const unsigned reclaimer_scan[] = {
                VM_PGSCAN_KSWAPD, VM_PGSCAN_DIRECT, VM_PGSCAN_KHUGEPAGED, VM_PGSCAN_PROACTIVE };
        static const unsigned reclaimer_steal[] = {
                VM_PGSTEAL_KSWAPD, VM_PGSTEAL_DIRECT, VM_PGSTEAL_KHUGEPAGED, VM_PGSTEAL_PROACTIVE };
        VmstatFields f = {};
        VmstatCounters c = {};
        int r;

        r = vmstat_collect(text, len, &f);
        if (r < 0)
                return r;

        if (vmstat_have(&f, anon_file, ELEMENTSOF(anon_file))) {
                c.pgscan = vmstat_sum(&f, anon_file, 2);
                c.pgsteal = vmstat_sum(&f, anon_file + 2, 2);
        } else if (vmstat_have(&f, total, ELEMENTSOF(total))) {
                c.pgscan = f.value[VM_PGSCAN];
                c.pgsteal = f.value[VM_PGSTEAL];
        } else if (vmstat_have(&f, reclaimer_required, ELEMENTSOF(reclaimer_required))) {
                c.pgscan = vmstat_sum(&f, reclaimer_scan, ELEMENTSOF(reclaimer_scan));
                c.pgsteal = vmstat_sum(&f, reclaimer_steal, ELEMENTSOF(reclaimer_steal));
        } else
                return -EBADMSG;

        c.have_oom_kill = f.have[VM_OOM_KILL];
        c.oom_kill = f.value[VM_OOM_KILL];
        *ret = c;
        return 0;
}

int vmstat_parse_machine(const char *text, size_t len, VmstatCounters *ret) {
        /* Proactive reclaim (memory.reclaim) is a cgroup's too: left out. */
        static const unsigned required[] = {
                VM_PGSCAN_KSWAPD, VM_PGSCAN_DIRECT, VM_PGSTEAL_KSWAPD, VM_PGSTEAL_DIRECT };
        static const unsigned scan[] = { VM_PGSCAN_KSWAPD, VM_PGSCAN_DIRECT, VM_PGSCAN_KHUGEPAGED };
        static const unsigned steal[] = { VM_PGSTEAL_KSWAPD, VM_PGSTEAL_DIRECT, VM_PGSTEAL_KHUGEPAGED };
        VmstatFields f = {};
        int r;

        r = vmstat_collect(text, len, &f);
        if (r < 0)
                return r;
        if (!vmstat_have(&f, required, ELEMENTSOF(required)))
                return -EBADMSG;
        *ret = (VmstatCounters) {
                .pgscan = vmstat_sum(&f, scan, ELEMENTSOF(scan)),
                .pgsteal = vmstat_sum(&f, steal, ELEMENTSOF(steal)),
                .have_oom_kill = f.have[VM_OOM_KILL],
                .oom_kill = f.value[VM_OOM_KILL],
        };
        return 0;
}

/* "      24683568 kB" → bytes. The kernel prints every size line in kB. */
static int meminfo_value(Span value, uint64_t *ret) {
        size_t d = span_digits(value);
        uint64_t kb;
        Span unit;
        int r;

        r = parse_u64((Span) { value.p, d }, &kb);
        if (r < 0)
                return r;
        unit = span_skip_blanks((Span) { value.p + d, value.n - d });
        if (unit.n == value.n - d || !span_eq(unit, "kB"))
                return -EBADMSG;
        if (__builtin_mul_overflow(kb, 1024, ret))
                return -ERANGE;
        return 0;
}

int meminfo_parse(const char *text, size_t len, Meminfo *ret) {
        static const char *const keys[] = { "MemTotal", "MemAvailable", "SwapTotal", "SwapFree" };
        uint64_t v[ELEMENTSOF(keys)] = {};
        bool have[ELEMENTSOF(keys)] = {};
        Span line, key, value;
        size_t pos = 0;
        int r;

        while (next_line(text, len, &pos, &line)) {
                span_split(line, ':', &key, &value);
                for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                        if (have[i] || !span_eq(key, keys[i]))
                                continue;
                        r = meminfo_value(value, &v[i]);
                        if (r < 0)
                                return r;
                        have[i] = true;
                        break;
                }
        }

        /* MemAvailable exists since 3.14. No Swap* lines: no swap (0). */
        if (!have[0] || !have[1])
                return -EBADMSG;

        *ret = (Meminfo) {
                .mem_total_bytes = v[0],
                .mem_available_bytes = v[1],
                .swap_total_bytes = v[2],
                .swap_free_bytes = v[3],
        };
        return 0;
}

/* "12.34" → 1234, "5" → 500, "0.5" → 50. The kernel prints "%lu.%02lu". */
static int psi_avg(Span s, unsigned *ret) {
        size_t d = span_digits(s), f = 0;
        uint64_t whole, frac = 0;
        int r;

        r = parse_u64((Span) { s.p, d }, &whole);
        if (r < 0)
                return r;
        if (d < s.n) {
                Span rest = { s.p + d + 1, s.n - d - 1 };

                f = span_digits(rest);
                if (s.p[d] != '.' || f == 0 || f > 2 || f != rest.n)
                        return -EBADMSG;
                (void) parse_u64(rest, &frac);
                if (f == 1)
                        frac *= 10;
        }
        /* A share of time: never above 100 %. */
        if (whole > 100 || whole * 100 + frac > 10000)
                return -ERANGE;
        *ret = (unsigned) (whole * 100 + frac);
        return 0;
}

/* "avg10=0.00 avg60=0.00 avg300=0.00 total=0", fields in any order, unknown
 * fields skipped, all four required. */
static int psi_line(Span s, PsiLine *ret) {
        enum { F_AVG10, F_AVG60, F_AVG300, F_TOTAL, _F_MAX };
        static const char *const names[_F_MAX] = { "avg10", "avg60", "avg300", "total" };
        unsigned have = 0;
        PsiLine l = {};
        int r = 0;

        for (s = span_skip_blanks(s); s.n > 0; s = span_skip_blanks(s)) {
                const char *sp = memchr(s.p, ' ', s.n);
                Span tok = { s.p, sp ? (size_t) (sp - s.p) : s.n }, name, value;
                unsigned i;

                s = (Span) { s.p + tok.n, s.n - tok.n };
                if (!memchr(tok.p, '=', tok.n))
                        return -EBADMSG;
                span_split(tok, '=', &name, &value);
                for (i = 0; i < _F_MAX && !span_eq(name, names[i]); i++)
                        ;
                if (i == _F_MAX || (have & (1u << i)))
                        continue;

                r = i == F_AVG10  ? psi_avg(value, &l.avg10_permyriad) :
                    i == F_AVG60  ? psi_avg(value, &l.avg60_permyriad) :
                    i == F_AVG300 ? psi_avg(value, &l.avg300_permyriad) :
                                    parse_u64(value, &l.total_usec);
                if (r < 0)
                        return r;
                have |= 1u << i;
        }

        if (have != (1u << _F_MAX) - 1)
                return -EBADMSG;
        *ret = l;
        return 0;
}

int psi_parse(const char *text, size_t len, PsiStats *ret) {
        PsiStats st = {};
        bool have_some = false;
        Span line, kind, rest;
        size_t pos = 0;
        int r;

        while (next_line(text, len, &pos, &line)) {
                span_split(line, ' ', &kind, &rest);
                if (span_eq(kind, "some") && !have_some) {
                        r = psi_line(rest, &st.some);
                        have_some = r >= 0;
                } else if (span_eq(kind, "full") && !st.have_full) {
                        r = psi_line(rest, &st.full);
                        st.have_full = r >= 0;
                } else
                        continue;
                if (r < 0)
                        return r;
        }

        /* "full" is missing for the system-wide CPU file before 5.13; "some" never is. */
        if (!have_some)
                return -EBADMSG;
        *ret = st;
        return 0;
}

int keyed_u64_parse(const char *text, size_t len, const char *key, uint64_t *ret) {
        Span line, k, value;
        size_t pos = 0;

        if (!key || !*key)
                return -EINVAL;

        while (next_line(text, len, &pos, &line)) {
                /* The key must be followed by a space: "pgscan" is not "pgscan_direct". */
                if (!memchr(line.p, ' ', line.n))
                        continue;
                span_split(line, ' ', &k, &value);
                if (span_eq(k, key))
                        return parse_u64(value, ret);
        }
        return -ENOENT;
}

int single_u64_parse(const char *text, size_t len, uint64_t *ret) {
        Span s = { text, len };

        /* One trailing newline, as cgroup files end; nothing else around the value. */
        if (s.n > 0 && s.p[s.n - 1] == '\n')
                s.n--;
        if (span_eq(s, "max")) {
                *ret = UINT64_MAX;
                return 0;
        }
        return parse_u64(s, ret);
}
