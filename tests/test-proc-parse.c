/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The /proc and cgroup text parsers. The "real" texts are excerpts copied from
 * the development machine (kernel 6.18, cgroup v1 memory + cgroup2 unified).
 * Every text is handed over in a heap buffer of exactly len bytes, no NUL
 * after it, so valgrind/ASan catch any read past len. */

#include "proc-parse.h"
#include "tests.h"

/* A string literal as (text, len), keeping embedded NULs. */
#define LIT(s) s, (sizeof(s) - 1)

static char *dup_exact(const char *s, size_t len) {
        char *p = malloc(len > 0 ? len : 1);

        if (!p)
                abort();
        memcpy(p, s, len);
        return p;
}

static int vmstat(const char *s, size_t len, VmstatCounters *ret) {
        _cleanup_(freep) char *p = dup_exact(s, len);

        return vmstat_parse(p, len, ret);
}

static int meminfo(const char *s, size_t len, Meminfo *ret) {
        _cleanup_(freep) char *p = dup_exact(s, len);

        return meminfo_parse(p, len, ret);
}

static int psi(const char *s, size_t len, PsiStats *ret) {
        _cleanup_(freep) char *p = dup_exact(s, len);

        return psi_parse(p, len, ret);
}

static int keyed(const char *s, size_t len, const char *key, uint64_t *ret) {
        _cleanup_(freep) char *p = dup_exact(s, len);

        return keyed_u64_parse(p, len, key, ret);
}

static int single(const char *s, size_t len, uint64_t *ret) {
        _cleanup_(freep) char *p = dup_exact(s, len);

        return single_u64_parse(p, len, ret);
}

/* /proc/vmstat, 6.18, during memcg-limit reclaim of page cache: pgscan_file
 * moves, pgscan_kswapd/direct do not (docs/kernel.md#vmstat-counters). */
static const char vmstat_real[] =
        "nr_free_pages 836234\n"
        "pgpgin 16317225\n"
        "pgrefill 0\n"
        "pgreuse 253165\n"
        "pgsteal_kswapd 0\n"
        "pgsteal_direct 0\n"
        "pgsteal_khugepaged 0\n"
        "pgsteal_proactive 0\n"
        "pgscan_kswapd 0\n"
        "pgscan_direct 0\n"
        "pgscan_khugepaged 0\n"
        "pgscan_proactive 0\n"
        "pgscan_direct_throttle 0\n"
        "pgscan_anon 0\n"
        "pgscan_file 3629968\n"
        "pgsteal_anon 0\n"
        "pgsteal_file 3629968\n"
        "zone_reclaim_success 0\n"
        "slabs_scanned 265\n"
        "drop_slab 2\n"
        "oom_kill 0\n"
        "numa_pte_updates 0\n";

