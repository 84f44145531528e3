#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Nothing is allocated between the kernel's notification and the kill.

The real daemon, shipped defaults, on a private system bus, runs with
tests/helpers/alloc-count.so preloaded: every malloc/calloc/realloc/
reallocarray/posix_memalign/aligned_alloc/memalign/valloc/pvalloc (and free)
is written with its CLOCK_MONOTONIC time and caller into a ring in a shared
file, and so is the kill itself (pidfd_send_signal(…, SIGKILL) through
syscall(3)). A fake unit (vmpunit.py) with a Scope=unit, [OOM] Kill=yes
policy has a 64 MiB memcg with oom_kill_disable=1, so the kernel holds its hog
instead of killing it.

  1. The counter counts: it saw the daemon's start-up, and it sees the
     allocations sd-bus makes for a property read on the bus (so the test
     cannot pass by measuring nothing).
  2. Warm-up: a hog overflows the unit's memcg and is killed (everything
     lazily set up on the way is set up now).
  3. Once the scope is back at NONE, a second hog: between the level line's
     t_usec (the time the kernel's notification was read, taken before the
     eventfd is) and the kill's pidfd_send_signal there are 0 allocations.
     After the kill, within a second, there are some (the bus's OOM and
     Killed signals): the counter was live around the path.

When something is allocated on the path, its callers (addr2line against
/proc/<pid>/maps) are in the failure message.

