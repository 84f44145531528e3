#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Started without a system bus, the daemon does not poll for one: in 5 s
without a bus it makes no further connection attempt (each failed attempt
is a debug line); it waits with inotify on the directory of the bus's
socket, and when a dbus-daemon starts there it owns its name within 1 s.
Then the bus is killed (its socket is left behind, stale): again no
attempts while it is down. Then a bus that dies before it answers: a socket
that listens and never accepts appears there, the daemon connects into its
backlog, and the socket is closed (the kernel resets the pending connection,
as when a bus is killed between its listen() and its answers): that is no
reconnection (no notice of one, no second warning of the outage). The name
is back within 1 s of a restart."""

import os
import select
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

FAILED = "Connecting to the system bus failed"
QUIET_SECONDS = 5


def attempts(d):
    return d.stderr_text().count(FAILED)


def expect_no_polling(d, what):
    before = attempts(d)
    time.sleep(QUIET_SECONDS)
    n = attempts(d) - before
    vt.log(f"{what}: {n} connection attempts in {QUIET_SECONDS} s")
    vt.check(n == 0, f"{what}: {n} connection attempts in {QUIET_SECONDS} s without a bus (polling)")


def expect_connect(bus, what):
    t = time.monotonic()
    bus.start()
    owner = vb.wait_name(vb.NAME, 5)
    took = time.monotonic() - t
    vt.log(f"{what}: {vb.NAME} owned by {owner} {took:.2f} s after the bus started")
    vt.check(took < 1.0, f"{what}: the name was owned only {took:.2f} s after the bus started")


def dying_connected(sock):
    """True once a connection waits in the listening socket's backlog."""
    return bool(select.select([sock], [], [], 0)[0])


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    bus = vb.SystemBus()
    os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
    d = vt.Daemon("--log-level=debug").start()
    vt.check(vt.poll_until(lambda: "No system bus" in d.stderr_text(), 5), "no 'No system bus' warning")
    time.sleep(0.5)     # the attempt right after the watch is set up
    expect_no_polling(d, "at start-up")
    expect_connect(bus, "at start-up")

    bus.kill()
    vt.check(os.path.exists(bus.socket), "the killed dbus-daemon's socket should be left behind")
    vt.check(vt.poll_until(lambda: "Lost the system bus connection" in d.stderr_text(), 5),
             "the daemon did not notice the bus going away")
    time.sleep(0.5)
    expect_no_polling(d, "after the bus was killed")

    os.unlink(bus.socket)
    before, seen = attempts(d), len(d.stderr_text())
    dying = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dying.bind(bus.socket)
    dying.listen(8)
    vt.check(vt.poll_until(lambda: dying_connected(dying), 5),
             "the daemon did not connect to the socket that appeared")
    dying.close()                       # the pending connection is reset
    os.unlink(bus.socket)
    vt.check(vt.poll_until(lambda: attempts(d) > before, 5),
             "no failed connection attempt was logged after the reset")
    time.sleep(0.5)
    err = d.stderr_text()
    vt.check("Connected to the system bus" not in err[seen:],
             "a connection reset before the bus answered was taken for a reconnection")
    warnings = [l for l in err.splitlines() if ": warning:" in l and "system bus" in l]
    vt.check(len(warnings) == 2, f"outage warnings (one at start-up, one for the kill): {warnings}")

    expect_connect(bus, "after a restart")
    vt.check(d.alive(), "the daemon exited")
    d.stop()


vt.run(main)
