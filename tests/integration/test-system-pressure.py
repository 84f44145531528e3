#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""SystemPressure=: what the system scope (-.slice) counts as pressure.

Two daemons listen on the root memcg at once, while a small memcg of ours is
first streamed through (LOW) and then driven into OOM (held there with
oom_kill_disable=1, then killed by us):
  - SystemPressure=any-cgroup (the kernel's default listener mode) announces
    the memcg's pressure on -.slice: the control, proving the events reached
    the root;
  - SystemPressure=machine (the shipped default, a "local" listener) announces
    nothing on -.slice: a cgroup at its own limit is not the machine's
    pressure, so no Scope=system policy may act on it. Its Kill=yes policy
    for a unit laid out as systemd does (a process of ours in
    system.slice/<unit>) must leave that process alive.
Reclaim of the whole machine cannot be made safely here, so the other half
(machine mode announcing global reclaim) is not tested in CI; bench/compare's
qemu guest measures it (bench/RESULTS.md)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpunit as vu    # noqa: E402

PREFIX = f"vmp-sp-{os.getpid()}"
LEVELS = "[Levels]\nHoldSec=0\nQuietSec=1\nRepeatSec=1\nHeadroomFloor=0\n"


def main():
    vt.need_root_and_cgroups(cgroup2=True)
    policies = vt.make_tempdir()
    with vu.Slice(PREFIX), vu.Unit(PREFIX, "marked") as unit, \
            vt.Memcg("sp-low", limit_mib=128) as low_cg, vt.DataFile("sp", 256) as data, \
            vt.Memcg("sp-oom", limit_mib=64, oom_kill_disable=True) as oom_cg:
        with open(os.path.join(policies, f"{unit.unit}.policy"), "w") as f:
            f.write("[Policy]\nScope=system\n\n[OOM]\nKill=yes\nKillTarget=largest\n")
        bystander = vu.Recorder(unit, policies).start()

        machine = vt.Daemon(f"--policy-dir={policies}", config=LEVELS + "[Daemon]\nSystemPressure=machine\n",
                            name="machine").start()
        control = vt.Daemon("--dry-run", f"--policy-dir={vt.make_tempdir()}", config=LEVELS + "[Daemon]\nSystemPressure=any-cgroup\n",
                            name="any-cgroup").start()
        for d in (machine, control):
            d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == "-.slice", 2,
                       f"{d.name}: a 'source' line for -.slice", from_start=True)
        baseline = machine.find(vt.is_level("-.slice"))

        vt.log("=== LOW: a page-cache stream through a 128 MiB memcg")
        load = vt.Load(low_cg, "stream", data.path).start()
        ev = control.wait_for(vt.is_level("-.slice"), 10, "any-cgroup: a level on -.slice from the stream")
        vt.log(f"any-cgroup: {ev['line']}")
        load.stop()

        vt.log("=== OOM: 128 MiB touched in a 64 MiB memcg held under OOM")
        hog = vt.Load(oom_cg, "anon", "128").start()
        ev = control.wait_for(vt.is_level("-.slice", "oom"), 10, "any-cgroup: level=oom on -.slice")
        vt.log(f"any-cgroup: {ev['line']}")
        vt.check(vt.poll_until(lambda: oom_cg.oom_control().get("under_oom") == 1, 5),
                 f"the hog's memcg is not under OOM: {oom_cg.oom_control()} (fixture broken)")
        # The machine-mode daemon had as long as the control needed, and a
        # second more, to hear the same events.
        vt.poll_until(lambda: False, 1.0)
        hog.kill()

        heard = [e for e in machine.find(vt.is_level("-.slice")) if e not in baseline]
        vt.check(not heard, f"SystemPressure=machine announced a cgroup's own limit as system pressure: "
                            f"{[e['line'] for e in heard]}")
        acted = machine.find(lambda e: e["type"] in ("killed", "would-kill", "action"))
        vt.check(not acted, f"SystemPressure=machine acted on a cgroup's own limit: {[e['line'] for e in acted]}")
        vt.check(bystander.alive(), "the Kill=yes unit's process died")
        vt.log(f"machine: {len(heard)} level lines on -.slice; any-cgroup: "
               f"{len(control.find(vt.is_level('-.slice')))}")
        machine.stop()
        control.stop()
        bystander.stop()


vt.run(main)
