/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Dry run: the same checks as the real actions, a log line, no change. */
#include "action-internal.h"
#include "log.h"
#include "proc-scan.h"

static int dry_signal_unit(ActionContext *ctx, const char *unit, const char *cgroup_dir, int sig,
                           SignalTarget target) {
        int r;

        if (ctx->systemd_bus) {
                action_log_signal(unit, sig, target, -1, true, "KillUnit");
                return 0;
        }
        /* Counts the processes it would signal: reads /proc and cgroup.procs only. */
        r = action_signal_cgroup(ctx, unit, cgroup_dir, sig, target, true);
        if (r < 0)
                return log_info_errno(r, "Would not send %s to %s: %s.", signal_to_string(sig) ?: "?", unit,
                                      r == -ENOENT ? "it has no cgroup" :
                                      r == -ESRCH ? "it has no processes" : strerror(-r));
        action_log_signal(unit, sig, target, r, true, cgroup_dir);
        return r;
}

static int dry_kill_process(ActionContext *ctx, const KillRequest *req, KillResult *ret) {
        ProcStat st;
        int r;

        if (action_kill_allowed(ctx, req) < 0)
                return log_warning_errno(EPERM, "Refusing to kill process %d: PID 1 or the daemon itself.",
                                         (int) req->pid);
        /* What the real kill would find, without a pidfd: a read of /proc. */
        r = proc_read_stat(ctx->proc_root, req->pid, &st);
        if (r == -ESRCH)
                return log_info_errno(r, "Would not kill process %d: it is gone already.", (int) req->pid);
        if (r < 0)
                return log_warning_errno(r, "Failed to read process %d: %m", (int) req->pid);
        if (st.starttime_ticks != req->starttime_ticks)
                return log_notice_errno(ESTALE, "Would not kill process %d: the pid now belongs to "
                                        "another process.", (int) req->pid);
        if (proc_stat_is_kernel_thread(&st))
                return log_warning_errno(EPERM, "Refusing to kill process %d: a kernel thread.", (int) req->pid);
        action_log_kill(req, true, NULL);
        if (ret)
                *ret = (KillResult) { .mrelease_error = 0 };
        return 0;
}

const ActionOps action_ops_dry_run = {
        .name = "dry-run",
        .signal_unit = dry_signal_unit,
        .kill_process = dry_kill_process,
};
