# SPDX-License-Identifier: LGPL-2.1-or-later
"""D-Bus fixtures for the bus integration tests, on top of vmptest.py.

SystemBus starts a private system bus on a socket of its own whose bus.conf
includes /usr/share/dbus-1/system.conf and the project's dbus/ directory, so
the shipped policy file is what is enforced. $VMP_TEST_BUS chooses the
implementation: dbus-daemon (the default, Debian's system bus) or dbus-broker
(Fedora's, Arch's and RHEL's), run through dbus-broker-launch, which reads
the same XML configuration. It exports
DBUS_SYSTEM_BUS_ADDRESS, which the daemon (started afterwards by vmptest's
Daemon), busctl, the sd-bus client and GLib all honour. The daemon's socket
lives in a private 0755 directory, so user nobody can connect too.

Everything started or created here is registered with vmptest's cleanups.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import vmptest
from vmptest import check, fail, log, on_cleanup, cancel_cleanup, skip_or_fail

NAME = "org.freedesktop.vmpressure1"
PATH = "/org/freedesktop/vmpressure1"
IFACE = "org.freedesktop.vmpressure1.Manager"
LMM_NAME = "org.freedesktop.LowMemoryMonitor"
LMM_PATH = "/org/freedesktop/LowMemoryMonitor"
LMM_IFACE = "org.freedesktop.LowMemoryMonitor"

# The seed's ABI values (include/vmpressure.h).
VMPRESSURE = {"low": 1 << 10, "medium": 1 << 20, "oom": 1 << 30}
LEVEL_OF_VALUE = {v: k for k, v in VMPRESSURE.items()}
RANK = {"none": 0, "low": 1, "medium": 2, "oom": 3}

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

# Fast levels for tests: a level holds 1 s, NORMAL after 2 s of quiet.
FAST_LEVELS = "[Levels]\nHoldSec=1s\nQuietSec=2s\nRepeatSec=1s\n"


BUSES = ("dbus-daemon", "dbus-broker")


# How each bus says that its policy refused a message (AccessDenied) or a
# name: dbus-daemon's bus/policy.c and dbus-broker's src/bus/driver.c. The
# daemon's own checks answer AccessDenied with other words, so a test can tell
# who refused.
DENIED_SEND = {"dbus-daemon": "Rejected send message",
               "dbus-broker": "Sender is not authorized to send message"}
DENIED_OWN = {"dbus-daemon": "is not allowed to own",
              "dbus-broker": "Request to own name refused by policy"}


def denied_send_message():
    return DENIED_SEND[bus_kind()]


def denied_own_message():
    return DENIED_OWN[bus_kind()]


def bus_kind():
    """$VMP_TEST_BUS: which bus implementation SystemBus starts."""
    kind = os.environ.get("VMP_TEST_BUS") or "dbus-daemon"
    if kind not in BUSES:
        print(f"FAIL: $VMP_TEST_BUS={kind!r}: expected one of {', '.join(BUSES)}", flush=True)
        os._exit(1)
    return kind


def need_bus():
    """The chosen bus, busctl, setpriv and the built client; else skip (fail under CI)."""
    tools = ["dbus-daemon"] if bus_kind() == "dbus-daemon" else ["dbus-broker", "dbus-broker-launch", "unshare"]
    for tool in tools + ["busctl", "gdbus", "setpriv"]:
        if not shutil.which(tool):
            skip_or_fail(f"{tool} is not installed (tools/dev deps installs it)")
    for var in ("VMP_BUS_CLIENT", "VMP_DBUS_DIR"):
        if not os.environ.get(var):
            print(f"FAIL: ${var} is not set (meson test sets it)", flush=True)
            os._exit(1)
    check(os.path.exists(os.path.join(os.environ["VMP_DBUS_DIR"], "org.freedesktop.vmpressure1.conf")),
          "the policy file dbus/org.freedesktop.vmpressure1.conf is missing")


def need_gi_and_dbus():
    """python3-gi and python3-dbus (GLib's Gio.MemoryMonitor, dbus-python
    clients); else skip (fail under CI)."""
    try:
        import gi   # noqa: F401
        import dbus  # noqa: F401
    except ImportError as e:
        skip_or_fail(f"python3-gi / python3-dbus missing: {e}")


class SystemBus:
    """A private system bus ($VMP_TEST_BUS) enforcing the shipped policy. extra_policy: XML
    <policy> elements appended after it (tests of the daemon's own checks)."""

    def __init__(self, extra_policy=None, limits=None):
        self.dir = tempfile.mkdtemp(prefix="vmp-bus-")
        os.chmod(self.dir, 0o755)
        on_cleanup(f"bus dir {self.dir}", lambda: shutil.rmtree(self.dir, ignore_errors=True))
        self.socket = os.path.join(self.dir, "bus")
        self.address = f"unix:path={self.socket}"
        self.conf = os.path.join(self.dir, "bus.conf")
        self.extra_dir = os.path.join(self.dir, "extra")
        os.mkdir(self.extra_dir)
        os.chmod(self.extra_dir, 0o755)
        self.limits = limits or {}
        self.kind = bus_kind()
        self.proc = None
        self._entry = None
        self.set_extra_policy(extra_policy)
        self._write_conf()

    def _write_conf(self):
        limits = "".join(f'  <limit name="{k}">{v}</limit>\n' for k, v in self.limits.items())
        with open(self.conf, "w") as f:
            f.write('<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"\n'
                    ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n'
                    "<busconfig>\n"
                    "  <include>/usr/share/dbus-1/system.conf</include>\n"
                    f"  <includedir>{os.environ['VMP_DBUS_DIR']}</includedir>\n"
                    f"  <includedir>{self.extra_dir}</includedir>\n"
                    f"{limits}"
                    "</busconfig>\n")

    def set_extra_policy(self, xml):
        """Replaces the extra policy (None: none); takes effect on start() or reload()."""
        path = os.path.join(self.extra_dir, "zz-test.conf")
        if xml is None:
            if os.path.exists(path):
                os.unlink(path)
            return
        with open(path, "w") as f:
            f.write('<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"\n'
                    ' "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">\n'
                    f"<busconfig>\n{xml}\n</busconfig>\n")

    def start(self):
        if os.path.exists(self.socket):
            os.unlink(self.socket)
        if self.kind == "dbus-broker":
            self._start_broker()
        else:
            self._start_dbus_daemon()
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = self.address
        log(f"{self.kind} pid {self.proc.pid} at {self.address}")
        return self

    def _start_dbus_daemon(self):
        rfd, wfd = os.pipe()
        self.proc = subprocess.Popen(
            ["dbus-daemon", f"--config-file={self.conf}", f"--address={self.address}",
             "--nofork", "--nopidfile", f"--print-address={wfd}"],
            pass_fds=(wfd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True)
        os.close(wfd)
        self._entry = on_cleanup(f"dbus-daemon pid {self.proc.pid}", self._cleanup)
        with os.fdopen(rfd) as f:
            line = f.readline().strip()
        if not line.startswith("unix:"):
            fail(f"dbus-daemon did not start: {self.proc.stderr.read() if self.proc.poll() is not None else ''}")

    # dbus-broker-launch (33) takes its listening socket by socket activation
    # (LISTEN_FDS) and opens /run/systemd/journal/socket for its log and the
    # broker's, failing without it. It runs here in a mount namespace of its
    # own where a directory of ours covers /run/systemd: its journal socket is
    # one we read, and the machine's /run is untouched. The launcher reads
    # the same bus.conf (the XML policy) and drops to <user> (messagebus).
    _BROKER_SH = ('set -e; if [ "$1" = bind ]; then mount --bind "$2" /run/systemd; '
                  'else mount -t tmpfs tmpfs /run; mkdir /run/systemd; mount --bind "$2" /run/systemd; fi; '
                  'eval "exec 3<&$3"; shift 3; export LISTEN_PID=$$ LISTEN_FDS=1; exec "$@"')

    def _start_broker(self):
        rundir = os.path.join(self.dir, "run-systemd")
        os.makedirs(os.path.join(rundir, "journal"), exist_ok=True)
        jpath = os.path.join(rundir, "journal", "socket")
        if os.path.exists(jpath):
            os.unlink(jpath)
        jsock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        jsock.bind(jpath)
        os.chmod(jpath, 0o666)          # the launcher and broker log as messagebus
        self.log_messages = []
        ready = threading.Event()
        threading.Thread(target=self._read_journal, args=(jsock, ready), daemon=True).start()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        listener.bind(self.socket)
        os.chmod(self.socket, 0o666)    # as dbus-daemon makes it: everyone may connect
        listener.listen(4096)
        lfd = listener.fileno()
        how = "bind" if os.path.isdir("/run/systemd") else "tmpfs"
        self._stderr = open(os.path.join(self.dir, "broker.stderr"), "w+")
        self.proc = subprocess.Popen(
            # bash: dash's exec takes no descriptor above 9.
            ["unshare", "--mount", "--propagation", "private", "bash", "-c", self._BROKER_SH, "bash",
             how, rundir, str(lfd), "dbus-broker-launch", "--scope", "system", "--config-file", self.conf],
            pass_fds=(lfd,), stdin=subprocess.DEVNULL, stdout=self._stderr, stderr=self._stderr,
            # The launcher is also a client of its bus (sd_bus_open_system()).
            env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address))
        listener.close()                # the launcher holds it now
        self._entry = on_cleanup(f"dbus-broker-launch pid {self.proc.pid}", self._cleanup)
        if not ready.wait(10):
            self._stderr.seek(0)
            fail(f"dbus-broker-launch did not get ready in 10 s (exit {self.proc.poll()}): "
                 f"stderr {self._stderr.read()!r}, log {self.log_messages[-20:]!r}")
        self._jsock = jsock

    def _read_journal(self, jsock, ready):
        """The launcher's and broker's log lines (journal native protocol:
        KEY=value lines; only MESSAGE is kept); "Ready" is the launcher's last
        word before its loop."""
        while True:
            try:
                data = jsock.recv(65536)
            except OSError:
                return
            for field in data.split(b"\n"):
                if field.startswith(b"MESSAGE="):
                    msg = field[8:].decode(errors="replace")
                    self.log_messages.append(msg)
                    if msg == "Ready":
                        ready.set()

    @staticmethod
    def _children(pid):
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                return [int(x) for x in f.read().split()]
        except OSError:
            return []

    def reload(self):
        """SIGHUP: the bus re-reads its configuration, connections stay
        (dbus-daemon and dbus-broker-launch both do so on SIGHUP)."""
        self.proc.send_signal(signal.SIGHUP)
        time.sleep(0.3)

    def kill(self):
        """SIGKILL, as a crash: every connection drops at once."""
        cancel_cleanup(self._entry)
        pids = [self.proc.pid] + (self._children(self.proc.pid) if self.kind == "dbus-broker" else [])
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=10)
        self._wait_gone(pids[1:])
        log(f"{self.kind} pid {self.proc.pid} killed")

    @staticmethod
    def _wait_gone(pids, timeout=10):
        """The broker is the launcher's child: reaped by it, or by PID 1 once
        the launcher is gone; gone when its /proc entry is (or a zombie)."""
        def gone():
            for pid in pids:
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        if f.read().rpartition(")")[2].split()[0] != "Z":
                            return False
                except OSError:
                    pass
            return True
        vmptest.poll_until(gone, timeout, 0.02)

    def _cleanup(self):
        if self.proc is not None and self.proc.poll() is None:
            children = self._children(self.proc.pid) if self.kind == "dbus-broker" else []
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self._wait_gone(children)

    def stop(self):
        cancel_cleanup(self._entry)
        self._cleanup()