static void test_vmstat_good(void) {
        static const struct {
                const char *name;
                const char *text;
                size_t len;
                uint64_t pgscan, pgsteal, oom_kill;
                bool have_oom_kill;
        } cases[] = {
                { "6.18 real: anon+file preferred", LIT(vmstat_real), 3629968, 3629968, 0, true },
                { "anon+file summed",
                  LIT("pgscan_kswapd 1\npgscan_direct 1\npgsteal_kswapd 1\npgsteal_direct 1\n"
                      "pgscan_anon 100\npgscan_file 900\npgsteal_anon 40\npgsteal_file 800\noom_kill 3\n"),
                  1000, 840, 3, true },
                { "5.4: kswapd+direct",
                  LIT("pgsteal_kswapd 90\npgsteal_direct 40\npgscan_kswapd 100\npgscan_direct 50\n"
                      "pgscan_direct_throttle 7\noom_kill 1\n"),
                  150, 130, 1, true },
                { "5.16: + khugepaged",
                  LIT("pgsteal_kswapd 90\npgsteal_direct 40\npgsteal_khugepaged 2\n"
                      "pgscan_kswapd 100\npgscan_direct 50\npgscan_khugepaged 3\n"),
                  153, 132, 0, false },
                { "6.x: + proactive",
                  LIT("pgsteal_kswapd 1\npgsteal_direct 2\npgsteal_khugepaged 3\npgsteal_proactive 4\n"
                      "pgscan_kswapd 10\npgscan_direct 20\npgscan_khugepaged 30\npgscan_proactive 40\n"),
                  100, 10, 0, false },
                { "anon/file incomplete: falls back",
                  LIT("pgscan_anon 5\npgscan_file 5\npgsteal_anon 5\n"
                      "pgscan_kswapd 10\npgscan_direct 20\npgsteal_kswapd 1\npgsteal_direct 2\n"),
                  30, 3, 0, false },
                { "cgroup2 memory.stat",
                  LIT("anon 1019904\nfile 4096\npgfault 2211\npgscan 1200\npgsteal 1100\n"
                      "pgscan_kswapd 1000\npgscan_direct 200\npgsteal_kswapd 1000\npgsteal_direct 100\n"
                      "pgactivate 0\n"),
                  1200, 1100, 0, false },
                { "no trailing newline",
                  LIT("pgscan_kswapd 1\npgscan_direct 2\npgsteal_kswapd 3\npgsteal_direct 4"),
                  3, 7, 0, false },
                { "malformed line that is not used",
                  LIT("nr_free_pages lots\n\n garbage\n\xff\xfe\npgscan 1\npgsteal 1\n"),
                  1, 1, 0, false },
                { "NUL in a line that is not used",
                  LIT("nr_free\0pages 1\npgscan 2\npgsteal 1\n"),
                  2, 1, 0, false },
                { "largest value",
                  LIT("pgscan 18446744073709551615\npgsteal 0\n"),
                  UINT64_MAX, 0, 0, false },
                { "sum wraps (deltas stay right)",
                  LIT("pgscan_anon 18446744073709551615\npgscan_file 2\npgsteal_anon 0\npgsteal_file 0\n"),
                  1, 0, 0, false },
                { "first of a duplicate key counts",
                  LIT("pgscan 5\npgsteal 4\npgscan 50\n"),
                  5, 4, 0, false },
                /* len stops inside the last value: "pgsteal_file 45" is read as 4. */
                { "len shorter than the text",
                  "pgscan_anon 1\npgscan_file 2\npgsteal_anon 3\npgsteal_file 45\n",
                  sizeof("pgscan_anon 1\npgscan_file 2\npgsteal_anon 3\npgsteal_file 4") - 1,
                  3, 7, 0, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                VmstatCounters c = {};
                int r = vmstat(cases[i].text, cases[i].len, &c);

                if (r != 0)
                        fprintf(stderr, "case \"%s\"\n", cases[i].name);
                CHECK_EQ_INT(r, 0);
                CHECK_EQ_U64(c.pgscan, cases[i].pgscan);
                CHECK_EQ_U64(c.pgsteal, cases[i].pgsteal);
                CHECK_EQ_U64(c.oom_kill, cases[i].oom_kill);
                CHECK_EQ_INT(c.have_oom_kill, cases[i].have_oom_kill);
        }
}

static int vmstat_machine(const char *s, size_t len, VmstatCounters *ret) {
        _cleanup_(freep) char *p = dup_exact(s, len);

        return vmstat_parse_machine(p, len, ret);
}

/* The machine's own reclaim: kswapd+direct(+khugepaged), never anon+file (which
 * count a cgroup's limit reclaim too) and never proactive (memory.reclaim). */
static void test_vmstat_machine(void) {
        VmstatCounters c;

        /* During memcg-limit reclaim only anon/file move: the machine did not reclaim. */
        CHECK_EQ_INT(vmstat_machine(LIT(vmstat_real), &c), 0);
        CHECK_EQ_U64(c.pgscan, 0);
        CHECK_EQ_U64(c.pgsteal, 0);
        CHECK(c.have_oom_kill);

        CHECK_EQ_INT(vmstat_machine(LIT("pgscan_kswapd 100\npgscan_direct 20\npgscan_khugepaged 3\n"
                                        "pgscan_proactive 1000\npgsteal_kswapd 90\npgsteal_direct 10\n"
                                        "pgsteal_khugepaged 2\npgsteal_proactive 900\npgscan_anon 5000\n"
                                        "pgscan_file 6000\npgsteal_anon 1\npgsteal_file 2\n"), &c), 0);
        CHECK_EQ_U64(c.pgscan, 123);
        CHECK_EQ_U64(c.pgsteal, 102);
        CHECK(!c.have_oom_kill);

        /* 6.1 has no khugepaged/proactive lines. */
        CHECK_EQ_INT(vmstat_machine(LIT("pgsteal_kswapd 7\npgsteal_direct 1\npgscan_kswapd 9\n"
                                        "pgscan_direct 2\noom_kill 4\n"), &c), 0);
        CHECK_EQ_U64(c.pgscan, 11);
        CHECK_EQ_U64(c.pgsteal, 8);
        CHECK_EQ_U64(c.oom_kill, 4);

        /* A cgroup2 memory.stat ("pgscan"/"pgsteal" only) or anon+file alone is not the machine's. */
        CHECK_EQ_INT(vmstat_machine(LIT("pgscan 10\npgsteal 5\n"), &c), -EBADMSG);
        CHECK_EQ_INT(vmstat_machine(LIT("pgscan_anon 1\npgscan_file 2\npgsteal_anon 1\npgsteal_file 2\n"), &c),
                     -EBADMSG);
        CHECK_EQ_INT(vmstat_machine(LIT("pgscan_kswapd 1\npgscan_direct x\npgsteal_kswapd 1\n"
                                        "pgsteal_direct 1\n"), &c), -EBADMSG);
        CHECK_EQ_INT(vmstat_machine(LIT(""), &c), -EBADMSG);
}

static void test_vmstat_bad(void) {
        static const struct {
                const char *name;
                const char *text;
                size_t len;
                int r;
        } cases[] = {
                { "empty",                      LIT(""), -EBADMSG },
                { "only newlines",              LIT("\n\n\n"), -EBADMSG },
                { "no scan counter",            LIT("nr_free_pages 836234\noom_kill 0\n"), -EBADMSG },
                { "scan without steal",         LIT("pgscan 5\n"), -EBADMSG },
                { "_throttle is not a family",  LIT("pgscan_direct_throttle 1\npgsteal_direct 1\n"), -EBADMSG },
                { "non-numeric",                LIT("pgscan abc\npgsteal 1\n"), -EBADMSG },
                { "negative",                   LIT("pgscan -1\npgsteal 1\n"), -EBADMSG },
                { "hex",                        LIT("pgscan 0x10\npgsteal 1\n"), -EBADMSG },
                { "trailing blank",             LIT("pgscan 1 \npgsteal 1\n"), -EBADMSG },
                { "value missing",              LIT("pgscan\npgsteal 1\n"), -EBADMSG },
                { "value empty",                LIT("pgscan \npgsteal 1\n"), -EBADMSG },
                { "oom_kill malformed",         LIT("pgscan 1\npgsteal 1\noom_kill x\n"), -EBADMSG },
                { "overflow",                   LIT("pgscan 18446744073709551616\npgsteal 1\n"), -ERANGE },
                { "huge",                       LIT("pgscan 99999999999999999999999999\npgsteal 1\n"), -ERANGE },
                { "NUL inside a value",         LIT("pgscan 1\0002\npgsteal 1\n"), -EBADMSG },
                { "NUL after a value",          LIT("pgscan 12\0\npgsteal 1\n"), -EBADMSG },
                { "NUL inside the key",         LIT("pg\0scan 12\npgsteal 1\n"), -EBADMSG },
                { "truncated key",              LIT("pgscan 1\npgst"), -EBADMSG },
                { "len cuts the steal line off", "pgscan 1\npgsteal 1\n", sizeof("pgscan 1\npg") - 1, -EBADMSG },
                { "len 0",                      "pgscan 1\npgsteal 1\n", 0, -EBADMSG },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                VmstatCounters c = { .pgscan = 77 };
                int r = vmstat(cases[i].text, cases[i].len, &c);

                if (r != cases[i].r)
                        fprintf(stderr, "case \"%s\"\n", cases[i].name);
                CHECK_EQ_INT(r, cases[i].r);
                CHECK_EQ_U64(c.pgscan, 77);     /* untouched on failure */
        }
}

static const char meminfo_real[] =
        "MemTotal:       24683568 kB\n"
        "MemFree:        23741764 kB\n"
        "MemAvailable:   24171704 kB\n"
        "Buffers:             624 kB\n"
        "Cached:            23408 kB\n"
        "SwapCached:            0 kB\n"
        "SwapTotal:             0 kB\n"
        "SwapFree:              0 kB\n"
        "Zswap:                 0 kB\n"
        "HugePages_Total:       0\n"
        "Hugepagesize:       2048 kB\n";

static void test_meminfo(void) {
        static const struct {
                const char *name;
                const char *text;
                size_t len;
                int r;
                uint64_t total, available, swap_total, swap_free;
        } cases[] = {
                { "6.18 real, no swap", LIT(meminfo_real), 0,
                  UINT64_C(24683568) * 1024, UINT64_C(24171704) * 1024, 0, 0 },
                { "with zram swap",
                  LIT("MemTotal: 1000 kB\nMemAvailable: 500 kB\nSwapTotal: 1048576 kB\nSwapFree: 1048000 kB\n"), 0,
                  1024000, 512000, UINT64_C(1048576) * 1024, UINT64_C(1048000) * 1024 },
                { "no Swap lines → 0",          LIT("MemTotal: 2 kB\nMemAvailable: 1 kB"), 0, 2048, 1024, 0, 0 },
                { "tab before the value",       LIT("MemTotal:\t2 kB\nMemAvailable:\t1 kB\n"), 0, 2048, 1024, 0, 0 },
                { "largest that fits",
                  LIT("MemTotal: 18014398509481983 kB\nMemAvailable: 0 kB\n"), 0,
                  UINT64_C(18014398509481983) * 1024, 0, 0, 0 },
                { "similar keys ignored",
                  LIT("MemTotalX: x\nMemTotal: 4 kB\nSwapCached: 9 kB\nMemAvailable: 2 kB\n"), 0, 4096, 2048, 0, 0 },
                { "empty",                      LIT(""), -EBADMSG },
                { "MemTotal missing",           LIT("MemFree: 1 kB\nMemAvailable: 1 kB\n"), -EBADMSG },
                { "MemAvailable missing (<3.14)", LIT("MemTotal: 1 kB\nMemFree: 1 kB\n"), -EBADMSG },
                { "no unit",                    LIT("MemTotal: 1\nMemAvailable: 1 kB\n"), -EBADMSG },
                { "wrong unit",                 LIT("MemTotal: 1 MB\nMemAvailable: 1 kB\n"), -EBADMSG },
                { "unit glued on",              LIT("MemTotal: 1kB\nMemAvailable: 1 kB\n"), -EBADMSG },
                { "non-numeric",                LIT("MemTotal: lots kB\nMemAvailable: 1 kB\n"), -EBADMSG },
                { "no value",                   LIT("MemTotal:\nMemAvailable: 1 kB\n"), -EBADMSG },
                { "no colon",                   LIT("MemTotal 1 kB\nMemAvailable: 1 kB\n"), -EBADMSG },
                { "Swap line malformed",        LIT("MemTotal: 1 kB\nMemAvailable: 1 kB\nSwapFree: -1 kB\n"), -EBADMSG },
                { "kB overflow as bytes",       LIT("MemTotal: 18014398509481984 kB\nMemAvailable: 1 kB\n"), -ERANGE },
                { "number overflow",            LIT("MemTotal: 18446744073709551616 kB\nMemAvailable: 1 kB\n"), -ERANGE },
                { "NUL in the unit",            LIT("MemTotal: 1 k\0B\nMemAvailable: 1 kB\n"), -EBADMSG },
                { "truncated line",             LIT("MemTotal: 24683568 kB\nMemAvailable:   2417"), -EBADMSG },
                { "len cuts the unit",
                  "MemTotal: 1 kB\nMemAvailable: 1 kB\n", sizeof("MemTotal: 1 kB\nMemAvailable: 1 k") - 1, -EBADMSG },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Meminfo m = { .mem_total_bytes = 77 };
                int r = meminfo(cases[i].text, cases[i].len, &m);

                if (r != cases[i].r)
                        fprintf(stderr, "case \"%s\"\n", cases[i].name);
                CHECK_EQ_INT(r, cases[i].r);
                if (cases[i].r < 0) {
                        CHECK_EQ_U64(m.mem_total_bytes, 77);
                        continue;
                }
                CHECK_EQ_U64(m.mem_total_bytes, cases[i].total);
                CHECK_EQ_U64(m.mem_available_bytes, cases[i].available);
                CHECK_EQ_U64(m.swap_total_bytes, cases[i].swap_total);
                CHECK_EQ_U64(m.swap_free_bytes, cases[i].swap_free);
        }
}

static void test_psi_good(void) {
        PsiStats p;

        /* /proc/pressure/memory and /sys/fs/cgroup/unified/memory.pressure, 6.18. */
        CHECK_EQ_INT(psi(LIT("some avg10=0.44 avg60=0.21 avg300=0.05 total=198119\n"
                             "full avg10=0.23 avg60=0.10 avg300=0.02 total=156843\n"), &p), 0);
        CHECK_EQ_INT(p.some.avg10_permyriad, 44);
        CHECK_EQ_INT(p.some.avg60_permyriad, 21);
        CHECK_EQ_INT(p.some.avg300_permyriad, 5);
        CHECK_EQ_U64(p.some.total_usec, 198119);
        CHECK(p.have_full);
        CHECK_EQ_INT(p.full.avg10_permyriad, 23);
        CHECK_EQ_INT(p.full.avg60_permyriad, 10);
        CHECK_EQ_INT(p.full.avg300_permyriad, 2);
        CHECK_EQ_U64(p.full.total_usec, 156843);

        CHECK_EQ_INT(psi(LIT("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                             "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"), &p), 0);
        CHECK_EQ_INT(p.some.avg10_permyriad, 0);
        CHECK(p.have_full);

        /* Only "some" (the system CPU file before 5.13), no trailing newline. */
        CHECK_EQ_INT(psi(LIT("some avg10=12.34 avg60=100.00 avg300=99.99 total=18446744073709551615"), &p), 0);
        CHECK_EQ_INT(p.some.avg10_permyriad, 1234);
        CHECK_EQ_INT(p.some.avg60_permyriad, 10000);
        CHECK_EQ_INT(p.some.avg300_permyriad, 9999);
        CHECK_EQ_U64(p.some.total_usec, UINT64_MAX);
        CHECK(!p.have_full);

        /* Short forms, another order, an unknown field, doubled blanks. */
        CHECK_EQ_INT(psi(LIT("full total=5 avg300=1 avg60=0.5 avg10=7.1\n"
                             "some  avg10=3.00 avg42=9.99 avg60=2.00  avg300=1.00 total=9 \n"), &p), 0);
        CHECK_EQ_INT(p.some.avg10_permyriad, 300);
        CHECK_EQ_U64(p.some.total_usec, 9);
        CHECK_EQ_INT(p.full.avg10_permyriad, 710);
        CHECK_EQ_INT(p.full.avg60_permyriad, 50);
        CHECK_EQ_INT(p.full.avg300_permyriad, 100);
        CHECK_EQ_U64(p.full.total_usec, 5);

        /* len stops inside the total: read as far as len. */
        CHECK_EQ_INT(psi("some avg10=0.44 avg60=0.21 avg300=0.05 total=198119\n",
                         sizeof("some avg10=0.44 avg60=0.21 avg300=0.05 total=19") - 1, &p), 0);
        CHECK_EQ_U64(p.some.total_usec, 19);
}

static void test_psi_bad(void) {
        static const struct {
                const char *name;
                const char *text;
                size_t len;
                int r;
        } cases[] = {
                { "empty",              LIT(""), -EBADMSG },
                { "only full",          LIT("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "bare some",          LIT("some\n"), -EBADMSG },
                { "total missing",      LIT("some avg10=0.00 avg60=0.00 avg300=0.00\n"), -EBADMSG },
                { "avg10 missing",      LIT("some avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "field without =",    LIT("some avg10 avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "empty value",        LIT("some avg10= avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "non-numeric",        LIT("some avg10=x.yz avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "dot, no decimals",   LIT("some avg10=1. avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "three decimals",     LIT("some avg10=1.234 avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "comma",              LIT("some avg10=1,23 avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "negative",           LIT("some avg10=-1.00 avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "above 100 %",        LIT("some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n"), -ERANGE },
                { "far above 100 %",    LIT("some avg10=99999999999999999999.00 avg60=0 avg300=0 total=0\n"), -ERANGE },
                { "total overflow",     LIT("some avg10=0.00 avg60=0.00 avg300=0.00 total=18446744073709551616\n"), -ERANGE },
                { "bad full line",      LIT("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=zz\n"), -EBADMSG },
                { "NUL in a value",     LIT("some avg10=0.\0000 avg60=0.00 avg300=0.00 total=0\n"), -EBADMSG },
                { "truncated",          LIT("some avg10=0.00 avg60=0.00 avg3"), -EBADMSG },
                { "len cuts the total",
                  "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
                  sizeof("some avg10=0.00 avg60=0.00 avg300=0.00 total=") - 1, -EBADMSG },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                PsiStats p = { .some.total_usec = 77 };
                int r = psi(cases[i].text, cases[i].len, &p);

                if (r != cases[i].r)
                        fprintf(stderr, "case \"%s\"\n", cases[i].name);
                CHECK_EQ_INT(r, cases[i].r);
                CHECK_EQ_U64(p.some.total_usec, 77);
        }
}

/* cgroup v1 memory.stat (root of the memory hierarchy) and memory.oom_control. */
static const char memory_stat_v1[] =
        "cache 9994240\n"
        "rss 6569984\n"
        "rss_huge 0\n"
        "shmem 9736192\n"
        "hierarchical_memory_limit 9223372036854771712\n"
        "total_rss 11067392\n"
        "total_pgmajfault 1034";
static const char oom_control_v1[] =
        "oom_kill_disable 0\n"
        "under_oom 0\n"
        "oom_kill 0\n";

static void test_keyed(void) {
        static const struct {
                const char *name;
                const char *text;
                size_t len;
                const char *key;
                int r;
                uint64_t value;
        } cases[] = {
                { "first line",                 LIT(memory_stat_v1), "cache", 0, 9994240 },
                { "rss, not rss_huge/total_rss", LIT(memory_stat_v1), "rss", 0, 6569984 },
                { "rss_huge",                   LIT(memory_stat_v1), "rss_huge", 0, 0 },
                { "limit",                      LIT(memory_stat_v1), "hierarchical_memory_limit", 0,
                  UINT64_C(9223372036854771712) },
                { "last line, no newline",      LIT(memory_stat_v1), "total_pgmajfault", 0, 1034 },
                { "oom_kill",                   LIT(oom_control_v1), "oom_kill", 0, 0 },
                { "under_oom",                  LIT(oom_control_v1), "under_oom", 0, 0 },
                { "absent",                     LIT(memory_stat_v1), "swap", -ENOENT, 0 },
                { "prefix of a key",            LIT(memory_stat_v1), "cach", -ENOENT, 0 },
                { "suffix of a key",            LIT(memory_stat_v1), "pgmajfault", -ENOENT, 0 },
                { "key longer than any",        LIT(memory_stat_v1), "cache_and_more_and_more", -ENOENT, 0 },
                { "empty text",                 LIT(""), "cache", -ENOENT, 0 },
                { "empty key",                  LIT(memory_stat_v1), "", -EINVAL, 0 },
                { "tab is not the separator",   LIT("cache\t5\n"), "cache", -ENOENT, 0 },
                { "key without value",          LIT("cache\n"), "cache", -ENOENT, 0 },
                { "empty value",                LIT("cache \n"), "cache", -EBADMSG, 0 },
                { "non-numeric",                LIT("cache 12k\n"), "cache", -EBADMSG, 0 },
                { "overflow",                   LIT("cache 18446744073709551616\n"), "cache", -ERANGE, 0 },
                { "NUL in the value",           LIT("cache 1\0\n"), "cache", -EBADMSG, 0 },
                { "NUL in another line",        LIT("x\0y 1\ncache 3\n"), "cache", 0, 3 },
                { "first of two counts",        LIT("cache 1\ncache 2\n"), "cache", 0, 1 },
                { "len stops after the key",    "cache 9994240\n", sizeof("cache") - 1, "cache", -ENOENT, 0 },
                { "len stops after the space",  "cache 9994240\n", sizeof("cache ") - 1, "cache", -EBADMSG, 0 },
                { "len stops inside the value", "cache 9994240\n", sizeof("cache 99") - 1, "cache", 0, 99 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t v = 77;
                int r = keyed(cases[i].text, cases[i].len, cases[i].key, &v);

                if (r != cases[i].r)
                        fprintf(stderr, "case \"%s\"\n", cases[i].name);
                CHECK_EQ_INT(r, cases[i].r);
                CHECK_EQ_U64(v, cases[i].r == 0 ? cases[i].value : 77);
        }

        uint64_t v;
        CHECK_EQ_INT(keyed_u64_parse(memory_stat_v1, sizeof(memory_stat_v1) - 1, NULL, &v), -EINVAL);
}

static void test_single(void) {
        static const struct {
                const char *name;
                const char *text;
                size_t len;
                int r;
                uint64_t value;
        } cases[] = {
                /* memory.limit_in_bytes of the v1 root, memory.max of a cgroup2 group. */
                { "v1 unlimited",               LIT("9223372036854771712\n"), 0, UINT64_C(9223372036854771712) },
                { "usage",                      LIT("764010496\n"), 0, 764010496 },
                { "max",                        LIT("max\n"), 0, UINT64_MAX },
                { "max, no newline",            LIT("max"), 0, UINT64_MAX },
                { "zero",                       LIT("0"), 0, 0 },
                { "largest",                    LIT("18446744073709551615\n"), 0, UINT64_MAX },
                { "empty",                      LIT(""), -EBADMSG, 0 },
                { "only newline",               LIT("\n"), -EBADMSG, 0 },
                { "two newlines",               LIT("12\n\n"), -EBADMSG, 0 },
                { "leading blank",              LIT(" 12\n"), -EBADMSG, 0 },
                { "trailing blank",             LIT("12 \n"), -EBADMSG, 0 },
                { "CRLF",                       LIT("12\r\n"), -EBADMSG, 0 },
                { "negative",                   LIT("-1\n"), -EBADMSG, 0 },
                { "maxx",                       LIT("maxx\n"), -EBADMSG, 0 },
                { "MAX",                        LIT("MAX\n"), -EBADMSG, 0 },
                { "two numbers",                LIT("1 2\n"), -EBADMSG, 0 },
                { "overflow",                   LIT("18446744073709551616\n"), -ERANGE, 0 },
                { "huge",                       LIT("340282366920938463463374607431768211456"), -ERANGE, 0 },
                { "NUL after the number",       LIT("12\0"), -EBADMSG, 0 },
                { "NUL before the newline",     LIT("12\0\n"), -EBADMSG, 0 },
                { "len shorter: 123456 → 123",  "123456\n", 3, 0, 123 },
                { "len shorter: max → ma",      "max\n", 2, -EBADMSG, 0 },
                { "len 0",                      "12\n", 0, -EBADMSG, 0 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t v = 77;
                int r = single(cases[i].text, cases[i].len, &v);

                if (r != cases[i].r)
                        fprintf(stderr, "case \"%s\"\n", cases[i].name);
                CHECK_EQ_INT(r, cases[i].r);
                CHECK_EQ_U64(v, cases[i].r == 0 ? cases[i].value : 77);
        }
}

/* Every prefix of every real text: whatever the cut, no crash and no read
 * past len (the exact-size buffers make valgrind see it). */
static void test_prefixes(void) {
        static const char psi_real[] =
                "some avg10=0.44 avg60=0.21 avg300=0.05 total=198119\n"
                "full avg10=0.23 avg60=0.10 avg300=0.02 total=156843\n";
        unsigned ok = 0;

        for (size_t len = 0; len <= sizeof(vmstat_real) - 1; len++) {
                VmstatCounters c;
                ok += vmstat(vmstat_real, len, &c) == 0;
        }
        for (size_t len = 0; len <= sizeof(meminfo_real) - 1; len++) {
                Meminfo m;
                ok += meminfo(meminfo_real, len, &m) == 0;
        }
        for (size_t len = 0; len <= sizeof(psi_real) - 1; len++) {
                PsiStats p;
                ok += psi(psi_real, len, &p) == 0;
        }
        for (size_t len = 0; len <= sizeof(memory_stat_v1) - 1; len++) {
                uint64_t v;
                ok += keyed(memory_stat_v1, len, "total_pgmajfault", &v) == 0;
                ok += single(memory_stat_v1, len, &v) == 0;
        }
        /* Some prefixes parse: the full texts at least, one per parser. */
        CHECK(ok >= 5);
}

int main(void) {
        test_vmstat_good();
        test_vmstat_machine();
        test_vmstat_bad();
        test_meminfo();
        test_psi_good();
        test_psi_bad();
        test_keyed();
        test_single();
        test_prefixes();
        return test_exit("test-proc-parse");
}
