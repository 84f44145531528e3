#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""vmstat source, LOW: on this kernel the reclaim of a memcg at its limit moves
/proc/vmstat's pgscan_file/pgsteal_file (measured: ~950k pages scanned, all of
them reclaimed, in 2 s of streaming a 256 MiB file through a 128 MiB memcg) but
not pgscan_direct/allocstall. So with --source=vmstat the system scope (-.slice)
must report level=low with cause=reclaim (the seed's index: everything scanned
was reclaimed -> 0 -> LOW) while the test cgroup streams.

The per-cgroup vmstat source needs a cgroup2 memory.stat with pgscan/pgsteal;
on this hybrid layout the memory controller is on cgroup v1, whose memory.stat
has none. The forced source is therefore unavailable for the watched cgroup:
the daemon must say why on stderr and keep running (a "gone" line for the
scope), not fail to start and not pretend to watch it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402

# Short idle poll so the test does not wait 2 s for the first sample.
CONFIG = "[Poll]\nIdleSec=500ms\nBusyMSec=100\n"


def main():
    vt.need_root_and_cgroups()
    # With the matching cgroup2 directory, so the daemon gets as far as memory.stat.
    with vt.Memcg("vmstat", limit_mib=128, cgroup2=True) as cg, vt.DataFile("vmstat", 256) as data:
        d = vt.Daemon("--source=vmstat", f"--watch={cg.rel}", config=CONFIG).start()
        sysrc = d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == "-.slice", 1,
                           "a 'source' line for -.slice", from_start=True)
        vt.check(sysrc.get("source") == "vmstat", f"system scope uses {sysrc.get('source')}: {sysrc['line']}")

        # The watched cgroup: unavailable (v1 memory.stat has no pgscan), said on stderr.
        cg_src = d.find(lambda e: e["type"] == "source" and e.get("scope") == cg.name)
        gone = d.find(lambda e: e["type"] == "gone" and e.get("scope") == cg.name)
        vt.check(not cg_src, f"the daemon claims a vmstat source for the v1-only cgroup: {cg_src[0]['line'] if cg_src else ''}")
        vt.check(gone, f"no 'gone scope={cg.name}' line for the cgroup the vmstat source cannot watch")
        why = d.stderr_lines(lambda l: cg.name in l and "vmstat" in l and "unavailable" in l)
        vt.check(why, f"stderr does not say why the vmstat source is unavailable for {cg.name}")
        vt.check(any("pgscan" in l for l in why), f"stderr does not name the missing pgscan counters: {why}")
        vt.log(f"daemon says: {why[0]}")

        load = vt.Load(cg, "stream", data.path).start()
        # (Reclaim elsewhere on the machine before our load started does not count.)
        ev = d.wait_for(lambda e: e["type"] == "level" and e.get("scope") == "-.slice" and e.get("level") != "none"
                        and e["t_usec"] >= load.started_usec,
                        10, "a level line for -.slice from the vmstat source")
        vt.log(f"got: {ev['line']} ({(ev['t_usec'] - load.started_usec) / 1000:.0f} ms after the load started)")
        vt.check(ev.get("level") == "low", f"streaming gave level={ev.get('level')} on -.slice, expected low: {ev['line']}")
        vt.check(ev.get("cause") == "reclaim", f"cause={ev.get('cause')}, expected reclaim: {ev['line']}")
        vt.check(ev.get("source") == "vmstat", f"source={ev.get('source')}, expected vmstat: {ev['line']}")
        vt.check(ev.get("index") == 0, f"index={ev.get('index')}: page cache streaming reclaims every page "
                 f"it scans, the seed's index is 0: {ev['line']}")
        vt.check(d.alive(), "the daemon died")
        load.stop()
        d.stop()


vt.run(main)
