#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Thrashing is not running out: an OOM from reclaim inefficiency alone, while
memory is still available, kills nothing.

Unit T (a fake unit laid out as systemd does, memcg limit 128 MiB) has the
policy Scope=unit, [OOM] Kill=yes and runs the hot/cold load of
test-memcg-medium.py (96 MiB mmapped and re-touched, reads streaming through
the rest): the kernel's memory.pressure_level says "critical" within seconds
(measured: 0.05-8 ms after the first "medium", then ~250 critical wake-ups in
6 s), which the memcg source reports as OOM. The page cache is still there
to reclaim, so the headroom the daemon reads at that moment is above the floor
(limit minus usage that cannot be reclaimed): the level line says
memory_left=1, a "kill-held ... why=memory-left" line follows, nothing is
killed, and the load and T's main process live through 6 s of it. MEDIUM
comes before that OOM: from memcg's own "medium", or, when the kernel said
"critical" first, as the daemon's graded MEDIUM (graded=1). The
shipped defaults (HeadroomFloor=2%, HoldSec=2s) are used.

Before this rule the daemon killed the thrashing load at the first critical
event (bench/compare measured it on the hybrid guest: killed 1.7 s into a
thrash that nobody else killed). The converse, that an OOM with memory gone
still kills at once, is test-policy-actions' b) and test-kill-match."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402
import vmpunit as vu  # noqa: E402

PREFIX = f"vmp-tn-{os.getpid()}"
HOT_MIB = 96
COLD_MIB = 32
DATA_MIB = 320


def main():
    vt.need_root_and_cgroups(cgroup2=True)
    tmp = vt.make_tempdir()
    with vu.Slice(PREFIX), vu.Unit(PREFIX, "t", limit_mib=128) as t, vt.DataFile("tn", DATA_MIB) as data:
        pdir = vu.write_policies({t.unit: "[Policy]\nScope=unit\n\n[OOM]\nKill=yes\n"})
        main_proc = vu.Recorder(t, tmp).start()
        time.sleep(0.05)
        d = vt.Daemon(f"--policy-dir={pdir}").start()
        d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == t.name, 2,
                   f"a 'source' line for {t.name}", from_start=True)

        load = vt.Load(t, "hotcold", data.path, HOT_MIB, extra_opts=[f"--cold-mib={COLD_MIB}"]).start()
        oom = d.wait_for(vt.is_level(t.name, "oom"), 30, f"level=oom for {t.name} from the thrash")
        vt.log(f"got: {oom['line']} ({(oom['t_usec'] - load.started_usec) / 1000:.0f} ms after the load)")
        vt.check(oom.get("cause") != "headroom", f"the OOM came from the headroom floor, so the thrash did "
                                                 f"run the memcg out of memory (fixture broken): {oom['line']}")
        vt.check(str(oom.get("memory_left")) == "1", f"the thrash's OOM does not say memory_left=1: {oom['line']}")
        # The seed's levels in order: MEDIUM before that OOM, from memcg's
        # "medium" or, where the kernel said "critical" first, graded=1 (with
        # memory left nothing is killed, so the OOM waits for its next sample).
        medium = [e for e in d.find(vt.is_level(t.name, "medium")) if e["t_usec"] <= oom["t_usec"]]
        vt.check(medium, f"no MEDIUM for {t.name} before its OOM: {oom['line']}")
        vt.log(f"MEDIUM first: {medium[0]['line'] if medium else 'none'}")
        held = d.wait_for(lambda e: e["type"] == "kill-held" and e.get("scope") == t.name, 2,
                          f"a 'kill-held scope={t.name}' line")
        vt.check(held.get("why") == "memory-left", f"why={held.get('why')}: {held['line']}")

        time.sleep(6)
        ooms = d.find(vt.is_level(t.name, "oom"))
        kills = d.find(lambda e: e["type"] in ("killed", "would-kill"))
        vt.log(f"{len(ooms)} OOM lines for {t.name} in the thrash, {len(d.find(lambda e: e['type'] == 'kill-held'))} "
               f"kill-held lines")
        vt.check(not kills, f"the daemon killed in a thrash with memory left: {[e['line'] for e in kills]}")
        vt.check(load.alive(), f"the hot/cold load (pid {load.pid}) died: status {load.proc.returncode} {load.stderr()}")
        vt.check(main_proc.alive(), "T's main process died")
        said = d.stderr_lines(lambda l: "thrashing, not running out; nothing is killed" in l)
        vt.check(said, "the daemon's log does not say why nothing was killed")
        load.stop()
        main_proc.stop()
        d.stop()


vt.run(main)
