#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""memcg source, MEDIUM: the hot/cold load (docs/kernel.md#memcg-v1-events): the first 96 MiB of a
320 MiB file are mmapped and re-touched (75 % of a 128 MiB limit; with the
page cache of the cold part the memcg's file LRU stays full) while reads stream
32 MiB at a time through the rest. Reclaim then keeps meeting referenced
mapped pages it has to rotate: the kernel's memory.pressure_level reports
"medium".

Measured with a bare eventfd listener (per epoll wake-up, the highest level
that fired; 10 runs): "low" within ~10 ms, then after 0.1-2 s the first
"medium" and, 0.05-8 ms later, the first "critical" (in 1 of 10 runs critical
came first); from then on they alternate (~300 medium-only and ~250 critical
wake-ups in 6 s). With the default 2 s hold the first critical pins the scope
at OOM, so with the defaults MEDIUM is seen only when the kernel happens to
say medium first. This test sets HoldSec=0: every level the kernel reports is
passed through, and the daemon must report MEDIUM for the cgroup from its
memcg source."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402

HOT_MIB = 96
COLD_MIB = 32
CONFIG = "[Levels]\nHoldSec=0\nQuietSec=1\nRepeatSec=1\nHeadroomFloor=0\n"


def main():
    vt.need_root_and_cgroups()
    with vt.Memcg("medium", limit_mib=128) as cg, vt.DataFile("medium", 320) as data:
        d = vt.Daemon(f"--watch={cg.rel}", config=CONFIG).start()
        src = d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == cg.name, 1,
                         f"a 'source' line for {cg.name}", from_start=True)
        vt.check(src.get("source") == "memcg", f"source={src.get('source')} for {cg.name}, expected memcg")

        load = vt.Load(cg, "hotcold", data.path, HOT_MIB, extra_opts=[f"--cold-mib={COLD_MIB}"]).start()
        ev = d.wait_for(vt.is_level(cg.name, "medium"), 20, f"level=medium for {cg.name}")
        vt.log(f"got: {ev['line']} ({(ev['t_usec'] - load.started_usec) / 1000:.0f} ms after the load started)")
        seen = [e["level"] for e in d.find(vt.is_level(cg.name))]
        vt.log(f"levels before it: {seen[:seen.index('medium') + 1]}")
        vt.check(ev.get("source") == "memcg", f"medium from source={ev.get('source')}: {ev['line']}")
        vt.check(ev.get("cause") == "level", f"medium with cause={ev.get('cause')}: {ev['line']}")
        vt.check(load.alive(), f"the load died: {load.stderr()}")
        load.stop()
        d.stop()


vt.run(main)
