/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vmpressured.conf: config_parse() over ini_parse(), every value parser. */

#include "conf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* 16 KiB of messages: static, not on the fuzzer's stack. */
        static Diagnostics diag;
        static Config c;
        int r;

        fuzz_setup();
        config_init(&c);
        c.mem_total_bytes = UINT64_C(1) << 30;  /* so HeadroomFloor= sizes meet their bound */
        diag_clear(&diag);

        r = config_parse(&c, "fuzz.conf", (const char *) data, size, &diag);
        FUZZ_CHECK(r == 0 || r == -EINVAL);
        FUZZ_CHECK(r == 0 || diag_count(&diag) > 0);
        fuzz_check_diag(&diag);

        FUZZ_CHECK(c.n_watch <= CONFIG_WATCH_MAX);
        FUZZ_CHECK(c.level.headroom_floor_permyriad < 5000);
        FUZZ_CHECK(c.level.headroom_floor_bytes < c.mem_total_bytes / 2);
        for (size_t i = 0; i < c.n_watch; i++)
                FUZZ_CHECK(memchr(c.watch[i], '\0', sizeof(c.watch[i])));
        FUZZ_CHECK(log_level_to_string(c.log_level));
        FUZZ_CHECK(low_memory_monitor_mode_to_string(c.low_memory_monitor));
        /* A clean file is one the daemon starts with. */
        if (r == 0)
                FUZZ_CHECK(level_config_validate(&c.level) == 0);
        return 0;
}
