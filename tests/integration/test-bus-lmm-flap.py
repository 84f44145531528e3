#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""LowMemoryWarning when the level flaps, on a real dbus-daemon enforcing
the shipped policy.

GLib's GMemoryMonitor passes every LowMemoryWarning on to every app, which
then drops its caches; low-memory-monitor sends a level at most once per
15 s. The system scope is flapped Normal -> Low -> Normal three times within
~10 s (Simulate(low), back to Normal after QuietSec=2s): the daemon's Low
signal goes out each time (and on the way down from each Medium),
LowMemoryWarning(50) only the first. A rise
(Simulate(medium)) is sent at once, LowMemoryWarning(100); a second Medium
after Normal within 15 s is not. The figure: warnings a client got for the
flaps."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpfault as vf   # noqa: E402

FLAPS = 3


def flap(d, mgr, level, t0):
    mgr.simulate(level)
    d.wait_for(lambda e: vt.is_level("-.slice", level)(e) and "simulated" in e and e["t_usec"] >= t0, 5,
               f"the simulated {level}")
    d.wait_for(lambda e: vt.is_level("-.slice", "none")(e) and e["t_usec"] >= t0, 10, f"normal after {level}")


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vb.SystemBus().start()
    d = vt.Daemon(config=vb.FAST_LEVELS + "[Daemon]\nLowMemoryMonitor=yes\n").start()
    vb.wait_name(vb.NAME)
    vb.wait_name(vb.LMM_NAME)
    client = vb.Client("--lmm")
    mgr = vf.Manager()

    t_start = vt.now_usec()
    for _ in range(FLAPS):
        flap(d, mgr, "low", vt.now_usec())
    vt.check(vt.now_usec() - t_start < 14_000_000, "the flaps took 14 s or more: the test proves nothing")
    flap(d, mgr, "medium", vt.now_usec())
    flap(d, mgr, "medium", vt.now_usec())
    elapsed = (vt.now_usec() - t_start) / 1e6

    lows = [s for s in client.signals("-.slice") if s["member"] == "Low" and s["recv_usec"] >= t_start]
    mediums = [s for s in client.signals("-.slice") if s["member"] == "Medium" and s["recv_usec"] >= t_start]
    warnings = [e["level"] for e in client.snapshot() if e["type"] == "lmm" and e["recv_usec"] >= t_start]
    vt.log(f"in {elapsed:.1f} s: {len(lows)} Low and {len(mediums)} Medium signals; LowMemoryWarning {warnings}")
    # A Medium steps down through Low to Normal: Low signals for those too.
    vt.check(len(lows) >= FLAPS and len(mediums) == 2, "the level signals are not rate-limited by this: "
                                                       f"{len(lows)} Low, {len(mediums)} Medium")
    vt.check(warnings.count(50) == 1, f"{warnings.count(50)} LowMemoryWarning(50) for {FLAPS} Normal->Low flaps "
                                      f"within 15 s, expected 1")
    vt.check(warnings == [50, 100], f"LowMemoryWarning {warnings}, expected [50, 100] (the first Low, then the rise)")
    vt.log(f"figure: {warnings.count(50)} LowMemoryWarning(50) for {FLAPS} flaps, "
           f"{warnings.count(100)} LowMemoryWarning(100) for 2 Medium")
    mgr.close()
    client.stop()
    d.stop()


vt.run(main)
