#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""SignalIntervalSec= against the real daemon: a level that flaps
(HoldSec=0, QuietSec=300ms: LOW → NONE → LOW as fast as Simulate() calls
come) signals each unit at most once per level per interval, and what is
held back is shown ("suppressed unit=… suppressed=N" with --print-events, a
line in the log) and counted.

Fake units as systemd lays them out (system.slice/<unit> in the cgroup2 tree,
where the daemon finds the processes, and in the v1 memory hierarchy, which
a Scope=unit policy watches), each with a recorder as its main process that
appends a line to a file per SIGUSR1. Policies [Low] Signal=SIGUSR1:

  A  SignalIntervalSec=1h    FLAPS flaps → 1 signal, FLAPS-1 suppressed
  B  SignalIntervalSec=0     no limit: FLAPS signals, nothing suppressed
  C  (the default, 30 s)     1 signal, FLAPS-1 suppressed
  D  SignalIntervalSec=5s    a flap, a flap at once (suppressed; its line says
                             from when the next may go), a flap after that
                             time → 2 signals, 1 suppressed.

Counts are asserted, never durations. Each flap is one Simulate(low) per
unit scope on a private bus, then the wait for every scope to be back at
NONE.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpunit as vu    # noqa: E402

PREFIX = f"vmp-si-{os.getpid()}"
CONFIG = "[Levels]\nHoldSec=0\nQuietSec=300ms\nRepeatSec=1s\nHeadroomFloor=0\n"
FLAPS = 5

class Unit(vu.Unit):
    """A fake unit with its policy text and a recorder, its main process."""

    def __init__(self, suffix, policy):
        super().__init__(PREFIX, suffix)
        self.policy = policy
        self.recorder = None

    def start_recorder(self, directory):
        self.recorder = vu.Recorder(self, directory).start()

    def alive(self):
        return self.recorder.alive()

    def stop(self):
        self.recorder.stop()

    def signals(self):
        return self.recorder.count()


def count(d, pred):
    return len(d.find(pred))


def lows(unit):
    return lambda e: e["type"] == "level" and e.get("scope") == unit.name and e.get("level") == "low"


def nones(unit):
    return lambda e: (e["type"] == "level" and e.get("scope") == unit.name and e.get("level") == "none"
                      and e.get("previous") == "low")


def of_type(t, unit):
    return lambda e: e["type"] == t and e.get("unit") == unit.unit


def simulate(unit):
    vb.busctl("call", vb.NAME, vb.PATH, vb.IFACE, "Simulate", "ss", "low", unit.name)


def flap(d, units):
    """One LOW → NONE per unit: Simulate(low) on each scope, then each back at NONE."""
    target = {u.unit: count(d, lows(u)) + 1 for u in units}
    for u in units:
        simulate(u)
    for u in units:
        ok = vt.poll_until(lambda: count(d, lows(u)) >= target[u.unit] and count(d, nones(u)) >= target[u.unit], 10)
        vt.check(ok, f"{u.unit}: no LOW → NONE #{target[u.unit]} within 10 s")


def settle(units, expected, timeout=5):
    """The recorders have at least what is expected, then nothing more comes in 0.5 s."""
    vt.poll_until(lambda: all(u.signals() >= expected[u.unit] for u in units), timeout)
    time.sleep(0.5)


