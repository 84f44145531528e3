#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Real memcg pressure → the Low/Medium/OOM/Normal signals, seen by
`busctl --json=short monitor` and by an sd-bus client (vmp-bus-client), in
the daemon's order and with the right scope; then every property with
busctl get-property while the system scope is under pressure.

Memcg A (watched: its own scope) gets page-cache streaming (LOW), then an
anonymous overflow held by oom_kill_disable=1 (OOM), then nothing (Normal).
Memcg B (not watched) is streamed so the system scope (-.slice, the one the
properties describe) sees LOW."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

SIGNAL = {"low": "Low", "medium": "Medium", "oom": "OOM", "none": "Normal"}


def expected_signals(daemon, scope, since_usec=0):
    """What the daemon announced for scope, as (member, index) signals."""
    return [(SIGNAL[e["level"]], e["index"] if e["level"] != "none" else None)
            for e in vb.daemon_levels(daemon, scope) if e["t_usec"] > since_usec]


def client_signals(client, scope):
    return [(e["member"], e.get("index")) for e in client.signals(scope)]


def monitor_signals(mon, scope):
    return [(m, i) for m, _, i in mon.level_signals(scope)]


def check_same(scope, daemon, mon, client, ready_usec):
    """Every announcement made after the listeners were ready is seen, in
    order; what they saw is the tail of what the daemon announced (a system
    scope announcement from before may or may not have reached them)."""
    want = expected_signals(daemon, scope)
    must = len(expected_signals(daemon, scope, ready_usec))
    vt.log(f"{scope}: daemon {vb.collapse([m for m, _ in want])} ({len(want)} announcements, "
           f"{must} after the listeners were ready)")
    for who, got in (("busctl monitor", monitor_signals(mon, scope)),
                     ("the sd-bus client", client_signals(client, scope))):
        vt.check(len(got) >= must and got == want[len(want) - len(got):],
                 f"{scope}: {who} saw {got}, the daemon announced {want} ({must} after ready)")


def phase_watched(d, a, data, mon, cl, ready_usec):
    load = vt.Load(a, "stream", data.path).start()
    d.wait_for(vt.is_level(a.name, "low"), 20, f"LOW on {a.name}")
    cl.wait_for(lambda e: e["type"] == "signal" and e.get("scope") == a.name and e["member"] == "Low",
                5, f"the Low signal for {a.name}")
    load.stop()

    hog = vt.Load(a, "anon", 200).start()          # 200 MiB into 128: critical, then held under OOM
    d.wait_for(vt.is_level(a.name, "oom"), 20, f"OOM on {a.name}")
    cl.wait_for(lambda e: e["type"] == "signal" and e.get("scope") == a.name and e["member"] == "OOM",
                5, f"the OOM signal for {a.name}")
    hog.kill()
    a.kill_all()

    d.wait_for(vt.is_level(a.name, "none"), 20, f"back to normal on {a.name}")
    cl.wait_for(lambda e: e["type"] == "signal" and e.get("scope") == a.name and e["member"] == "Normal",
                5, f"the Normal signal for {a.name}")
    time.sleep(0.5)                                 # let busctl print the last one

    check_same(a.name, d, mon, cl, ready_usec)
    seq = vb.collapse([m for m, _ in expected_signals(d, a.name)])
    vt.check(seq[0] == "Low" and "OOM" in seq and seq.index("OOM") > 0 and seq[-1] == "Normal",
             f"{a.name}: expected Low … OOM … Normal, got {seq}")
    for member, index in client_signals(cl, a.name):
        if member == "OOM":
            vt.check(index == 100, f"OOM with index {index}, the memcg source reports 100")


