#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Per-unit policies acting on real processes in real cgroups laid out as
systemd does: for each fake unit a cgroup2 directory
/sys/fs/cgroup/unified/system.slice/<unit> (where the daemon finds the unit's
processes) and a memcg /sys/fs/cgroup/memory/system.slice/<unit> with a limit
(what a Scope=unit policy watches). Every unit name is vmp-pt-<pid>-<x>.service;
the policies come from private directories given with --policy-dir=.

  a) MEDIUM: unit A runs a "service" (a recorder that appends a line to a file
     per SIGUSR1) and, started after it, the hot/cold load that makes MEDIUM in
     A's memcg (test-memcg-medium.py's recipe). Policy of A: Scope=unit,
     [Medium] Signal=SIGUSR1. The recorder, A's main process, gets SIGUSR1 and
     the load (which SIGUSR1 would kill) is not signalled. Unit B has the same
     policy but no pressure, unit N no policy: neither recorder gets anything.
  b) OOM: unit C's memcg has oom_kill_disable=1 and a hog touching twice its
     limit; policy Scope=unit, [OOM] Kill=yes. The daemon kills the hog
     ("killed unit=C pid=<hog>"), the memcg's own oom_kill counter stays 0 (the
     kernel killed nothing), and unit D, whose policy has Kill=no and whose
     process is larger than the hog, keeps its process.
  c) as b) with --dry-run: "would-kill unit=C pid=<hog>", no "killed" line, and
     the hog is still there (held under OOM) until the test kills it.
  d) a policy directory with a broken file and a good one: the daemon starts,
     its stderr names file:line of every bad line, and the good policy (unit E,
     [OOM] Kill=yes) kills E's hog.

The parent directories system.slice are created when missing and removed
afterwards only when this test created them (and they are empty again).
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402
import vmpunit as vu  # noqa: E402

PREFIX = f"vmp-pt-{os.getpid()}"

# The memcg MEDIUM recipe (test-memcg-medium.py): HoldSec=0 passes every level
# the kernel reports through, so MEDIUM is a level of its own, not skipped.
MEDIUM_CONFIG = "[Levels]\nHoldSec=0\nQuietSec=1\nRepeatSec=1\nHeadroomFloor=0\n"
HOT_MIB = 96
COLD_MIB = 32
DATA_MIB = 320

OOM_LIMIT_MIB = 64
HOG_MIB = 128           # twice the limit, 8 MiB every 20 ms
BYSTANDER_MIB = 96      # unit D's process: larger than the hog can ever get
BYSTANDER_LIMIT_MIB = 192

# --- fixtures ---------------------------------------------------------------------

def write_policies(files):
    """A private policy directory holding {unit name: text} as <unit>.policy."""
    d = vt.make_tempdir()
    for unit, text in files.items():
        with open(os.path.join(d, f"{unit}.policy"), "w") as f:
            f.write(text)
    return d


# --- event predicates ----------------------------------------------------------------

def of_type(t, unit=None, **fields):
    def pred(e):
        if e["type"] != t or (unit is not None and e.get("unit") != unit):
            return False
        return all(str(e.get(k)) == str(v) for k, v in fields.items())
    return pred


def reason_of(ev):
    """reason= runs to the end of the line (it has spaces)."""
    _, sep, rest = ev["line"].partition(" reason=")
    return rest if sep else None


def wait_source(d, unit):
    src = d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == unit.name, 2,
                     f"a 'source' line for {unit.name} (the unit-scope policy's cgroup)", from_start=True)
    vt.check(src.get("source") == "memcg", f"source={src.get('source')} for {unit.name}, expected memcg: "
                                           f"{src['line']}")
    vt.check(src.get("cgroup") == unit.rel, f"{unit.name} watched as cgroup={src.get('cgroup')}, "
                                            f"expected {unit.rel}: {src['line']}")


