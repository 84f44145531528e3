/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Signals to a unit's processes without systemd: through its cgroup. */
#include "action-internal.h"
#include "log.h"
#include "proc-scan.h"

/* Sends sig through a pidfd to the process that was pid with that start time. */
static int signal_verified(const ActionContext *ctx, pid_t pid, uint64_t starttime_ticks, int sig) {
        _cleanup_(closep) int fd = -EBADF;

        fd = action_pidfd_open_verified(ctx, pid, starttime_ticks);
        if (fd < 0)
                return fd;
        if (sys_pidfd_send_signal(fd, sig, NULL, 0) < 0)
                return -errno;
        return 0;
}

static int signal_main(ActionContext *ctx, const char *unit, const char *cgroup_dir, int sig,
                       bool dry_run) {
        const Candidate *c;
        size_t n = 0;
        int r, i;

        r = proc_scan_cgroup(ctx->proc_root, cgroup_dir, unit, false, ctx->page_size,
                             ctx->procs, ACTION_PROCS_MAX, &n);
        if (r < 0)
                return r;
        if ((size_t) r > n)
                log_debug("%s has %d processes, looking for its main process among the first %zu.",
                          unit, r, n);
        i = victim_main_process(ctx->procs, n, ctx->self_pid, ctx->scratch);
        if (i < 0)
                return -ESRCH;
        c = &ctx->procs[i];
        if (dry_run)
                return 1;
        r = signal_verified(ctx, c->pid, c->starttime_ticks, sig);
        if (r < 0)
                return log_warning_errno(r, "Failed to send %s to main process %d (%s) of %s: %m",
                                         signal_to_string(sig) ?: "?", (int) c->pid, c->comm, unit);
        return 1;
}

typedef struct SignalAll {
        const ActionContext *ctx;
        const char *unit;
        int sig;
        bool dry_run;
        int count;
        bool warned;
} SignalAll;

static int signal_one(pid_t pid, void *userdata) {
        SignalAll *s = userdata;
        ProcStat st;
        int r;

        if (pid <= 1 || pid == s->ctx->self_pid)
                return 0;
        r = proc_read_stat(s->ctx->proc_root, pid, &st);
        if (r < 0 || proc_stat_is_kernel_thread(&st))
                return 0;       /* gone meanwhile; kernel threads take no signals from us */
        if (!s->dry_run) {
                /* The start time read just before the pidfd is opened ties the
                 * pidfd to the process that cgroup.procs listed. */
                r = signal_verified(s->ctx, pid, st.starttime_ticks, s->sig);
                if (r == -ESRCH || r == -ESTALE)
                        return 0;
                if (r < 0) {
                        if (!s->warned)
                                log_warning_errno(r, "Failed to send %s to process %d of %s, ignoring: %m",
                                                  signal_to_string(s->sig) ?: "?", (int) pid, s->unit);
                        s->warned = true;
                        return 0;
                }
        }
        if (s->count < INT_MAX)
                s->count++;
        return 0;
}

int action_signal_cgroup(ActionContext *ctx, const char *unit, const char *cgroup_dir, int sig,
                         SignalTarget target, bool dry_run) {
        SignalAll s = {
                .ctx = ctx,
                .unit = unit,
                .sig = sig,
                .dry_run = dry_run,
        };
        int r;

        if (!cgroup_dir || sig <= 0)
                return -EINVAL;
        if (target == SIGNAL_TARGET_MAIN)
                return signal_main(ctx, unit, cgroup_dir, sig, dry_run);
        r = cgroup_walk_pids(cgroup_dir, signal_one, &s);
        if (r < 0)
                return r;
        return s.count > 0 ? s.count : -ESRCH;
}
