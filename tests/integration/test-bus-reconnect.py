#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The dbus-daemon is killed (SIGKILL) and restarted: the daemon keeps
watching pressure and serving its fd subscribers while there is no bus,
logs the outage once, reconnects, takes both names back, and the next
pressure event is signalled.

Memcg A is watched (its own scope, for the signals); memcg B is not (the
system scope, for the Subscribe() records during the outage)."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    bus = vb.SystemBus().start()
    with vt.Memcg("bus-rc-a", limit_mib=128) as a, vt.Memcg("bus-rc-b", limit_mib=128) as b, \
            vt.DataFile("bus-rc", 256) as data:
        # The load is a small memcg at its own limit; -.slice hears it only with any-cgroup.
        d = vt.Daemon(f"--watch={a.rel}", config=vb.FAST_LEVELS, system_pressure="any-cgroup").start()
        vb.wait_name(vb.NAME)
        vb.wait_name(vb.LMM_NAME)
        sub = vb.Client("--no-signals", "--subscribe=low")

        bus.kill()
        vt.check(vt.poll_until(lambda: "Lost the system bus connection" in d.stderr_text(), 5),
                 "the daemon did not notice the bus going away")

        # No bus: pressure is still watched and fd subscribers still served.
        t_down = vt.now_usec()
        load = vt.Load(a, "stream", data.path).start()
        d.wait_for(lambda e: vt.is_level(a.name, "low")(e) and e["t_usec"] > t_down, 20,
                   f"LOW on {a.name} without a bus")
        load.stop()
        load = vt.Load(b, "stream", data.path).start()
        sub.wait_for(lambda e: e["type"] == "record" and e["recv_usec"] > t_down, 20,
                     "a Subscribe() record without a bus")
        load.stop()
        d.wait_for(lambda e: vt.is_level(a.name, "none")(e) and e["t_usec"] > t_down, 20,
                   f"{a.name} back to normal")
        time.sleep(2.5)                 # a few failed reconnection attempts
        vt.check(d.alive(), "the daemon exited without its bus")

        t_up = time.monotonic()
        bus.start()
        owner = vb.wait_name(vb.NAME, 10)
        took = time.monotonic() - t_up
        vt.log(f"{vb.NAME} owned again by {owner} after {took:.2f} s")
        vt.check(took < 3.0, f"reconnecting took {took:.2f} s (retry every 1 s)")
        vt.check(vb.wait_name(vb.LMM_NAME, 5) == owner, f"{vb.LMM_NAME} not taken back")

        cl = vb.Client()
        t_ready = vt.now_usec()
        load = vt.Load(a, "stream", data.path).start()
        ev = d.wait_for(lambda e: vt.is_level(a.name, "low")(e) and e["t_usec"] > t_ready, 20,
                        f"LOW on {a.name} after the restart")
        sig = cl.wait_for(lambda e: e["type"] == "signal" and e.get("scope") == a.name, 5,
                          "the first signal after the restart")
        vt.check(sig["member"] == "Low", f"first signal after the restart is {sig['member']}")
        vt.log(f"signalled {sig['recv_usec'] - ev['t_usec']} µs after the kernel's notification")
        load.stop()
        vt.check(vb.get_property("Source") == "memcg", "properties unreadable after the restart")

        # Bounded log noise: one warning for the outage, one notice for the return.
        err = d.stderr_text()
        warnings = [l for l in err.splitlines() if "system bus" in l and ": warning:" in l]
        vt.check(len(warnings) == 1, f"outage warnings: {warnings}")
        vt.check("Connected to the system bus again after" in err, "no notice of the reconnection")
        cl.stop()
        sub.stop()
        d.stop()


vt.run(main)