def start_bystander(unit):
    """vmp-load anon BYSTANDER_MIB in unit, all at once, held: once its memory is
    charged it is the largest process of all the test's units."""
    load = vt.Load(unit, "anon", BYSTANDER_MIB).start()
    vt.poll_until(lambda: unit.usage_bytes() >= (BYSTANDER_MIB - 4) * vt.MIB, 10)
    vt.check(unit.usage_bytes() >= (BYSTANDER_MIB - 4) * vt.MIB,
             f"{unit.unit}: only {unit.usage_bytes() >> 20} MiB charged after 10 s")
    return load


# --- a) MEDIUM → SIGUSR1 to the unit's main process ------------------------------------

def test_medium_signal():
    vt.log("=== a) MEDIUM in unit A: SIGUSR1 to A's main process, not to B or N")
    tmp = vt.make_tempdir()
    with vu.Unit(PREFIX, "a", limit_mib=128) as a, vu.Unit(PREFIX, "b") as b, vu.Unit(PREFIX, "n") as n, \
            vt.DataFile("pt-medium", DATA_MIB) as data:
        sig_policy = "[Policy]\nScope=unit\n\n[Medium]\nSignal=SIGUSR1\nSignalTarget=main\n"
        pdir = write_policies({a.unit: sig_policy, b.unit: sig_policy})

        rec = {u.unit: vu.Recorder(u, tmp).start() for u in (a, b, n)}
        # The main process is the oldest process whose parent is outside the
        # unit: the recorder, by at least a clock tick (10 ms).
        time.sleep(0.05)

        d = vt.Daemon(f"--policy-dir={pdir}", config=MEDIUM_CONFIG).start()
        wait_source(d, a)
        wait_source(d, b)

        load = vt.Load(a, "hotcold", data.path, HOT_MIB, extra_opts=[f"--cold-mib={COLD_MIB}"]).start()
        act = d.wait_for(of_type("action", a.unit, level="medium"), 30,
                         f"an 'action unit={a.unit} level=medium' line")
        vt.log(f"got: {act['line']} ({(act['recv_usec'] - load.started_usec) / 1000:.0f} ms after the load)")
        vt.check(d.find(vt.is_level(a.name)), f"an action for {a.unit} without any level line for its scope")
        vt.check(act.get("signal") == "SIGUSR1", f"signal={act.get('signal')}, expected SIGUSR1: {act['line']}")
        vt.check(act.get("target") == "main", f"target={act.get('target')}, expected main: {act['line']}")
        vt.check(act.get("result") == "1", f"result={act.get('result')}, expected 1 (one main process "
                                           f"signalled): {act['line']}")

        got = vt.poll_until(lambda: rec[a.unit].signals(), 2)
        vt.check(got, f"A's recorder (pid {rec[a.unit].pid}) recorded no SIGUSR1 within 2 s of: {act['line']}")
        vt.log(f"A's recorder got SIGUSR1 {len(got)} time(s), first {(got[0] - load.started_usec) / 1000:.0f} "
               f"ms after the load started")
        # SIGUSR1's default action would have ended the load: it was not taken for the main process.
        vt.check(load.alive(), f"the hot/cold load (pid {load.pid}) died, signalled instead of the main "
                               f"process? status {load.proc.returncode} {load.stderr()}")
        load.stop()

        # Let anything queued come out, then nothing may have reached B or N.
        time.sleep(1.0)
        for u in (b, n):
            vt.check(not rec[u.unit].signals(),
                     f"{u.unit}'s recorder got SIGUSR1 at {rec[u.unit].signals()} (no pressure in it"
                     f"{'' if u is b else ', no policy'})")
            other = d.find(lambda e: e["type"] in ("action", "killed", "would-kill") and e.get("unit") == u.unit)
            vt.check(not other, f"action lines for {u.unit}: {[e['line'] for e in other]}")
        kills = d.find(lambda e: e["type"] in ("killed", "would-kill"))
        vt.check(not kills, f"kills without any Kill=yes policy: {[e['line'] for e in kills]}")
        for r in rec.values():
            vt.check(r.alive(), f"recorder {r.pid} in {r.unit.unit} exited: {r.proc.returncode}")
        d.stop()


