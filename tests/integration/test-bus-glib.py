#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""GLib compatibility: org.freedesktop.LowMemoryMonitor.

- LowMemoryMonitor=auto leaves the name to another owner (a stand-in for
  low-memory-monitor), and does not queue for it;
- LowMemoryMonitor=yes queues and takes the name when the other owner goes;
- a real Gio.MemoryMonitor.dup_default() in /usr/bin/python3 (python3-gi)
  receives low-memory-warning with level 50 when the daemon announces LOW
  and 255 for OOM (real memcg pressure, in memcgs the daemon does not watch,
  so the system scope sees it).

GLib 2.74's GMemoryMonitorDBus watches the name on the system bus and makes
a proxy for /org/freedesktop/LowMemoryMonitor when it appears; it honours
DBUS_SYSTEM_BUS_ADDRESS like everything else here."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

SQUATTER = r"""
import sys, time, dbus
bus = dbus.SystemBus()
r = bus.request_name(sys.argv[1], dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
print("owned" if r == dbus.bus.REQUEST_NAME_REPLY_PRIMARY_OWNER else f"failed {r}", flush=True)
time.sleep(3600)
"""

LMM_OF = {"low": 50, "medium": 100, "oom": 255}


def squatter():
    s = vb._LineReader(["/usr/bin/python3", "-c", SQUATTER, vb.LMM_NAME], "squatter", vb._parse_kv)
    e = s.wait_for(lambda e: True, 10, "the squatter's first line")
    vt.check(e["type"] == "owned", f"the squatter could not own {vb.LMM_NAME}: {e['line']}")
    return s, vb.name_owner(vb.LMM_NAME)


def mode_auto_leaves_the_name():
    sq, other = squatter()
    d = vt.Daemon(config="[Daemon]\nLowMemoryMonitor=auto\n", name="daemon auto").start()
    vb.wait_name(vb.NAME)
    vt.check(vt.poll_until(lambda: "leaving it to that one" in d.stderr_text(), 5),
             f"LowMemoryMonitor=auto did not say it leaves the name: {d.stderr_text()}")
    vt.check(vb.name_owner(vb.LMM_NAME) == other, "LowMemoryMonitor=auto took the name from its owner")
    sq.stop()
    time.sleep(0.5)
    vt.check(vb.name_owner(vb.LMM_NAME) is None, "LowMemoryMonitor=auto queued for the name")
    d.stop()


def mode_yes_queues():
    sq, other = squatter()
    d = vt.Daemon(config="[Daemon]\nLowMemoryMonitor=yes\n", name="daemon yes").start()
    owner = vb.wait_name(vb.NAME)
    time.sleep(0.3)
    vt.check(vb.name_owner(vb.LMM_NAME) == other, "LowMemoryMonitor=yes replaced the owner")
    sq.stop()
    vt.check(vb.wait_name(vb.LMM_NAME, 5, owner_not=other) == owner,
             "LowMemoryMonitor=yes did not take the name when its owner left")
    d.stop()


def glib_receives_warnings(ms, mo, data):
    # The load is a small memcg at its own limit; -.slice hears it only with any-cgroup.
    d = vt.Daemon(config=vb.FAST_LEVELS, name="daemon auto", system_pressure="any-cgroup").start()
    vb.wait_name(vb.LMM_NAME)
    g = vb.GlibClient()
    vt.log(f"Gio.MemoryMonitor.dup_default() is a {g.monitor}")

    load = vt.Load(ms, "stream", data.path).start()
    g.wait_for(lambda e: e["type"] == "warning", 20, "a low-memory-warning for page-cache pressure")
    load.stop()
    hog = vt.Load(mo, "anon", 200).start()
    g.wait_for(lambda e: e["type"] == "warning" and e["level"] == 255, 20, "a low-memory-warning at 255 (OOM)")
    hog.kill()
    mo.kill_all()
    time.sleep(0.3)

    # Each warning is the daemon's announcement of that level on the system scope.
    announced = vb.daemon_levels(d, "-.slice")
    warnings = [e for e in g.snapshot() if e["type"] == "warning"]
    vt.log(f"warnings {[e['level'] for e in warnings]}, announced {vb.collapse([e['level'] for e in announced])}")
    for e in warnings:
        vt.check(any(LMM_OF.get(a["level"]) == e["level"] and a["t_usec"] <= e["recv_usec"] for a in announced),
                 f"warning {e['level']} matches no announcement of the daemon")
    vt.check(any(a["level"] == "low" for a in announced) and any(e["level"] == 50 for e in warnings),
             "the page-cache load never gave a LOW warning (50)")
    g.stop()
    d.stop()


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vb.need_gi_and_dbus()
    vb.SystemBus().start()
    mode_auto_leaves_the_name()
    mode_yes_queues()
    with vt.Memcg("bus-glib-s", limit_mib=128) as ms, \
            vt.Memcg("bus-glib-o", limit_mib=128, oom_kill_disable=True) as mo, \
            vt.DataFile("bus-glib", 256) as data:
        glib_receives_warnings(ms, mo, data)


vt.run(main)
