# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fake systemd units for the policy tests, on top of vmptest.py: units laid
out as systemd does (system.slice/<unit> in the cgroup2 tree, where the daemon
finds the unit's processes, and in the v1 memory hierarchy, which a
Scope=unit policy watches), and a recorder to run in them as their "service"
that notes every SIGUSR1 it gets.

Every unit name is <prefix>-<suffix>.service (or <prefix>.service), the
prefix holding the test's pid, so that what is below system.slice is known to
be the test's own. Everything made or started here is registered with
vmptest's cleanups.
"""

import os
import subprocess
import sys
import time

import vmptest as vt

SLICE = "system.slice"

# The recorder: joins the cgroups it is given, then appends one line per
# SIGUSR1 to a file (os.write on an O_APPEND fd: nothing buffered), the
# CLOCK_MONOTONIC time in µs; SIGTERM ends it with status 0.
RECORDER = r"""
import os, signal, sys, time
out = sys.argv[1]
for d in sys.argv[2:]:
    with open(os.path.join(d, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
def on_usr1(signo, frame):
    fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, b"%d\n" % (time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000))
    os.close(fd)
signal.signal(signal.SIGUSR1, on_usr1)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
print("started", os.getpid(), flush=True)
while True:
    signal.pause()
"""


class Slice:
    """system.slice below both roots; made when missing, removed at the end
    only when made here. Another test may have put its own units below it
    meanwhile: then it stays (ENOTEMPTY/EBUSY), which is logged. Children
    named <prefix>… are ours, on their way out: removal waits for them."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.created = []
        self._entry = None

    def __enter__(self):
        self._entry = vt.on_cleanup("system.slice directories", self.remove)
        for root in (vt.V1_ROOT, vt.V2_ROOT):
            path = os.path.join(root, SLICE)
            try:
                os.mkdir(path)
            except FileExistsError:
                continue
            self.created.append(path)
            vt.log(f"created {path}")
        return self

    def __exit__(self, *exc):
        vt.cancel_cleanup(self._entry)
        self.remove()
        return False

    def remove(self):
        while self.created:
            path = self.created.pop()
            deadline = time.monotonic() + 5
            while True:
                try:
                    os.rmdir(path)
                    vt.log(f"removed {path}")
                    break
                except FileNotFoundError:
                    break
                except OSError as e:
                    left = [d for d in os.listdir(path) if os.path.isdir(os.path.join(path, d))]
                    if time.monotonic() >= deadline or any(not d.startswith(self.prefix) for d in left):
                        vt.log(f"leaving {path}: {e.strerror}; children now: {left}")
                        break
                    time.sleep(0.05)


class Unit(vt.Memcg):
    """A fake unit <prefix>-<suffix>.service (<prefix>.service without a
    suffix) as systemd lays it out: system.slice/<unit> in the cgroup2 tree
    and in the v1 memory hierarchy (with a limit). .unit is its name, also
    the daemon's scope name. Everything in it is ours; removal kills, reaps
    and rmdirs both (vt.Memcg.remove)."""

    def __init__(self, prefix, suffix=None, limit_mib=64, oom_kill_disable=False):
        self.unit = f"{prefix}-{suffix}.service" if suffix else f"{prefix}.service"
        super().__init__(self.unit, limit_mib=limit_mib, oom_kill_disable=oom_kill_disable, cgroup2=True)
        self.rel = f"{SLICE}/{self.unit}"
        self.name = self.unit           # the daemon's scope name: the last component
        self.path = os.path.join(vt.V1_ROOT, self.rel)
        self.path2 = os.path.join(vt.V2_ROOT, self.rel)


class Recorder:
    """A unit's "service": /usr/bin/python3 running RECORDER in the unit's
    cgroups, noting each SIGUSR1 in <directory>/<unit>.usr1. Started before
    anything else in the unit it is the unit's main process. Listed with
    vt.Load's live processes so that Memcg.kill_all() reaps it."""

    def __init__(self, unit, directory):
        self.unit = unit
        self.file = os.path.join(directory, f"{unit.unit}.usr1")
        self.proc = None
        self.pid = None
        self._entry = None

    def start(self, timeout=10.0):
        """Returns once it is running in the unit's cgroups."""
        self.proc = subprocess.Popen([sys.executable, "-c", RECORDER, self.file] + self.unit.dirs,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True)
        vt.Load._live.append(self)
        self._entry = vt.on_cleanup(f"recorder pid {self.proc.pid}", self.stop)
        line = vt.first_line(self.proc, timeout)
        if not line.startswith("started "):
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait(timeout=30)
            err = self.proc.stderr.read().strip()
            self.stop()
            vt.fail(f"recorder in {self.unit.unit} did not start: {line!r} {err}")
        self.pid = int(line.split()[1])
        vt.check(self.pid in self.unit.pids(), f"recorder {self.pid} is not in {self.unit.rel}")
        vt.log(f"recorder started in {self.unit.unit}, pid {self.pid}")
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signals(self):
        """When each SIGUSR1 came (CLOCK_MONOTONIC µs, vt.now_usec()), in order."""
        try:
            with open(self.file) as f:
                return [int(x) for x in f.read().split()]
        except FileNotFoundError:
            return []

    def count(self):
        """How many SIGUSR1 it got."""
        return len(self.signals())

    def stop(self):
        """SIGKILL (when still running) and reap; returns its status."""
        if self.proc is None:
            return None
        vt.cancel_cleanup(self._entry)
        if self.proc.poll() is None:
            self.proc.kill()
        rc = self.proc.wait(timeout=30)
        for f in (self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        if self in vt.Load._live:
            vt.Load._live.remove(self)
        return rc


class Sleepers:
    """`vmp-load sleepers N [COMM]`: N sleeping processes in the cgroup
    directories `dirs` (a unit's cgroup2 directory, or one below it), forked
    by a leader that exits, so this helper, their subreaper outside the
    unit, reaps them and counts how they ended. They also go into a pids
    cgroup of their own with pids.max = N + 8, so nothing can fork away.
    Each costs about 115 KiB of kernel and page-table memory (measured: 2,000
    sleepers charged 226 MiB to a v1 memcg); 2,000 start in about 0.4 s.
    Listed with vt.Load's live processes; stop() returns the counts."""

    PIDS_ROOT = "/sys/fs/cgroup/pids"

    def __init__(self, dirs, n, comm=None, name="sleepers"):
        self.dirs = list(dirs)
        self.n = n
        self.comm = comm
        self.pids_dir = os.path.join(self.PIDS_ROOT, f"vmp-it-{name}-{os.getpid()}")
        self.proc = None
        self.pid = None
        self.counts = None
        self._entry = None

    def start(self):
        vt.check(os.path.isdir(self.PIDS_ROOT), f"no cgroup v1 pids hierarchy at {self.PIDS_ROOT}")
        with open("/proc/sys/kernel/pid_max") as f:
            pid_max = int(f.read())
        running = sum(1 for d in os.listdir("/proc") if d.isdigit())
        vt.check(running + self.n + 1000 < pid_max,
                 f"{self.n} sleepers do not fit: kernel.pid_max {pid_max}, {running} processes running")
        os.mkdir(self.pids_dir)
        with open(os.path.join(self.pids_dir, "pids.max"), "w") as f:
            f.write(str(self.n + 8))
        self._entry = vt.on_cleanup(f"{self.n} sleepers", self.stop)
        cmd = [os.environ["VMP_LOAD"]] + [f"--cgroup={d}" for d in self.dirs + [self.pids_dir]]
        cmd += ["sleepers", str(self.n)] + ([self.comm] if self.comm is not None else [])
        t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True)
        vt.Load._live.append(self)
        # Under a sanitizer every fork copies the instrumented helper's
        # shadow mappings: 17,000 sleepers took more than 60 s in one CI
        # run under ASan (5,000 took 9.5 s), against 2,000 in 0.4 s without.
        sanitized = os.environ.get("VMP_SANITIZE", "none") not in ("", "none")
        line = vt.first_line(self.proc, 10 + self.n / (100 if sanitized else 500))
        if not line.startswith("started "):
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            self.stop()
            vt.fail(f"vmp-load sleepers {self.n} did not start: {line!r} {err}")
        self.pid = int(line.split()[1])
        vt.log(f"{self.n} sleepers{f' named {self.comm!r}' if self.comm else ''} in {self.dirs[0]} "
               f"in {time.monotonic() - t0:.2f} s")
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self):
        """SIGTERM: the helper SIGKILLs the sleepers still running and reaps
        them. Returns {'killed': ended by SIGKILL before, 'other': ended
        otherwise, 'left': still running}, None when it never started."""
        if self.proc is None:
            return self.counts
        vt.cancel_cleanup(self._entry)
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=30 + self.n / 1000)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate(timeout=30)
        if self in vt.Load._live:
            vt.Load._live.remove(self)
        self.proc = None
        for line in out.splitlines():
            if line.startswith("reaped "):
                self.counts = {k: int(v) for k, v in (f.split("=") for f in line.split()[1:])}
        vt.log(f"sleepers stopped: {self.counts}")
        try:
            vt._rmdir_retry(self.pids_dir)
        except OSError as e:
            vt.log(f"leaving {self.pids_dir}: {e}")
        return self.counts


def write_policies(files):
    """A fresh policy directory with one <unit>.policy per {unit: text}."""
    d = vt.make_tempdir()
    for unit, text in files.items():
        with open(os.path.join(d, f"{unit}.policy"), "w") as f:
            f.write(text)
    return d


def simulate_oom(d, scope=None):
    """`vmpressurectl simulate oom` on the system (or scope) for daemon d;
    the daemon acts before it replies. Returns when it was called
    (CLOCK_MONOTONIC µs). Needs $VMPRESSURECTL."""
    args = [os.environ["VMPRESSURECTL"], "simulate", "oom"] + ([f"--scope={scope}"] if scope else [])
    t0 = vt.now_usec()
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        vt.poll_until(lambda: not d.alive(), 2)
        n = len(d.find(lambda e: e["type"] in ("killed", "would-kill")))
        vt.fail(f"{' '.join(args[1:])}: exit {r.returncode}: {r.stderr.strip()}; the daemon "
                f"{'is alive' if d.alive() else f'died with status {d.proc.returncode}'} after {n} "
                f"killed/would-kill lines; its stderr ends: {d.stderr_text()[-300:]!r}")
    return t0
