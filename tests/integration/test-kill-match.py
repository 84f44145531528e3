#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which process an OOM kills, and how the kill is printed, with the real
daemon on a private dbus-daemon enforcing dbus/. Fake units are laid out as
systemd does (system.slice/<unit> in the cgroup2 tree and the v1 memory
hierarchy, vmpunit.py); every process is real.

  a) depth: a marked unit holds a 6 MiB process in its own cgroup and a
     100 MiB hog 40 cgroups below it (as a delegated subtree can nest).
     Simulate OOM: the hog is killed, the small one lives. (The scan stopped
     32 levels down: the hog was not seen and the 6 MiB process was killed.)
  b) scopes by path: a Scope=unit policy for <prefix>-hog.service, whose
     cgroup system.slice/<prefix>-hog.service holds a small process, and a
     cgroup <prefix>-other/<prefix>-hog.service of the same last name,
     watched with --watch= and put under a real memcg OOM (oom_kill_disable=1,
     a hog touching twice its limit). The unit's process is not killed
     (it was: the scope was taken for the unit by its name). Then a real OOM
     in the unit's own memcg kills the hog there.
  c) names: processes of a marked unit (KillTarget=unit) that call
     themselves "x unit=evil" and 'q"\\ z=\\x41' (prctl(PR_SET_NAME)) are
     killed at a simulated OOM and every "killed" line parses
     (vmptest.parse_event, the escaping of vmpressured(8)) to the true unit
     and the true name. (They were printed as they are: the line read as
     unit=evil.)

