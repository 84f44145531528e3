#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""PSI source on a cgroup2 child: the load runs in a 128 MiB v1 memcg and in the
cgroup2 directory of the same name, so that directory's memory.pressure shows
the stalls the v1 limit causes. The daemon is asked for a 1 s trigger window,
which the kernel refuses here without CAP_SYS_RESOURCE (EINVAL: windows must be
multiples of 2 s); it must retry with 2 s and still report a level change for
the cgroup from the PSI source.

The load is the hot/cold one (110 MiB hot): plain streaming stalls only ~40 ms
per 2 s here (measured 107 ms "some" in 5 s), the hot/cold load 0.4-2.3 s per
5 s. Measured over 10 runs: the first trigger fires 1.8-1.95 s after the load
starts (one 2 s window), at low, medium or oom depending on the run."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402

# WindowSec=1 on purpose: the kernel refuses it, the daemon must fall back to 2 s.
# LowStallMSec=50: 100 ms of "some" stall per 2 s window.
CONFIG = "[PSI]\nWindowSec=1\nLowStallMSec=50\nMediumStallMSec=300\nOOMStallMSec=500\n"


def main():
    vt.need_root_and_cgroups(cgroup2=True)
    with vt.Memcg("psi", limit_mib=128, cgroup2=True) as cg, vt.DataFile("psi", 256) as data:
        d = vt.Daemon("--source=psi", f"--watch={cg.rel}", config=CONFIG).start()
        src = d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == cg.name, 1,
                         f"a 'source' line for {cg.name}", from_start=True)
        vt.check(src.get("source") == "psi", f"source={src.get('source')} for {cg.name}, expected psi: {src['line']}")
        retry = d.stderr_lines(lambda l: "window" in l.lower(), timeout=0.5)
        vt.log("daemon on the window: " + (retry[0] if retry else "(nothing on stderr)"))

        load = vt.Load(cg, "hotcold", data.path, 110).start()
        ev = d.wait_for(lambda e: vt.is_level(cg.name)(e) and e["t_usec"] >= load.started_usec, 15,
                        f"a level line for {cg.name} from the PSI source")
        vt.log(f"got: {ev['line']} ({(ev['t_usec'] - load.started_usec) / 1000:.0f} ms after the load started)")
        vt.check(ev.get("source") == "psi", f"level line from source={ev.get('source')}: {ev['line']}")
        vt.check(ev.get("cause") in ("level", "headroom"), f"unexpected cause: {ev['line']}")
        psi_ev = ev if ev.get("cause") == "level" else \
            d.wait_for(lambda e: vt.is_level(cg.name)(e) and e.get("cause") == "level", 15,
                       f"a level line for {cg.name} caused by a PSI trigger")
        vt.log(f"PSI trigger: {psi_ev['line']}")
        vt.check(load.alive(), f"the load died: {load.stderr()}")
        load.stop()
        d.stop()


vt.run(main)
