#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""1,000 Subscribe() descriptors that are never read,
under real memcg pressure.

How 1,000 are reached: 4 clients x 250 subscriptions, two of the clients as
root and two as user nobody (the shipped policy lets everyone subscribe).
Not 1,000 connections: the system bus configuration this test enforces
(/usr/share/dbus-1/system.conf) allows 256 connections per user
(max_connections_per_user), and raising it in the test's bus would test
dbus-daemon, not vmpressured, whose cost is per descriptor (one socketpair
and a ~64-byte entry), not per connection: once Subscribe() has returned,
the connection plays no part. The daemon's own limits are set to hold
exactly these: MaxSubscribers=1001 (the 1,000 and one reading subscriber;
the 1,002nd is refused with LimitsExceeded) and MaxSubscribersPerUser=500
(nobody's two clients; the default share would be a quarter), and the
daemon raises its RLIMIT_NOFILE soft limit to fit them beside its own
descriptors and the 64 it keeps for the OOM path (the limit is printed). Each client raises its own soft limit to its hard limit.

Then a page-cache load in a memcg the daemon does not watch (the system
scope sees it; RepeatSec=100ms gives ~10 LOW announcements a second) for
4 s. Asserted: a bus client receives the Low signals and the reading
subscriber its records while the 1,000 do not read (record latency printed);
SubscriberDrops grows (~5 records fit a stalled descriptor's socket buffer,
then every one is dropped and counted); the daemon's descriptors are exactly
1,000 more than before while they are held and do not grow under pressure;
its RSS grows by a bounded amount per subscriber (printed); when the clients
exit, Subscribers is back to 1 and the descriptors to the figure from
before; a Simulate() is still signalled."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpfault as vf   # noqa: E402

# nobody's first: the last sixteenth of MaxSubscribers= only root may take.
CLIENTS = ["nobody", "nobody", None, None]
PER_CLIENT = 250
TOTAL = len(CLIENTS) * PER_CLIENT
MAX_SUBSCRIBERS = TOTAL + 1
CONFIG = ("[Levels]\nHoldSec=1s\nQuietSec=2s\nRepeatSec=100ms\n"
          f"[Daemon]\nMaxSubscribers={MAX_SUBSCRIBERS}\n"
          f"MaxSubscribersPerUser={CLIENTS.count('nobody') * PER_CLIENT}\n")
# Per held descriptor: the Subscriber entry (~64 bytes with malloc's
# overhead), its sd-event source (~200 bytes) and the epoll registration,
# which the kernel keeps. 1 KiB each is 4x what is needed and catches a
# per-subscriber buffer (a 4 KiB one would be 4 MiB).
RSS_PER_SUB_KIB = 1


def nofile(pid):
    with open(f"/proc/{pid}/limits") as f:
        for line in f:
            if line.startswith("Max open files"):
                return line.split()[3:5]
    return None


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vf.use_asan_bounded_quarantine()
    vb.SystemBus().start()
    with vt.Memcg("fault-subs", limit_mib=128) as cg, vt.DataFile("fault-subs", 256) as data:
        # The load is a small memcg at its own limit; -.slice hears it only with any-cgroup.
        d = vt.Daemon(config=CONFIG, system_pressure="any-cgroup").start()
        vb.wait_name(vb.NAME)
        vt.log(f"daemon RLIMIT_NOFILE soft/hard: {nofile(d.pid)}")
        cl = vb.Client("--buffer")
        reader = vb.Client("--no-signals", "--subscribe=low", "--buffer")
        time.sleep(0.2)
        base = vf.figures(d.pid)

        t0 = time.monotonic()
        stallers = []
        for user in CLIENTS:
            s = vb.Client("--no-signals", "--stall", f"--subscribe=low:{PER_CLIENT}", user=user)
            errors = [e for e in s.snapshot() if e["type"] == "error"]
            vt.check(not errors, f"Subscribe() failed for a {user or 'root'} client: {errors[:2]}")
            stallers.append(s)
        vt.log(f"{TOTAL} descriptors handed out in {time.monotonic() - t0:.2f} s "
               f"({len(CLIENTS)} clients x {PER_CLIENT}, {CLIENTS.count('nobody')} of them as nobody)")
        n = vb.get_property("Subscribers")
        vt.check(n == TOTAL + 1, f"Subscribers is {n}, expected {TOTAL + 1}")
        over = vb.Client("--no-signals", "--stall", "--subscribe=low")
        errors = [e for e in over.snapshot() if e["type"] == "error"]
        vt.check(len(errors) == 1 and errors[0]["name"] == "org.freedesktop.DBus.Error.LimitsExceeded",
                 f"subscriber {TOTAL + 2} past MaxSubscribers={MAX_SUBSCRIBERS}: {over.snapshot()}")
        over.stop()
        held = vf.figures(d.pid)
        vt.check(held["fds"] == base["fds"] + TOTAL, f"fds {base['fds']} -> {held['fds']} with {TOTAL} held")
        per_sub = (held["rss_kib"] - base["rss_kib"]) * 1024 / TOTAL
        vt.log(f"holding {TOTAL}: {vf.fmt(held)} (from {vf.fmt(base)}: {per_sub:.0f} bytes of RSS each)")
        vf.check_bounded(d.pid, base, held, f"{TOTAL} subscribers held",
                         rss_slack_base_kib=TOTAL * RSS_PER_SUB_KIB, fd_slack=TOTAL)

        t_load = vt.now_usec()
        load = vt.Load(cg, "stream", data.path).start()
        d.wait_for(vt.is_level("-.slice", "low"), 20, "LOW on the system scope")
        time.sleep(4)
        load.stop()
        # Not waiting for NORMAL: the system scope also hears every other memcg on
        # the machine, which need not be quiet now.
        time.sleep(0.5)
        pressed = vf.figures(d.pid)
        drops = vb.get_property("SubscriberDrops")
        announced = [e for e in vb.daemon_levels(d, "-.slice") if e["level"] != "none" and e["t_usec"] > t_load]

        reader.stop()
        cl.stop()
        signals = [e for e in cl.signals("-.slice") if e["recv_usec"] > t_load and e["member"] != "Normal"]
        torn = [r["line"] for r in reader.records() if "recv_usec" not in r]
        vt.check(not torn, f"the reading subscriber printed torn lines: {torn[:3]}")
        records = [r for r in reader.records() if r["recv_usec"] > t_load]
        extra = max(0, len(records) - len(announced))
        lat = sorted(r["recv_usec"] - e["t_usec"] for r, e in zip(records[extra:], announced))
        vt.log(f"under pressure with {TOTAL} stalled: {len(announced)} announcements, {len(signals)} signals "
               f"received, {len(records)} records read by the reading subscriber"
               + (f" (latency max {lat[-1]} µs, median {lat[len(lat) // 2]} µs)" if lat else "")
               + f"; SubscriberDrops {drops} ({drops / TOTAL:.1f} per stalled subscriber)")
        vt.check(len(signals) >= len(announced) > 0,
                 f"{len(signals)} signals received for {len(announced)} announcements")
        vt.check(len(records) >= len(announced), f"{len(records)} records read for {len(announced)} announcements")
        vt.check(drops >= TOTAL, f"SubscriberDrops {drops}: fewer than one per stalled subscriber")
        vf.check_bounded(d.pid, held, pressed, f"{len(announced)} announcements to {TOTAL} stalled subscribers")

        t_close = time.monotonic()
        for s in stallers:
            s.stop()
        ok = vt.poll_until(lambda: vb.get_property("Subscribers") == 0, 10, 0.1)
        vt.check(ok, f"Subscribers is {vb.get_property('Subscribers')} after every client exited")
        vt.log(f"all {TOTAL} released {time.monotonic() - t_close:.2f} s after the clients began to exit")
        vt.check(vt.poll_until(lambda: vf.figures(d.pid)["fds"] <= base["fds"] - 1, 5),
                 f"descriptors not released: {base['fds']} -> {vf.figures(d.pid)['fds']}")
        released = vf.figures(d.pid)
        vt.log(f"figures: before {vf.fmt(base)}; {TOTAL} held {vf.fmt(held)}; after pressure {vf.fmt(pressed)}; "
               f"released {vf.fmt(released)}")

        cl2 = vb.Client()
        mgr = vf.Manager()
        vf.still_signals(mgr, cl2, what=f"after {TOTAL} stalled subscribers")
        mgr.close()
        cl2.stop()
        d.stop()


vt.run(main)
