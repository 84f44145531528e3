# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared helpers for the integration tests: the real daemon against real
kernel memory pressure, always inside a small throw-away memcg (docs/kernel.md#test-pressure).

Exit statuses follow meson: 0 pass, 1 fail, 77 skip. A skip is only allowed
outside CI: with CI=true a missing prerequisite is a failure, never a silent
skip.

Everything a test makes (cgroups, processes, files, temporary directories)
is registered here and undone in reverse order at exit, also when the test
fails, raises, or is stopped with SIGTERM/SIGINT/SIGHUP (meson's timeout).
Only processes this module started and only cgroups it created are touched.
"""

import atexit
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
V1_ROOT = "/sys/fs/cgroup/memory"
V2_ROOT = "/sys/fs/cgroup/unified"
MIB = 1 << 20

_cleanups = []          # (description, callable), undone last-in first-out
_cleaning = False


def log(msg):
    """Progress on stderr (meson keeps it in the test log)."""
    print(f"[{time.monotonic():10.3f}] {msg}", file=sys.stderr, flush=True)


class TestFailure(Exception):
    pass


def fail(msg):
    """Fails the test: raises, so finally-blocks and cleanups run; run() exits 1."""
    raise TestFailure(msg)


def check(cond, msg):
    if not cond:
        fail(msg)


def skip_or_fail(reason):
    """Exit 77 when a prerequisite is missing, except under CI where it is a failure."""
    if os.environ.get("CI") == "true":
        print(f"FAIL: {reason} (CI=true: prerequisites are required, not skipped)", file=sys.stderr, flush=True)
        _run_cleanups()
        os._exit(1)
    print(f"SKIP: {reason}", file=sys.stderr, flush=True)
    _run_cleanups()
    os._exit(SKIP)


def skip_if_sanitized(why):
    """Exit SKIP (even under CI=true) when the build is instrumented
    (VMP_SANITIZE names what -Db_sanitize= did): WHY says what the sanitizer
    would make meaningless (the daemon's memory, malloc)."""
    sanitize = os.environ.get("VMP_SANITIZE", "none")
    if sanitize not in ("", "none"):
        print(f"SKIP: built with -Db_sanitize={sanitize}: {why}", flush=True)
        os._exit(SKIP)


def need_root_and_cgroups(cgroup2=False):
    """Root, cgroup v1 memcg with pressure_level, and (cgroup2=True) a cgroup2
    hierarchy with PSI; and the binaries under test."""
    if os.geteuid() != 0:
        skip_or_fail("needs root (creates memcgs)")
    if not os.path.exists(os.path.join(V1_ROOT, "memory.pressure_level")):
        skip_or_fail(f"no cgroup v1 memory controller with memory.pressure_level at {V1_ROOT}")
    if cgroup2 and not os.path.exists(os.path.join(V2_ROOT, "memory.pressure")):
        skip_or_fail(f"no cgroup2 hierarchy with PSI (memory.pressure) at {V2_ROOT}")
    for var in ("VMPRESSURED", "VMP_LOAD"):
        path = os.environ.get(var)
        if not path or not os.access(path, os.X_OK):
            # A harness error, not a missing prerequisite: always a failure.
            print(f"FAIL: ${var} must name the built binary (meson test sets it), got {path!r}",
                  file=sys.stderr, flush=True)
            os._exit(1)


# --- cleanup machinery -------------------------------------------------------

def on_cleanup(desc, fn):
    """Registers fn to run at exit (LIFO). Returns a handle for cancel_cleanup()."""
    entry = (desc, fn)
    _cleanups.append(entry)
    return entry


def cancel_cleanup(entry):
    try:
        _cleanups.remove(entry)
    except ValueError:
        pass


def _run_cleanups():
    global _cleaning
    if _cleaning:
        return
    _cleaning = True
    # A second SIGTERM (meson's timeout) must not cut the undoing short.
    old = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
    while _cleanups:
        desc, fn = _cleanups.pop()
        try:
            fn()
        except Exception as e:          # keep undoing the rest
            print(f"cleanup of {desc} failed: {e!r}", file=sys.stderr, flush=True)
    for s, h in old.items():
        signal.signal(s, h)
    _cleaning = False


def _on_signal(signo, frame):
    # Turn meson's SIGTERM (timeout) into an exception so every finally runs.
    signal.signal(signo, signal.SIG_DFL)
    raise TestFailure(f"interrupted by signal {signal.Signals(signo).name}")


atexit.register(_run_cleanups)
for _s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(_s, _on_signal)


def run(main):
    """Runs main() and exits 0 on success, 1 on failure with the reason."""
    name = os.path.basename(sys.argv[0])
    try:
        main()
    except TestFailure as e:
        print(f"FAIL: {name}: {e}", file=sys.stderr, flush=True)
        _run_cleanups()
        sys.exit(1)
    except BaseException as e:
        if isinstance(e, SystemExit) and e.code in (0, None):
            _run_cleanups()
            raise
        import traceback
        traceback.print_exc()
        print(f"FAIL: {name}: {e!r}", file=sys.stderr, flush=True)
        _run_cleanups()
        sys.exit(1)
    _run_cleanups()
    print(f"PASS: {name}", file=sys.stderr, flush=True)
    sys.exit(0)


def poll_until(pred, timeout, interval=0.02):
    """pred() until truthy or timeout; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(interval)


def now_usec():
    """CLOCK_MONOTONIC in µs, the clock of the daemon's t_usec."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def cpu_ms(pid):
    """A process's user + system CPU time so far (/proc/PID/stat, fields 14
    and 15), ms."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 // os.sysconf("SC_CLK_TCK")


# --- processes we start --------------------------------------------------------

def _stop_process(p, term_timeout=3.0):
    """SIGTERM, then SIGKILL; always reaps. Only for processes we started."""
    if p.poll() is not None:
        return p.returncode
    try:
        p.send_signal(signal.SIGTERM)
        return p.wait(timeout=term_timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.wait(timeout=30)


def first_line(proc, timeout):
    """The first line of a process's stdout (a pipe), "" when none comes
    within timeout."""
    box = []
    t = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)
    t.start()
    t.join(timeout)
    return box[0] if box else ""


def _read_text(path):
    with open(path) as f:
        return f.read()


def _write_text(path, text):
    with open(path, "w") as f:
        f.write(text)


# --- cgroups --------------------------------------------------------------------

def _cgroup_pids(path):
    try:
        return [int(x) for x in _read_text(os.path.join(path, "cgroup.procs")).split()]
    except FileNotFoundError:
        return []


def _rmdir_retry(path, timeout=10.0):
    """rmdir, retrying EBUSY while exiting tasks leave the cgroup."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError as e:
            if time.monotonic() >= deadline:
                raise OSError(e.errno, f"rmdir {path}: {e.strerror}; pids left: {_cgroup_pids(path)}")
            time.sleep(0.05)


class Memcg:
    """A throw-away memcg /sys/fs/cgroup/memory/vmp-it-<name>-<pid> with a limit,
    optionally oom_kill_disable=1, optionally a cgroup2 directory of the same
    name below /sys/fs/cgroup/unified (for PSI). The daemon is told `rel`.

    On exit every process in it is killed (SIGKILL; they are ours: only our
    loads are ever moved in), reaped and the directories removed."""

    def __init__(self, name, limit_mib=128, oom_kill_disable=False, cgroup2=False):
        check(limit_mib <= 256, "test memcgs stay at or below 256 MiB")
        self.rel = f"vmp-it-{name}-{os.getpid()}"
        self.name = self.rel            # the daemon's scope name: the last path component
        self.path = os.path.join(V1_ROOT, self.rel)
        self.path2 = os.path.join(V2_ROOT, self.rel) if cgroup2 else None
        self.limit_mib = limit_mib
        self.oom_kill_disable = oom_kill_disable
        self._entry = None

    @property
    def dirs(self):
        return [d for d in (self.path, self.path2) if d]

    def __enter__(self):
        self._entry = on_cleanup(f"memcg {self.rel}", self.remove)
        os.mkdir(self.path)
        _write_text(os.path.join(self.path, "memory.limit_in_bytes"), str(self.limit_mib * MIB))
        if self.oom_kill_disable:
            _write_text(os.path.join(self.path, "memory.oom_control"), "1")
        if self.path2:
            os.mkdir(self.path2)
        log(f"memcg {self.path} limit {self.limit_mib} MiB"
            f"{' oom_kill_disable' if self.oom_kill_disable else ''}"
            f"{' + ' + self.path2 if self.path2 else ''}")
        return self

    def __exit__(self, *exc):
        cancel_cleanup(self._entry)
        self.remove()
        return False

    def exists(self):
        return os.path.isdir(self.path)

    def pids(self):
        return sorted(set(p for d in self.dirs for p in _cgroup_pids(d)))

    def stat(self, key):
        for line in _read_text(os.path.join(self.path, "memory.stat")).splitlines():
            k, _, v = line.partition(" ")
            if k == key:
                return int(v)
        return None

    def usage_bytes(self):
        return int(_read_text(os.path.join(self.path, "memory.usage_in_bytes")))

    def oom_control(self):
        d = {}
        for line in _read_text(os.path.join(self.path, "memory.oom_control")).splitlines():
            k, _, v = line.partition(" ")
            d[k] = int(v)
        return d

    def kill_all(self):
        """SIGKILL every process in the cgroup (a task held under OOM wakes only
        for SIGKILL), reap those that are our children, wait until it is empty."""
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            Load.reap_all()
            time.sleep(0.05)
        raise OSError(f"{self.rel}: processes left after SIGKILL: {self.pids()}")

    def remove(self):
        """Idempotent: kill, reap, rmdir both directories."""
        if not any(os.path.isdir(d) for d in self.dirs):
            return
        self.kill_all()
        try:
            # Give its page cache back now instead of reparenting it to the root.
            _write_text(os.path.join(self.path, "memory.force_empty"), "0")
        except OSError:
            pass
        for d in (self.path2, self.path):
            if d:
                _rmdir_retry(d)
        log(f"memcg {self.rel} removed")


# --- file fixture --------------------------------------------------------------

def _fs_type(path):
    """File system type of the mount holding path (longest mount point prefix)."""
    path = os.path.realpath(path)
    best, fstype = "", "?"
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            mnt = fields[1].replace("\\040", " ")
            if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                best, fstype = mnt, fields[2]
    return fstype


class DataFile:
    """A real on-disk file in /var/tmp (page cache only works against a disk,
    not tmpfs) of `mib` MiB, written with vmp-load mkfile, removed afterwards."""

    def __init__(self, name, mib, directory="/var/tmp"):
        fstype = _fs_type(directory)
        if fstype in ("tmpfs", "ramfs"):
            skip_or_fail(f"{directory} is {fstype}; the page-cache loads need a disk-backed file")
        self.path = os.path.join(directory, f"vmp-it-{name}-{os.getpid()}.dat")
        self.mib = mib
        self._entry = None

    def __enter__(self):
        self._entry = on_cleanup(f"file {self.path}", self.remove)
        t0 = time.monotonic()
        r = subprocess.run([os.environ["VMP_LOAD"], "mkfile", self.path, str(self.mib)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
        check(r.returncode == 0, f"vmp-load mkfile {self.path} failed ({r.returncode}): {r.stderr.strip()}")
        log(f"file {self.path}: {self.mib} MiB in {time.monotonic() - t0:.2f} s")
        return self

    def __exit__(self, *exc):
        cancel_cleanup(self._entry)
        self.remove()
        return False

    def remove(self):
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


# --- the load generator ----------------------------------------------------------

class Load:
    """$VMP_LOAD in a memcg: Load(memcg, "stream", path). start() returns once
    it printed "started <pid>" (it has joined its cgroups by then)."""

    _live = []

    def __init__(self, memcg, *args, extra_opts=()):
        self.memcg = memcg
        self.args = [str(a) for a in args]
        self.opts = list(extra_opts)
        self.proc = None
        self.pid = None
        self.started_usec = None
        self._entry = None

    def start(self, timeout=10.0):
        cmd = [os.environ["VMP_LOAD"]]
        if self.memcg is not None:
            cmd += [f"--cgroup={d}" for d in self.memcg.dirs]
        cmd += self.opts + self.args
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True)
        Load._live.append(self)
        self._entry = on_cleanup(f"load {self.args[0]} pid {self.proc.pid}", self.stop)
        line = first_line(self.proc, timeout)
        if not line.startswith("started "):
            self.stop()
            fail(f"vmp-load {' '.join(self.args)} did not start: {line!r} {self.stderr()}")
        self.started_usec = now_usec()
        self.pid = int(line.split()[1])
        log(f"load {' '.join(self.args)} started, pid {self.pid}")
        return self

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stderr(self):
        if self.proc is None or self.proc.poll() is None:
            return ""
        try:
            return self.proc.stderr.read().strip()
        except (ValueError, OSError):
            return ""

    def stop(self):
        """SIGTERM, or SIGKILL when it does not go (held under a memcg OOM); reaps."""
        if self.proc is None:
            return None
        cancel_cleanup(self._entry)
        rc = _stop_process(self.proc, term_timeout=2.0)
        for f in (self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        if self in Load._live:
            Load._live.remove(self)
        return rc

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        return self.stop()

    @classmethod
    def reap_all(cls):
        for load in list(cls._live):
            if load.proc.poll() is not None:
                load.stop()


# --- the daemon -------------------------------------------------------------------

_INT_FIELDS = ("index", "repeat", "t_usec", "latency_usec",
               "start_usec", "deliver_usec", "announce_usec", "written", "decided_usec")
# Runs to the end of the line, spaces and all (vmpressured(8), EVENT LINES).
_REST_OF_LINE_FIELDS = ("reason",)
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}


def _unquote(line, i):
    r"""The value in double quotes starting at line[i] == '"', C-escaped as
    vmpressured(8) describes (\" \\ \n \t \xNN): (value, index after the
    closing quote). Raises ValueError when it is malformed."""
    out = bytearray()
    i += 1
    while i < len(line):
        c = line[i]
        if c == '"':
            return out.decode("utf-8", "surrogateescape"), i + 1
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = line[i + 1:i + 2]
        if e == "x" and len(line[i + 2:i + 4]) == 2:
            out.append(int(line[i + 2:i + 4], 16))
            i += 4
        elif e in _ESCAPES:
            out += _ESCAPES[e].encode()
            i += 2
        else:
            raise ValueError(f"bad escape at {i} in {line!r}")
    raise ValueError(f"unterminated quoted value in {line!r}")


def parse_event(line):
    """'level scope=x level=low …' → {'type': 'level', 'scope': 'x', …}; ints for
    numbers. A value in double quotes is unescaped ('comm="x unit=evil"' →
    comm 'x unit=evil'); reason= takes the rest of the line. A malformed
    line fails the test."""
    parts = line.split(" ", 1)
    if not parts[0]:
        return None
    d = {"type": parts[0], "line": line}
    rest = parts[1] if len(parts) > 1 else ""
    i = 0
    while i < len(rest):
        if rest[i] == " ":
            i += 1
            continue
        eq = rest.find("=", i)
        sp = rest.find(" ", i)
        if eq < 0 or (0 <= sp < eq):
            i = len(rest) if sp < 0 else sp      # a word without '=': not a field
            continue
        k = rest[i:eq]
        i = eq + 1
        if k in _REST_OF_LINE_FIELDS:
            v, i = rest[i:], len(rest)
        elif rest[i:i + 1] == '"':
            try:
                v, i = _unquote(rest, i)
            except ValueError as e:
                fail(f"malformed event line: {e}")
            if i < len(rest) and rest[i] != " ":
                fail(f"malformed event line: text right after a quoted value: {line!r}")
        else:
            sp = rest.find(" ", i)
            v, i = (rest[i:], len(rest)) if sp < 0 else (rest[i:sp], sp)
        d[k] = int(v) if k in _INT_FIELDS and v.lstrip("-").isdigit() else v
    return d


class LineReader:
    """The output of a process we started, read by two threads: stdout parsed
    line by line into .items (parse(line) returns the item, or None to skip
    the line; stamp=True adds "recv_usec", CLOCK_MONOTONIC at receipt), stderr
    kept as lines. next() takes items from a cursor, so what came before is
    never lost: find()/snapshot() still see every item. Shared by Daemon and
    vmpbus's clients (one reader, one place for its locking)."""

    def __init__(self, proc, parse, stamp=False):
        self.proc = proc
        self.parse = parse
        self.stamp = stamp
        self.items = []
        self._cursor = 0
        self._cond = threading.Condition()
        self._eof = False
        self._stderr = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        if proc.stderr is not None:
            threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self):
        for line in self.proc.stdout:
            item = self.parse(line.rstrip("\n"))
            if item is None:
                continue
            if self.stamp:
                item["recv_usec"] = now_usec()
            with self._cond:
                self.items.append(item)
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def _read_stderr(self):
        for line in self.proc.stderr:
            self._stderr.append(line.rstrip("\n"))

    @property
    def eof(self):
        """stdout is closed (the process exited or closed it) and fully parsed."""
        return self._eof

    def next(self, pred, timeout, from_start=False):
        """The first item after the cursor (or from the start) for which pred
        is true; moves the cursor past it. None after timeout, or at EOF."""
        deadline = time.monotonic() + timeout
        with self._cond:
            i = 0 if from_start else self._cursor
            while True:
                while i < len(self.items):
                    it = self.items[i]
                    i += 1
                    if pred(it):
                        self._cursor = max(self._cursor, i)
                        return it
                left = deadline - time.monotonic()
                if left <= 0 or self._eof:
                    return None
                self._cond.wait(min(left, 0.2))

    def wait_eof(self, timeout):
        with self._cond:
            return self._cond.wait_for(lambda: self._eof, timeout=timeout)

    def snapshot(self):
        with self._cond:
            return list(self.items)

    def find(self, pred):
        with self._cond:
            return [it for it in self.items if pred(it)]

    def stderr_lines(self):
        return list(self._stderr)

    def stderr_text(self):
        return "\n".join(self._stderr)


class Daemon:
    """$VMPRESSURED --print-events with a private config file (never the
    system's). Events are read in a thread (LineReader): .events keeps all of
    them in order, wait_for() takes them from a cursor so earlier ones are not
    lost."""

    def __init__(self, *args, config="", name="vmpressured", system_pressure=None):
        """The shipped defaults unless the test says otherwise. A test whose
        load is a small memcg at its own limit and that wants the system
        scope (-.slice) to hear it passes system_pressure="any-cgroup", with
        its reason beside it: the shipped default, machine, counts only
        reclaim of the whole machine (test-system-pressure.py), and tests may
        make pressure only inside small memcgs of their own."""
        self.tmpdir = make_tempdir()
        self.config_path = os.path.join(self.tmpdir, "vmpressured.conf")
        # Appended, so the lines of the test's own text keep their numbers.
        if system_pressure is not None:
            config += f"\n[Daemon]\nSystemPressure={system_pressure}\n"
        _write_text(self.config_path, config)
        self.args = [str(a) for a in args]
        self.name = name
        self.proc = None
        self._reader = None
        self._dumped = False
        self._entry = None
        self.started_usec = None

    def start(self, wait_ready=True, timeout=10.0):
        cmd = [os.environ["VMPRESSURED"], f"--config={self.config_path}", "--print-events"] + self.args
        log("starting " + " ".join(cmd))
        self.started_usec = now_usec()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True, bufsize=1)
        self._entry = on_cleanup(f"daemon pid {self.proc.pid}", self._cleanup)
        # The daemon never waits for its log reader: a line that finds the pipe
        # full is dropped and counted (LogLinesDropped). A kill of 5,000 processes
        # prints ~500 KB at once, more than the 64 KiB a pipe holds by default and
        # faster than these reader threads take it on a loaded machine (seen:
        # 4,241 of 5,000 lines, and the notice lost): 1 MiB pipes hold it all.
        for pipe in (self.proc.stdout, self.proc.stderr):
            try:
                fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)
            except OSError as e:
                log(f"cannot enlarge the daemon's pipe: {e}")
        self._reader = LineReader(self.proc, parse_event, stamp=True)
        if wait_ready:
            self.wait_for(lambda e: e["type"] == "ready", timeout, "the 'ready' line", from_start=True)
        return self

    @property
    def events(self):
        """Every event so far, in order (the live list: do not modify)."""
        return self._reader.items if self._reader else []

    @property
    def pid(self):
        return self.proc.pid

    def stderr_text(self):
        return self._reader.stderr_text() if self._reader else ""

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stderr_lines(self, pred, timeout=2.0):
        """Lines of stderr matching pred, waiting up to timeout for the first:
        stderr is read by its own thread and may lag behind stdout."""
        return poll_until(lambda: [l for l in self._reader.stderr_lines() if pred(l)], timeout) or []

    def _dump(self):
        if self._dumped:
            return
        self._dumped = True
        events = self.events
        print(f"--- {self.name} stdout ({len(events)} lines) ---", file=sys.stderr)
        for e in events[-200:]:
            print(e["line"], file=sys.stderr)
        print(f"--- {self.name} stderr ---", file=sys.stderr)
        print(self.stderr_text()[-20000:], file=sys.stderr, flush=True)

    def wait_for(self, pred, timeout, what, from_start=False):
        """The first event (after the cursor, or from the start) for which
        pred(event) is true; moves the cursor past it. Fails after timeout."""
        ev = self._reader.next(pred, timeout, from_start)
        if ev is not None:
            return ev
        if self._reader.eof:
            self.proc.wait(timeout=5)
            self._dump()
            fail(f"daemon exited (status {self.proc.returncode}) before {what}")
        self._dump()
        fail(f"no {what} within {timeout:g} s")

    def find(self, pred):
        return self._reader.find(pred) if self._reader else []

    def stop(self, expect_status=0):
        """SIGTERM; it must exit with expect_status within 5 s."""
        cancel_cleanup(self._entry)
        if self.proc.poll() is not None:
            rc = self.proc.returncode
            self._wait_readers()
            self._dump()
            fail(f"daemon had already exited with status {rc}")
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self._wait_readers()
            self._dump()
            fail("daemon did not exit within 5 s of SIGTERM")
        self._wait_readers()
        if rc != expect_status:
            self._dump()
            fail(f"daemon exited with status {rc} after SIGTERM, expected {expect_status}")
        log(f"daemon stopped, status {rc}")
        return rc

    def _wait_readers(self):
        if self._reader:
            self._reader.wait_eof(2)

    def _cleanup(self):
        if self.proc is not None and self.proc.poll() is None:
            _stop_process(self.proc)
            self._dump()


def make_tempdir():
    """A private temporary directory, removed at exit."""
    path = tempfile.mkdtemp(prefix="vmp-it-")
    on_cleanup(f"tmpdir {path}", lambda: shutil.rmtree(path, ignore_errors=True))
    return path


def run_daemon_once(args, config=None, timeout=10.0):
    """Runs $VMPRESSURED to completion (for --check-config and bad configs):
    returns CompletedProcess. config: text for a private config file, passed
    with --config= unless args already name one."""
    cmd = [os.environ["VMPRESSURED"]]
    tmpdir = None
    if config is not None:
        tmpdir = tempfile.mkdtemp(prefix="vmp-it-")
        path = os.path.join(tmpdir, "vmpressured.conf")
        with open(path, "wb") as f:
            f.write(config if isinstance(config, bytes) else config.encode())
        cmd.append(f"--config={path}")
    cmd += [str(a) for a in args]
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, timeout=timeout)
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)


def is_level(scope, level=None):
    """Predicate: a level line for scope (at `level`, or any level above none)."""
    def pred(e):
        if e["type"] != "level" or e.get("scope") != scope:
            return False
        return e.get("level") == level if level else e.get("level") != "none"
    return pred
