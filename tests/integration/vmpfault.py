# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers of the fault and storm tests (test-fault-*.py): the
daemon's resident memory and descriptors, sampled so that a transient
descriptor does not count; "does it still signal" with a Simulate() whose
signal must arrive on the bus; Reload() from this process (dbus-python, as
root) with the D-Bus error it returns; and SIGHUPs paced one reload at a time.

Under -Db_sanitize (tools/dev asan) AddressSanitizer keeps every freed block
in a quarantine of up to 256 MiB, so a daemon that frees all it allocates
still grows its RSS with every allocation until the quarantine is full: the
storms bound it to QUARANTINE_MIB (use_asan_bounded_quarantine(), before the
daemon starts) and the RSS slack grows by as much. Use-after-free detection
keeps working for the most recent QUARANTINE_MIB of frees."""

import os
import signal
import time

import vmptest as vt
import vmpbus as vb

QUARANTINE_MIB = 4


def sanitized():
    return os.environ.get("VMP_SANITIZE", "none") not in ("", "none")


def use_asan_bounded_quarantine():
    if sanitized():
        opts = os.environ.get("ASAN_OPTIONS", "")
        os.environ["ASAN_OPTIONS"] = (opts + ":" if opts else "") + f"quarantine_size_mb={QUARANTINE_MIB}"
        vt.log(f"ASAN_OPTIONS={os.environ['ASAN_OPTIONS']}")


def rss_slack_kib(base_kib):
    """What an RSS comparison allows on top of base_kib (see the module doc).
    Past the quarantine, ASan's allocator keeps size-class caches and the
    shadow of every heap page touched: 3,616 KiB over the 60 s event storm
    in one CI run (8,796 announcements), 4 MiB is allowed for them."""
    return base_kib + (QUARANTINE_MIB * 1024 + 4096 if sanitized() else 0)


def figures(pid, samples=5):
    """{'rss_kib', 'fds', 'fd_list'}: VmRSS, and the fewest open descriptors
    over a few samples 20 ms apart (the daemon holds a file open for a moment
    each time it reads the headroom or a policy directory)."""
    best = None
    for i in range(samples):
        if i:
            time.sleep(0.02)
        fds = sorted(os.listdir(f"/proc/{pid}/fd"), key=int)
        if best is None or len(fds) < len(best):
            best = fds
    st = vb.proc_status(pid)
    return {"rss_kib": st["VmRSS"], "fds": len(best), "fd_list": best}


def fmt(f):
    return f"RSS {f['rss_kib']} KiB, {f['fds']} fds"


def fd_targets(pid, fds):
    out = []
    for fd in fds:
        try:
            out.append(f"{fd}->{os.readlink(f'/proc/{pid}/fd/{fd}')}")
        except OSError:
            pass
    return out


def check_bounded(pid, before, after, what, rss_slack_base_kib=256, fd_slack=0):
    """after's fds at most before's + fd_slack, its RSS at most before's + slack."""
    slack = rss_slack_kib(rss_slack_base_kib)
    vt.log(f"{what}: before {fmt(before)}; after {fmt(after)} "
           f"(RSS {after['rss_kib'] - before['rss_kib']:+d} KiB, allowed +{slack}; "
           f"fds {after['fds'] - before['fds']:+d}, allowed +{fd_slack})")
    new = sorted(set(after["fd_list"]) - set(before["fd_list"]), key=int)
    vt.check(after["fds"] <= before["fds"] + fd_slack,
             f"{what}: fds {before['fds']} -> {after['fds']}; new: {fd_targets(pid, new)}")
    vt.check(after["rss_kib"] - before["rss_kib"] <= slack,
             f"{what}: RSS {before['rss_kib']} -> {after['rss_kib']} KiB (allowed +{slack} KiB)")


class Manager:
    """The daemon's Manager object from this process (root), dbus-python."""

    def __init__(self):
        import dbus
        self.dbus = dbus
        self.bus = dbus.SystemBus()
        self.obj = self.bus.get_object(vb.NAME, vb.PATH)
        self.iface = dbus.Interface(self.obj, vb.IFACE)

    def reload(self):
        """None when Reload() succeeded, else (error name, message)."""
        try:
            self.iface.Reload(timeout=30)
            return None
        except self.dbus.exceptions.DBusException as e:
            return (e.get_dbus_name(), e.get_dbus_message())

    def get(self, prop):
        return self.obj.Get(vb.IFACE, prop, dbus_interface="org.freedesktop.DBus.Properties")

    def simulate(self, level, scope=""):
        self.iface.Simulate(level, scope, timeout=10)

    def close(self):
        self.bus.close()


def still_signals(mgr, client, scope="-.slice", what="after the fault"):
    """Simulate(oom) on scope; the sd-bus client (vb.Client, with signals)
    must receive the OOM signal from the daemon. When the scope is at OOM
    already (a previous call), a repeat is announced only once RepeatSec=
    (1 s in the tests' configurations) has passed: tried every 1.2 s, 5 times."""
    for attempt in range(5):
        t0 = vt.now_usec()
        mgr.simulate("oom", scope if scope != "-.slice" else "")
        ev = client.next(lambda e: e["type"] == "signal" and e.get("scope") == scope
                         and e.get("member") == "OOM" and e["recv_usec"] >= t0, 1.2)
        if ev:
            vt.log(f"still signalling {what}: Simulate(oom) on {scope} -> OOM signal received "
                   f"{(ev['recv_usec'] - t0) / 1000:.1f} ms later (attempt {attempt + 1})")
            return ev
    vt.fail(f"no signal on the bus for Simulate() on {scope} {what}")


class SighupPacer:
    """SIGHUPs to the daemon one reload at a time: the next is sent once the
    daemon logged that it took the previous one (signals of one kind do not
    queue: SIGHUPs sent faster than the daemon reads them would be merged)."""

    NEEDLE = "SIGHUP received"

    def __init__(self, daemon):
        self.d = daemon
        self.pos = 0
        self.seen = 0
        self._catch_up()

    def _catch_up(self):
        lines = self.d._reader._stderr
        n = len(lines)
        while self.pos < n:
            if self.NEEDLE in lines[self.pos]:
                self.seen += 1
            self.pos += 1
        return self.seen

    def hup(self, timeout=5.0):
        want = self.seen + 1
        os.kill(self.d.pid, signal.SIGHUP)
        deadline = time.monotonic() + timeout
        while self._catch_up() < want:
            if time.monotonic() > deadline:
                vt.fail(f"the daemon did not take SIGHUP number {want} within {timeout:g} s "
                        f"(alive: {self.d.alive()})")
            time.sleep(0.0005)
