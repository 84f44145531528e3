#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A SIGHUP storm under real memcg pressure: 1,000 reloads,
nine in ten by SIGHUP and one in ten by Reload() on the bus, while the
hot/cold load of test-memcg-medium.py keeps a watched 128 MiB memcg between
MEDIUM and OOM. Each reload re-reads a configuration file and a policy
directory that change every time (RepeatSec= and a policy's Description=),
so the parser, the swap of the policy set and the re-arming of every scope
run 1,000 times for real.

The SIGHUPs are paced by the daemon's own log line ("SIGHUP received"):
signals of one kind do not queue, and 1,000 reloads must be 1,000 reloads,
not a few merged ones. Asserted: the daemon stays up; every reload happened
(1,000 = the SIGHUP lines + the successful Reload() calls); it kept
announcing the memcg's levels and the bus client kept receiving them during
the storm; a Simulate() afterwards is signalled; its descriptors are the
same and its RSS grew by at most 256 KiB from after a warm-up of 20
reloads (the first ones size malloc's arenas and sd-bus's buffers; a leak
of even 256 bytes per reload would show as +250 KiB)."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpfault as vf   # noqa: E402

RELOADS = 1000
WARMUP = 20
BUS_EVERY = 10          # one reload in ten is Reload() on the bus
HOT_MIB = 96
COLD_MIB = 32
DATA_MIB = 320
PREFIX = f"vmp-fr-{os.getpid()}"


def config_text(i):
    # HoldSec=0: the kernel's medium/critical alternation is announced as it
    # comes (test-memcg-medium.py); RepeatSec= changes with every reload.
    return (f"[Levels]\nHoldSec=0\nQuietSec=1s\nRepeatSec={200 + 100 * (i % 2)}ms\nHeadroomFloor=0\n"
            "[Daemon]\nLogLevel=info\n")


def write_policies(pdir, i):
    for u in ("a", "b"):
        with open(os.path.join(pdir, f"{PREFIX}-{u}.service.policy"), "w") as f:
            f.write(f"[Policy]\nDescription=storm reload {i}\n\n[OOM]\nKill=no\n")


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vf.use_asan_bounded_quarantine()
    vb.SystemBus().start()
    pdir = vt.make_tempdir()
    write_policies(pdir, 0)
    with vt.Memcg("fault-hup", limit_mib=128) as cg, vt.DataFile("fault-hup", DATA_MIB) as data:
        d = vt.Daemon(f"--watch={cg.rel}", f"--policy-dir={pdir}", config=config_text(0)).start()
        vb.wait_name(vb.NAME)
        cl = vb.Client()
        mgr = vf.Manager()
        start = vf.figures(d.pid)

        load = vt.Load(cg, "hotcold", data.path, HOT_MIB, extra_opts=[f"--cold-mib={COLD_MIB}"]).start()
        d.wait_for(vt.is_level(cg.name), 20, f"a level for {cg.name} under the hot/cold load")
        cl.wait_for(lambda e: e["type"] == "signal" and e.get("scope") == cg.name, 5, "its signal")

        hup = vf.SighupPacer(d)
        done = {"hup": 0, "bus": 0}
        errors = []

        def reload(i):
            with open(d.config_path, "w") as f:
                f.write(config_text(i))
            write_policies(pdir, i)
            if i % BUS_EVERY == 0:
                err = mgr.reload()
                if err:
                    errors.append((i, err))
                else:
                    done["bus"] += 1
            else:
                hup.hup()
                done["hup"] += 1

        for i in range(1, WARMUP + 1):
            reload(i)
        time.sleep(0.2)
        warm = vf.figures(d.pid)
        t_storm = vt.now_usec()
        n_levels0 = len(d.find(vt.is_level(cg.name)))
        n_signals0 = len(cl.signals(cg.name))
        t0 = time.monotonic()
        for i in range(WARMUP + 1, RELOADS + 1):
            reload(i)
            vt.check(d.alive(), f"the daemon died at reload {i}")
        took = time.monotonic() - t0
        t_end = vt.now_usec()
        time.sleep(0.3)
        levels = [e for e in d.find(vt.is_level(cg.name)) if t_storm <= e["t_usec"] <= t_end]
        signals = [e for e in cl.signals(cg.name) if t_storm <= e["recv_usec"] <= t_end]
        vt.log(f"{RELOADS} reloads ({done['hup']} SIGHUP, {done['bus']} Reload()) in {took + 0:.1f} s "
               f"after the warm-up; during the storm: {len(levels)} level lines for {cg.name}, "
               f"{len(signals)} signals received (before it: {n_levels0}, {n_signals0})")
        vt.check(not errors, f"Reload() failed: {errors[:3]}")
        vt.check(done["hup"] + done["bus"] == RELOADS, f"{done} reloads, expected {RELOADS}")
        vt.check(hup.seen == done["hup"], f"{hup.seen} 'SIGHUP received' lines for {done['hup']} SIGHUPs")
        # stderr is read by its own thread: the last lines may still be on their way.
        vt.poll_until(lambda: len(d.stderr_lines(lambda l: "Configuration reloaded" in l, 0)) >= RELOADS, 5)
        applied = len(d.stderr_lines(lambda l: "Configuration reloaded" in l, 0))
        vt.log(f"'Configuration reloaded' logged {applied} times")
        vt.check(applied == RELOADS, f"'Configuration reloaded' {applied} times, expected {RELOADS}")
        vt.check(levels, f"no level line for {cg.name} during the storm")
        vt.check(signals, f"no signal for {cg.name} received during the storm")
        vt.check(load.alive(), f"the load died: {load.stderr()}")
        load.stop()
        d.wait_for(vt.is_level(cg.name, "none"), 10, f"{cg.name} back to normal")
        vt.check(vb.get_property("Policies") == sorted(f"{PREFIX}-{u}.service" for u in "ab"),
                 f"Policies after the storm: {vb.get_property('Policies')}")

        vf.still_signals(mgr, cl, what=f"after {RELOADS} reloads")
        time.sleep(0.3)
        end = vf.figures(d.pid)
        vt.log(f"figures: at start {vf.fmt(start)}; after {WARMUP} reloads {vf.fmt(warm)}; "
               f"after {RELOADS} {vf.fmt(end)}")
        vf.check_bounded(d.pid, warm, end, f"{RELOADS - WARMUP} reloads under pressure")
        mgr.close()
        cl.stop()
        d.stop()


vt.run(main)