Every process and cgroup is ours and removed at the end; system.slice is
removed only when this test made it. Refuses to run under systemd PID 1."""

import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpunit as vu    # noqa: E402

CTL = os.environ.get("VMPRESSURECTL")
PREFIX = f"vmp-km-{os.getpid()}"
DEPTH = 40
HOG_MIB = 100
SMALL_MIB = 6


def kills(d):
    return d.find(lambda e: e["type"] in ("killed", "would-kill"))


class Nest:
    """depth cgroup2 directories, one inside the other, below parent; on exit
    the processes in them are SIGKILLed (ours: only our loads are moved in)
    and the directories removed bottom-up."""

    def __init__(self, parent, depth):
        self.dirs = []
        path = parent
        for i in range(depth):
            path = os.path.join(path, f"n{i:02d}")
            self.dirs.append(path)
        self.deepest = path
        self._entry = None

    def __enter__(self):
        self._entry = vt.on_cleanup(f"nested cgroups below {os.path.dirname(self.dirs[0])}", self.remove)
        for d in self.dirs:
            os.mkdir(d)
        return self

    def __exit__(self, *exc):
        vt.cancel_cleanup(self._entry)
        self.remove()
        return False

    def remove(self):
        for d in reversed(self.dirs):
            if not os.path.isdir(d):
                continue
            for _ in range(100):
                pids = vt._cgroup_pids(d)
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                vt.Load.reap_all()
                time.sleep(0.05)
            vt._rmdir_retry(d)


def test_depth():
    vt.log(f"=== a) a {HOG_MIB} MiB hog {DEPTH} cgroups below a marked unit, {SMALL_MIB} MiB at its top")
    with vu.Unit(PREFIX, "deep", limit_mib=192) as u, Nest(u.path2, DEPTH) as nest:
        pdir = vu.write_policies({u.unit: "[OOM]\nKill=yes\n"})
        small = vt.Load(u, "anon", SMALL_MIB).start()
        # In the unit's v1 memcg (its limit holds the load) and deep in the cgroup2 tree.
        hog = vt.Load(None, "anon", HOG_MIB, extra_opts=[f"--cgroup={u.path}", f"--cgroup={nest.deepest}"]).start()
        vt.check(hog.pid in vt._cgroup_pids(nest.deepest), f"the hog is not in {nest.deepest}")
        vt.poll_until(lambda: u.usage_bytes() >= (HOG_MIB + SMALL_MIB - 4) * vt.MIB, 10)
        vt.check(u.usage_bytes() >= (HOG_MIB + SMALL_MIB - 4) * vt.MIB,
                 f"only {u.usage_bytes() >> 20} MiB charged after 10 s")

        d = vt.Daemon(f"--policy-dir={pdir}", config=vb.FAST_LEVELS).start()
        vb.wait_name(vb.NAME)
        vu.simulate_oom(d)
        ev = d.wait_for(lambda e: e["type"] == "killed", 10, "a killed line")
        vt.log(f"got: {ev['line']}")
        vt.check(int(ev["pid"]) == hog.pid and ev.get("unit") == u.unit,
                 f"killed pid {ev['pid']} of {ev.get('unit')}; the hog {DEPTH} levels down is {hog.pid}, "
                 f"the {SMALL_MIB} MiB process at the top {small.pid}")
        vt.check(vt.poll_until(lambda: not hog.alive(), 5), "the hog survived")
        vt.check(hog.proc.returncode == -signal.SIGKILL, f"the hog ended with {hog.proc.returncode}")
        time.sleep(0.3)
        vt.check(small.alive(), f"the {SMALL_MIB} MiB process was killed too")
        vt.check(len(kills(d)) == 1, f"kills: {[e['line'] for e in kills(d)]}")
        small.stop()
        hog.stop()
        d.stop()


class Parent:
    """<name> in both hierarchies (made here, removed at the end)."""

    def __init__(self, name):
        self.name = name
        self.dirs = [os.path.join(r, name) for r in (vt.V1_ROOT, vt.V2_ROOT)]
        self._entry = None

    def __enter__(self):
        self._entry = vt.on_cleanup(f"cgroups {self.name}", self.remove)
        for d in self.dirs:
            os.mkdir(d)
        return self

    def __exit__(self, *exc):
        vt.cancel_cleanup(self._entry)
        self.remove()
        return False

    def remove(self):
        for d in self.dirs:
            if os.path.isdir(d):
                vt._rmdir_retry(d)


class Other(vt.Memcg):
    """<parent>/<unit name> in both hierarchies: a cgroup named like the
    unit, outside system.slice."""

    def __init__(self, parent, unit_name, **kw):
        super().__init__(unit_name, cgroup2=True, **kw)
        self.rel = f"{parent}/{unit_name}"
        self.name = unit_name
        self.path = os.path.join(vt.V1_ROOT, self.rel)
        self.path2 = os.path.join(vt.V2_ROOT, self.rel)


def test_scope_by_path():
    vt.log("=== b) an OOM in <other>/<unit> is not the unit's own")
    with vu.Unit(PREFIX, "hog", limit_mib=64, oom_kill_disable=True) as u, Parent(f"{PREFIX}-other") as parent, \
            Other(parent.name, f"{PREFIX}-hog.service", limit_mib=64, oom_kill_disable=True) as other:
        pdir = vu.write_policies({u.unit: "[Policy]\nScope=unit\n\n[OOM]\nKill=yes\n"})
        resident = vt.Load(u, "anon", 8).start()
        d = vt.Daemon(f"--policy-dir={pdir}", f"--watch={other.rel}").start()
        for cg in (u.rel, other.rel):
            d.wait_for(lambda e, cg=cg: e["type"] == "source" and e.get("cgroup") == cg, 5,
                       f"a source line for {cg}", from_start=True)

        hog = vt.Load(other, "anon", 128, 8, 20).start()
        d.wait_for(vt.is_level(other.name, "oom"), 15, f"an OOM of the scope {other.name} ({other.rel})")
        # The critical level comes first, the memcg's OOM some ms later.
        vt.check(vt.poll_until(lambda: other.oom_control().get("under_oom") == 1, 5),
                 f"{other.rel} is not under OOM")
        time.sleep(2.5)         # OOM repeats every second; the pause after a kill is 1 s
        vt.check(not kills(d), f"an OOM in {other.rel} killed: {[e['line'] for e in kills(d)]}")
        vt.check(resident.alive(), f"{u.unit}'s process {resident.pid} is gone")
        hog.kill()

        own = vt.Load(u, "anon", 128, 8, 20).start()
        ev = d.wait_for(lambda e: e["type"] == "killed", 15, f"a killed line for the OOM in {u.rel}")
        vt.log(f"got: {ev['line']}")
        vt.check(ev.get("unit") == u.unit and int(ev["pid"]) == own.pid,
                 f"killed {ev.get('unit')} pid {ev['pid']}, expected the hog {own.pid} in {u.rel}")
        vt.check(vt.poll_until(lambda: not own.alive(), 5), "the unit's hog survived")
        resident.stop()
        d.stop()


NAMES = ["x unit=evil", 'q"\\ z=\\x41']


def test_names():
    vt.log(f"=== c) processes named {NAMES!r} are killed and their lines parse")
    with vu.Unit(PREFIX, "names") as u:
        pdir = vu.write_policies({u.unit: "[OOM]\nKill=yes\nKillTarget=unit\n"})
        groups = [vu.Sleepers([u.path2], 1, comm=n, name=f"km-name{i}").start() for i, n in enumerate(NAMES)]
        expect = {}
        for pid in vt._cgroup_pids(u.path2):
            with open(f"/proc/{pid}/comm") as f:
                expect[pid] = f.read().rstrip("\n")
        vt.check(sorted(expect.values()) == sorted(NAMES), f"the sleepers are named {expect}")

        d = vt.Daemon(f"--policy-dir={pdir}", config=vb.FAST_LEVELS).start()
        vb.wait_name(vb.NAME)
        vu.simulate_oom(d)
        vt.check(vt.poll_until(lambda: len(kills(d)) >= len(NAMES), 10),
                 f"{len(kills(d))} killed lines within 10 s, expected {len(NAMES)}")
        time.sleep(0.3)
        for e in kills(d):
            vt.log(f"line: {e['line']}")
            vt.log(f"  parsed: unit={e.get('unit')!r} pid={e.get('pid')!r} comm={e.get('comm')!r}")
        got = {int(e["pid"]): e.get("comm") for e in kills(d)}
        vt.check(all(e["type"] == "killed" and e.get("unit") == u.unit for e in kills(d)),
                 f"lines that do not parse to unit {u.unit}: {[e['line'] for e in kills(d)]}")
        vt.check(got == expect, f"parsed pid → comm {got}, the processes were {expect}")
        for g in groups:
            counts = g.stop()
            vt.check(counts == {"killed": 1, "other": 0, "left": 0}, f"{g.comm!r} ended as {counts}")
        vt.check(d.alive(), "the daemon died")
        d.stop()


def main():
    vt.check(CTL and os.access(CTL, os.X_OK), "$VMPRESSURECTL must name the built vmpressurectl")
    vt.need_root_and_cgroups(cgroup2=True)
    vb.need_bus()
    if os.path.isdir("/run/systemd/system"):
        vt.skip_or_fail("PID 1 is systemd; this test fakes units in a tree without it")
    vb.SystemBus().start()
    with vu.Slice(PREFIX):
        # Arguments a, b, c run only those parts (each alone against an older build).
        parts = {"a": test_depth, "b": test_scope_by_path, "c": test_names}
        for key in sys.argv[1:] or sorted(parts):
            parts[key]()


vt.run(main)