def busctl(*args, user=None, check_ok=True, timeout=10):
    """busctl --system ARGS; user='nobody' runs it as nobody. Returns CompletedProcess."""
    cmd = (NOBODY if user == "nobody" else []) + ["busctl", "--system"] + [str(a) for a in args]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if check_ok and r.returncode != 0:
        fail(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return r


def get_property(prop, user=None, path=PATH, iface=IFACE, dest=NAME):
    """busctl get-property with --json: the value."""
    r = busctl("--json=short", "get-property", dest, path, iface, prop, user=user)
    return json.loads(r.stdout)["data"]


def name_owner(name):
    r = busctl("call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
               "GetNameOwner", "s", name, check_ok=False)
    return r.stdout.split()[1].strip('"') if r.returncode == 0 else None


def wait_name(name, timeout=10.0, owner_not=None):
    """Until name has an owner (other than owner_not); returns it."""
    owner = vmptest.poll_until(lambda: (lambda o: o if o and o != owner_not else None)(name_owner(name)),
                               timeout, 0.05)
    check(owner, f"nobody owns {name} after {timeout:g} s")
    return owner


class _LineReader(vmptest.LineReader):
    """A process we start whose stdout lines are parsed (vmptest.LineReader);
    wait_for() from a cursor fails the test on timeout. Also public as
    LineProcess."""

    def __init__(self, cmd, what, parse):
        self.what = what
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, bufsize=1)
        self._entry = on_cleanup(f"{what} pid {proc.pid}", self.stop)
        super().__init__(proc, parse)

    def wait_for(self, pred, timeout, what):
        it = self.next(pred, timeout)
        if it is None:
            fail(f"{self.what}: no {what} within {timeout:g} s (got {len(self.items)} items; "
                 f"stderr: {self.stderr_text()[-2000:]!r})")
        return it

    def stop(self):
        cancel_cleanup(self._entry)
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.wait_eof(10)       # everything it wrote is parsed


