#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""An OOM that finds no unit with a policy running is said in the log, once
per rise, after the subscribers and the bus heard of it; without a loaded
policy the responder stays out of the OOM path and says nothing.

  a) no policy loaded: Simulate(oom) on -.slice is announced (level and own
     lines, the subscriber's record) and no notice is logged;
  b) a policy [OOM] Kill=yes for a unit that does not run, loaded by
     Reload() (the responder counts loaded policies again at a reload):
     the next Simulate(oom) logs "-.slice: OOM, but no unit with a policy
     is running (…)" once, and its repeat does not log it again;
  c) a second rise after Normal logs it a second time.

The order inside the daemon (the notice's MANAGER_LISTENER_RECORD phase
after the bus's ANNOUNCE) is test-manager's; stdout and stderr are two
pipes, so here only what is said and how often."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

UNIT = f"vmp-nu-{os.getpid()}-absent.service"
# A level holds 3 s (the OOM's repeat below comes within it), repeats after
# 1 s, Normal 4 s after the last sample.
CONFIG = "[Levels]\nHoldSec=3s\nQuietSec=4s\nRepeatSec=1s\n"
NOTICE = "-.slice: OOM, but no unit with a policy is running ("


def simulate(level):
    vb.busctl("call", vb.NAME, vb.PATH, vb.IFACE, "Simulate", "ss", level, "")


def notices(d):
    return [line for line in d.stderr_text().splitlines() if NOTICE in line]


def oom_rise(d, cl, what):
    """Simulate(oom) from Normal: its level line, own line and the
    subscriber's record. Returns the index of the level line in d.events."""
    mark = len(d.events)
    simulate("oom")
    d.wait_for(vt.is_level("-.slice", "oom"), 5, f"{what}: OOM on -.slice")
    d.wait_for(lambda e: e["type"] == "own" and e.get("level") == "oom", 5, f"{what}: the OOM's own line")
    cl.wait_for(lambda e: e["type"] == "record" and vb.LEVEL_OF_VALUE.get(e["pressure"]) == "oom", 5,
                f"{what}: the subscriber's OOM record")
    return mark


def to_normal(d, what):
    d.wait_for(vt.is_level("-.slice", "none"), 15, f"{what}: Normal again")


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vb.SystemBus().start()
    pdir = os.path.join(vt.make_tempdir(), "policies")
    os.mkdir(pdir)
    d = vt.Daemon(f"--policy-dir={pdir}", config=CONFIG).start()
    vb.wait_name(vb.NAME)
    cl = vb.Client("--no-signals", f"--subscribe={vb.VMPRESSURE['low']}")

    # a) Nothing loaded: announced, not logged. stderr has its own reader
    # thread: it is given 2 s to show a notice that should not be there.
    oom_rise(d, cl, "a) no policy")
    got = vt.poll_until(lambda: notices(d), 2.0) or []
    vt.log(f"a) no policy loaded: {len(got)} notice(s)")
    vt.check(not got, f"a notice with no policy loaded: {got}")
    to_normal(d, "a)")

    # b) A policy for a unit that is not running, loaded at a reload.
    with open(os.path.join(pdir, f"{UNIT}.policy"), "w") as f:
        f.write("[Policy]\nDescription=a unit that does not run\n\n[OOM]\nKill=yes\n")
    vb.busctl("call", vb.NAME, vb.PATH, vb.IFACE, "Reload")
    loaded = [str(p) for p in vb.get_property("Policies")]
    vt.check(UNIT in loaded, f"Reload() did not load {UNIT}: Policies={loaded}")
    oom_rise(d, cl, "b) a policy, no unit")
    got = d.stderr_lines(lambda line: NOTICE in line, 5.0)
    vt.log(f"b) {got}")
    vt.check(len(got) == 1, f"expected one notice after the OOM rise, got {got}")
    vt.check(got[0].rstrip(".").endswith(("none in system.slice)", "none among the units systemd reported)")),
             f"the notice does not say where it looked: {got[0]!r}")
    # The OOM repeated (RepeatSec=1s, within HoldSec=3s): announced again,
    # not logged again.
    time.sleep(1.3)
    mark = len(d.events)
    simulate("oom")
    rep = d.wait_for(lambda e: vt.is_level("-.slice", "oom")(e) and e.get("repeat") == 1, 5,
                     "b) the OOM's repeat")
    d.wait_for(lambda e: e["type"] == "own" and e.get("t_usec") == rep["t_usec"], 5, "b) the repeat's own line")
    vt.check(len(d.events) > mark, "no line for the repeat")
    got = vt.poll_until(lambda: len(notices(d)) > 1, 2.0)
    vt.check(not got, f"the notice was logged again at the OOM's repeat: {notices(d)}")
    to_normal(d, "b)")

    # c) The next rise is said again.
    oom_rise(d, cl, "c) a second rise")
    got = vt.poll_until(lambda: (lambda n: n if len(n) >= 2 else None)(notices(d)), 5.0) or notices(d)
    vt.log(f"c) notices in all: {len(got)}")
    vt.check(len(got) == 2, f"expected a second notice at the second OOM rise, got {got}")
    vt.check(d.alive(), "the daemon died")
    cl.stop()
    d.stop()


vt.run(main)
