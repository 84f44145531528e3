#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The announce latency histogram (Latencies) counts only announcements a
notification caused, rises and repeats: Simulate(oom), then Simulate(low)
while OOM holds, so that OOM's hold runs out and the engine's timer makes
the level fall to LOW, then to Normal. Two announcements above Normal are
printed (OOM, LOW) but only the rise is counted; a fall's timestamp is its
deadline, so counting it measured the timer's accuracy, not the daemon.

The deliver stage (notification → the last descriptor subscriber written)
follows the same rule, and counts only announcements that wrote to a
subscriber: the same pass is made first with none (nothing counted), then
with one Subscribe(LOW) descriptor (the rise counted once, and it is no
later than the announcement, which includes the D-Bus signals).

The same stages to the µs, the `own` line of --print-events
(vmpressured(8), EVENT LINES): one per announcement the notification caused
(the OOM, not the fall), right after its level line with the same t_usec,
with decided ≤ start ≤ deliver ≤ announce; deliver_usec=-1 and written=0 without a
subscriber, written=1 with one."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

# A level holds 1 s; Normal after 2 s without pressure; no repeats.
CONFIG = "[Levels]\nHoldSec=1s\nQuietSec=2s\nRepeatSec=60s\n"


def histogram(stage, simulated):
    """(count, sum in µs) of one stage of the Latencies property."""
    for st, sim, buckets, count, total in vb.get_property("Latencies"):
        if st == stage and bool(sim) == simulated:
            return count, total
    vt.fail(f"the Latencies property has no {stage} stage")


def announce_count(simulated):
    return histogram("announce", simulated)[0]


def simulate(level):
    vb.busctl("call", vb.NAME, vb.PATH, vb.IFACE, "Simulate", "ss", level, "")


def check_own(d, before, written):
    """The own lines of -.slice since before (an index into d.events): one,
    for the OOM rise, after its level line and before any other level line,
    with its stages in order. Returns it."""
    events = d.events[before:]
    own = [i for i, e in enumerate(events) if e["type"] == "own" and e.get("scope") == "-.slice"]
    vt.check(len(own) == 1, f"expected one own line (the OOM rise; a fall has none), got "
             f"{[events[i]['line'] for i in own]}")
    e = events[own[0]]
    rise = [i for i, x in enumerate(events[:own[0]]) if vt.is_level("-.slice", "oom")(x)]
    vt.check(rise, f"the own line came before its OOM level line: {e['line']}")
    lv = events[rise[-1]]
    between = [x["line"] for x in events[rise[-1] + 1:own[0]] if x["type"] == "level"]
    vt.log(f"level: {lv['line']}\nown:   {e['line']}")
    vt.check(not between, f"another level line between the OOM line and its own line: {between}")
    vt.check(e.get("level") == "oom" and e.get("t_usec") == lv["t_usec"],
             f"the own line does not name the OOM of t_usec={lv['t_usec']}: {e['line']}")
    for k in ("decided_usec", "start_usec", "deliver_usec", "announce_usec", "written"):
        vt.check(isinstance(e.get(k), int), f"the own line has no integer {k}: {e['line']}")
    vt.check(e["written"] == written, f"written={e['written']}, expected {written}: {e['line']}")
    if written == 0:
        vt.check(e["deliver_usec"] == -1, f"no descriptor written, but deliver_usec={e['deliver_usec']}")
        vt.check(0 <= e["decided_usec"] <= e["start_usec"] <= e["announce_usec"],
                 f"stages out of order (decided ≤ start ≤ announce): {e['line']}")
    else:
        vt.check(0 <= e["decided_usec"] <= e["start_usec"] <= e["deliver_usec"] <= e["announce_usec"],
                 f"stages out of order (decided ≤ start ≤ deliver ≤ announce): {e['line']}")
    return e


def one_pass(d, before):
    """Simulate(oom), a fall to LOW, Normal; returns the level lines of
    -.slice printed since before (an index into d.events)."""
    simulate("oom")
    d.wait_for(vt.is_level("-.slice", "oom"), 5, "OOM on -.slice")
    time.sleep(0.4)
    simulate("low")                     # below OOM: no announcement, but LOW is seen
    d.wait_for(vt.is_level("-.slice", "low"), 5, "the fall from OOM to LOW")
    d.wait_for(vt.is_level("-.slice", "none"), 10, "Normal again")
    return [e for e in d.events[before:] if vt.is_level("-.slice")(e)]


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vb.SystemBus().start()
    d = vt.Daemon(config=CONFIG).start()
    vb.wait_name(vb.NAME)
    before = announce_count(True)
    deliver_before = histogram("deliver", True)

    lines = one_pass(d, 0)
    caused = [e for e in lines if vb.RANK[e["level"]] > vb.RANK[e["previous"]] or e.get("repeat") == 1]
    got = announce_count(True) - before
    vt.log(f"announcements above Normal: {[(e['previous'], e['level']) for e in lines]}; "
           f"caused by a sample: {len(caused)}; histogram counted {got}")
    vt.check(len(lines) == 2 and len(caused) == 1, f"expected OOM then a fall to LOW, got {lines}")
    vt.check(got == len(caused), f"the announce histogram counted {got}, not the {len(caused)} rise(s): "
             "a fall from the timer was counted as a notification's latency")
    vt.check(histogram("deliver", True) == deliver_before,
             f"deliver counted without any subscriber: {deliver_before} → {histogram('deliver', True)}")
    check_own(d, 0, written=0)

    # Again with a descriptor subscriber at LOW: it gets OOM and the fall to
    # LOW, but only the rise is a notification's latency.
    cl = vb.Client("--no-signals", f"--subscribe={vb.VMPRESSURE['low']}")
    a0, d0 = histogram("announce", True), histogram("deliver", True)
    mark = len(d.events)
    one_pass(d, mark)
    cl.wait_for(lambda e: e["type"] == "record" and vb.LEVEL_OF_VALUE.get(e["pressure"]) == "low", 5,
                "the subscriber's LOW record after OOM")
    recs = [vb.LEVEL_OF_VALUE[r["pressure"]] for r in cl.records()]
    a1, d1 = histogram("announce", True), histogram("deliver", True)
    vt.log(f"with a subscriber: records {recs}; announce +{a1[0] - a0[0]} ({a1[1] - a0[1]} µs), "
           f"deliver +{d1[0] - d0[0]} ({d1[1] - d0[1]} µs)")
    vt.check("oom" in recs, f"the subscriber got no OOM record: {recs}")
    vt.check(d1[0] - d0[0] == 1 and a1[0] - a0[0] == 1,
             f"one rise: deliver counted {d1[0] - d0[0]}, announce {a1[0] - a0[0]}")
    vt.check(d1[1] - d0[1] <= a1[1] - a0[1],
             f"deliver took {d1[1] - d0[1]} µs, more than the whole announcement's {a1[1] - a0[1]} µs")
    check_own(d, mark, written=1)
    cl.stop()
    d.stop()


vt.run(main)
