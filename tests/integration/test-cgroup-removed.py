#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A watched cgroup removed while watched. Removing a v1 memcg fires every
eventfd registered on it once (memory.pressure_level low, medium, critical and
memory.oom_control alike): a daemon that believes them reports a false OOM for
a cgroup that no longer exists. The daemon must instead print
"gone scope=<cgroup> …", report no level for that scope afterwards, keep
running, keep serving the system scope, and exit 0 on SIGTERM.

The removal happens while the scope is at LOW (a streaming load ran until just
before), the case where a false event would most easily pass as real."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt  # noqa: E402

# RepeatSec short so that a stray event at LOW would show as a repeat line too.
CONFIG = "[Levels]\nRepeatSec=100ms\n"
QUIET_AFTER_S = 3


def main():
    vt.need_root_and_cgroups()
    with vt.Memcg("removed", limit_mib=128) as cg, vt.Memcg("other", limit_mib=128) as other, \
            vt.DataFile("removed", 256) as data:
        # The load is a small memcg at its own limit; -.slice hears it only with any-cgroup.
        d = vt.Daemon(f"--watch={cg.rel}", config=CONFIG, system_pressure="any-cgroup").start()
        src = d.wait_for(lambda e: e["type"] == "source" and e.get("scope") == cg.name, 1,
                         f"a 'source' line for {cg.name}", from_start=True)
        vt.check(src.get("source") == "memcg", f"source={src.get('source')} for {cg.name}, expected memcg")

        load = vt.Load(cg, "stream", data.path).start()
        d.wait_for(vt.is_level(cg.name, "low"), 10, f"level=low for {cg.name} while it streams")
        load.kill()
        vt.check(not cg.pids(), f"processes left in {cg.rel}: {cg.pids()}")

        # rmdir directly (no force_empty: its reclaim would be real pressure).
        removed_usec = vt.now_usec()
        os.rmdir(cg.path)
        vt.log(f"removed {cg.path} while the daemon holds its eventfds")
        gone = d.wait_for(lambda e: e["type"] == "gone" and e.get("scope") == cg.name, 5,
                          f"a 'gone scope={cg.name}' line")
        vt.log(f"got: {gone['line']} ({(gone['recv_usec'] - removed_usec) / 1000:.1f} ms after rmdir)")
        vt.check(gone.get("error") == "ENOENT", f"gone with error={gone.get('error')}, expected ENOENT")

        time.sleep(QUIET_AFTER_S)
        false = [e for e in d.find(vt.is_level(cg.name)) if e["t_usec"] >= removed_usec]
        false += [e for e in d.find(lambda e: e["type"] == "level" and e.get("scope") == cg.name
                                    and e.get("level") == "none") if e["t_usec"] >= removed_usec]
        vt.check(not false, f"level line(s) for the removed cgroup: {[e['line'] for e in false]}")
        vt.check(d.alive(), "the daemon exited after the watched cgroup went away")

        # Still answering: an unwatched memcg's reclaim reaches the root memcg's
        # listener, i.e. the system scope.
        load2 = vt.Load(other, "stream", data.path).start()
        ev = d.wait_for(lambda e: e["type"] == "level" and e.get("scope") == "-.slice"
                        and e.get("level") != "none" and e["t_usec"] >= load2.started_usec,
                        10, "a level line for -.slice after the removal")
        vt.log(f"system scope still served: {ev['line']}")
        load2.stop()
        late = [e for e in d.find(lambda e: e.get("scope") == cg.name and e["type"] == "level")
                if e["t_usec"] >= removed_usec]
        vt.check(not late, f"level line(s) for the removed cgroup: {[e['line'] for e in late]}")
        d.stop()


vt.run(main)
