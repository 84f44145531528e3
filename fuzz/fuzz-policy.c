/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Policy files: policy_parse() over ini_parse(), signal names, unit names
 * (from the file name), and a PolicySet holding the result. */

#include "fuzz.h"
#include "policy.h"

static void check_policy(const Policy *p) {
        char buf[256];

        FUZZ_CHECK(memchr(p->unit, '\0', sizeof(p->unit)));
        FUZZ_CHECK(memchr(p->path, '\0', sizeof(p->path)));
        FUZZ_CHECK(memchr(p->description, '\0', sizeof(p->description)));
        FUZZ_CHECK(policy_state_to_string(p->state));
        FUZZ_CHECK(policy_scope_to_string(p->scope));
        for (Level l = LEVEL_LOW; l < _LEVEL_MAX; l++) {
                const PolicyAction *a = &p->actions[l];

                FUZZ_CHECK(a->signal == 0 || signal_to_string(a->signal));
                FUZZ_CHECK(signal_target_to_string(a->signal_target));
                FUZZ_CHECK(kill_target_to_string(a->kill_target));
                FUZZ_CHECK(policy_action_describe(a, buf, sizeof(buf)));
        }
        (void) policy_kill_enabled(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static Diagnostics diag;
        static Policy p;
        _cleanup_(policy_set_freep) PolicySet *set = NULL;
        const char *text = (const char *) data;
        char name[UNIT_NAME_MAX + 16];
        int r;

        fuzz_setup();

        /* As a unit's own file. */
        diag_clear(&diag);
        r = policy_parse("/etc/vmpressured/policies/fuzz.service.policy", "fuzz.service.policy",
                         text, size, &p, &diag);
        FUZZ_CHECK(r >= 0);
        FUZZ_CHECK(size > 0 || p.state == POLICY_MASKED);
        fuzz_check_diag(&diag);
        /* at most POLICY_FILE_ERRORS_MAX quoted, then one "… more" line */
        FUZZ_CHECK(diag.n <= POLICY_FILE_ERRORS_MAX + 1);
        check_policy(&p);

        /* The first line as a file name: unit-name validation, which gives
         * -EINVAL for anything that is not "<unit>.policy". */
        fuzz_first_line(data, size, name, sizeof(name));
        diag_clear(&diag);
        r = policy_parse(name, name, text, size, &p, &diag);
        FUZZ_CHECK(r >= 0 || r == -EINVAL);
        fuzz_check_diag(&diag);
        if (r >= 0)
                check_policy(&p);

        /* As a template in a set, shadowed by an unreadable file of the same
         * name in a later directory, and looked up through an instance. */
        if (policy_set_new(&set) < 0)
                return 0;
        const PolicyFile files[] = {
                { .dir = "/etc/vmpressured/policies", .filename = "fuzz@.service.policy",
                  .text = text, .len = size },
                { .dir = "/usr/lib/vmpressured/policies", .filename = "fuzz@.service.policy",
                  .text = NULL, .error = -EACCES },
                { .dir = "/usr/lib/vmpressured/policies", .filename = "fuzz@one.service.policy",
                  .text = text, .len = size },
        };
        diag_clear(&diag);
        r = policy_set_add_files(set, files, ELEMENTSOF(files), &diag);
        FUZZ_CHECK(r >= 0 || r == -ENOMEM);
        fuzz_check_diag(&diag);
        if (r >= 0) {
                FUZZ_CHECK(set->n == 2);
                FUZZ_CHECK(policy_set_count_loaded(set) <= 2);
                FUZZ_CHECK(policy_set_get(set, "fuzz@.service"));
                for (size_t i = 0; i < set->n; i++)
                        check_policy(&set->policies[i]);
                (void) policy_set_find(set, "fuzz@two.service");
        }
        return 0;
}
