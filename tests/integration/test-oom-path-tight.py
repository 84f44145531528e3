#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The worst case of the OOM path: the daemon has no memory to spare.

What it found, and what made the path clean (every one seen here as a page
of the daemon's faulted in between a unit's first OOM and its kill):
  - heap blocks allocated but never written, later free: the policy
    loader's 64 KiB file buffer and the 16 KiB Diagnostics of a parse came
    from the heap, left free blocks that were never resident, and the first
    allocation of the OOM path landed there. Both are mappings of their own
    now (memory_table_new()); a Scope, a Source and the Manager are written
    whole when allocated (memory_prefault()), and the headroom reads share
    one buffer of the Manager's instead of 8 KiB per scope;
  - code that start-up ran, memory_drop_code_pages() dropped, and only an
    OOM ran again: libc's strspn()/strcspn() (the plan's cgroup paths),
    getdents64() (the victim scan's walk), the binary's single_u64_parse()
    (a cgroup's headroom). The rehearsal runs them now: the headroom reads
    of every watched scope (manager_rehearse()), the plan's path helpers and
    a scan of the daemon's own cgroup (responder_rehearse()).
Before: 0 of 3 runs clean (a heap page, or 44-64 KiB of libc's text);
after: 20 of 20 here.

The real daemon (shipped defaults, a private system bus) runs in a memcg of
its own from its first instruction. Once it is idle, that memcg's limit is set
to its usage then plus MARGIN_KIB, what the kernel charges for the objects a
kill needs (measured, see MARGIN_KIB). A fake unit (vmpunit.py) with a
Scope=unit, [OOM] Kill=yes policy has a 64 MiB memcg with oom_kill_disable=1
(the kernel holds its hog instead of killing it: the test is deterministic),
and a hog overflows it. This is the daemon's first OOM: no warm-up.

  - the hog is killed (SIGKILL, by the daemon: the hog's memcg's oom_kill
    stays 0) within KILL_MAX_MS of the event, from the level line's t_usec
    (the time the kernel's notification was read) to the time the hog's
    pidfd became readable;
  - the daemon was neither OOM-killed nor held: it is alive, its memcg's
    under_oom and oom_kill are 0;
  - its resident memory did not grow from before the event to after the
    kill (read as the killed line arrives: the journal record and the bus's
    signals included; what comes 0.5 s later is only logged): VmRSS
    (/proc/PID/status) and Rss (smaps_rollup) are not larger, and no page
    of its is present that was not before (/proc/PID/pagemap; a failure
    lists them by mapping and offset). The memcg's max_usage, failcnt,
    kmem usage and pgfault are logged, not checked: the kernel charges in
    per-CPU batches of 64 pages (failcnt counts a batch that did not fit,
    then the exact charge succeeds without reclaim) and flushes memory.stat
    lazily.

Under a sanitizer (VMP_SANITIZE) the daemon's memory is ASan's shadow and
mlockall() fails: the test skips, even under CI=true. Refuses to run under
systemd PID 1 (fake units)."""

import os
import select
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpunit as vu    # noqa: E402

PREFIX = f"vmp-ot-{os.getpid()}"
LIMIT_MIB = 64
HOG_MIB = 128           # twice the limit, 8 MiB every 20 ms: at the limit after ~160 ms
KILL_MAX_MS = 50
# The room the daemon's memcg has above its idle usage. Measured on the
# path (kernel 6.18, this test's log): memory.kmem.usage_in_bytes +4 KiB
# (the pidfd's struct file, the /proc and cgroup files read, the socket
# buffers of the bus's signals), rss +0; usage_in_bytes itself moves in
# per-CPU batches of MEMCG_CHARGE_BATCH (64 pages, 256 KiB), which is the
# margin: one batch, so the kernel's first precharge fits as it would on a
# machine with 256 KiB free, and 64 times what the path needs.
MARGIN_KIB = 256


def read_kv(path, sep=None):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":" if sep == ":" else " ")
            v = v.split()
            if v and v[0].isdigit():
                out[k.strip()] = int(v[0])
    return out


def memory(pid, cg):
    """The daemon's resident memory (KiB) and its memcg's counters."""
    st = read_kv(f"/proc/{pid}/status", ":")
    sm = read_kv(f"/proc/{pid}/smaps_rollup", ":")
    stat = read_kv(os.path.join(cg.path, "memory.stat"))
    return {"VmRSS": st["VmRSS"], "RssAnon": st["RssAnon"], "RssFile": st["RssFile"],
            "RssShmem": st["RssShmem"], "Rss": sm["Rss"], "Locked": sm["Locked"],
            "pgfault": stat["pgfault"], "pgmajfault": stat["pgmajfault"],
            "usage": cg.usage_bytes(), "failcnt": cg_read(cg, "memory.failcnt"),
            "max_usage": cg_read(cg, "memory.max_usage_in_bytes"),
            "kmem": cg_read(cg, "memory.kmem.usage_in_bytes"), "rss": stat["rss"], "cache": stat["cache"]}


def present_pages(pid):
    """{(mapping name, offset in it): address} of every page of pid present
    in memory (/proc/PID/pagemap bit 63; root reads it)."""
    out = {}
    with open(f"/proc/{pid}/maps") as f:
        maps = [line.split() for line in f]
    with open(f"/proc/{pid}/pagemap", "rb") as pm:
        for m in maps:
            lo, hi = (int(x, 16) for x in m[0].split("-"))
            name = m[5] if len(m) >= 6 else f"[anon {m[1]} {(hi - lo) >> 10} KiB at {lo:#x}]"
            if name == "[vsyscall]":
                continue
            pm.seek(lo // 4096 * 8)
            b = pm.read((hi - lo) // 4096 * 8)
            for i in range(len(b) // 8):
                if int.from_bytes(b[i * 8:i * 8 + 8], "little") >> 63:
                    out[(name, int(m[2], 16) + i * 4096 if len(m) >= 6 else i * 4096)] = lo + i * 4096
    return out


def describe_new_pages(before, after):
    """The pages present after and not before, by mapping."""
    new = sorted(k for k in after if k not in before)
    return "\n".join(f"  {name} +{off:#x} (at {after[(name, off)]:#x})" for name, off in new) or "  none"


def cg_read(cg, name):
    with open(os.path.join(cg.path, name)) as f:
        return int(f.read())


def cg_write(cg, name, value):
    with open(os.path.join(cg.path, name), "w") as f:
        f.write(str(value))


class ExitWatch:
    """When a process exits: a thread blocked in poll() on its pidfd notes
    CLOCK_MONOTONIC (µs) as it becomes readable."""

    def __init__(self, pid):
        self.fd = os.pidfd_open(pid)
        self.exit_usec = None
        self._t = threading.Thread(target=self._wait, daemon=True)
        self._t.start()

    def _wait(self):
        p = select.poll()
        p.register(self.fd, select.POLLIN)
        p.poll()
        self.exit_usec = vt.now_usec()

    def wait(self, timeout):
        self._t.join(timeout)
        os.close(self.fd)
        return self.exit_usec


def start_daemon_in(cg, pdir):
    """The daemon, moved into cg by a shell that then execs it: every page it
    ever has is charged there (pages charged elsewhere before a move stay
    where they were charged)."""
    wrapper = os.path.join(vt.make_tempdir(), "in-memcg")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\necho $$ > {cg.path}/cgroup.procs || exit 1\nexec {os.environ['VMPRESSURED']} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    real = os.environ["VMPRESSURED"]
    os.environ["VMPRESSURED"] = wrapper
    try:
        d = vt.Daemon(f"--policy-dir={pdir}").start()
    finally:
        os.environ["VMPRESSURED"] = real
    vt.check(d.pid in cg.pids(), f"the daemon {d.pid} is not in {cg.rel}: {cg.pids()}")
    return d


def main():
    vt.skip_if_sanitized("the sanitizer's shadow memory, not the "
                         "daemon's, would be measured, and mlockall() fails there")
    vt.need_root_and_cgroups(cgroup2=True)
    vb.need_bus()
    if os.path.isdir("/run/systemd/system"):
        vt.skip_or_fail("PID 1 is systemd; this test fakes units in a tree without it")
    # meson test sets MALLOC_PERTURB_ (malloc() writes every byte it hands
    # out); the shipped unit does not.
    os.environ.pop("MALLOC_PERTURB_", None)
    vb.SystemBus().start()

    with vt.Memcg("daemon", limit_mib=64) as dcg, vu.Slice(PREFIX), \
            vu.Unit(PREFIX, "hog", limit_mib=LIMIT_MIB, oom_kill_disable=True) as u:
        pdir = vu.write_policies({u.unit: "[Policy]\nScope=unit\n\n[OOM]\nKill=yes\n"})
        d = start_daemon_in(dcg, pdir)
        vb.wait_name(vb.NAME)
        d.wait_for(lambda e: e["type"] == "source" and e.get("cgroup") == u.rel, 5,
                   f"a source line for {u.rel}", from_start=True)
        time.sleep(2)           # the rehearsal and the bus's start-up replies are done

        usage = dcg.usage_bytes()
        limit = usage + MARGIN_KIB * 1024
        cg_write(dcg, "memory.limit_in_bytes", limit)
        restore = vt.on_cleanup("the daemon's memcg limit", lambda: cg_write(dcg, "memory.limit_in_bytes",
                                                                             64 * vt.MIB))
        cg_write(dcg, "memory.max_usage_in_bytes", 0)
        cg_write(dcg, "memory.failcnt", 0)
        before = memory(d.pid, dcg)
        pages_before = present_pages(d.pid)
        vt.log(f"limit {limit >> 10} KiB = usage {usage >> 10} KiB + {MARGIN_KIB} KiB; before: {before}")

        n_events = len(d.events)
        hog = vt.Load(u, "anon", HOG_MIB, 8, 20).start()
        watch = ExitWatch(hog.pid)
        killed = d.wait_for(lambda e: e["type"] == "killed", 15, "a killed line")
        # At once: the kill line comes after the kill and its journal record;
        # the bus's OOM and Killed signals follow within microseconds.
        after = memory(d.pid, dcg)
        pages_after = present_pages(d.pid)
        exit_usec = watch.wait(5)
        time.sleep(0.5)
        later = present_pages(d.pid)
        vt.log(f"0.5 s later, off the path (headroom polls, the level falling), pages new since: "
               f"{len([k for k in later if k not in pages_after])}")
        oc = dcg.oom_control()
        vt.log(f"after: {after}; the daemon's memcg: {oc}")
        vt.cancel_cleanup(restore)
        cg_write(dcg, "memory.limit_in_bytes", 64 * vt.MIB)

        events = d.events[n_events:]
        i_killed = next(i for i, e in enumerate(events) if e is killed)
        oom = [e for e in events[:i_killed] if vt.is_level(u.name, "oom")(e)]
        vt.check(oom, f"no level=oom line for {u.name} before the kill: {[e['line'] for e in events]}")
        vt.log(f"event: {oom[-1]['line']}")
        vt.log(f"kill:  {killed['line']}")
        vt.check(killed.get("unit") == u.unit and int(killed["pid"]) == hog.pid,
                 f"killed {killed.get('unit')} pid {killed['pid']}, expected the hog {hog.pid} of {u.unit}")
        vt.check(exit_usec is not None, "the hog's pidfd did not become readable within 5 s of the kill")
        kill_ms = (exit_usec - oom[-1]["t_usec"]) / 1000
        peak_kib = (after["max_usage"] - usage) / 1024
        vt.log(f"hog gone {kill_ms:.1f} ms after the event; peak charge on the path {peak_kib:+.0f} KiB "
               f"(max_usage {after['max_usage'] >> 10} KiB, limit {limit >> 10} KiB), failcnt {after['failcnt']}; "
               f"VmRSS {before['VmRSS']} → {after['VmRSS']} KiB, Rss {before['Rss']} → {after['Rss']} KiB, "
               f"pgfault +{after['pgfault'] - before['pgfault']}")
        vt.check(u.oom_control().get("oom_kill", 0) == 0, f"the kernel killed in {u.rel}: {u.oom_control()}")
        vt.check(kill_ms <= KILL_MAX_MS, f"the hog was gone {kill_ms:.1f} ms after the event "
                 f"(limit {KILL_MAX_MS} ms)")
        vt.check(d.alive(), f"the daemon died (status {d.proc.returncode}); its memcg: {oc}")
        vt.check(oc.get("under_oom") == 0 and oc.get("oom_kill", 0) == 0,
                 f"the daemon's memcg went under OOM: {oc}")
        new_pages = describe_new_pages(pages_before, pages_after)
        vt.log(f"pages faulted in on the path:\n{new_pages}")
        vt.check(after["VmRSS"] <= before["VmRSS"], f"VmRSS grew: {before['VmRSS']} → {after['VmRSS']} KiB")
        vt.check(after["Rss"] <= before["Rss"], f"Rss (smaps_rollup) grew: {before['Rss']} → {after['Rss']} KiB")
        vt.check(new_pages == "  none", f"pages of the daemon's faulted in on the path:\n{new_pages}")
        hog.stop()
        d.stop()


vt.run(main)