def check_properties(d, t0_usec):
    """Every property, while the system scope is at LOW or above."""
    level = vb.get_property("Level")
    vt.check(level in ("low", "medium", "oom"), f"Level is {level!r} under pressure")
    index = vb.get_property("Index")
    vt.check(isinstance(index, int) and 0 <= index <= 100, f"Index {index!r}")
    vt.check(vb.get_property("Source") == "memcg", "Source is not memcg")
    last = vb.get_property("LastChangeUSec")
    vt.check(t0_usec < last <= vt.now_usec(), f"LastChangeUSec {last} not within the test")
    # The counters are the daemon's announcements (changes and repeats) per level:
    # between what it had printed before and after we read them.
    def announced():
        return {lvl: len([e for e in vb.daemon_levels(d, "-.slice") if e["level"] == lvl])
                for lvl in ("none", "low", "medium", "oom")}
    before = announced()
    counts = {lvl: vb.get_property(p) for lvl, p in (("none", "NormalCount"), ("low", "LowCount"),
                                                     ("medium", "MediumCount"), ("oom", "OOMCount"))}
    time.sleep(0.2)
    after = announced()
    vt.log(f"counts {counts}, daemon announced {before} … {after}")
    for lvl in counts:
        vt.check(before[lvl] <= counts[lvl] <= after[lvl],
                 f"{lvl} count {counts[lvl]} is not what the daemon announced ({before[lvl]}…{after[lvl]})")
    vt.check(sum(counts[l] for l in ("low", "medium", "oom")) >= 1, f"no pressure counted: {counts}")
    vt.check(vb.get_property("Policies") == [], "Policies is not empty")
    vt.check(vb.get_property("DryRun") is False, "DryRun is not false")
    version = vt.run_daemon_once(["--version"]).stdout.decode().split()[-1]
    vt.check(vb.get_property("Version") == version, f"Version is not {version}")
    vt.check(vb.get_property("Subscribers") == 0, "Subscribers is not 0")
    vt.check(vb.get_property("SubscriberDrops") == 0, "SubscriberDrops is not 0")
    vt.check(vb.get_property("SignalDrops") == 0, "SignalDrops is not 0")
    r = vb.busctl("--json=short", "call", vb.NAME, vb.PATH, vb.IFACE, "ListPolicies")
    vt.check('"data":[[]]' in r.stdout.replace(" ", ""), f"ListPolicies: {r.stdout.strip()}")


def phase_system(d, b, data, mon, cl, t0_usec, ready_usec):
    load = vt.Load(b, "stream", data.path).start()
    d.wait_for(vt.is_level("-.slice"), 20, "pressure on the system scope")
    cl.wait_for(lambda e: e["type"] == "signal" and e.get("scope") == "-.slice" and e["member"] != "Normal",
                5, "a level signal for -.slice")
    check_properties(d, t0_usec)
    load.stop()
    d.wait_for(vt.is_level("-.slice", "none"), 20, "the system scope back to normal")
    time.sleep(0.5)
    vt.check(vb.get_property("Level") == "none", "Level is not none after the pressure")
    check_same("-.slice", d, mon, cl, ready_usec)
    changed = [m for m in mon.snapshot() if m.get("member") == "PropertiesChanged"]
    levels = [m["payload"]["data"][1].get("Level", {}).get("data") for m in changed]
    vt.check("low" in levels and levels[-1] == "none",
             f"PropertiesChanged carried Level {levels}, expected low … none")


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vb.SystemBus().start()
    with vt.Memcg("bus-sig-a", limit_mib=128, oom_kill_disable=True) as a, \
            vt.Memcg("bus-sig-b", limit_mib=128) as b, \
            vt.DataFile("bus-sig", 256) as data:
        t0 = vt.now_usec()
        # The load is a small memcg at its own limit; -.slice hears it only with any-cgroup.
        d = vt.Daemon(f"--watch={a.rel}", config=vb.FAST_LEVELS, system_pressure="any-cgroup").start()
        vb.wait_name(vb.NAME)
        mon = vb.Monitor()
        cl = vb.Client()
        ready = vt.now_usec()
        phase_watched(d, a, data, mon, cl, ready)
        phase_system(d, b, data, mon, cl, t0, ready)
        cl.stop()
        mon.stop()
        d.stop()


vt.run(main)
