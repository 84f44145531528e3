#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Subscribe() slots per user, on a real dbus-daemon enforcing the shipped
policy: one unprivileged user cannot take every slot.

MaxSubscribers=4096 (the default, written out so that the figures below do
not depend on the machine's RLIMIT_NOFILE). User nobody asks for all 4,096:
16 connections x 256 Subscribe() calls (the system bus allows 256
connections per user; one connection may hold many subscriptions). Its
share, MaxSubscribersPerUser= unset, is a quarter: 1,024 are granted, every
other call is refused with LimitsExceeded naming MaxSubscribersPerUser=.
Root then still subscribes: vmpressure-test (libvmpressure's vmpressure_fd(),
the seed's utility) reads the record of a Simulate(low).

Then Reload() with MaxSubscribersPerUser=65536: nobody may now take every
slot outside root's reserve (MaxSubscribers/16 = 256) and no more: 12 more
connections x 256 calls fill the set to 3,840, the rest is refused with
LimitsExceeded saying the last ones are kept for root, and root gets those
256 (the set is then full, for root too).

The figure: subscriptions root still gets while nobody holds all it can."""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpfault as vf   # noqa: E402

MAX = 4096
PER_CONN = 256
LIMITS = "org.freedesktop.DBus.Error.LimitsExceeded"
VMPRESSURE_TEST = os.environ.get("VMPRESSURE_TEST")
CTL = os.environ.get("VMPRESSURECTL")


def subscribe_many(n_clients, user=None):
    """n_clients clients x PER_CONN Subscribe(low), never read; (clients, granted, errors)."""
    clients, granted, errors = [], 0, []
    for _ in range(n_clients):
        c = vb.Client("--no-signals", "--stall", f"--subscribe=low:{PER_CONN}", user=user)
        clients.append(c)
        refused = [e for e in c.snapshot() if e["type"] == "error"]   # all printed before "ready"
        granted += PER_CONN - len(refused)
        errors += refused
    return clients, granted, errors


def check_refusals(errors, n, words, who):
    vt.check(len(errors) == n, f"{who}: {len(errors)} refusals, expected {n}")
    bad = [e for e in errors if e["name"] != LIMITS or words not in e["line"]]
    vt.check(not bad, f"{who}: refusals other than {LIMITS} naming {words!r}: {bad[:2]}")


def root_vmpressure_fd(d, mgr):
    seed = vb._LineReader([VMPRESSURE_TEST], "vmpressure-test", lambda l: {"type": "line", "line": l})
    time.sleep(0.5)
    vt.check(seed.proc.poll() is None, f"vmpressure-test exited: {seed.stderr_text()}")
    mgr.simulate("low")
    got = seed.next(lambda e: "VM pressure: 0x00000400" in e["line"], 5)
    vt.check(got, f"root's vmpressure_fd() read nothing after Simulate(low): {seed.snapshot()} "
                  f"{seed.stderr_text()}")
    vt.log(f"root's vmpressure_fd() (vmpressure-test): {got['line']!r}")
    return seed


def main():
    vt.check(VMPRESSURE_TEST and os.access(VMPRESSURE_TEST, os.X_OK), "$VMPRESSURE_TEST must name the built binary")
    vt.need_root_and_cgroups()
    vb.need_bus()
    vf.use_asan_bounded_quarantine()
    vb.SystemBus().start()
    config = vb.FAST_LEVELS + f"[Daemon]\nMaxSubscribers={MAX}\n"
    d = vt.Daemon(config=config).start()
    vb.wait_name(vb.NAME)
    mgr = vf.Manager()

    t0 = time.monotonic()
    nobody, got, errors = subscribe_many(MAX // PER_CONN, user="nobody")
    vt.log(f"nobody asked for {MAX} in {time.monotonic() - t0:.2f} s: {got} granted, {len(errors)} refused")
    share = MAX // 4
    vt.check(got == share, f"nobody got {got} subscriptions, its share is {share} (MaxSubscribers/4)")
    check_refusals(errors, MAX - share, "MaxSubscribersPerUser=", "nobody past its share")
    vt.check(vb.get_property("Subscribers") == share, f"Subscribers is {vb.get_property('Subscribers')}")

    seed = root_vmpressure_fd(d, mgr)
    d.wait_for(vt.is_level("-.slice", "none"), 15, "normal after the simulated low")

    # Every slot outside root's reserve for nobody.
    with open(d.config_path, "a") as f:
        f.write("\n[Daemon]\nMaxSubscribersPerUser=65536\n")
    err = mgr.reload()
    vt.check(err is None, f"Reload() with MaxSubscribersPerUser=65536: {err}")
    reserve = MAX // 16
    held = vb.get_property("Subscribers")          # nobody's share and vmpressure-test's (one per level)
    more, got2, errors2 = subscribe_many(12, user="nobody")
    nobody += more
    want = MAX - reserve - held
    vt.log(f"after Reload(): nobody got {got2} more ({got + got2} in all), {len(errors2)} refused")
    vt.check(got2 == want, f"nobody got {got2} more, expected {want} (up to MaxSubscribers - {reserve})")
    check_refusals(errors2, 12 * PER_CONN - want, "kept for root", "nobody in root's reserve")

    before_root = vb.get_property("Subscribers")
    vt.check(before_root == MAX - reserve, f"Subscribers is {before_root} with nobody at its most, "
                                           f"expected {MAX - reserve}")
    root, root_got, root_errors = subscribe_many(1)
    n = vb.get_property("Subscribers")
    vt.log(f"root got {root_got} of {PER_CONN} with nobody holding {got + got2}: Subscribers {n}")
    vt.check(root_got == reserve, f"root got {root_got}, expected root's reserve of {reserve}")
    check_refusals(root_errors, PER_CONN - root_got, "MaxSubscribers=", "root past MaxSubscribers")
    vt.check(n == MAX, f"Subscribers is {n}, expected {MAX}")
    vt.log(f"figure: root still gets {held - got + root_got} subscriptions (vmpressure-test's "
           f"{held - got} and {root_got}) while nobody holds {got + got2} of {MAX}")

    for c in nobody + root:
        c.stop()
    seed.stop()
    vt.check(vt.poll_until(lambda: vb.get_property("Subscribers") == 0, 10, 0.1),
             f"Subscribers is {vb.get_property('Subscribers')} after every client exited")
    mgr.close()
    d.stop()


vt.run(main)
