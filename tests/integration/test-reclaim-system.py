#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The reclaim source (the unified hierarchy's) for the system scope, on this
host's real /proc/pressure/memory and /proc/vmstat.

Two daemons with --source=reclaim, while a 128 MiB memcg of ours streams a
256 MiB file (the only reclaim we may make here):
  - SystemPressure=any-cgroup counts every reclaimer (pgscan_anon+file): the
    PSI wake-up fires (the streaming task stalls in the memcg's reclaim, which
    /proc/pressure/memory counts), the sampler reads the counters and the
    seed's index of a page-cache stream is 0 -> level=low, cause=reclaim;
  - SystemPressure=machine (the shipped default) counts only the machine's
    reclaim (pgscan_kswapd+direct, which leave out a cgroup's own limit): it
    is woken by the same trigger (its debug log says the sampler ran and went
    off again) and announces nothing on -.slice.
Before the load neither has a timer: the sampler is off until the kernel's
trigger fires (the debug line "sampler off" appears only after the load).
The start-up line must say what the source reads and what wakes it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402

# No headroom floor: only the reclaim counters may make a level here.
LEVELS = "[Levels]\nHoldSec=1\nQuietSec=2\nRepeatSec=1\nHeadroomFloor=0\n"


def main():
    vt.need_root_and_cgroups()
    with vt.Memcg("reclaim", limit_mib=128) as cg, vt.DataFile("reclaim", 256) as data:
        machine = vt.Daemon("--source=reclaim", "--log-level=debug", name="machine",
                            config=LEVELS + "[Daemon]\nSystemPressure=machine\n").start()
        control = vt.Daemon("--source=reclaim", "--log-level=debug", name="any-cgroup",
                            config=LEVELS + "[Daemon]\nSystemPressure=any-cgroup\n").start()
        for d in (machine, control):
            src = d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == "-.slice", 2,
                             f"{d.name}: a 'source' line for -.slice", from_start=True)
            vt.check(src.get("source") == "reclaim", f"{d.name}: -.slice uses {src.get('source')}: {src['line']}")
        said = machine.stderr_lines(lambda l: "-.slice: watching memory pressure with the reclaim source" in l)
        vt.check(said and "/proc/vmstat" in said[0] and "PSI" in said[0] and "kswapd" in said[0],
                 f"the start-up log does not say what the reclaim source reads and what wakes it: {said}")
        vt.log(f"machine says: {said[0] if said else ''}")
        said = control.stderr_lines(lambda l: "with the reclaim source" in l)
        vt.check(said and "anon+file" in said[0], f"any-cgroup: the start-up log does not name anon+file: {said}")

        # Idle (nothing of ours reclaims yet): no sampler has run.
        vt.poll_until(lambda: False, 1.0)
        for d in (machine, control):
            ran = d.stderr_lines(lambda l: "sampler off" in l, timeout=0)
            vt.check(not ran, f"{d.name}: the sampler ran before any reclaim: {ran}")
        baseline = machine.find(vt.is_level("-.slice"))

        load = vt.Load(cg, "stream", data.path).start()
        ev = control.wait_for(lambda e: vt.is_level("-.slice")(e) and e["t_usec"] >= load.started_usec, 10,
                              "any-cgroup: a level on -.slice from the stream")
        vt.log(f"any-cgroup: {ev['line']} ({(ev['t_usec'] - load.started_usec) / 1000:.0f} ms after the load started)")
        vt.check(ev.get("level") == "low", f"a page-cache stream gave level={ev.get('level')}, expected low: {ev['line']}")
        vt.check(ev.get("cause") == "reclaim", f"cause={ev.get('cause')}, expected reclaim: {ev['line']}")
        vt.check(ev.get("index") == 0, f"index={ev.get('index')}: a stream reclaims what it scans: {ev['line']}")
        vt.poll_until(lambda: False, 2.0)
        load.stop()

        # Quiet again: both samplers stop (QuietSec=2 after the last reclaim).
        for d in (machine, control):
            off = d.stderr_lines(lambda l: "-.slice: reclaim quiet, sampler off" in l, timeout=8)
            vt.check(off, f"{d.name}: the sampler did not stop after the load (or never ran: the PSI "
                          f"trigger did not wake it)")
        heard = [e for e in machine.find(vt.is_level("-.slice")) if e not in baseline]
        vt.check(not heard, f"SystemPressure=machine announced a cgroup's own limit as system pressure: "
                            f"{[e['line'] for e in heard]}")
        vt.check(machine.alive() and control.alive(), "a daemon died")
        machine.stop()
        control.stop()


vt.run(main)