Under a sanitizer (VMP_SANITIZE) the count means nothing: ASan's allocator
replaces malloc and cannot be interposed; the test skips then, even under
CI=true. Refuses to run under systemd PID 1 (fake units)."""

import os
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpunit as vu    # noqa: E402

PREFIX = f"vmp-oa-{os.getpid()}"
LIMIT_MIB = 64
HOG_MIB = 128           # twice the limit, 8 MiB every 20 ms: at the limit after ~160 ms

# tests/helpers/alloc-count.h
LOG_MAGIC = 0x31474f4c434f4c41
LOG_VERSION = 1
HEADER_BYTES = 4096
ENTRY = struct.Struct("<QQQII4Q")
KINDS = {1: "malloc", 2: "calloc", 3: "realloc", 4: "reallocarray", 5: "posix_memalign",
         6: "aligned_alloc", 7: "memalign", 8: "valloc", 9: "pvalloc", 32: "free", 64: "kill"}
ALLOC_KINDS = {k for k in KINDS if k < 32}
KIND_FREE = 32
KIND_KILL = 64


class AllocLog:
    """alloc-count.so's ring, read from its file (the daemon's shared mapping)."""

    def __init__(self, path):
        self.path = path

    def read(self):
        """(header dict, [entries], oldest seq kept) of the log as it is now."""
        with open(self.path, "rb") as f:
            b = f.read()
        magic, version, entry_bytes, n, pid, nxt = struct.unpack_from("<QIIQQQ", b, 0)
        vt.check(magic == LOG_MAGIC and version == LOG_VERSION and entry_bytes == ENTRY.size,
                 f"{self.path}: not an alloc-count log v{LOG_VERSION} (magic {magic:#x}, version {version}, "
                 f"entry {entry_bytes} bytes)")
        counts = struct.unpack_from("<128Q", b, 40)
        entries = []
        for i in range(n):
            seq, t_nsec, size, kind, tid, *frames = ENTRY.unpack_from(b, HEADER_BYTES + i * ENTRY.size)
            if seq:
                entries.append({"seq": seq, "t_nsec": t_nsec, "size": size, "kind": kind, "tid": tid,
                                "frames": [x for x in frames if x]})
        entries.sort(key=lambda e: e["seq"])
        hdr = {"pid": pid, "next": nxt, "n": n,
               "counts": {KINDS.get(k, k): c for k, c in enumerate(counts) if c}}
        return hdr, entries

    def allocations(self, t0_nsec, t1_nsec):
        """Allocation records with t0 <= t_nsec <= t1; fails when the ring no
        longer holds all of that interval."""
        hdr, entries = self.read()
        vt.check(entries and (entries[0]["seq"] == 1 or entries[0]["t_nsec"] < t0_nsec),
                 f"the ring ({hdr['n']} records) wrapped past the interval: oldest kept "
                 f"{entries[0]['t_nsec'] if entries else None} ns, interval from {t0_nsec} ns")
        return [e for e in entries if e["kind"] in ALLOC_KINDS and t0_nsec <= e["t_nsec"] <= t1_nsec]


def symbolize(pid, addrs):
    """addr → 'function at file:line (object)', by /proc/<pid>/maps and addr2line."""
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[5].startswith("/"):
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                maps.append((lo, hi, int(fields[2], 16), fields[5]))
    out = {}
    for a in addrs:
        hit = next((m for m in maps if m[0] <= a < m[1]), None)
        if not hit:
            out[a] = f"{a:#x} (not in a file mapping)"
            continue
        lo, _, off, path = hit
        rel = a - lo + off - 1          # a return address: the call is the byte before
        r = subprocess.run(["addr2line", "-f", "-i", "-C", "-e", path, f"{rel:#x}"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines = r.stdout.split("\n")
        where = " ← ".join(f"{lines[i]} at {lines[i + 1]}" for i in range(0, len(lines) - 1, 2))
        out[a] = f"{where or '?'} ({os.path.basename(path)}+{rel:#x})"
    return out


def describe(pid, allocs):
    sym = symbolize(pid, sorted({f for e in allocs for f in e["frames"]}))
    return "\n".join(f"  {KINDS.get(e['kind'], e['kind'])}({e['size']}) at {e['t_nsec']} ns: "
                     + " ← ".join(sym[f] for f in e["frames"]) for e in allocs)


def hog_killed(d, u, hog, what):
    """The daemon's killed line for the hog; the hog is gone by SIGKILL."""
    ev = d.wait_for(lambda e: e["type"] == "killed", 15, f"a killed line ({what})")
    vt.check(ev.get("unit") == u.unit and int(ev["pid"]) == hog.pid,
             f"{what}: killed {ev.get('unit')} pid {ev['pid']}, expected the hog {hog.pid} of {u.unit}")
    vt.check(vt.poll_until(lambda: not hog.alive(), 5), f"{what}: the hog survived")
    oc = u.oom_control()
    vt.check(oc.get("oom_kill", 0) == 0, f"{what}: the kernel killed in {u.rel}: {oc} (fixture broken)")
    return ev


def start_counted_daemon(pdir, logpath):
    """The daemon with alloc-count.so preloaded; only the daemon: the
    environment is the test's own again once it started (other processes
    would write into the same log)."""
    saved = {k: os.environ.get(k) for k in ("LD_PRELOAD", "VMP_ALLOC_LOG", "VMP_ALLOC_FRAMES")}
    os.environ.update({"LD_PRELOAD": os.environ["VMP_ALLOC_COUNT"], "VMP_ALLOC_LOG": logpath,
                       "VMP_ALLOC_FRAMES": "1"})
    try:
        d = vt.Daemon(f"--policy-dir={pdir}")
        d.start(wait_ready=False)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    d.wait_for(lambda e: e["type"] == "ready", 10, "the 'ready' line", from_start=True)
    return d


def check_counter_counts(d, log):
    hdr, _ = log.read()
    vt.log(f"start-up: {hdr['counts']}")
    vt.check(hdr["pid"] == d.pid, f"the log was mapped by pid {hdr['pid']}, the daemon is {d.pid}")
    n_start = sum(c for k, c in hdr["counts"].items() if k not in ("free", "kill"))
    vt.check(n_start > 0, f"no allocation counted at start-up: {hdr['counts']} (the counter is broken)")
    t0 = vt.now_usec() * 1000
    level = vb.get_property("Level")
    t1 = vt.now_usec() * 1000
    n_bus = len(log.allocations(t0, t1))
    vt.log(f"Level={level!r}: {n_bus} allocations while the daemon answered the property read")
    vt.check(n_bus > 0, "no allocation counted while the daemon answered a property read on the bus "
             "(sd-bus allocates a message for each): the counter is broken")


