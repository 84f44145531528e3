/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The real actions: they change the system. */
#include "action-internal.h"
#include "log.h"

static int real_signal_unit(ActionContext *ctx, const char *unit, const char *cgroup_dir, int sig,
                            SignalTarget target) {
        int r;

        if (ctx->systemd_bus) {
                r = systemd_kill_unit(ctx->systemd_bus, unit, target, sig);
                if (r < 0)
                        return log_warning_errno(r, "Failed to queue KillUnit for %s: %m", unit);
                action_log_signal(unit, sig, target, -1, false, "KillUnit");
                return 0;
        }
        r = action_signal_cgroup(ctx, unit, cgroup_dir, sig, target, false);
        if (r == -ESRCH || r == -ENOENT)
                return log_info_errno(r, "Not sending %s to %s: %s.", signal_to_string(sig) ?: "?", unit,
                                      r == -ENOENT ? "it has no cgroup" : "it has no processes");
        if (r < 0)
                return log_warning_errno(r, "Failed to signal %s: %m", unit);
        action_log_signal(unit, sig, target, r, false, cgroup_dir);
        return r;
}

static int real_kill_process(ActionContext *ctx, const KillRequest *req, KillResult *ret) {
        _cleanup_(closep) int fd = -EBADF;
        KillResult result = {};

        if (action_kill_allowed(ctx, req) < 0)
                return log_warning_errno(EPERM, "Refusing to kill process %d: PID 1 or the daemon itself.",
                                         (int) req->pid);
        fd = action_pidfd_open_verified(ctx, req->pid, req->starttime_ticks);
        if (fd == -ESTALE)
                return log_notice_errno(fd, "Not killing process %d (%s) of %s: the pid now belongs to "
                                        "another process.", (int) req->pid, req->comm ?: "?",
                                        req->unit ?: "-");
        if (fd == -ESRCH)
                return log_info_errno(fd, "Not killing process %d (%s) of %s: it is gone already.",
                                      (int) req->pid, req->comm ?: "?", req->unit ?: "-");
        if (fd == -EPERM)
                return log_warning_errno(fd, "Refusing to kill process %d: a kernel thread.", (int) req->pid);
        if (fd < 0)
                return log_warning_errno(fd, "Failed to open process %d: %m", (int) req->pid);

        if (sys_pidfd_send_signal(fd, SIGKILL, NULL, 0) < 0) {
                if (errno == ESRCH)
                        return log_info_errno(ESRCH, "Process %d exited before the kill.", (int) req->pid);
                return log_warning_errno(errno, "Failed to kill process %d: %m", (int) req->pid);
        }

        /* SIGKILL marks the process as exiting at once (complete_signal()),
         * so process_mrelease() can reap its memory now rather than when the
         * victim, possibly stalled in reclaim, runs its exit path. EINVAL:
         * the mm is shared with a process that is not exiting (vfork).
         * ESRCH: the victim got through exit_mm() first (a small process
         * does, in microseconds), its memory is freed already. */
        result.mrelease_error = sys_process_mrelease(fd, 0) < 0 ? -errno : 0;
        if (result.mrelease_error == -ESRCH)
                result.mrelease_error = 0;
        if (result.mrelease_error < 0)
                log_debug_errno(result.mrelease_error, "process_mrelease(%d) failed, ignoring: %m",
                                (int) req->pid);
        action_log_kill(req, false, &result);
        if (ret)
                *ret = result;
        return 1;
}

int action_rehearse_kill(ActionContext *ctx, const KillRequest *req) {
        _cleanup_(closep) int fd = -EBADF;

        fd = action_pidfd_open_verified(ctx, req->pid, req->starttime_ticks);
        if (fd < 0)
                return fd;
        /* Signal 0: the permission checks of a kill, and nothing sent. */
        if (sys_pidfd_send_signal(fd, 0, NULL, 0) < 0)
                return -errno;
        log_set_rehearsal(true);
        action_log_kill(req, false, &(KillResult) {});
        log_set_rehearsal(false);
        return 0;
}

const ActionOps action_ops_real = {
        .name = "real",
        .signal_unit = real_signal_unit,
        .kill_process = real_kill_process,
};
