#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""memcg source, LOW: a page-cache streaming load in a 128 MiB memcg (reading a
256 MiB file from disk) makes the kernel's memory.pressure_level fire "low"
within ~60 ms (about one event per 2 MiB reclaimed). The daemon, watching that
cgroup with the best source it finds (memcg on this kernel), must report
"level scope=<cgroup> level=low"."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402


def main():
    vt.need_root_and_cgroups()
    with vt.Memcg("low", limit_mib=128) as cg, vt.DataFile("low", 256) as data:
        d = vt.Daemon(f"--watch={cg.rel}").start()
        src = d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == cg.name, 1,
                         f"a 'source' line for {cg.name}", from_start=True)
        vt.check(src.get("source") == "memcg",
                 f"the daemon chose source={src.get('source')} for {cg.name}, expected memcg: {src['line']}")
        vt.check(src.get("cgroup") == cg.rel, f"source line names cgroup={src.get('cgroup')}, expected {cg.rel}")

        # Idle first: nothing may be reported for the cgroup before there is pressure.
        early = d.find(vt.is_level(cg.name))
        vt.check(not early, f"level reported for {cg.name} before any load: {early[0]['line'] if early else ''}")

        load = vt.Load(cg, "stream", data.path).start()
        ev = d.wait_for(vt.is_level(cg.name), 10, f"a level line for {cg.name}")
        vt.log(f"got: {ev['line']} ({(ev['t_usec'] - load.started_usec) / 1000:.0f} ms after the load started)")
        vt.check(ev.get("level") == "low",
                 f"page-cache streaming gave level={ev.get('level')}, expected low: {ev['line']}")
        vt.check(ev.get("source") == "memcg", f"level line from source={ev.get('source')}: {ev['line']}")
        vt.check(ev.get("cause") == "level", f"cause={ev.get('cause')}, expected level: {ev['line']}")
        vt.check(ev.get("previous") == "none", f"previous={ev.get('previous')}, expected none: {ev['line']}")
        vt.check(ev["t_usec"] >= load.started_usec - 50000,
                 f"t_usec {ev['t_usec']} is before the load started ({load.started_usec})")

        vt.check(load.alive(), f"the load died: {load.stderr()}")
        load.stop()
        d.stop()


vt.run(main)