# --- b), c) OOM: the daemon kills the marked hog before the kernel -----------------------

def test_oom_kill(dry_run):
    tag = "c" if dry_run else "b"
    vt.log(f"=== {tag}) OOM in unit C (oom_kill_disable=1, Kill=yes){' with --dry-run' if dry_run else ''}")
    with vu.Unit(PREFIX, f"{tag}-c", limit_mib=OOM_LIMIT_MIB, oom_kill_disable=True) as c, \
            vu.Unit(PREFIX, f"{tag}-d", limit_mib=BYSTANDER_LIMIT_MIB) as dd:
        pdir = write_policies({
            c.unit: "[Policy]\nScope=unit\nDescription=the hog\n\n[OOM]\nKill=yes\nKillTarget=largest\n",
            dd.unit: "[Policy]\nScope=unit\nDescription=unmarked\n\n[OOM]\nKill=no\n",
        })
        bystander = start_bystander(dd)

        args = [f"--policy-dir={pdir}"] + (["--dry-run"] if dry_run else [])
        d = vt.Daemon(*args).start()
        wait_source(d, c)

        hog = vt.Load(c, "anon", HOG_MIB, 8, 20).start()
        verb = "would-kill" if dry_run else "killed"
        ev = d.wait_for(of_type(verb, c.unit), 10, f"a '{verb} unit={c.unit}' line")
        vt.log(f"got: {ev['line']} ({(ev['recv_usec'] - hog.started_usec) / 1000:.0f} ms after the hog started)")
        vt.check(ev.get("pid") == str(hog.pid), f"{verb} pid={ev.get('pid')}, the hog is {hog.pid}: {ev['line']}")
        vt.check(ev.get("comm") == "vmp-load", f"{verb} comm={ev.get('comm')}, expected vmp-load: {ev['line']}")
        oom = d.find(vt.is_level(c.name, "oom"))
        vt.check(oom, f"{verb} for {c.unit} without a level=oom line for its scope")
        if not dry_run:
            vt.check(ev.get("rss_bytes", "").isdigit() and int(ev["rss_bytes"]) > 0,
                     f"rss_bytes={ev.get('rss_bytes')}: {ev['line']}")
            vt.check(reason_of(ev), f"no reason= in: {ev['line']}")

        if dry_run:
            time.sleep(1.5)
            vt.check(hog.alive(), f"dry run, but the hog {hog.pid} is gone: status {hog.proc.returncode}")
            vt.check(hog.pid in c.pids(), f"dry run, but the hog {hog.pid} left {c.rel}: {c.pids()}")
            oc = c.oom_control()
            vt.check(oc.get("under_oom") == 1, f"dry run, but {c.rel} is no longer under OOM: {oc}")
            real = d.find(lambda e: e["type"] == "killed")
            vt.check(not real, f"dry run printed 'killed' lines: {[e['line'] for e in real]}")
        else:
            gone = vt.poll_until(lambda: hog.proc.poll() is not None, 5)
            vt.check(gone, f"'killed' printed, but the hog {hog.pid} is still running 5 s later")
            vt.check(hog.proc.returncode == -signal.SIGKILL,
                     f"the hog ended with status {hog.proc.returncode}, expected SIGKILL")
            vt.poll_until(lambda: not c.pids(), 2)
            vt.check(not c.pids(), f"processes left in {c.rel}: {c.pids()}")
            wouldkill = d.find(lambda e: e["type"] == "would-kill")
            vt.check(not wouldkill, f"'would-kill' lines without --dry-run: {[e['line'] for e in wouldkill]}")

        oc = c.oom_control()
        vt.log(f"{c.rel} memory.oom_control: {oc}")
        vt.check(oc.get("oom_kill", 0) == 0, f"the kernel's OOM killer fired in {c.rel}: {oc}")

        vt.check(bystander.alive(), f"unit {dd.unit}'s process {bystander.pid} (Kill=no) is gone: "
                                    f"status {bystander.proc.returncode}")
        vt.check(bystander.pid in dd.pids(), f"{bystander.pid} left {dd.rel}")
        others = d.find(lambda e: e["type"] in ("killed", "would-kill") and e.get("unit") != c.unit)
        vt.check(not others, f"kills outside {c.unit}: {[e['line'] for e in others]}")
        victims = {e.get("pid") for e in d.find(lambda e: e["type"] in ("killed", "would-kill"))}
        vt.check(victims == {str(hog.pid)}, f"victims {sorted(victims)}, expected only the hog {hog.pid}")

        hog.kill()              # dry run: held under OOM, only SIGKILL gets it out
        bystander.stop()
        d.stop()