def main():
    vt.skip_if_sanitized("the sanitizer's allocator replaces malloc and "
                         "an interposed counter would count nothing of the daemon's")
    lib = os.environ.get("VMP_ALLOC_COUNT")
    vt.check(lib and os.path.exists(lib), f"$VMP_ALLOC_COUNT must name the built alloc-count.so, got {lib!r}")
    vt.need_root_and_cgroups(cgroup2=True)
    vb.need_bus()
    if os.path.isdir("/run/systemd/system"):
        vt.skip_or_fail("PID 1 is systemd; this test fakes units in a tree without it")
    vb.SystemBus().start()

    with vu.Slice(PREFIX), vu.Unit(PREFIX, "hog", limit_mib=LIMIT_MIB, oom_kill_disable=True) as u:
        pdir = vu.write_policies({u.unit: "[Policy]\nScope=unit\n\n[OOM]\nKill=yes\n"})
        logpath = os.path.join(vt.make_tempdir(), "alloc.log")
        log = AllocLog(logpath)
        d = start_counted_daemon(pdir, logpath)
        vb.wait_name(vb.NAME)
        d.wait_for(lambda e: e["type"] == "source" and e.get("cgroup") == u.rel, 5,
                   f"a source line for {u.rel}", from_start=True)
        time.sleep(1)           # the rehearsal and the bus's start-up replies are done
        check_counter_counts(d, log)

        vt.log("=== warm-up: the first OOM")
        hog = vt.Load(u, "anon", HOG_MIB, 8, 20).start()
        hog_killed(d, u, hog, "warm-up")
        hog.stop()
        d.wait_for(vt.is_level(u.name, "none"), 30, f"{u.name} back at level none after the warm-up")

        vt.log("=== the measured OOM")
        n_events = len(d.events)
        hog = vt.Load(u, "anon", HOG_MIB, 8, 20).start()
        killed = hog_killed(d, u, hog, "measured")
        hog.stop()
        events = d.events[n_events:]
        i_killed = next(i for i, e in enumerate(events) if e is killed)
        oom = [e for e in events[:i_killed] if vt.is_level(u.name, "oom")(e)]
        vt.check(oom, f"no level=oom line for {u.name} before the kill: {[e['line'] for e in events]}")
        oom = oom[-1]
        vt.log(f"event: {oom['line']}")
        vt.log(f"kill:  {killed['line']}")
        t_event = oom["t_usec"] * 1000

        time.sleep(1)           # the bus's signals after the kill are sent
        _, entries = log.read()
        kills = [e for e in entries if e["kind"] == KIND_KILL and e["t_nsec"] >= t_event]
        vt.check(kills, f"no pidfd_send_signal(SIGKILL) recorded after the event at {t_event} ns")
        t_kill = kills[0]["t_nsec"]
        on_path = log.allocations(t_event, t_kill)
        frees = [e for e in entries if e["kind"] == KIND_FREE and t_event <= e["t_nsec"] <= t_kill]
        after = log.allocations(t_kill, t_kill + 1000 * 1000 * 1000)
        vt.log(f"from the event to the kill: {(t_kill - t_event) / 1000:.0f} us, {len(on_path)} allocations, "
               f"{len(frees)} frees; in the second after the kill: {len(after)} allocations")
        vt.check(not on_path, f"{len(on_path)} allocations between the kernel's notification and the kill:\n"
                 + describe(d.pid, on_path))
        vt.check(after, "no allocation counted in the second after the kill, when the bus's OOM and "
                 "Killed signals are sent: the counter was not live")
        vt.check(d.alive(), "the daemon died")
        d.stop()


vt.run(main)
