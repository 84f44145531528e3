#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""memcg source, OOM: anonymous memory touched beyond the limit of a 64 MiB memcg
with oom_kill_disable=1. The kernel signals "critical" within milliseconds and
memory.oom_control ~2-50 ms later, then holds the hog under OOM (state D) until
we SIGKILL it. The daemon must report level=oom for the cgroup within 1 s of its
first level line (the first kernel event it read, by the daemon's own t_usec),
and that first line within a few seconds of the load starting.

The kernel's critical event also signals the low and medium eventfds; the
daemon reads the critical one first and drains the others after the
announcement. With the hog held, no event follows: a daemon that left an
eventfd undrained would be woken by it without end, so its CPU time over 2 s
must stay near nothing."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402

LIMIT_MIB = 64
HOG_MIB = 128           # twice the limit, 8 MiB every 20 ms: at the limit after ~160 ms
IDLE_SEC = 2.0
IDLE_CPU_MS = 100       # a daemon woken without end by an eventfd spends ~IDLE_SEC * 1000


def main():
    vt.need_root_and_cgroups()
    with vt.Memcg("oom", limit_mib=LIMIT_MIB, oom_kill_disable=True) as cg:
        d = vt.Daemon(f"--watch={cg.rel}").start()
        src = d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == cg.name, 1,
                         f"a 'source' line for {cg.name}", from_start=True)
        vt.check(src.get("source") == "memcg", f"source={src.get('source')} for {cg.name}, expected memcg")

        load = vt.Load(cg, "anon", HOG_MIB, 8, 20).start()
        first = d.wait_for(vt.is_level(cg.name), 5, f"a level line for {cg.name} within 5 s of the load")
        oom = first if first["level"] == "oom" else \
            d.wait_for(vt.is_level(cg.name, "oom"), 5, f"level=oom for {cg.name}")

        from_load_ms = (first["t_usec"] - load.started_usec) / 1000
        to_oom_ms = (oom["t_usec"] - first["t_usec"]) / 1000
        vt.log(f"first: {first['line']}")
        vt.log(f"oom:   {oom['line']}")
        vt.log(f"first event {from_load_ms:.0f} ms after the load started; OOM {to_oom_ms:.1f} ms after the "
               f"first event; decided {oom['latency_usec']} us after the kernel's notification was read")

        # The fixture worked: the kernel holds the hog instead of killing it.
        # (memory.oom_control follows the critical event by ~2-50 ms.)
        vt.poll_until(lambda: cg.oom_control().get("under_oom") == 1, 3)
        oc = cg.oom_control()
        vt.check(oc.get("under_oom") == 1, f"the memcg is not under OOM: {oc} (fixture broken)")
        vt.check(oc.get("oom_kill", 0) == 0, f"the kernel killed in the memcg: {oc} (fixture broken)")

        vt.check(from_load_ms <= 5000, f"first level line {from_load_ms:.0f} ms after the load started")
        vt.check(to_oom_ms <= 1000, f"OOM reported {to_oom_ms:.0f} ms after the first kernel event (limit 1000 ms)")
        vt.check(oom.get("source") == "memcg", f"oom line from source={oom.get('source')}: {oom['line']}")
        vt.check(oom["latency_usec"] < 1000000, f"latency_usec {oom['latency_usec']} >= 1 s: {oom['line']}")

        # The hog is held in D state: no more events. Every eventfd is drained.
        before = vt.cpu_ms(d.pid)
        time.sleep(IDLE_SEC)
        spent = vt.cpu_ms(d.pid) - before
        vt.log(f"daemon CPU over {IDLE_SEC:.0f} s with the hog held under OOM: {spent:.0f} ms")
        vt.check(spent < IDLE_CPU_MS, f"the daemon spent {spent:.0f} ms of CPU in {IDLE_SEC:.0f} s with no new "
                 f"event (limit {IDLE_CPU_MS} ms): an eventfd left undrained?")

        # Held in D state: only SIGKILL gets it out (Load.stop escalates).
        load.kill()
        d.stop()


vt.run(main)
