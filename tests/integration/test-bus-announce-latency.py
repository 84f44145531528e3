#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The announce latency histogram (Latencies) counts only announcements a
notification caused, rises and repeats: Simulate(oom), then Simulate(low)
while OOM holds, so that OOM's hold runs out and the engine's timer makes
the level fall to LOW, then to Normal. Two announcements above Normal are
printed (OOM, LOW) but only the rise is counted; a fall's timestamp is its
deadline, so counting it measured the timer's accuracy, not the daemon."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

# A level holds 1 s; Normal after 2 s without pressure; no repeats.
CONFIG = "[Levels]\nHoldSec=1s\nQuietSec=2s\nRepeatSec=60s\n"


def announce_count(simulated):
    for stage, sim, buckets, count, total in vb.get_property("Latencies"):
        if stage == "announce" and bool(sim) == simulated:
            return count
    vt.fail("the Latencies property has no announce stage")


def simulate(level):
    vb.busctl("call", vb.NAME, vb.PATH, vb.IFACE, "Simulate", "ss", level, "")


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vb.SystemBus().start()
    d = vt.Daemon(config=CONFIG).start()
    vb.wait_name(vb.NAME)
    before = announce_count(True)

    simulate("oom")
    d.wait_for(vt.is_level("-.slice", "oom"), 5, "OOM on -.slice")
    time.sleep(0.4)
    simulate("low")                     # below OOM: no announcement, but LOW is seen
    d.wait_for(vt.is_level("-.slice", "low"), 5, "the fall from OOM to LOW")
    d.wait_for(vt.is_level("-.slice", "none"), 10, "Normal again")

    lines = [e for e in d.events if vt.is_level("-.slice")(e)]
    caused = [e for e in lines if vb.RANK[e["level"]] > vb.RANK[e["previous"]] or e.get("repeat") == 1]
    got = announce_count(True) - before
    vt.log(f"announcements above Normal: {[(e['previous'], e['level']) for e in lines]}; "
           f"caused by a sample: {len(caused)}; histogram counted {got}")
    vt.check(len(lines) == 2 and len(caused) == 1, f"expected OOM then a fall to LOW, got {lines}")
    vt.check(got == len(caused), f"the announce histogram counted {got}, not the {len(caused)} rise(s): "
             "a fall from the timer was counted as a notification's latency")
    d.stop()


vt.run(main)
