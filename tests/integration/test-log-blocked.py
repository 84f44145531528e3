#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A log reader that does not read, or that went away, must not stop the
daemon: the real daemon on a private dbus-daemon, its stdout and stderr
(--print-events and the log) on

  a) a FIFO whose reader never reads: the test holds the FIFO open O_RDWR and
     fills it (64 KiB) once the daemon is up. Simulate MEDIUM on a fake unit
     whose policy sends SIGUSR1 at MEDIUM: the call is answered within 1 s
     (before, the daemon sat in write(2), anon_pipe_write, and the call timed
     out after 5 s), the unit's recorder gets SIGUSR1, LogLinesDropped > 0
     and vmpressurectl status and metrics show it. The test's own descriptor
     of the FIFO stays blocking: the daemon made a non-blocking one of its
     own. SIGTERM still ends it with status 0.
  b) a pipe whose reader (head -n 2) exits: the daemon survives its next
     lines (before: killed by SIGPIPE, exit status 141), answers Simulate
     and counts what it dropped.

Every process, cgroup and file is ours and removed at the end."""

import fcntl
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmptest as vt    # noqa: E402
import vmpbus as vb     # noqa: E402
import vmpunit as vu    # noqa: E402
import promtext         # noqa: E402

CTL = os.environ.get("VMPRESSURECTL")
PREFIX = f"vmp-lb-{os.getpid()}"
CONFIG = vb.FAST_LEVELS + "[Daemon]\nSystemPressure=any-cgroup\n"


def ctl(*args):
    r = subprocess.run([CTL] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=15, stdin=subprocess.DEVNULL)
    vt.log(f"$ vmpressurectl {' '.join(map(str, args))} → {r.returncode}")
    vt.check(r.returncode == 0, f"vmpressurectl {' '.join(map(str, args))}: exit {r.returncode}; "
                                f"stderr {r.stderr[-800:]!r}")
    return r.stdout


def start_daemon(tmp, pdir, out_fd):
    """The daemon with stdout and stderr on out_fd (not vt.Daemon: its pipes are always read)."""
    cfg = os.path.join(tmp, "vmpressured.conf")
    with open(cfg, "w") as f:
        f.write(CONFIG)
    cmd = [os.environ["VMPRESSURED"], f"--config={cfg}", "--print-events", f"--policy-dir={pdir}"]
    vt.log("starting " + " ".join(cmd))
    p = subprocess.Popen(cmd, stdout=out_fd, stderr=out_fd, stdin=subprocess.DEVNULL)

    def stop():
        if p.poll() is None:
            p.kill()
            p.wait()
    vt.on_cleanup(f"daemon pid {p.pid}", stop)
    return p


def wait_up(p, unit):
    """The daemon owns its name and watches the unit's scope (read on the bus: its stdout is not ours)."""
    ok = vt.poll_until(lambda: p.poll() is not None or vb.name_owner(vb.NAME), 10, 0.05)
    vt.check(ok and p.poll() is None, f"the daemon is not on the bus (status {p.poll()})")
    ok = vt.poll_until(lambda: any(s[0] == unit for s in vb.get_property("Scopes")), 5, 0.1)
    vt.check(ok, f"the daemon does not watch {unit}: Scopes {vb.get_property('Scopes')}")


def simulate(level, scope, timeout=5):
    """Simulate(level, scope); returns (exit status, seconds to the reply)."""
    t0 = time.monotonic()
    r = vb.busctl(f"--timeout={timeout}", "call", vb.NAME, vb.PATH, vb.IFACE, "Simulate", "ss", level, scope,
                  check_ok=False, timeout=timeout + 5)
    took = time.monotonic() - t0
    vt.log(f"Simulate({level}, {scope or '-.slice'}) → {r.returncode} after {took * 1000:.0f} ms {r.stderr.strip()}")
    return r.returncode, took


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        vt.fail("the daemon did not exit within 5 s of SIGTERM")
    vt.check(rc == 0, f"the daemon exited with status {rc} after SIGTERM, expected 0")


