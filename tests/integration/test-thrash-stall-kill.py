#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""StallLimit=: a thrash is killed once its memory stall, as the kernel
averages it, reaches the policy's limit, and not before; without the key
(test-thrash-no-kill.py) it is never killed.

Two fake units (laid out as systemd does, memcg limit 128 MiB each), both
Scope=unit and [OOM] Kill=yes, run the hot/cold load of test-thrash-no-kill
(96 MiB hot, reads streaming through the rest) one after the other:

  a) S has StallLimit=LIMIT% (StallSec= default, the kernel's 10 s average of
     PSI "full" on its cgroup2 memory.pressure). Its OOM lines say
     memory_left=1 (a thrash: the page cache is still there), the first ones
     are held (kill-held ... stall_full_avg10 below the limit), and once the
     average reaches the limit the load is killed, the reason saying
     "thrashing" and the stall, which is at least LIMIT %. The kernel's own
     OOM killer is not involved (the memcg's oom_kill stays 0).
  b) H has StallLimit=100% (all of its tasks stalled all the time over
     10 s, which a thrash that makes progress never reaches): the same load
     for the same time is not killed, so a) was the limit's doing.

Every kill-held line gives the 10 s average the daemon read, so the log
shows the stall rising. LIMIT is low enough for the thrash on this 2-core
machine (its 10 s full average rose past 10 % within 15 s when measured)
and far above what a load that is not thrashing stalls (0 %)."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402
import vmpunit as vu  # noqa: E402

PREFIX = f"vmp-ts-{os.getpid()}"
HOT_MIB = 96
COLD_MIB = 32
DATA_MIB = 320
LIMIT = 5               # percent
KILL_WAIT_S = 60
NO_KILL_S = 20


def stall_of(e):
    try:
        return float(e.get("stall_full_avg10", "nan"))
    except ValueError:
        return float("nan")


def main():
    vt.need_root_and_cgroups(cgroup2=True)
    if not os.path.exists("/proc/pressure/memory"):
        vt.skip_or_fail("the kernel has no PSI (/proc/pressure/memory)")
    tmp = vt.make_tempdir()
    with vu.Slice(PREFIX), vu.Unit(PREFIX, "s", limit_mib=128) as s, \
            vu.Unit(PREFIX, "h", limit_mib=128) as h, vt.DataFile("ts", DATA_MIB) as data:
        vt.check(os.path.exists(os.path.join(s.path2, "memory.pressure")),
                 f"no memory.pressure in {s.path2}: the unit's stall cannot be read")
        pdir = vu.write_policies({
            s.unit: f"[Policy]\nScope=unit\n\n[OOM]\nKill=yes\nStallLimit={LIMIT}%\n",
            h.unit: "[Policy]\nScope=unit\n\n[OOM]\nKill=yes\nStallLimit=100%\n",
        })
        d = vt.Daemon(f"--policy-dir={pdir}").start()
        for u in (s, h):
            d.wait_for(lambda e, u=u: e["type"] == "source" and e.get("scope") == u.name, 2,
                       f"a 'source' line for {u.name}", from_start=True)

        # a) killed once the stall reaches LIMIT %.
        load = vt.Load(s, "hotcold", data.path, HOT_MIB, extra_opts=[f"--cold-mib={COLD_MIB}"]).start()
        oom = d.wait_for(vt.is_level(s.name, "oom"), 30, f"level=oom for {s.name} from the thrash")
        vt.check(str(oom.get("memory_left")) == "1", f"the thrash's OOM does not say memory_left=1 (the load ran "
                                                     f"the memcg out of memory: fixture broken): {oom['line']}")
        killed = d.wait_for(lambda e: e["type"] in ("killed", "would-kill"), KILL_WAIT_S,
                            f"a kill of {s.unit} once its stall reached {LIMIT} %")
        seen_usec = killed.get("recv_usec") or vt.now_usec()
        held = d.find(lambda e: e["type"] == "kill-held" and e.get("scope") == s.name)
        vt.log(f"{s.name}: {len(held)} kill-held lines before the kill, stall_full_avg10 "
               f"{[stall_of(e) for e in held]}; killed {(seen_usec - load.started_usec) / 1e6:.1f} s "
               f"into the load: {killed['line']}")
        vt.check(killed["type"] == "killed" and killed.get("unit") == s.unit and int(killed["pid"]) == load.pid,
                 f"expected the load {load.pid} of {s.unit} killed: {killed['line']}")
        reason = killed["line"].split("reason=", 1)[-1]
        vt.check(reason.startswith(f"thrashing on {s.name}: memory stall "),
                 f"the kill's reason does not say thrashing and the stall: {reason!r}")
        try:
            pct = float(reason.rsplit(" ", 1)[-1].rstrip("%"))
        except ValueError:
            pct = -1
        vt.check(pct >= LIMIT, f"killed at a stall of {pct} %, below StallLimit={LIMIT}%")
        vt.check(held and all(stall_of(e) < LIMIT for e in held),
                 f"the OOMs before the kill were not all held below the limit: {[e['line'] for e in held]}")
        vt.check(s.oom_control().get("oom_kill", 0) == 0, f"the kernel killed in {s.rel}: {s.oom_control()}")
        load.stop()

        # b) the same thrash under StallLimit=100%: not killed.
        n0 = len(d.events)
        load_h = vt.Load(h, "hotcold", data.path, HOT_MIB, extra_opts=[f"--cold-mib={COLD_MIB}"]).start()
        d.wait_for(vt.is_level(h.name, "oom"), 30, f"level=oom for {h.name} from the thrash")
        time.sleep(NO_KILL_S)
        events = d.events[n0:]
        held_h = [e for e in events if e["type"] == "kill-held" and e.get("scope") == h.name]
        kills = [e for e in events if e["type"] in ("killed", "would-kill")]
        thrash_kills = [e for e in kills if "reason=thrashing" in e["line"]]
        stalls = [stall_of(e) for e in held_h]
        vt.log(f"{h.name}: {len(held_h)} kill-held lines in {NO_KILL_S} s, stall_full_avg10 {stalls}")
        vt.check(not thrash_kills, f"StallLimit=100% killed a thrash: {[e['line'] for e in thrash_kills]}")
        vt.check(held_h and max(stalls) >= LIMIT,
                 f"the thrash under StallLimit=100% did not stall {LIMIT} % ({stalls}): it shows nothing")
        if kills:
            # The hot set and the stream can run the memcg out for a moment
            # (the headroom under the floor): that is an OOM with memory
            # gone, killed as such, not the stall limit's doing.
            vt.log(f"{h.name}: killed for memory gone, not the stall: {[e['line'] for e in kills]}")
        else:
            vt.check(load_h.alive(), f"the load under StallLimit=100% died: status {load_h.proc.returncode}")
        load_h.stop()
        d.stop()


vt.run(main)