# --- d) a broken policy file next to a good one ---------------------------------------

BROKEN = (
    "[Policy]\n"                # 1
    "Scope=sideways\n"          # 2: invalid value
    "\n"                        # 3
    "[OOM]\n"                   # 4
    "Kill=perhaps\n"            # 5: not a boolean
    "[Bogus]\n"                 # 6: unknown section
    "Signal=SIGUSR1\n"          # 7: skipped with its section
)
BROKEN_LINES = (2, 5, 6)


def test_broken_and_good():
    vt.log("=== d) a broken policy file and a good one: file:line errors, the good one acts")
    with vu.Unit(PREFIX, "d-e", limit_mib=OOM_LIMIT_MIB, oom_kill_disable=True) as e:
        broken_unit = f"{PREFIX}-d-broken.service"
        pdir = write_policies({
            broken_unit: BROKEN,
            e.unit: "[Policy]\nScope=unit\n\n[OOM]\nKill=yes\n",
        })
        broken_path = os.path.join(pdir, f"{broken_unit}.policy")
        good_path = os.path.join(pdir, f"{e.unit}.policy")

        d = vt.Daemon(f"--policy-dir={pdir}").start()
        wait_source(d, e)
        for line in BROKEN_LINES:
            where = f"{broken_path}:{line}:"
            msgs = d.stderr_lines(lambda l, w=where: w in l)
            vt.check(msgs, f"no message naming {where} on stderr")
            vt.log(f"stderr: {msgs[0]}")
        about_good = d.stderr_lines(lambda l: good_path in l, timeout=0.2)
        vt.check(not about_good, f"messages about the good file: {about_good}")

        hog = vt.Load(e, "anon", HOG_MIB, 8, 20).start()
        ev = d.wait_for(of_type("killed", e.unit), 10, f"a 'killed unit={e.unit}' line (the good policy)")
        vt.log(f"got: {ev['line']}")
        vt.check(ev.get("pid") == str(hog.pid), f"killed pid={ev.get('pid')}, the hog is {hog.pid}")
        vt.check(vt.poll_until(lambda: hog.proc.poll() is not None, 5), f"the hog {hog.pid} is still running")
        oc = e.oom_control()
        vt.check(oc.get("oom_kill", 0) == 0, f"the kernel's OOM killer fired in {e.rel}: {oc}")
        hog.stop()
        d.stop()


def main():
    vt.need_root_and_cgroups(cgroup2=True)
    if os.path.isdir("/run/systemd/system"):
        # sd_booted(): the daemon would signal through systemd's KillUnit,
        # and systemd knows nothing of these hand-made units.
        vt.skip_or_fail("PID 1 is systemd; this test fakes units in a tree without it "
                        "(the systemd case is tested in systemd-nspawn)")
    with vu.Slice(PREFIX):
        test_medium_signal()
        test_oom_kill(dry_run=False)
        test_oom_kill(dry_run=True)
        test_broken_and_good()


vt.run(main)
