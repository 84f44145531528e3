/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>

#include "action-internal.h"
#include "memory.h"
#include "log.h"
#include "proc-scan.h"

int action_context_new(pid_t self_pid, sd_bus *systemd_bus, ActionContext **ret) {
        ActionContext *c = memory_table_new(sizeof(*c));  /* 120 KiB, mostly untouched */
        long ps;

        if (!c)
                return -ENOMEM;
        c->self_pid = self_pid > 0 ? self_pid : getpid();
        strcpy(c->proc_root, "/proc");
        ps = sysconf(_SC_PAGESIZE);
        c->page_size = ps > 0 ? (uint64_t) ps : 4096;
        c->systemd_bus = systemd_bus;
        *ret = c;
        return 0;
}

ActionContext *action_context_free(ActionContext *c) {
        memory_table_free(c, sizeof(*c));
        return NULL;
}

int action_kill_allowed(const ActionContext *ctx, const KillRequest *req) {
        if (req->pid <= 1 || req->pid == ctx->self_pid)
                return -EPERM;
        return 0;
}

int action_pidfd_open_verified(const ActionContext *ctx, pid_t pid, uint64_t starttime_ticks) {
        _cleanup_(closep) int fd = -EBADF;
        ProcStat st;
        int r;

        if (pid <= 0)
                return -EINVAL;
        fd = sys_pidfd_open(pid, 0);
        if (fd < 0)
                return -errno;  /* ESRCH: gone */

        /* Read after the pidfd is open: if the process is still the one that
         * started at starttime_ticks now, it held the pid all along, so the
         * pidfd is its. A different start time: the pid was reused. */
        r = proc_read_stat(ctx->proc_root, pid, &st);
        if (r < 0)
                return r;
        if (st.starttime_ticks != starttime_ticks)
                return -ESTALE;
        if (proc_stat_is_kernel_thread(&st))
                return -EPERM;
        return TAKE_FD(fd);
}

/* ---- the pause after a kill ---- */

void kill_pacer_init(KillPacer *p, usec_t pause_usec) {
        *p = (KillPacer) { .pause_usec = pause_usec };
}

usec_t kill_pacer_next_usec(const KillPacer *p) {
        if (!p->have_last)
                return 0;
        if (p->last_kill_usec > USEC_INFINITY - p->pause_usec)
                return USEC_INFINITY;
        return p->last_kill_usec + p->pause_usec;
}

bool kill_pacer_may_kill(const KillPacer *p, usec_t now_usec) {
        return now_usec >= kill_pacer_next_usec(p);
}

void kill_pacer_record(KillPacer *p, usec_t now_usec) {
        /* Never move backwards: an old event recorded late must not shorten the pause. */
        if (!p->have_last || now_usec > p->last_kill_usec)
                p->last_kill_usec = now_usec;
        p->have_last = true;
}

/* ---- logging ---- */

void action_log_kill(const KillRequest *req, bool dry_run, const KillResult *result) {
        char f_unit[300], f_pid[32], f_comm[96], f_rss[48], f_reason[300], f_dry[32], f_mrel[48];
        const char *unit = req->unit ?: "-", *comm = req->comm ?: "?", *reason = req->reason ?: "";

        (void) snprintf(f_unit, sizeof(f_unit), "VMP_UNIT=%s", unit);
        (void) snprintf(f_pid, sizeof(f_pid), "VMP_PID=%d", (int) req->pid);
        (void) snprintf(f_comm, sizeof(f_comm), "VMP_COMM=%s", comm);
        (void) snprintf(f_rss, sizeof(f_rss), "VMP_RSS_BYTES=%" PRIu64, req->rss_bytes);
        (void) snprintf(f_reason, sizeof(f_reason), "VMP_REASON=%s", reason);
        (void) snprintf(f_dry, sizeof(f_dry), "VMP_DRY_RUN=%s", dry_run ? "yes" : "no");
        (void) snprintf(f_mrel, sizeof(f_mrel), "VMP_MRELEASE=%s",
                        dry_run || !result ? "-" : result->mrelease_error == 0 ? "yes" :
                        strerror(-result->mrelease_error));
        log_struct_internal(LOG_NOTICE, MESSAGE_ID_KILL,
                            (const char *const[]) { f_unit, f_pid, f_comm, f_rss, f_reason, f_dry, f_mrel, NULL },
                            "%s process %d (%s) of %s, %" PRIu64 " MiB RSS: %s",
                            dry_run ? "Would kill" : "Killed", (int) req->pid, comm, unit,
                            req->rss_bytes >> 20, reason);
}

void action_log_signal(const char *unit, int sig, SignalTarget target, int count, bool dry_run,
                       const char *via) {
        char f_unit[300], f_sig[48], f_target[48], f_dry[32], counted[48] = "";
        const char *name = signal_to_string(sig) ?: "?";

        (void) snprintf(f_unit, sizeof(f_unit), "VMP_UNIT=%s", unit ?: "-");
        (void) snprintf(f_sig, sizeof(f_sig), "VMP_SIGNAL=%s", name);
        (void) snprintf(f_target, sizeof(f_target), "VMP_TARGET=%s", signal_target_to_string(target) ?: "?");
        (void) snprintf(f_dry, sizeof(f_dry), "VMP_DRY_RUN=%s", dry_run ? "yes" : "no");
        if (count >= 0)
                (void) snprintf(counted, sizeof(counted), " (%d process%s)", count, count == 1 ? "" : "es");
        /* count < 0: handed to systemd, whose reply comes later. */
        log_struct_internal(LOG_NOTICE, MESSAGE_ID_ACTION,
                            (const char *const[]) { f_unit, f_sig, f_target, f_dry, NULL },
                            "%s %s to %s of %s%s via %s",
                            count < 0 ? (dry_run ? "Would ask systemd to send" : "Asked systemd to send") :
                                        (dry_run ? "Would send" : "Sent"),
                            name, target == SIGNAL_TARGET_ALL ? "all processes" : "the main process",
                            unit ?: "-", counted, via);
}
