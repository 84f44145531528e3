/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the action-*.c files only. */

#include <signal.h>
#include <sys/syscall.h>

#include "action.h"

/* The same numbers on every architecture since Linux 5.1's syscall table
 * unification (alpha aside); glibc 2.36 wraps only the first two. */
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_process_mrelease
#define __NR_process_mrelease 448
#endif

/* The new fd is always O_CLOEXEC. */
static inline int sys_pidfd_open(pid_t pid, unsigned flags) {
        return (int) syscall(__NR_pidfd_open, pid, flags);
}

static inline int sys_pidfd_send_signal(int pidfd, int sig, siginfo_t *info, unsigned flags) {
        return (int) syscall(__NR_pidfd_send_signal, pidfd, sig, info, flags);
}

static inline int sys_process_mrelease(int pidfd, unsigned flags) {
        return (int) syscall(__NR_process_mrelease, pidfd, flags);
}

/* Logs one kill (or, with dry_run, one that would be) at NOTICE with
 * MESSAGE_ID_KILL and VMP_UNIT/VMP_PID/VMP_COMM/VMP_RSS_BYTES/VMP_REASON. */
void action_log_kill(const KillRequest *req, bool dry_run, const KillResult *result);
/* Logs one signal action at NOTICE with MESSAGE_ID_ACTION. count < 0: unknown (systemd). */
void action_log_signal(const char *unit, int sig, SignalTarget target, int count, bool dry_run,
                       const char *via);

/* The cgroup fallback of signal_unit: signals (or, with dry_run, counts)
 * the processes of cgroup_dir. */
int action_signal_cgroup(ActionContext *ctx, const char *unit, const char *cgroup_dir, int sig,
                         SignalTarget target, bool dry_run);