def test_fifo_never_read(tmp, pdir, unit, rec):
    vt.log("=== a) stdout and stderr on a FIFO that nobody reads")
    fifo = os.path.join(tmp, "log.fifo")
    os.mkfifo(fifo)
    keep = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)     # a reader that never reads, and our filler
    vt.on_cleanup("close the FIFO", lambda: os.close(keep))
    out = os.open(fifo, os.O_WRONLY)                    # blocking, as a shell's redirection is
    p = start_daemon(tmp, pdir, out)
    wait_up(p, unit.unit)

    filled = 0
    while True:
        try:
            filled += os.write(keep, b"x" * 4096)
        except BlockingIOError:
            break
    vt.log(f"the FIFO is full: {filled} bytes nobody reads")
    vt.check(not fcntl.fcntl(out, fcntl.F_GETFL) & os.O_NONBLOCK,
             "the daemon made the test's own file description of its stdout non-blocking")
    os.close(out)

    rc, took = simulate("medium", unit.unit)
    vt.check(rc == 0, f"Simulate was not answered (busctl status {rc} after {took:.1f} s): the loop is blocked "
                      f"writing its log")
    vt.check(took < 1.0, f"Simulate answered after {took:.2f} s, expected within 1 s")
    got = vt.poll_until(rec.signals, 2)
    vt.check(got, f"{unit.unit}'s recorder got no SIGUSR1 within 2 s of the simulated MEDIUM")
    vt.log(f"the recorder got SIGUSR1 {len(got)} time(s)")

    dropped = vb.get_property("LogLinesDropped")
    vt.log(f"LogLinesDropped = {dropped}")
    vt.check(dropped > 0, f"LogLinesDropped is {dropped} with the FIFO full")
    text = ctl("status")
    vt.check(any(l.strip().startswith("Log: ") and "lines dropped" in l and int(l.split()[1]) >= dropped
                 for l in text.splitlines()), f"status does not show the dropped lines:\n{text}")
    fams = promtext.parse(ctl("metrics"))
    total = fams["vmpressured_log_lines_dropped_total"].value()
    vt.check(total is not None and total >= dropped, f"vmpressured_log_lines_dropped_total {total}, "
                                                     f"LogLinesDropped was {dropped}")
    vt.check(p.poll() is None, f"the daemon exited: {p.returncode}")
    stop(p)


def test_reader_exits(tmp, pdir):
    vt.log("=== b) stdout and stderr on a pipe whose reader exits")
    r, w = os.pipe()
    reader = subprocess.Popen(["head", "-n", "2"], stdin=r, stdout=subprocess.DEVNULL)
    vt.on_cleanup(f"reader pid {reader.pid}", lambda: reader.poll() is None and reader.kill())
    os.close(r)
    p = start_daemon(tmp, pdir, w)
    os.close(w)
    reader.wait(timeout=10)
    vt.log(f"the reader exited ({reader.returncode}) after 2 lines")
    ok = vt.poll_until(lambda: p.poll() is not None or vb.name_owner(vb.NAME), 10, 0.05)
    vt.check(ok and p.poll() is None, f"the daemon is not on the bus (status {p.poll()})")

    for level in ("low", "medium", "oom"):
        rc, took = simulate(level, "")
        vt.check(p.poll() is None, f"the daemon died writing to a pipe without reader: status {p.returncode} "
                                   f"({'SIGPIPE' if p.returncode == -signal.SIGPIPE else 'exit'})")
        vt.check(rc == 0 and took < 1.0, f"Simulate({level}): busctl status {rc} after {took:.2f} s")
    dropped = vb.get_property("LogLinesDropped")
    vt.log(f"LogLinesDropped = {dropped}")
    vt.check(dropped > 0, f"LogLinesDropped is {dropped}, with nobody reading")
    stop(p)


def main():
    vt.check(CTL and os.access(CTL, os.X_OK), "$VMPRESSURECTL must name the built vmpressurectl")
    vt.need_root_and_cgroups(cgroup2=True)
    vb.need_bus()
    if os.path.isdir("/run/systemd/system"):
        vt.skip_or_fail("PID 1 is systemd; this test fakes a unit in a tree without it")
    tmp = vt.make_tempdir()
    pdir = os.path.join(tmp, "policies")
    os.mkdir(pdir)
    vb.SystemBus().start()
    with vu.Slice(PREFIX), vu.Unit(PREFIX) as unit:
        with open(os.path.join(pdir, f"{unit.unit}.policy"), "w") as f:
            f.write("[Policy]\nScope=unit\n\n[Medium]\nSignal=SIGUSR1\nSignalTarget=all\n")
        rec = vu.Recorder(unit, tmp).start()
        test_fifo_never_read(tmp, pdir, unit, rec)
        test_reader_exits(tmp, pdir)
        rec.stop()


vt.run(main)
