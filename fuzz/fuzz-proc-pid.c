/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A process's files under /proc/<pid>/ (stat, status, statm,
 * oom_score_adj, cgroup) and cgroup.procs, then what the daemon does with
 * a cgroup path: the unit it belongs to. A process chooses its own name
 * (prctl PR_SET_NAME) and an unprivileged user creates cgroups below a
 * delegated one, so all of this is outside input. */

#include "fuzz.h"
#include "proc-pid.h"
#include "unit-name.h"

static bool is_sanitized(const char *s, size_t size) {
        const char *nul = memchr(s, '\0', size);

        if (!nul)
                return false;
        for (const char *p = s; p < nul; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
                        return false;
        return true;
}

static void check_cgroup(const char *text, size_t size, const char *controller) {
        char path[4096], small[8], unit[UNIT_NAME_MAX];
        int r;

        r = proc_cgroup_parse(text, size, controller, path, sizeof(path));
        FUZZ_CHECK(r == 0 || r == -ENOENT || r == -EBADMSG || r == -ENOBUFS);
        if (r == 0) {
                FUZZ_CHECK(memchr(path, '\0', sizeof(path)));
                r = cgroup_path_get_unit(path, unit, sizeof(unit));
                FUZZ_CHECK(r == 0 || r == -ENXIO || r == -ENOBUFS);
                if (r == 0)
                        FUZZ_CHECK(memchr(unit, '\0', sizeof(unit)));
        }
        /* A buffer too small for most paths: -ENOBUFS, never a write past it. */
        r = proc_cgroup_parse(text, size, controller, small, sizeof(small));
        FUZZ_CHECK(r == 0 || r == -ENOENT || r == -EBADMSG || r == -ENOBUFS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text = (const char *) data;
        ProcStat st;
        ProcStatus status;
        uint64_t u;
        pid_t pids[4];
        int r, adj;

        fuzz_setup();

        r = proc_stat_parse(text, size, &st);
        FUZZ_CHECK(r == 0 || r == -EBADMSG);
        if (r == 0) {
                FUZZ_CHECK(is_sanitized(st.comm, sizeof(st.comm)));
                FUZZ_CHECK(st.pid >= 0 && st.ppid >= 0);
                (void) proc_stat_is_kernel_thread(&st);
        }

        r = proc_status_parse(text, size, &status);
        FUZZ_CHECK(r == 0 || r == -EBADMSG);
        if (r == 0) {
                FUZZ_CHECK(is_sanitized(status.name, sizeof(status.name)));
                FUZZ_CHECK(status.kthread >= -1 && status.kthread <= 1);
        }

        r = proc_statm_parse(text, size, 4096, &u);
        FUZZ_CHECK(r == 0 || r == -EBADMSG);
        r = proc_statm_parse(text, size, 65536, &u);
        FUZZ_CHECK(r == 0 || r == -EBADMSG);

        r = proc_oom_score_adj_parse(text, size, &adj);
        FUZZ_CHECK(r == 0 || r == -EBADMSG);
        if (r == 0)
                FUZZ_CHECK(adj >= -1000 && adj <= 1000);

        check_cgroup(text, size, NULL);
        check_cgroup(text, size, "memory");
        check_cgroup(text, size, "name=systemd");

        r = cgroup_procs_parse(text, size, pids, ELEMENTSOF(pids));
        FUZZ_CHECK(r >= 0 || r == -EBADMSG);
        for (int i = 0; i < r && i < (int) ELEMENTSOF(pids); i++)
                FUZZ_CHECK(pids[i] > 0);
        r = cgroup_procs_parse(text, size, NULL, 0);
        FUZZ_CHECK(r >= 0 || r == -EBADMSG);

        return 0;
}