LineProcess = _LineReader


def _parse_kv(line):
    parts = line.split()
    if not parts:
        return None
    d = {"type": parts[0], "line": line}
    for p in parts[1:]:
        k, sep, v = p.partition("=")
        if sep:
            d[k] = int(v) if v.isdigit() else v
    return d


class Client(_LineReader):
    """tests/helpers/vmp-bus-client: ready, signal, lmm, record, eof, error lines."""

    def __init__(self, *args, user=None, wait_ready=True):
        cmd = (NOBODY if user == "nobody" else []) + [os.environ["VMP_BUS_CLIENT"]] + [str(a) for a in args]
        super().__init__(cmd, "vmp-bus-client" + (" (nobody)" if user else ""), _parse_kv)
        if wait_ready:
            self.ready = self.wait_for(lambda e: e["type"] == "ready", 15, "ready line")

    def signals(self, scope=None):
        return [e for e in self.snapshot() if e["type"] == "signal" and (scope is None or e.get("scope") == scope)]

    def records(self, sub=None):
        return [e for e in self.snapshot() if e["type"] == "record" and (sub is None or e["sub"] == sub)]


# A real Gio.MemoryMonitor.dup_default() (python3-gi): its type, the unique
# name of the shared system bus connection GMemoryMonitorDBus uses, then a
# line per low-memory-warning with its CLOCK_MONOTONIC µs time of receipt.
GLIB_CLIENT = r"""
import time
from gi.repository import Gio, GLib

def now_usec():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000

mon = Gio.MemoryMonitor.dup_default()
print(f"monitor {type(mon).__name__}", flush=True)
# The shared system bus connection, the one GMemoryMonitorDBus uses.
print(f"name unique={Gio.bus_get_sync(Gio.BusType.SYSTEM, None).get_unique_name()}", flush=True)
mon.connect("low-memory-warning",
            lambda m, level: print(f"warning level={int(level)} recv_usec={now_usec()}", flush=True))
# The proxy is made asynchronously once the name is seen: give it a moment.
GLib.timeout_add(1500, lambda: print("ready", flush=True) and False)
GLib.MainLoop().run()
"""


