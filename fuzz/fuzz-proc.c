/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The kernel's text files the sources read: /proc/vmstat (and cgroup2
 * memory.stat), /proc/meminfo, /proc/pressure/memory (and memory.pressure),
 * memory.stat keys, single-number files. Every parser sees every input: a
 * vmstat is garbage to the PSI parser, which is exactly what to feed it. */

#include "fuzz.h"
#include "proc-parse.h"

/* proc-parse.c: -EBADMSG for the wrong shape, -ERANGE for a number that
 * does not fit, -ENOENT for a missing key; *ret is written only on success. */
#define ERR_OK(r) ((r) == -EBADMSG || (r) == -ERANGE)
#define POISON 0xa5
#define UNTOUCHED(x) untouched(&(x), sizeof(x))

static bool untouched(const void *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (((const uint8_t *) p)[i] != POISON)
                        return false;
        return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const char *const keys[] = {
                "pgscan", "pgsteal", "oom_kill", "total_rss", "anon", "hierarchical_memory_limit", "",
        };
        const char *text = (const char *) data;
        VmstatCounters vm;
        Meminfo mi;
        PsiStats psi;
        uint64_t u;
        int r;

        fuzz_setup();

        memset(&vm, POISON, sizeof(vm));
        r = vmstat_parse(text, size, &vm);
        FUZZ_CHECK(r == 0 || (ERR_OK(r) && UNTOUCHED(vm)));

        memset(&vm, POISON, sizeof(vm));
        r = vmstat_parse_machine(text, size, &vm);
        FUZZ_CHECK(r == 0 || (ERR_OK(r) && UNTOUCHED(vm)));

        memset(&mi, POISON, sizeof(mi));
        r = meminfo_parse(text, size, &mi);
        FUZZ_CHECK(r == 0 || (ERR_OK(r) && UNTOUCHED(mi)));

        memset(&psi, POISON, sizeof(psi));
        r = psi_parse(text, size, &psi);
        FUZZ_CHECK(r == 0 || (ERR_OK(r) && UNTOUCHED(psi)));
        if (r == 0) {
                /* avg fields are percentages with two decimals: at most 100.00 */
                FUZZ_CHECK(psi.some.avg10_permyriad <= 10000 && psi.some.avg60_permyriad <= 10000 &&
                           psi.some.avg300_permyriad <= 10000);
                FUZZ_CHECK(!psi.have_full || (psi.full.avg10_permyriad <= 10000 &&
                                              psi.full.avg60_permyriad <= 10000 &&
                                              psi.full.avg300_permyriad <= 10000));
        }

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                memset(&u, POISON, sizeof(u));
                r = keyed_u64_parse(text, size, keys[i], &u);
                /* "" is not a key: -EINVAL */
                FUZZ_CHECK(r == 0 || ((ERR_OK(r) || r == -ENOENT || (r == -EINVAL && !*keys[i])) &&
                                      UNTOUCHED(u)));
        }

        memset(&u, POISON, sizeof(u));
        r = single_u64_parse(text, size, &u);
        FUZZ_CHECK(r == 0 || (ERR_OK(r) && UNTOUCHED(u)));
        return 0;
}
