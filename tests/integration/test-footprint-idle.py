#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The daemon alone, shipped defaults, on a private system bus, idle: its
resident memory stays within 3 MiB (VmRSS) and its private memory within
1 MiB (RssAnon), and what it has is locked (smaps_rollup's Locked).

Under ASan (VMP_SANITIZE names it) the figures mean nothing: ASan's shadow
memory and quarantine alone are tens of MiB, and mlockall() fails there.
The test skips then, saying so, even under CI=true."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402

VMRSS_MAX_KIB = 3 * 1024
RSSANON_MAX_KIB = 1024


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile", "VmLck", "VmHWM"):
                out[k] = int(v.split()[0])
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("Pss", "Locked"):
                out[k] = int(v.split()[0])
    return out


def main():
    vt.skip_if_sanitized("the sanitizer's shadow memory, not the "
                         "daemon's, would be measured")
    vt.need_root_and_cgroups()
    vb.need_bus()
    # meson test sets MALLOC_PERTURB_, which makes malloc() write every byte
    # it hands out: pages the daemon never touches (its preallocated OOM
    # tables) would be counted. The shipped unit does not set it.
    os.environ.pop("MALLOC_PERTURB_", None)
    vb.SystemBus().start()
    d = vt.Daemon().start()
    vb.wait_name(vb.NAME)
    time.sleep(2)       # the rehearsal and the bus's replies are done
    st = status(d.pid)
    vt.log(f"idle: {st}")
    vt.check(st["VmRSS"] <= VMRSS_MAX_KIB, f"VmRSS {st['VmRSS']} KiB idle, more than {VMRSS_MAX_KIB} KiB")
    vt.check(st["RssAnon"] <= RSSANON_MAX_KIB,
             f"RssAnon {st['RssAnon']} KiB idle, more than {RSSANON_MAX_KIB} KiB")
    # Root runs it, so mlockall() must have worked: every resident page is
    # locked (smaps counts Locked proportionally, as Pss).
    vt.check(st["Locked"] >= st["Pss"] - 8,
             f"only {st['Locked']} KiB of the {st['Pss']} KiB (Pss) resident are locked")
    d.stop()


vt.run(main)