class GlibClient(_LineReader):
    """GLIB_CLIENT in /usr/bin/python3: .monitor is the monitor's type name,
    .name its bus connection's unique name; "warning" items have level and
    recv_usec. Returns once it is ready."""

    def __init__(self):
        super().__init__(["/usr/bin/python3", "-c", GLIB_CLIENT], "GLib client", _parse_kv)
        self.monitor = self.wait_for(lambda e: e["type"] == "monitor", 10, "the monitor's type")["line"].split()[1]
        self.name = self.wait_for(lambda e: e["type"] == "name", 10, "its unique name")["unique"]
        self.wait_for(lambda e: e["type"] == "ready", 10, "ready")


def _parse_monitor(line):
    try:
        m = json.loads(line)
    except ValueError:
        return None
    return m if isinstance(m, dict) and m.get("type") == "signal" else None


class Monitor(_LineReader):
    """busctl --json=short monitor of the daemon's signals (root only: BecomeMonitor)."""

    def __init__(self):
        matches = [f"type='signal',interface='{IFACE}'",
                   f"type='signal',interface='{LMM_IFACE}'",
                   f"type='signal',interface='org.freedesktop.DBus.Properties',path='{PATH}'"]
        cmd = ["busctl", "--system", "--json=short", "monitor"] + [f"--match={m}" for m in matches]
        super().__init__(cmd, "busctl monitor", _parse_monitor)
        # busctl prints nothing when it is ready; a signal sent right after it
        # starts could be missed. BecomeMonitor is done within ~50 ms here.
        time.sleep(0.5)

    def level_signals(self, scope=None):
        out = []
        for m in self.snapshot():
            if m.get("interface") != IFACE or m.get("member") not in ("Low", "Medium", "OOM", "Normal"):
                continue
            data = m["payload"]["data"]
            if scope is None or data[0] == scope:
                out.append((m["member"], data[0], data[1] if len(data) > 1 else None))
        return out


def collapse(seq):
    """Consecutive repeats dropped: [Low, Low, OOM, OOM, Normal] → [Low, OOM, Normal]."""
    out = []
    for x in seq:
        if not out or out[-1] != x:
            out.append(x)
    return out


