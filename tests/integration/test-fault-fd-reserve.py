#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The OOM path keeps its descriptors when subscribers take all they may, on
a real dbus-daemon enforcing the shipped policy and a real memcg OOM.

The daemon runs under RLIMIT_NOFILE 1024 (soft and hard, set in this
process before the daemon starts and inherited). MaxSubscribers= unset: the
daemon lowers it to what fits beside its own descriptors and the reserve.
Then:

1. Reload() with MaxSubscribers=2000, which cannot fit under 1024: refused
   (org.freedesktop.vmpressure1.Error.InvalidConfig), the log names
   MaxSubscribers= and the limit it needs.
2. Root clients ask for 1,280 subscriptions (5 x 256): what would pass the
   reserve is refused with LimitsExceeded.
3. A root client sends the daemon a message carrying 8 descriptors: the
   bus policy refuses it (AccessDenied), so sd-bus never has to receive
   them (one it cannot receive makes it drop the whole connection).
4. A unit marked Kill=yes (Scope=unit, oom_kill_disable=1 in its memcg)
   runs a hog past its limit: the daemon kills it (a "killed" line, the hog
   ends with SIGKILL), and the daemon's bus connection is the same one as
   before (same unique name) and still answers and signals.

The figure: descriptors left under the limit at the OOM."""

import os
import resource
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpfault as vf   # noqa: E402
import vmpunit as vu    # noqa: E402

PREFIX = f"vmp-fdr-{os.getpid()}"
LIMIT = 1024
RESERVE = 64            # SUBSCRIBERS_FD_RESERVE
CLIENTS, PER_CLIENT = 5, 256
LIMITS = "org.freedesktop.DBus.Error.LimitsExceeded"

SEND_FD = r"""
import os, sys, dbus, dbus.lowlevel
bus = dbus.SystemBus()
m = dbus.lowlevel.MethodCallMessage("org.freedesktop.vmpressure1", "/org/freedesktop/vmpressure1",
                                    "org.freedesktop.DBus.Properties", "Get")
m.append("org.freedesktop.vmpressure1.Manager", "Level", *[dbus.types.UnixFd(0)] * 8, signature="ss" + "h" * 8)
try:
    bus.send_message_with_reply_and_block(m, 10.0)
    print("delivered")
except dbus.exceptions.DBusException as e:
    print(e.get_dbus_name(), e.get_dbus_message())
"""


def open_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def main():
    vt.need_root_and_cgroups(cgroup2=True)
    if os.path.isdir("/run/systemd/system"):
        vt.skip_or_fail("PID 1 is systemd; this test fakes a unit in a tree without it")
    vb.need_bus()
    vb.need_gi_and_dbus()
    vf.use_asan_bounded_quarantine()
    vb.SystemBus().start()
    # After dbus-daemon, before the daemon (which inherits it); root here has
    # no CAP_SYS_RESOURCE to raise a hard limit.
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))

    with vu.Slice(PREFIX), vu.Unit(PREFIX, "hog", limit_mib=64, oom_kill_disable=True) as u:
        pdir = vt.make_tempdir()
        with open(os.path.join(pdir, f"{u.unit}.policy"), "w") as f:
            f.write("[Policy]\nScope=unit\n\n[OOM]\nKill=yes\nKillTarget=largest\n")
        d = vt.Daemon(f"--policy-dir={pdir}", config=vb.FAST_LEVELS).start()
        d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == u.name, 5,
                   f"the unit-scope source for {u.unit}", from_start=True)
        owner = vb.wait_name(vb.NAME)
        lowered = d.stderr_lines(lambda l: "MaxSubscribers= is" in l)
        vt.log(f"started under RLIMIT_NOFILE {LIMIT}: {lowered[:1]}; {open_fds(d.pid)} fds open")

        mgr = vf.Manager()
        with open(d.config_path, "a") as f:
            f.write("\n[Daemon]\nMaxSubscribers=2000\n")
        reload_err = mgr.reload()
        vt.log(f"Reload() with MaxSubscribers=2000: {reload_err or 'accepted'}")

        clients, granted, refused = [], 0, []
        for _ in range(CLIENTS):
            c = vb.Client("--no-signals", "--stall", f"--subscribe=low:{PER_CLIENT}")
            clients.append(c)
            errs = [e for e in c.snapshot() if e["type"] == "error"]
            granted += PER_CLIENT - len(errs)
            refused += errs
        n_open = open_fds(d.pid)
        left = LIMIT - n_open
        vt.log(f"subscribed: {granted} granted, {len(refused)} refused "
               f"({sorted({e['name'] for e in refused})}); daemon fds {n_open} of {LIMIT}: {left} left")

        r = subprocess.run(["/usr/bin/python3", "-c", SEND_FD], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=30)
        fd_answer = r.stdout.strip() or r.stderr.strip()[-300:]
        vt.log(f"a message carrying 8 descriptors: {fd_answer}")
        time.sleep(0.3)

        hog = vt.Load(u, "anon", 128, 8, 20).start()
        killed = vt.poll_until(lambda: d.find(lambda e: e["type"] == "killed" and e.get("unit") == u.unit), 10)
        ev = killed[0] if killed else None
        gone = vt.poll_until(lambda: hog.proc.poll() is not None, 5)
        vt.log(f"figure: {left} descriptors left under RLIMIT_NOFILE {LIMIT} at the OOM; "
               f"{'killed: ' + ev['line'] if ev else 'NOT killed'}")
        notices = d.stderr_lines(lambda l: "can be killed" in l or "Cannot list the units" in l, 0.5)
        vt.check(ev and ev.get("pid") == str(hog.pid),
                 f"the marked unit's hog {hog.pid} was not killed at OOM with {left} fds left: {notices[:3]}")
        vt.check(gone and hog.proc.returncode == -signal.SIGKILL,
                 f"the hog ended with {hog.proc.returncode}, expected SIGKILL")

        vt.check(vb.name_owner(vb.NAME) == owner, f"the daemon's bus connection changed: {owner} -> "
                                                  f"{vb.name_owner(vb.NAME)} (dropped and reconnected)")
        vt.check(not d.stderr_lines(lambda l: "Lost the system bus" in l, 0.2), "the daemon lost its bus")
        vt.check(vb.get_property("Subscribers") == granted, f"Subscribers {vb.get_property('Subscribers')}")
        cl = vb.Client()
        vf.still_signals(mgr, cl, what="after the OOM kill with subscribers at their limit")
        cl.stop()

        vt.check(reload_err and reload_err[0] == "org.freedesktop.vmpressure1.Error.InvalidConfig",
                 f"Reload() with MaxSubscribers=2000 under RLIMIT_NOFILE {LIMIT}: {reload_err or 'accepted'}")
        vt.check(d.stderr_lines(lambda l: "MaxSubscribers=2000 needs RLIMIT_NOFILE" in l),
                 "no log line naming MaxSubscribers=2000 and the limit it needs")
        vt.check(left >= RESERVE, f"only {left} descriptors left with subscribers at their limit")
        vt.check(refused and all(e["name"] == LIMITS for e in refused),
                 f"past the limit: {refused[:2]}")
        vt.check("AccessDenied" in fd_answer, f"a descriptor sent to the daemon was not refused: {fd_answer}")

        for c in clients:
            c.stop()
        mgr.close()
        d.stop()


vt.run(main)
