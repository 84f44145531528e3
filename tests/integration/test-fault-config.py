#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The configuration file goes bad under the running daemon.
First a good change (DryRun=yes) is reloaded, so there is a
"previous configuration" that differs from the start-up one; then, each
followed by Reload() on the bus and by SIGHUP:

  a) the file deleted;
  b) the file replaced by random bytes;
  c) by text that is nearly right ([Levels] with a bad value, an unknown key);
  d) by a file larger than the daemon reads (1 MiB);
  e) by a directory;
  f) by a symlink to itself.

Asserted after each: the daemon is alive; Reload() fails with
org.freedesktop.vmpressure1.Error.InvalidConfig saying the previous one
stays (never NotSupported, which means "started without a way to reload");
DryRun is still true; the SIGHUP reload logs that the running configuration
stays; a Simulate() is signalled. Finally a good file with DryRun=no: Reload()
succeeds and DryRun is false (PropertiesChanged is test-bus-policy's)."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpfault as vf   # noqa: E402

INVALID_CONFIG = "org.freedesktop.vmpressure1.Error.InvalidConfig"


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        os.rmdir(path)
    elif os.path.lexists(path):
        os.unlink(path)


def write(path, data):
    remove(path)
    with open(path, "wb") as f:
        f.write(data)


CASES = [
    ("a) deleted", remove, "No such file or directory"),
    ("b) random bytes", lambda p: write(p, os.urandom(16384)), None),
    ("c) bad values", lambda p: write(p, b"[Levels]\nHoldSec=forever\nMedium=250\n[Daemon]\nBogus=1\n"), None),
    ("d) 1 MiB", lambda p: write(p, b"[Daemon]\n" + b"#" * (1 << 20) + b"\n"), "File too large"),
    ("e) a directory", lambda p: (remove(p), os.mkdir(p)), "Is a directory"),
    ("f) a symlink to itself", lambda p: (remove(p), os.symlink(p, p)), "Too many levels of symbolic links"),
]


def main():
    vt.need_root_and_cgroups()
    vb.need_bus()
    vb.SystemBus().start()
    d = vt.Daemon(config=vb.FAST_LEVELS + "[Daemon]\nDryRun=no\n").start()
    vb.wait_name(vb.NAME)
    cl = vb.Client()
    mgr = vf.Manager()
    hup = vf.SighupPacer(d)
    path = d.config_path
    before = vf.figures(d.pid)

    with open(path, "w") as f:
        f.write(vb.FAST_LEVELS + "[Daemon]\nDryRun=yes\n")
    vt.check(mgr.reload() is None, "Reload() of a good file failed")
    vt.check(bool(mgr.get("DryRun")), "DryRun=yes not applied by Reload()")

    for case, make, needle in CASES:
        make(path)
        err = mgr.reload()
        vt.check(err is not None, f"{case}: Reload() succeeded")
        vt.log(f"{case}: Reload() -> {err[0]}: {err[1]}")
        vt.check(err[0] == INVALID_CONFIG and "previous one stays" in err[1],
                 f"{case}: Reload() failed with {err}, expected {INVALID_CONFIG}")
        if needle:
            vt.check(needle in err[1], f"{case}: the error does not say {needle!r}")
        mark = len(d.stderr_text())
        hup.hup()
        vt.check(vt.poll_until(lambda: "the running one stays" in d.stderr_text()[mark:], 3),
                 f"{case}: SIGHUP did not log that the running configuration stays")
        time.sleep(0.05)
        vt.check(d.alive(), f"{case}: the daemon died")
        vt.check(bool(mgr.get("DryRun")), f"{case}: DryRun changed: the previous configuration was not kept")
        vf.still_signals(mgr, cl, what=f"after {case}")

    remove(path)
    with open(path, "w") as f:
        f.write(vb.FAST_LEVELS + "[Daemon]\nDryRun=no\n")
    err = mgr.reload()
    vt.check(err is None, f"Reload() of a good file again failed: {err}")
    vt.check(not bool(mgr.get("DryRun")), "the later good file was not taken (DryRun is still true)")
    vf.still_signals(mgr, cl, what="after the good file came back")
    vf.check_bounded(d.pid, before, vf.figures(d.pid), "the bad reloads")
    mgr.close()
    cl.stop()
    d.stop()


vt.run(main)