def daemon_levels(daemon, scope):
    """The daemon's announcements (--print-events) for scope, in order."""
    return [e for e in daemon.events if e["type"] == "level" and e.get("scope") == scope]


def proc_status(pid):
    """VmRSS in KiB, VmLck in KiB, open fds, context switches (voluntary: it
    waited; nonvoluntary: the scheduler ran another task in its place)."""
    d = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmLck", "VmHWM"):
                d[k] = int(v.split()[0])
            elif k.startswith("Cap"):
                d[k] = int(v.strip(), 16)
            elif k in ("NoNewPrivs", "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
                d[k] = int(v)
    d["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return d


# A session bus of our own: no service directories, so that nothing is
# activated behind a test's back (a test of "no notification server" must
# not start the machine's notification daemon).
SESSION_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


class SessionBus:
    """A private dbus-daemon as the session bus; exports DBUS_SESSION_BUS_ADDRESS."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="vmp-session-")
        on_cleanup(f"session bus dir {self.dir}", lambda: shutil.rmtree(self.dir, ignore_errors=True))
        self.socket = os.path.join(self.dir, "bus")
        self.address = f"unix:path={self.socket}"
        self.conf = os.path.join(self.dir, "session.conf")
        with open(self.conf, "w") as f:
            f.write(SESSION_CONF.format(socket=self.socket))
        self.proc = None
        self._entry = None

    def start(self):
        rfd, wfd = os.pipe()
        self.proc = subprocess.Popen(["dbus-daemon", f"--config-file={self.conf}", "--nofork", "--nopidfile",
                                      f"--print-address={wfd}"],
                                     pass_fds=(wfd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        os.close(wfd)
        self._entry = on_cleanup(f"session dbus-daemon pid {self.proc.pid}", self.stop)
        with os.fdopen(rfd) as f:
            line = f.readline().strip()
        check(line.startswith("unix:"), f"the session dbus-daemon did not start (exit {self.proc.poll()})")
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = self.address
        log(f"session dbus-daemon pid {self.proc.pid} at {self.address}")
        return self

    def stop(self):
        cancel_cleanup(self._entry)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


NOTIFICATIONS = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"


class NotificationServer:
    """python3-dbusmock's notification_daemon template on the session bus:
    a stand-in for a desktop's notification server that records every call
    (org.freedesktop.DBus.Mock.GetCalls)."""

    def __init__(self, session):
        self.session = session
        self.proc = None
        self._entry = None

    def start(self):
        self.proc = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--session", "-t", "notification_daemon"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env=dict(os.environ, DBUS_SESSION_BUS_ADDRESS=self.session.address))
        self._entry = on_cleanup(f"dbusmock pid {self.proc.pid}", self.stop)
        ok = vmptest.poll_until(lambda: self._owned() or self.proc.poll() is not None, 15, 0.05)
        check(ok and self.proc.poll() is None,
              f"dbusmock's notification_daemon did not start: {self.proc.stderr.read() if self.proc.poll() is not None else ''}")
        log(f"dbusmock notification_daemon pid {self.proc.pid}")
        return self

    def _gdbus(self, method, *args):
        return subprocess.run(["gdbus", "call", "--address", self.session.address, "--dest", NOTIFICATIONS,
                               "--object-path", NOTIFICATIONS_PATH, "--method", method] + list(args),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=10)

    def _owned(self):
        r = subprocess.run(["gdbus", "call", "--address", self.session.address, "--dest", "org.freedesktop.DBus",
                            "--object-path", "/org/freedesktop/DBus", "--method",
                            "org.freedesktop.DBus.NameHasOwner", NOTIFICATIONS],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=10)
        return "true" in r.stdout

    def notify_calls(self):
        """[{"app", "replaces_id", "icon", "summary", "body", "hints"(str), "timeout"}] of every Notify."""
        import dbus
        bus = dbus.bus.BusConnection(self.session.address)
        try:
            obj = bus.get_object(NOTIFICATIONS, NOTIFICATIONS_PATH)
            calls = obj.GetMethodCalls("Notify", dbus_interface="org.freedesktop.DBus.Mock")
        finally:
            bus.close()
        out = []
        for _, args in calls:
            out.append({"app": str(args[0]), "replaces_id": int(args[1]), "icon": str(args[2]),
                        "summary": str(args[3]), "body": str(args[4]),
                        "hints": {str(k): (int(v) if isinstance(v, int) else str(v)) for k, v in args[6].items()},
                        "timeout": int(args[7])})
        return out

    def stop(self):
        cancel_cleanup(self._entry)
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
