#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Policies for units that are not there take no place in the daemon's scope
table, so they never crowd out the one that is: the real daemon on a private
dbus-daemon, with 40 Scope=unit policies for absent units
(vmp-st-<pid>-aNN.service, sorted first) and one for a real fake unit Z
(system.slice/<unit> in cgroup2 and memcg v1, as systemd lays it out) with
[OOM] Kill=yes. Before, the 40 absent ones took the 32 slots there were for
cgroups and Z got "Argument list too long": its policy never acted.

  a) Z's memcg has oom_kill_disable=1 and a hog touching twice its limit: the
     daemon watches Z, kills the hog (SIGKILL) and the kernel killed nothing.
  b) vmpressurectl status says "Not watched: 40 cgroups (40 absent, ...)",
     --json lists each absent cgroup with reason "absent", the Scopes are
     -.slice and Z only, metrics has vmpressured_unwatched_cgroups.
  c) one of the absent units appears: the daemon watches it within 3 s (inotify
     on its parent) without a reload, and 39 are left unwatched.

The bound itself (reached: an error at warning, listed as table-full,
watched once a slot is free) is tests/test-manager.c, on a fake tree."""

import json
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpunit as vu    # noqa: E402
import promtext         # noqa: E402

CTL = os.environ.get("VMPRESSURECTL")
PREFIX = f"vmp-st-{os.getpid()}"
N_ABSENT = 40
HOG_MIB = 128           # twice Z's limit, 8 MiB every 20 ms
POLICY = "[Policy]\nScope=unit\n\n[OOM]\nKill=yes\n"


def ctl(*args):
    r = subprocess.run([CTL] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=15, stdin=subprocess.DEVNULL)
    vt.log(f"$ vmpressurectl {' '.join(map(str, args))} → {r.returncode}")
    vt.check(r.returncode == 0, f"vmpressurectl {' '.join(map(str, args))}: exit {r.returncode}; "
                                f"stderr {r.stderr[-800:]!r}")
    return r.stdout


def absent_unit(i):
    return f"{PREFIX}-a{i:02d}.service"


def main():
    vt.check(CTL and os.access(CTL, os.X_OK), "$VMPRESSURECTL must name the built vmpressurectl")
    vt.need_root_and_cgroups(cgroup2=True)
    vb.need_bus()
    if os.path.isdir("/run/systemd/system"):
        vt.skip_or_fail("PID 1 is systemd; this test fakes units in a tree without it")
    pdir = os.path.join(vt.make_tempdir(), "policies")
    os.mkdir(pdir)
    for i in range(N_ABSENT):
        with open(os.path.join(pdir, f"{absent_unit(i)}.policy"), "w") as f:
            f.write(POLICY)

    vb.SystemBus().start()
    with vu.Slice(PREFIX), vu.Unit(PREFIX, "z", limit_mib=64, oom_kill_disable=True) as z:
        with open(os.path.join(pdir, f"{z.unit}.policy"), "w") as f:
            f.write(POLICY)
        d = vt.Daemon(f"--policy-dir={pdir}").start()
        vb.wait_name(vb.NAME)

        vt.log("=== a) the real unit is watched and its Kill=yes acts")
        src = d.find(lambda e: e["type"] == "source" and e.get("scope") == z.unit)
        vt.check(src, f"no 'source' line for {z.unit}: not watched, with {N_ABSENT} policies for absent units "
                      f"before it ({d.stderr_text()[-600:]})")
        hog = vt.Load(z, "anon", HOG_MIB, 8, 20).start()
        ev = d.wait_for(lambda e: e["type"] == "killed" and e.get("unit") == z.unit, 10,
                        f"a 'killed unit={z.unit}' line")
        vt.log(f"got: {ev['line']} ({(ev['recv_usec'] - hog.started_usec) / 1000:.0f} ms after the hog started)")
        vt.check(ev.get("pid") == str(hog.pid), f"killed pid={ev.get('pid')}, the hog is {hog.pid}")
        vt.check(vt.poll_until(lambda: hog.proc.poll() is not None, 5), "the hog still runs 5 s after 'killed'")
        vt.check(hog.proc.returncode == -signal.SIGKILL, f"the hog ended with {hog.proc.returncode}")
        oc = z.oom_control()
        vt.check(oc.get("oom_kill", 0) == 0, f"the kernel's OOM killer fired in {z.rel}: {oc}")

        vt.log("=== b) status, --json and metrics list the absent units as not watched")
        text = ctl("status")
        want = f"Not watched: {N_ABSENT} cgroups ({N_ABSENT} absent, 0 table full, 0 no source)"
        vt.check(want in text, f"status lacks {want!r}:\n{text}")
        vt.check("WARNING" not in text, f"a warning in status with the table not full:\n{text}")
        s = json.loads(ctl("--json", "status"))
        got = sorted((u["cgroup"], u["reason"]) for u in s["unwatched"])
        expected = sorted((f"{vu.SLICE}/{absent_unit(i)}", "absent") for i in range(N_ABSENT))
        vt.check(got == expected, f"unwatched: {got[:5]}… ({len(got)}), expected {expected[:5]}… ({len(expected)})")
        vt.check([c["name"] for c in s["scopes"]] == ["-.slice", z.unit], f"scopes: {s['scopes']}")
        prop = vb.get_property("UnwatchedCgroups")
        vt.check(len(prop) == N_ABSENT and all(r == "absent" for _, r in prop), f"UnwatchedCgroups: {prop[:3]}…")
        fams = promtext.parse(ctl("metrics"))
        fam = fams["vmpressured_unwatched_cgroups"]
        vt.check(fam.value(reason="absent") == N_ABSENT and fam.value(reason="table-full") == 0,
                 f"vmpressured_unwatched_cgroups: absent {fam.value(reason='absent')}, "
                 f"table-full {fam.value(reason='table-full')}")

        vt.log("=== c) an absent unit appears: watched without a reload")
        with vu.Unit(PREFIX, "a05", limit_mib=64) as a05:
            ev = d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == a05.unit, 3.5,
                            f"a 'source' line for {a05.unit} once its cgroup exists")
            vt.log(f"got: {ev['line']}")
            left = vb.get_property("UnwatchedCgroups")
            vt.check(len(left) == N_ABSENT - 1 and all(c != a05.rel for c, _ in left),
                     f"{len(left)} unwatched after {a05.unit} appeared, expected {N_ABSENT - 1}")
        d.stop()


vt.run(main)
