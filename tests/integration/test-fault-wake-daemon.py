#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""[Poll] FaultWake= on the real daemon, shipped defaults, on a private
system bus (the wake-ups themselves: tests/test-fault-wake.c; a fill of the
whole machine: the guest suite's system-oom-kill-lead):

- the daemon opens one page-fault counter (an anon_inode:[perf_event]
  descriptor) per online CPU, says so at start-up and in the SOURCE DETAIL
  line of -.slice in vmpressurectl status;
- it drops CAP_PERFMON and CAP_SYS_ADMIN once started (they are for the
  open alone), keeping the descriptors;
- a Reload() with FaultWake=no closes them and status no longer shows them;
- a daemon started with FaultWake=no opens none."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpfault as vf   # noqa: E402

CTL = os.environ.get("VMPRESSURECTL")
CAP_SYS_ADMIN = 21
CAP_PERFMON = 38


def online_cpus():
    n = 0
    for part in open("/sys/devices/system/cpu/online").read().strip().split(","):
        a, _, b = part.partition("-")
        n += int(b or a) - int(a) + 1
    return n


def perf_fds(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]":
                n += 1
        except OSError:
            pass
    return n


def cap_eff(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return None


def status_lines():
    r = subprocess.run([CTL, "status"], capture_output=True, text=True, timeout=15)
    vt.check(r.returncode == 0, f"vmpressurectl status: exit {r.returncode}, {r.stderr[-300:]}")
    return [l for l in r.stdout.splitlines() if "page-fault counter" in l]


def main():
    vt.check(CTL and os.access(CTL, os.X_OK), "$VMPRESSURECTL must name the built vmpressurectl")
    vt.need_root_and_cgroups()
    vb.need_bus()
    ncpu = online_cpus()
    vb.SystemBus().start()

    d = vt.Daemon().start()
    vb.wait_name(vb.NAME)
    n = perf_fds(d.pid)
    vt.log(f"{n} perf_event descriptors, {ncpu} online CPUs")
    vt.check(n == ncpu, f"{n} page-fault counters open, one per online CPU ({ncpu}) wanted")
    said = d.stderr_lines(lambda l: "page-fault counter on each of" in l)
    vt.check(len(said) == 1 and f"on each of {ncpu} CPUs, waking after" in said[0],
             f"start-up log: {said or 'nothing of the counters'}")
    lines = status_lines()
    vt.check(len(lines) == 1 and lines[0].startswith("-.slice ")
             and f"a page-fault counter on each of {ncpu} CPUs (FaultWake=)" in lines[0],
             f"status: {lines or 'no page-fault counters shown'}")
    eff = cap_eff(d.pid)
    vt.check(eff is not None and not eff & (1 << CAP_SYS_ADMIN) and not eff & (1 << CAP_PERFMON),
             f"CapEff {eff:#x} after start-up: CAP_SYS_ADMIN and CAP_PERFMON must be gone")

    with open(d.config_path, "a") as f:
        f.write("\n[Poll]\nFaultWake=no\n")
    mgr = vf.Manager()
    vt.check(mgr.reload() is None, "Reload() with FaultWake=no failed")
    mgr.close()
    n = perf_fds(d.pid)
    vt.check(n == 0, f"after Reload() with FaultWake=no: {n} page-fault counters still open")
    lines = status_lines()
    vt.check(not lines, f"after Reload() with FaultWake=no, status still shows {lines}")
    vt.check(d.alive(), "the daemon died at the Reload()")
    d.stop()

    d = vt.Daemon(config="[Poll]\nFaultWake=no\n").start()
    vb.wait_name(vb.NAME)
    n = perf_fds(d.pid)
    vt.check(n == 0, f"FaultWake=no from the start: {n} page-fault counters open")
    d.stop()


vt.run(main)