def main():
    vt.need_root_and_cgroups(cgroup2=True)
    vb.need_bus()
    if os.path.isdir("/run/systemd/system"):
        vt.skip_or_fail("PID 1 is systemd; this test fakes units in a tree without it "
                        "(the systemd case is tested in systemd-nspawn)")
    low = "[Low]\nSignal=SIGUSR1\nSignalTarget=main\n"
    tmp = vt.make_tempdir()
    with vu.Slice(PREFIX), \
            Unit("a", f"[Policy]\nScope=unit\nSignalIntervalSec=1h\n\n{low}") as a, \
            Unit("b", f"[Policy]\nScope=unit\nSignalIntervalSec=0\n\n{low}") as b, \
            Unit("c", f"[Policy]\nScope=unit\n\n{low}") as c, \
            Unit("d", f"[Policy]\nScope=unit\nSignalIntervalSec=5s\n\n{low}") as dd:
        units = (a, b, c, dd)
        pdir = vt.make_tempdir()
        for u in units:
            with open(os.path.join(pdir, f"{u.unit}.policy"), "w") as f:
                f.write(u.policy)
            u.start_recorder(tmp)
        time.sleep(0.05)        # the recorder is the oldest process: the main one

        vb.SystemBus().start()
        d = vt.Daemon(f"--policy-dir={pdir}", config=CONFIG).start()
        vb.wait_name(vb.NAME)
        for u in units:
            d.wait_for(lambda e, u=u: e["type"] == "source" and e.get("scope") == u.name, 5,
                       f"a 'source' line for {u.name}", from_start=True)

        # --- A, B, C: FLAPS flaps as fast as the daemon goes back to NONE.
        vt.log(f"=== {FLAPS} flaps of A (1h), B (0: no limit), C (the default)")
        for _ in range(FLAPS):
            flap(d, (a, b, c))
        expected = {a.unit: 1, b.unit: FLAPS, c.unit: 1}
        settle((a, b, c), expected)
        for u in (a, b, c):
            acts = d.find(of_type("action", u))
            supp = d.find(of_type("suppressed", u))
            vt.log(f"{u.unit}: {u.signals()} SIGUSR1 received, {len(acts)} action lines, "
                   f"{len(supp)} suppressed lines")
            vt.check(u.signals() == expected[u.unit],
                     f"{u.unit}: the recorder got {u.signals()} SIGUSR1, expected {expected[u.unit]}")
            vt.check(len(acts) == expected[u.unit], f"{u.unit}: {len(acts)} action lines, expected "
                                                   f"{expected[u.unit]}: {[e['line'] for e in acts]}")
            vt.check(len(supp) == FLAPS - expected[u.unit],
                     f"{u.unit}: {len(supp)} suppressed lines, expected {FLAPS - expected[u.unit]}")
            # The counter in the line counts up, one per held-back signal.
            vt.check([int(e["suppressed"]) for e in supp] == list(range(1, len(supp) + 1)),
                     f"{u.unit}: suppressed= counts {[e.get('suppressed') for e in supp]}")
            for e in supp:
                vt.check(e.get("level") == "low" and e.get("signal") == "SIGUSR1",
                         f"{u.unit}: odd suppressed line: {e['line']}")
            vt.check(u.alive(), f"{u.unit}: the recorder exited")
        for u, usec in ((a, 3600 * 10**6), (c, 30 * 10**6)):
            got = {int(e["interval_usec"]) for e in d.find(of_type("suppressed", u))}
            vt.check(got == {usec}, f"{u.unit}: interval_usec={got}, expected {usec}")
        log_lines = [l for l in d.stderr_text().splitlines() if "again within SignalIntervalSec=" in l]
        vt.check(len(log_lines) == 2 * (FLAPS - 1),
                 f"{len(log_lines)} log lines about held-back signals, expected {2 * (FLAPS - 1)}")
        vt.log(f"log: {log_lines[0] if log_lines else None}")

        # --- D: one per interval, and the next goes once the interval is over.
        vt.log("=== D (5s): a flap, a flap at once, a flap after the interval")
        flap(d, (dd,))
        settle((dd,), {dd.unit: 1})
        flap(d, (dd,))
        supp = d.wait_for(of_type("suppressed", dd), 5, f"a 'suppressed unit={dd.unit}' line")
        vt.log(f"got: {supp['line']}")
        next_usec = int(supp["next_usec"])
        vt.check(dd.signals() == 1, f"{dd.unit}: {dd.signals()} SIGUSR1 after the second flap, expected 1")
        vt.poll_until(lambda: vt.now_usec() > next_usec, 10)
        flap(d, (dd,))
        settle((dd,), {dd.unit: 2})
        acts = d.find(of_type("action", dd))
        vt.check(dd.signals() == 2, f"{dd.unit}: the recorder got {dd.signals()} SIGUSR1, expected 2")
        vt.check(len(acts) == 2, f"{dd.unit}: {len(acts)} action lines, expected 2")
        vt.check(count(d, of_type("suppressed", dd)) == 1,
                 f"{dd.unit}: {count(d, of_type('suppressed', dd))} suppressed lines, expected 1")

        # Nothing else was acted on, and B (no limit) never held anything back.
        vt.check(not d.find(of_type("suppressed", b)), f"{b.unit} (SignalIntervalSec=0) had signals held back")
        vt.check(not d.find(lambda e: e["type"] in ("killed", "would-kill")), "kills without Kill=yes")
        # The bus counts every held-back signal: A's and C's FLAPS-1 and D's one.
        held = vb.get_property("SignalsSuppressed")
        vt.check(held == 2 * (FLAPS - 1) + 1, f"SignalsSuppressed {held}, expected {2 * (FLAPS - 1) + 1}")
        d.stop()
        for u in units:
            u.stop()


vt.run(main)
